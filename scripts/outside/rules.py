"""Data rules, claims and explain, checked from outside against a live `cairn serve`.

Python's standard library only, as a newcomer with curl or Python would: it sets up a project with `cairn admin`
(users, roles, a `jobs` collection whose rules read the user's name and claims, a member's claims), checks that
`set-schema` refuses bad rules, starts `cairn serve` on a free port and checks with urllib that each member pulls
exactly the records the read rule lets them see, that a `where` or the digest shows nothing more, that writes the
write rule refuses are `forbidden` without leaking the record (and abort an atomic batch), that a reassignment and a
claims change made with `cairn admin` while the server runs move records in and out as `gone`, that the claims
routes are for admins only, and that the explain route and `cairn admin explain --json` agree.

Usage: python3 scripts/outside/rules.py [path/to/cairn]   (default: $CAIRN, else .build/debug/cairn)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import live_server
from live_server import call, check, serve, stop

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAIRN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CAIRN", os.path.join(ROOT, ".build", "debug", "cairn"))
PASSWORD = "an outside password"
PROJECT = "/v1/projects/field"
CHANGES = PROJECT + "/collections/jobs/changes"
JOBS = {"j1": ("ana", "north"), "j2": ("carl", "south"), "j3": ("bob", "south"), "j4": ("carl", "north"),
        "j5": ("rita", "east")}
READ_RULE = {"or": [{"field": "assignee", "op": "eq", "value": {"param": "user.name"}},
                    {"field": "region", "op": "in", "value": {"param": "claims.regions"}}]}
WRITE_RULE = {"field": "assignee", "op": "eq", "value": {"param": "user.name"}}


def schema(read_rule=READ_RULE):
    return {"collections": [{"name": "jobs",
                             "fields": [{"name": "assignee", "type": "string"}, {"name": "region", "type": "string"},
                                        {"name": "priority", "type": "integer"}, {"name": "photo", "type": "file"}],
                             "rules": {"read": read_rule, "write": WRITE_RULE}}]}


def pull(base, bearer, since=None, where=None):
    """Follows the changes feed with limit=2 to its end; returns (changes, cursor)."""
    changes, cursor = [], since
    for _ in range(100):
        query = {"limit": "2"}
        if cursor:
            query["since"] = cursor
        if where is not None:
            query["where"] = json.dumps(where)
        status, page = call(base, "GET", CHANGES, bearer, query=query)
        if status != 200:
            raise SystemExit("FAILED: pull (since=%s, where=%s) answered %d: %s" % (since, where, status, page))
        changes += page["changes"]
        cursor = page["cursor"]
        if not page["hasMore"]:
            return changes, cursor
    raise SystemExit("FAILED: the changes feed still had more after 100 pages")


def ids(changes):
    return sorted(change["id"] for change in changes)


def summary(changes):
    """Each change as id -> "gone", "deleted" or its (assignee, region)."""
    out = {}
    for change in changes:
        if change.get("gone"):
            out[change["id"]] = "gone"
        elif change.get("deleted"):
            out[change["id"]] = "deleted"
        else:
            data = change.get("data", {})
            out[change["id"]] = (data.get("assignee"), data.get("region"))
    return out


def op(op_id, kind, record, data=None):
    operation = {"opId": op_id, "collection": "jobs", "id": record, "op": kind}
    if data is not None:
        operation["data"] = data
    return operation


def main():
    if not os.path.exists(CAIRN):
        raise SystemExit("FAILED: no cairn binary at %s (build it, or pass its path)" % CAIRN)
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="cairn-rules-")
    process = None
    try:
        data = os.path.join(work, "data")
        admin = [CAIRN, "admin", "--data", data]

        def run_admin(*args):
            return live_server.run_admin(CAIRN, data, *args)

        def write_schema(name, value):
            path = os.path.join(work, name)
            with open(path, "w") as file:
                json.dump(value, file)
            return path

        print("== cairn admin: a project, users with roles, a schema with rules, a member's claims")
        run_admin("add-project", "field")
        for user, role in (("boss", "admin"), ("ana", "writer"), ("bob", "writer"), ("rita", "reader")):
            run_admin("add-user", user, "--password", PASSWORD)
            run_admin("grant", user, "--project", "field", "--role", role)
        run_admin("set-schema", "--project", "field", write_schema("schema.json", schema()))
        print("ok: set-schema takes jobs with a read rule on user.name and claims.regions and a write rule on user.name")
        run_admin("set-claims", "bob", "--project", "field", '{"regions":["north"]}')
        printed = json.loads(run_admin("claims", "bob", "--project", "field"))
        check(printed == {"regions": ["north"]}, "cairn admin claims prints bob's claims", {"regions": ["north"]}, printed)

        bad_rules = [
            ("a rule on an unknown field", {"field": "owner", "op": "eq", "value": {"param": "user.name"}}),
            ("an unknown parameter", {"field": "assignee", "op": "eq", "value": {"param": "user.email"}}),
            ("user.name compared with an integer field", {"field": "priority", "op": "eq", "value": {"param": "user.name"}}),
        ]
        for index, (name, rule) in enumerate(bad_rules):
            path = write_schema("bad-%d.json" % index, schema(rule))
            done = subprocess.run(admin + ["set-schema", "--project", "field", path],
                                  capture_output=True, text=True, timeout=120)
            said = (done.stdout + done.stderr).strip()
            check(done.returncode != 0 and "jobs.rules.read" in said,
                  "set-schema with %s fails naming jobs.rules.read" % name,
                  "a non-zero exit and a message naming jobs.rules.read", "exit %d: %r" % (done.returncode, said))

        print("== cairn serve")
        process, base = serve(CAIRN, work, data)
        print("ok: cairn serve answers /health at " + base)

        tokens = {}
        for user in ("boss", "ana", "bob", "rita"):
            status, answer = call(base, "POST", "/v1/auth/login", body={"username": user, "password": PASSWORD})
            check(status == 200 and answer["user"]["name"] == user, "%s signs in" % user, "200", "%d %s" % (status, answer))
            tokens[user] = answer["accessToken"]
        status, answer = call(base, "GET", PROJECT + "/schema", tokens["boss"])
        rules = answer["collections"][0].get("rules") if status == 200 else None
        check(rules == {"read": READ_RULE, "write": WRITE_RULE},
              "the served schema holds the rules as set (the refused schemas changed nothing)",
              {"read": READ_RULE, "write": WRITE_RULE}, rules)

        status, answer = call(base, "POST", PROJECT + "/batch", tokens["boss"], {"operations": [
            op("rules-create-" + job, "create", job, {"assignee": assignee, "region": region, "priority": 1})
            for job, (assignee, region) in JOBS.items()]})
        statuses = [result["status"] for result in answer["results"]] if status == 200 else answer
        check(statuses == ["applied"] * 5, "boss (admin, not bound by the rules) creates j1..j5", ["applied"] * 5, statuses)

        print("== each member pulls exactly what the read rule lets them see")
        expected = {"boss": ["j1", "j2", "j3", "j4", "j5"], "ana": ["j1"], "bob": ["j1", "j3", "j4"], "rita": ["j5"]}
        cursors, boss_before = {}, {}
        every_region = {"field": "region", "op": "in", "value": ["north", "south", "east", "west"]}
        for user, wanted in expected.items():
            changes, cursors[user] = pull(base, tokens[user])
            check(ids(changes) == wanted and all(change.get("data") for change in changes),
                  "%s's snapshot (pages of 2) is %s" % (user, ", ".join(wanted)), wanted, ids(changes))
            wider, _ = pull(base, tokens[user], where=every_region)
            check(ids(wider) == wanted, "%s's snapshot with a where on every region gets nothing more" % user,
                  wanted, ids(wider))
            status, digest = call(base, "GET", PROJECT + "/collections/jobs/digest", tokens[user])
            count = digest.get("count") if status == 200 else digest
            check(count == len(wanted), "%s's digest count is %d" % (user, len(wanted)), len(wanted), count)
            if user == "boss":
                boss_before = {change["id"]: change["version"] for change in changes}
        status, answer = call(base, "POST", PROJECT + "/batch", tokens["rita"], {"operations": [
            op("rules-rita-1", "patch", "j5", {"priority": 2})]})
        check(status == 403 and answer["error"]["code"] == "forbidden", "rita (reader) may not push, even her own job",
              "403 forbidden", "%d %s" % (status, answer))

        print("== writes the write rule refuses")

        def push(user, operations, atomic=False):
            status, answer = call(base, "POST", PROJECT + "/batch", tokens[user],
                                  {"atomic": atomic, "operations": operations})
            if status != 200:
                raise SystemExit("FAILED: %s's batch answered %d: %s" % (user, status, answer))
            return answer["results"]

        def refused(result, code):
            return (result.get("status") == "rejected" and result.get("error", {}).get("code") == code
                    and "current" not in result and "record" not in result)

        result = push("ana", [op("rules-ana-1", "patch", "j2", {"priority": 9})])[0]
        check(refused(result, "forbidden"), "ana's patch of carl's j2 is rejected as forbidden, with no record in it",
              "rejected, forbidden, no current/record", result)
        result = push("ana", [op("rules-ana-2", "create", "j6", {"assignee": "bob", "region": "north"})])[0]
        check(refused(result, "forbidden"), "ana's create of a job assigned to bob is rejected as forbidden",
              "rejected, forbidden, no current/record", result)
        results = push("ana", [op("rules-ana-3", "patch", "j1", {"priority": 3}),
                               op("rules-ana-4", "patch", "j4", {"priority": 3})], atomic=True)
        check(len(results) == 2 and refused(results[0], "batch_aborted") and refused(results[1], "forbidden"),
              "ana's atomic batch (her j1, carl's j4) applies nothing: batch_aborted and forbidden",
              "[rejected batch_aborted, rejected forbidden]", results)
        changes, _ = pull(base, tokens["boss"])
        after = {change["id"]: change["version"] for change in changes}
        check(after == boss_before, "boss's pull shows nothing changed (no j6, same versions)", boss_before, after)

        print("== changes of visibility")
        status, answer = call(base, "POST", PROJECT + "/batch", tokens["boss"], {"operations": [
            op("rules-boss-1", "patch", "j1", {"assignee": "carl"})]})
        check(status == 200 and answer["results"][0]["status"] == "applied", "boss reassigns j1 to carl",
              "applied", answer)
        changes, cursors["ana"] = pull(base, tokens["ana"], cursors["ana"])
        check(len(changes) == 1 and changes[0]["id"] == "j1" and changes[0].get("gone") is True and "data" not in changes[0],
              "ana's next pull has j1 gone, without its data", '[{"id": "j1", "version", "gone": true}]', changes)
        run_admin("set-claims", "bob", "--project", "field", '{"regions":["south"]}')
        print("ok: cairn admin set-claims gives bob the south region while the server runs")
        changes, cursors["bob"] = pull(base, tokens["bob"], cursors["bob"])
        wanted = {"j1": "gone", "j2": ("carl", "south"), "j4": "gone"}
        check(summary(changes) == wanted and len(changes) == 3 and all("data" not in c for c in changes if c.get("gone")),
              "bob's next pull has j1 and j4 gone, j2 whole, and not j3 (held and still readable)",
              wanted, changes)
        changes, _ = pull(base, tokens["bob"], cursors["bob"])
        check(changes == [], "bob's pull after that is empty", [], changes)

        print("== claims routes")
        claims_path = PROJECT + "/members/ana/claims"
        status, answer = call(base, "GET", claims_path, tokens["boss"])
        check(status == 200 and answer == {}, "boss reads ana's claims: {}", "200 {}", "%d %s" % (status, answer))
        status, answer = call(base, "PUT", claims_path, tokens["boss"], {"regions": ["east"]})
        check(status == 200 and answer == {"regions": ["east"]}, "boss sets ana's claims to the east region",
              '200 {"regions": ["east"]}', "%d %s" % (status, answer))
        status, answer = call(base, "GET", claims_path, tokens["boss"])
        check(status == 200 and answer == {"regions": ["east"]}, "boss reads them back",
              '200 {"regions": ["east"]}', "%d %s" % (status, answer))
        changes, cursors["ana"] = pull(base, tokens["ana"], cursors["ana"])
        check(summary(changes) == {"j5": ("rita", "east")} and len(changes) == 1,
              "ana's next pull brings j5 whole", {"j5": ("rita", "east")}, changes)
        status, answer = call(base, "PUT", claims_path, tokens["boss"], {})
        check(status == 200 and answer == {}, "boss clears ana's claims", "200 {}", "%d %s" % (status, answer))
        changes, cursors["ana"] = pull(base, tokens["ana"], cursors["ana"])
        check(summary(changes) == {"j5": "gone"} and len(changes) == 1, "ana's next pull has j5 gone",
              {"j5": "gone"}, changes)
        for method, body in (("GET", None), ("PUT", {"regions": ["north", "south", "east"]})):
            status, answer = call(base, method, claims_path, tokens["ana"], body)
            code = (answer or {}).get("error", {}).get("code")
            check(status == 403 and code == "forbidden", "ana (writer) may not %s her own claims (403)" % method,
                  "403 forbidden", "%d %s" % (status, answer))
        status, answer = call(base, "GET", claims_path, tokens["boss"])
        check(status == 200 and answer == {}, "ana's claims are still empty", "200 {}", "%d %s" % (status, answer))

        print("== explain")
        question = {"user": "bob", "collection": "jobs", "id": "j2"}
        status, route = call(base, "GET", PROJECT + "/explain", tokens["boss"], query=question)
        check(status == 200, "boss asks why bob can or cannot touch j2 (200)", 200, "%d %s" % (status, route))
        read, write = route.get("read", {}), route.get("write", {})
        deciding = [condition["path"] for condition in read.get("conditions", []) if condition.get("decides")]
        check(read.get("allowed") is True and deciding == ["read.or[1]"],
              "bob may read j2, decided by read.or[1] (region in claims.regions)", "allowed, deciding read.or[1]",
              "allowed %s, deciding %s" % (read.get("allowed"), deciding))
        deciding = [condition["path"] for condition in write.get("conditions", []) if condition.get("decides")]
        check(write.get("allowed") is False and deciding == ["write"],
              "bob may not write j2, decided by the write condition (assignee eq user.name)", "refused, deciding write",
              "allowed %s, deciding %s" % (write.get("allowed"), deciding))
        check(route.get("claims") == {"regions": ["south"]} and route.get("role") == "writer",
              "explain shows bob's role and his claims as set while the server ran",
              {"role": "writer", "claims": {"regions": ["south"]}}, {"role": route.get("role"), "claims": route.get("claims")})
        status, answer = call(base, "GET", PROJECT + "/explain", tokens["ana"], query=question)
        check(status == 403 and answer["error"]["code"] == "forbidden", "ana (writer) may not ask explain (403)",
              "403 forbidden", "%d %s" % (status, answer))
        status, answer = call(base, "GET", PROJECT + "/explain", tokens["boss"], query={"user": "bob", "collection": "jobs"})
        check(status == 422 and answer["error"]["code"] == "validation_failed", "explain without id answers 422",
              "422 validation_failed", "%d %s" % (status, answer))
        printed = json.loads(run_admin("explain", "--project", "field", "--user", "bob", "--collection", "jobs",
                                       "--id", "j2", "--json"))
        check(printed.get("read") == read and printed.get("write") == write,
              "cairn admin explain --json gives the route's read and write verdicts",
              {"read": read, "write": write}, {"read": printed.get("read"), "write": printed.get("write")})
        print("data rules check: all passed in %.1f s" % (time.monotonic() - started))
    finally:
        stop(process)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
