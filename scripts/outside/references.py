"""References between records, checked from outside with the built `cairn` and urllib, as people would use them.

Python's standard library only. It sets up a project whose `jobs` name `sites` (cascade) and whose `audits` name
`sites` (restrict), starts `cairn serve` on a free port, and checks that:
- `cairn put` of a job naming a site that does not exist syncs into the failed list with `validation_failed` naming
  the field; a job, then its site, then the job naming the site, written offline, all upload;
- `cairn query --where` follows the reference (`site.region`) in the local store;
- an HTTP batch deleting a site an audit names is rejected (restrict), and once the audit is gone the delete cascades to
  the site's jobs, which another store then pulls as deleted;
- a data rule that follows the reference (`site.region` against the reader's `region` claim) gives each store the jobs
  of its region's sites, and moving a site to another region moves its jobs between the stores.

Usage: python3 scripts/outside/references.py [path/to/cairn]   (default: $CAIRN, else .build/debug/cairn)
"""
import json
import os
import shutil
import sys
import tempfile
import uuid

from live_server import call, check, serve, set_up_project, stop, stores, tool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAIRN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CAIRN", os.path.join(ROOT, ".build", "debug", "cairn"))
PASSWORD = "an outside password"
SCHEMA = {"collections": [
    {"name": "sites", "fields": [{"name": "name", "type": "string"}, {"name": "region", "type": "string"}]},
    {"name": "jobs", "fields": [{"name": "title", "type": "string"},
                                {"name": "site", "type": "reference", "collection": "sites", "onDelete": "cascade"}]},
    {"name": "audits", "fields": [{"name": "site", "type": "reference", "collection": "sites", "onDelete": "restrict"}]},
]}


def main():
    if not os.path.exists(CAIRN):
        raise SystemExit("FAILED: no cairn binary at %s (build it, or pass its path)" % CAIRN)
    work = tempfile.mkdtemp(prefix="cairn-references-")
    server = None
    try:
        data = os.path.join(work, "data")
        cairn, json_of = tool(CAIRN, PASSWORD)
        set_up_project(cairn, data, work, "field", {"ana": "writer", "bob": "writer", "ada": "admin"}, SCHEMA)
        server, base = serve(CAIRN, work, data)
        ana, bob = stores(cairn, work, base, ["ana", "bob"]).values()

        print("== a reference to a record that does not exist is refused")
        cairn("put", "--store", ana, "jobs", "j-0", json.dumps({"title": "lost", "site": "nowhere"}))
        cairn("sync", "--store", ana)
        failed = json_of("queue", "--store", ana, "--failed")["result"]["failed"]
        check(len(failed) == 1 and failed[0]["recordId"] == "j-0" and failed[0]["error"]["code"] == "validation_failed"
              and failed[0]["error"]["details"]["field"] == "site", "the job is in the failed list, naming the field", got=failed)
        cairn("queue", "--store", ana, "--failed", "--discard")

        print("== offline: a job, then its site, then the job naming it: all upload")
        cairn("put", "--store", ana, "jobs", "j-1", json.dumps({"title": "north job"}))
        cairn("put", "--store", ana, "sites", "s-1", json.dumps({"name": "North", "region": "north"}))
        cairn("put", "--store", ana, "jobs", "j-1", json.dumps({"title": "north job", "site": "s-1"}))
        cairn("put", "--store", ana, "sites", "s-2", json.dumps({"name": "South", "region": "south"}),)
        cairn("put", "--store", ana, "jobs", "j-2", json.dumps({"title": "south job", "site": "s-2"}))
        cairn("sync", "--store", ana)
        check(json_of("queue", "--store", ana, "--failed")["result"]["failed"] == [], "nothing was refused")
        north = json_of("query", "--store", ana, "--collection", "jobs", "--where",
                        json.dumps({"field": "site.region", "op": "eq", "value": "north"}))
        check([record["id"] for record in north["result"]["records"]] == ["j-1"], "cairn query --where follows site.region", got=north)

        print("== restrict, then cascade, over HTTP")
        status, tokens = call(base, "POST", "/v1/auth/login", body={"username": "bob", "password": PASSWORD})
        check(status == 200, "bob signs in over HTTP", 200, status)
        token = tokens["accessToken"]

        def batch(*operations):
            status, answer = call(base, "POST", "/v1/projects/field/batch", token,
                                  body={"operations": [dict(op, opId=str(uuid.uuid4())) for op in operations]})
            check(status == 200, "the batch is answered", 200, (status, answer))
            return answer["results"]

        results = batch({"collection": "audits", "id": "a-1", "op": "create", "data": {"site": "s-1"}})
        check(results[0]["status"] == "applied", "an audit names s-1", got=results)
        results = batch({"collection": "sites", "id": "s-1", "op": "delete"})
        check(results[0]["status"] == "rejected" and results[0]["error"]["details"]["collection"] == "audits",
              "deleting s-1 is refused while the audit names it (restrict)", got=results)
        results = batch({"collection": "audits", "id": "a-1", "op": "delete"}, {"collection": "sites", "id": "s-1", "op": "delete"})
        check([r["status"] for r in results] == ["applied", "applied"], "without the audit, s-1 is deleted", got=results)
        cairn("sync", "--store", bob)
        jobs = json_of("query", "--store", bob, "--collection", "jobs")["result"]["records"]
        check([record["id"] for record in jobs] == ["j-2"], "the cascade deleted j-1; bob's store holds only j-2", got=jobs)

        print("== a data rule that follows the reference: a job is read where its site's region is the reader's")
        status, tokens = call(base, "POST", "/v1/auth/login", body={"username": "ada", "password": PASSWORD})
        check(status == 200, "ada (admin) signs in over HTTP", 200, status)
        ada = tokens["accessToken"]
        ruled = json.loads(json.dumps(SCHEMA))
        ruled["collections"][1]["rules"] = {"read": {"field": "site.region", "op": "eq", "value": {"param": "claims.region"}}}
        status, answer = call(base, "PUT", "/v1/projects/field/schema", ada, body=ruled)
        check(status == 200, "the rule is set", 200, (status, answer))
        for user, region in (("ana", "north"), ("bob", "south")):
            status, answer = call(base, "PUT", "/v1/projects/field/members/%s/claims" % user, ada, body={"region": region})
            check(status == 200, "%s's region is %s" % (user, region), 200, (status, answer))

        def jobs_of(store):
            cairn("sync", "--store", store)
            return [record["id"] for record in json_of("query", "--store", store, "--collection", "jobs")["result"]["records"]]

        check(jobs_of(ana) == [], "ana (north) drops j-2, whose site is in the south", got=jobs_of(ana))
        check(jobs_of(bob) == ["j-2"], "bob (south) keeps j-2", got=jobs_of(bob))
        status, answer = call(base, "POST", "/v1/projects/field/batch", ada, body={"operations": [
            {"opId": str(uuid.uuid4()), "collection": "sites", "id": "s-2", "op": "patch", "data": {"region": "north"}}]})
        check(status == 200 and answer["results"][0]["status"] == "applied", "ada moves s-2 to the north", got=(status, answer))
        check(jobs_of(ana) == ["j-2"], "ana now receives j-2", got=jobs_of(ana))
        check(jobs_of(bob) == [], "bob hears j-2 is gone", got=jobs_of(bob))
        print("outside references: all checks passed")
    finally:
        stop(server)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
