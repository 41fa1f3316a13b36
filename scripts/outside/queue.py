"""The queue as a list and online queries, checked from outside with the built `cairn`, as a person would use them.

Python's standard library only. It sets up a project with `cairn admin` (a `jobs` collection whose write rule refuses
a priority of 100 or more), starts `cairn serve` on a free port, and with two store files checks that:
- `cairn queue` lists pending changes filtered by collection and id, newest first and limited, and `--cancel`
  drops the selected ones (their records go, the rest syncs);
- a change the server refuses lands in `cairn queue --failed`, and `--discard` removes it;
- `cairn put --atomic` queues a change set the server applies all or none, one entry of the failed list;
- `cairn query --collection ... --online` answers what the server holds now (another store's new records too), the
  same as the local query once the store has synced, and stores nothing;
- the changes feed's first snapshot page carries `total` (checked with urllib).

Usage: python3 scripts/outside/queue.py [path/to/cairn]   (default: $CAIRN, else .build/debug/cairn)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from live_server import call, check, serve, set_up_project, stop, stores, tool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAIRN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CAIRN", os.path.join(ROOT, ".build", "debug", "cairn"))
PASSWORD = "an outside password"
SCHEMA = {"collections": [{"name": "jobs",
                           "fields": [{"name": "title", "type": "string"}, {"name": "priority", "type": "integer"}],
                           "rules": {"write": {"field": "priority", "op": "lt", "value": 100}}}]}


def main():
    if not os.path.exists(CAIRN):
        raise SystemExit("FAILED: no cairn binary at %s (build it, or pass its path)" % CAIRN)
    work = tempfile.mkdtemp(prefix="cairn-queue-")
    server = None
    try:
        data = os.path.join(work, "data")

        cairn, json_of = tool(CAIRN, PASSWORD)
        set_up_project(cairn, data, work, "field", {"ana": "writer", "bob": "writer"}, SCHEMA)

        server, base = serve(CAIRN, work, data)

        ana, bob = stores(cairn, work, base, ["ana", "bob"]).values()

        print("== cairn queue: the pending list, filtered, and a selection cancelled")
        for index in range(1, 6):
            cairn("put", "--store", ana, "jobs", "j-%d" % index, json.dumps({"title": "job %d" % index, "priority": index}))
        pending = json_of("queue", "--store", ana)["result"]["pending"]
        check([p["recordId"] for p in pending] == ["j-1", "j-2", "j-3", "j-4", "j-5"], "five changes wait, oldest first",
              got=pending)
        newest = json_of("queue", "--store", ana, "--collection", "jobs", "--newest-first", "--limit", "2")["result"]["pending"]
        check([p["recordId"] for p in newest] == ["j-5", "j-4"], "--newest-first --limit 2", got=newest)
        cancelled = json_of("queue", "--store", ana, "--id", "j-2", "--id", "j-4", "--cancel")["result"]
        check(cancelled == {"cancelled": 2}, "--cancel takes the two selected", got=cancelled)
        cairn("sync", "--store", ana)
        print("== cairn query --online: what the server holds now, not stored")
        where = json.dumps({"field": "priority", "op": "gte", "value": 2})
        online = json_of("query", "--store", ana, "--collection", "jobs", "--where", where, "--sort=-priority", "--online")
        local = json_of("query", "--store", ana, "--collection", "jobs", "--where", where, "--sort=-priority")
        check([r["id"] for r in online["result"]["records"]] == ["j-5", "j-3"], "the server holds j-5 and j-3 (j-2 and j-4 were cancelled)",
              got=online)
        check([r["id"] for r in online["result"]["records"]] == [r["id"] for r in local["result"]["records"]],
              "the online query equals the local one on the same data")
        cairn("put", "--store", bob, "jobs", "b-1", json.dumps({"title": "bob's", "priority": 50}))
        cairn("sync", "--store", bob)
        online = json_of("query", "--store", ana, "--collection", "jobs", "--where", where, "--sort=-priority", "--online")
        check([r["id"] for r in online["result"]["records"]] == ["b-1", "j-5", "j-3"], "bob's new record shows online at once",
              got=online)
        local = json_of("query", "--store", ana, "--collection", "jobs", "--count")
        check(local["result"]["count"] == 3, "and nothing was stored locally (3 records, not 4)", got=local)

        print("== cairn queue --failed: a refused change, discarded")
        cairn("put", "--store", ana, "jobs", "j-9", json.dumps({"title": "too urgent", "priority": 500}))
        cairn("sync", "--store", ana)
        failed = json_of("queue", "--store", ana, "--failed", "--collection", "jobs")["result"]["failed"]
        check(len(failed) == 1 and failed[0]["recordId"] == "j-9" and failed[0]["error"]["code"] == "forbidden",
              "the write rule's refusal is in the failed list", got=failed)
        check(json_of("queue", "--store", ana, "--failed", "--discard")["result"] == {"discarded": 1}, "--discard removes it")
        check(json_of("queue", "--store", ana, "--failed")["result"]["failed"] == [], "the failed list is empty")
        refused = subprocess.run([CAIRN, "queue", "--store", ana, "--retry"], capture_output=True, text=True)
        check(refused.returncode != 0 and "--failed" in refused.stderr, "--retry without --failed is refused with a reason",
              got=refused.stderr)

        print("== cairn put --atomic: a change set the server applies all or none")
        cairn("put", "--store", ana, "--atomic", "jobs", "s-1", json.dumps({"title": "fine", "priority": 1}),
              "s-2", json.dumps({"title": "refused", "priority": 300}))
        cairn("sync", "--store", ana)
        failed = json_of("queue", "--store", ana, "--failed")["result"]["failed"]
        check(len(failed) == 1, "the set is one entry of the failed list", got=failed)
        online = json_of("query", "--store", ana, "--collection", "jobs", "--where",
                         json.dumps({"field": "id", "op": "in", "value": ["s-1", "s-2"]}), "--online")
        check(online["result"]["records"] == [], "and the server applied none of it (s-1 is not there either)", got=online)
        check(json_of("queue", "--store", ana, "--failed", "--discard")["result"] == {"discarded": 1},
              "--discard drops the set whole")
        local = json_of("query", "--store", ana, "--collection", "jobs", "--where",
                        json.dumps({"field": "id", "op": "in", "value": ["s-1", "s-2"]}))
        check(local["result"]["records"] == [], "both records are gone locally too", got=local)

        print("== the feed's first snapshot page says how many records it holds")
        status, tokens = call(base, "POST", "/v1/auth/login", body={"username": "ana", "password": PASSWORD})
        check(status == 200, "ana signs in over HTTP", 200, status)
        status, page = call(base, "GET", "/v1/projects/field/collections/jobs/changes", tokens["accessToken"], query={"limit": "1"})
        check(page.get("total") == 4 and page["hasMore"], "total is 4 on the first page of 1", got=page)
    finally:
        stop(server)
        shutil.rmtree(work, ignore_errors=True)
    print("queue and online queries: all checks passed")


if __name__ == "__main__":
    main()
