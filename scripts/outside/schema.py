"""Schema evolution checked from outside with the built `cairn`, as an operator and two app builds would meet it.

Python's standard library only. It sets up a project with `cairn admin`, starts `cairn serve` on a free port, and
with two store files (an old build made for schema 1, a new one for schema 2) checks that:
- `cairn admin set-schema` numbers each schema and refuses a breaking change (a rename) without its step, naming
  what is missing; `cairn admin schema diff` says the same and exits 1;
- with the declared rename, `schema diff` calls it breaking and declared, `set-schema` migrates the stored records
  and `schema status` shows the migration done;
- `cairn sync --schema-version N` (remembered by the store) lets the old store keep writing `score` while the new one
  reads and writes `rating`, and the old store's full-record put keeps a field it does not know;
- `--minimum-version` turns the old store away with `upgrade_required`, its queued change kept, and the same store
  synced with `--schema-version 2` pushes it, translated;
- `GET .../schema?version=1` answers the first schema (checked with urllib).

Usage: python3 scripts/outside/schema.py [path/to/cairn]   (default: $CAIRN, else .build/debug/cairn)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from live_server import call, check, serve, stop

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAIRN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CAIRN", os.path.join(ROOT, ".build", "debug", "cairn"))
PASSWORD = "an outside password"


def jobs(fields, migrations=None):
    schema = {"collections": [{"name": "jobs", "conflictPolicy": "merge-fields",
                               "fields": [{"name": name, "type": kind} for name, kind in fields]}]}
    if migrations:
        schema["migrations"] = migrations
    return schema


V1 = jobs([("title", "string"), ("score", "integer")])
RENAMED = jobs([("title", "string"), ("rating", "integer"), ("note", "string")])
V2 = jobs([("title", "string"), ("rating", "integer"), ("note", "string")],
          [{"collection": "jobs", "rename": {"from": "score", "to": "rating"}}])


def main():
    if not os.path.exists(CAIRN):
        raise SystemExit("FAILED: no cairn binary at %s (build it, or pass its path)" % CAIRN)
    work = tempfile.mkdtemp(prefix="cairn-schema-")
    server = None
    try:
        data = os.path.join(work, "data")

        def run(*args):
            environment = dict(os.environ, CAIRN_PASSWORD=PASSWORD)
            return subprocess.run([CAIRN] + list(args), capture_output=True, text=True, timeout=180, env=environment)

        def cairn(*args, expect=0):
            done = run(*args)
            if done.returncode != expect:
                raise SystemExit("FAILED: cairn %s exited %d (expected %d):\n%s%s"
                                 % (" ".join(args), done.returncode, expect, done.stdout, done.stderr))
            return done.stdout

        def schema_file(name, schema):
            path = os.path.join(work, name)
            with open(path, "w") as file:
                json.dump(schema, file)
            return path

        def records(store, online=False):
            args = ["query", "--store", store, "--collection", "jobs"] + (["--online"] if online else [])
            found = json.loads(cairn(*args).strip().splitlines()[-1])["result"]["records"]
            return {record["id"]: record["data"] for record in found}

        admin = ["admin", "--data", data]
        cairn(*admin, "add-project", "field")
        for user in ("ana", "bob"):
            cairn(*admin, "add-user", user, "--password", PASSWORD)
            cairn(*admin, "grant", user, "--project", "field", "--role", "writer")

        print("== schema 1, and two stores: an old build and a new one, both made for it")
        out = cairn(*admin, "set-schema", "--project", "field", schema_file("v1.json", V1))
        check("number 1" in out, "the first schema set is number 1", got=out)
        server, base = serve(CAIRN, work, data)
        old = os.path.join(work, "old.sqlite")
        new = os.path.join(work, "new.sqlite")
        cairn("sync", "--store", old, "--server", base, "--project", "field", "--user", "ana", "--schema-version", "1")
        cairn("put", "--store", old, "jobs", "j-1", json.dumps({"title": "Fix roof", "score": 5}))
        cairn("put", "--store", old, "jobs", "j-2", json.dumps({"title": "Paint", "score": 7}))
        cairn("sync", "--store", old)
        cairn("sync", "--store", new, "--server", base, "--project", "field", "--user", "bob", "--schema-version", "1")
        check(records(new)["j-1"] == {"title": "Fix roof", "score": 5}, "the new store pulls j-1", got=records(new))

        print("== a breaking change without its step is refused, naming what is missing")
        renamed = schema_file("renamed.json", RENAMED)
        diff = run(*admin, "schema", "diff", "--project", "field", renamed)
        check(diff.returncode == 1 and "MISSING" in diff.stdout and "jobs.score" in diff.stdout,
              "schema diff calls the rename breaking with a missing step, and exits 1", got=diff.stdout + diff.stderr)
        refused = run(*admin, "set-schema", "--project", "field", renamed)
        check(refused.returncode != 0 and "incompatible_schema" in refused.stderr and "jobs.score" in refused.stderr
              and "rename" in refused.stderr, "set-schema refuses it, naming jobs.score and the rename to declare", got=refused.stderr)

        print("== the declared rename: diffed, set, migrated")
        declared = schema_file("v2.json", V2)
        out = cairn(*admin, "schema", "diff", "--project", "field", declared)
        check("breaking, declared: field jobs.score renamed to rating" in out and "additive: field jobs.note" in out,
              "schema diff lists the declared rename and the new field", got=out)
        out = cairn(*admin, "set-schema", "--project", "field", declared)
        check("number 2" in out and "migrated 2 records" in out, "set-schema makes number 2 and migrates both records", got=out)
        out = cairn(*admin, "schema", "status", "--project", "field")
        lines = [line.split() for line in out.splitlines()]
        check(any(row[:1] == ["2"] and "done" in row for row in lines), "schema status shows number 2's migration done", got=out)
        status, tokens = call(base, "POST", "/v1/auth/login", body={"username": "ana", "password": PASSWORD})
        check(status == 200, "ana signs in over HTTP", 200, status)
        status, first = call(base, "GET", "/v1/projects/field/schema", tokens["accessToken"], query={"version": "1"})
        check(status == 200 and first["number"] == 1 and first["collections"][0]["fields"][1]["name"] == "score",
              "GET schema?version=1 answers the first schema", got=first)

        print("== the new build reads rating; the old one keeps writing score")
        cairn("sync", "--store", new, "--schema-version", "2")
        check(records(new)["j-1"] == {"title": "Fix roof", "rating": 5}, "the new store holds j-1 with rating", got=records(new))
        cairn("put", "--store", new, "jobs", "j-2", json.dumps({"title": "Paint", "rating": 7, "note": "two coats"}))
        cairn("sync", "--store", new)
        cairn("sync", "--store", old)
        check(records(old)["j-1"] == {"title": "Fix roof", "score": 5}, "the old store still holds j-1 with score", got=records(old))
        cairn("put", "--store", old, "jobs", "j-2", json.dumps({"title": "Paint twice", "score": 8}))
        cairn("sync", "--store", old)
        cairn("sync", "--store", new)
        check(records(new)["j-2"] == {"title": "Paint twice", "rating": 8, "note": "two coats"},
              "the old store's full put lands in rating and keeps the note it does not know", got=records(new))

        print("== below the window: upgrade_required, the queue kept, pushed once the store says 2")
        out = cairn(*admin, "set-schema", "--project", "field", "--minimum-version", "2")
        check("minimum version 2" in out and "number 2" in out, "--minimum-version 2 changes the window only", got=out)
        cairn("put", "--store", old, "jobs", "j-1", json.dumps({"title": "Fix roof", "score": 9}))
        turned = run("sync", "--store", old)
        check(turned.returncode != 0 and "upgrade_required" in turned.stderr, "the old store's sync is turned away",
              got=turned.stdout + turned.stderr)
        pending = json.loads(cairn("queue", "--store", old).strip().splitlines()[-1])["result"]["pending"]
        check(len(pending) == 1 and pending[0]["recordId"] == "j-1", "its change is still queued", got=pending)
        cairn("sync", "--store", old, "--schema-version", "2")
        cairn("sync", "--store", new)
        check(records(new)["j-1"] == {"title": "Fix roof", "rating": 9}, "after the update the queued score arrives as rating",
              got=records(new))
        cairn("sync", "--store", old)
        check(records(old)["j-1"].get("rating") == 9, "and the updated store, remembering 2, now holds rating", got=records(old))
    finally:
        stop(server)
        shutil.rmtree(work, ignore_errors=True)
    print("schema evolution: all checks passed")


if __name__ == "__main__":
    main()
