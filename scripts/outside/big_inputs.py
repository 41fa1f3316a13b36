"""Big and odd inputs checked from outside, with the memory each side peaks at.

Python's standard library only. It sets up a project of 502 collections (`notes`, `wide` with 1,000 fields and 100
indexes, and 500 small ones) with `cairn admin`, starts `cairn serve`, and with `cairn` stores (each command under
`/usr/bin/time -v`):
- signs two stores in (a first sync that makes 502 tables);
- puts a 9 MB record (`cairn put ... @FILE`) and syncs it up, and the other store pulls it back byte for byte;
- puts an 11 MB record: the sync is refused (`413 payload_too_large`) and the store keeps the record queued, with the
  reason;
- puts a record of 1,000 fields, which the other store pulls;
- writes a record whose id (128 characters) and field name (63) are at their documented limits, and is refused one
  character past them: an id of 129 with `validation_failed` in its batch result, a schema with a field name of 64
  by `cairn admin set-schema`.
It checks that every `cairn` command peaked under 160 MB of resident memory and the server under 256 MB over its whole
life (VmHWM). A command's own peak (the debug build, this schema) is about 65 MB; a record adds about six times its
size while it is parsed, written and encoded (a 9 MB record's push peaked at 131 MB, its pull at 113 MB), and the
batch limit (10 MB) caps what one record can add.

Usage: python3 scripts/outside/big_inputs.py [path/to/cairn]   (default: $CAIRN, else .build/debug/cairn)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from live_server import call, check, serve, set_up_project, stop

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAIRN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CAIRN", os.path.join(ROOT, ".build", "debug", "cairn"))
PASSWORD = "an outside password"
CLIENT_BOUND_KB = 160 * 1024
SERVER_BOUND_KB = 256 * 1024

WIDE_FIELDS = [{"name": "f%d" % index, "type": "string" if index % 2 == 0 else "integer"} for index in range(1000)]
SCHEMA = {"collections": [
    {"name": "notes", "fields": [{"name": "title", "type": "string"}, {"name": "x" * 63, "type": "string"}]},
    {"name": "wide", "fields": WIDE_FIELDS, "indexes": [["f%d" % (index * 2)] for index in range(100)]},
] + [{"name": "c%03d" % index, "fields": [{"name": "name", "type": "string"}]} for index in range(500)]}

peaks = {}


def timed(label, *args, expect=0):
    """Runs `cairn ARGS` under /usr/bin/time -v; keeps its peak resident memory under `label`; returns its output."""
    done = subprocess.run(["/usr/bin/time", "-v", CAIRN] + list(args), capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, CAIRN_PASSWORD=PASSWORD))
    if done.returncode != expect:
        raise SystemExit("FAILED: cairn %s exited %d (expected %d):\n%s%s"
                         % (" ".join(args[:6]), done.returncode, expect, done.stdout, done.stderr[-3000:]))
    peaks[label] = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    return done.stdout + done.stderr


def server_peak_kb(process):
    with open("/proc/%d/status" % process.pid) as status:
        return int(re.search(r"VmHWM:\s+(\d+) kB", status.read()).group(1))


def main():
    work = tempfile.mkdtemp(prefix="cairn-big-inputs-")
    server = None
    try:
        data = os.path.join(work, "data")

        def admin(*args):
            subprocess.run([CAIRN] + list(args), check=True, capture_output=True, text=True, timeout=600)

        admin.password = PASSWORD
        set_up_project(admin, data, work, "field", {"alice": "writer", "bob": "writer"}, SCHEMA)
        server, base = serve(CAIRN, work, data)
        stores = {}
        for user in ["alice", "bob"]:
            stores[user] = os.path.join(work, user + ".sqlite")
            timed("first sync (502 collections)", "sync", "--store", stores[user], "--server", base, "--project", "field", "--user", user)
        tables = subprocess.run([CAIRN, "query", "--store", stores["bob"],
                                 "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name GLOB 'c[0-9][0-9][0-9]'"],
                                capture_output=True, text=True, check=True).stdout
        check("\"n\":500" in tables, "502 collections: a store made a table for each of the 500 small ones", "500", tables.strip()[-200:])

        nine = "n" * (9 << 20)
        path = os.path.join(work, "nine.json")
        with open(path, "w") as file:
            json.dump({"title": nine}, file)
        timed("put a 9 MB record", "put", "--store", stores["alice"], "notes", "nine", "@" + path)
        timed("sync up a 9 MB record", "sync", "--store", stores["alice"])
        timed("pull a 9 MB record", "sync", "--store", stores["bob"])
        pulled = subprocess.run([CAIRN, "query", "--store", stores["bob"], "SELECT length(title) AS n FROM notes WHERE id = 'nine'"],
                                capture_output=True, text=True, check=True).stdout
        check(str(9 << 20) in pulled, "a 9 MB record syncs both ways, whole", 9 << 20, pulled.strip()[-200:])

        eleven = os.path.join(work, "eleven.json")
        with open(eleven, "w") as file:
            json.dump({"title": "e" * (11 << 20)}, file)
        timed("put an 11 MB record", "put", "--store", stores["alice"], "notes", "eleven", "@" + eleven)
        refused = timed("sync an 11 MB record (refused)", "sync", "--store", stores["alice"])
        check("failed 1" in refused, "an 11 MB record is refused by the server: the sync reports it failed", "failed 1", refused[:300])
        queue = subprocess.run([CAIRN, "queue", "--store", stores["alice"], "--failed"], capture_output=True, text=True, check=True).stdout
        check("eleven" in queue and "payload_too_large" in queue, "the device keeps the 11 MB record in its failed list, with payload_too_large",
              "eleven, payload_too_large", queue[-400:])

        wide = {"f%d" % index: ("v%d" % index if index % 2 == 0 else index) for index in range(1000)}
        path = os.path.join(work, "wide.json")
        with open(path, "w") as file:
            json.dump(wide, file)
        timed("put a record of 1,000 fields", "put", "--store", stores["bob"], "wide", "w1", "@" + path)
        timed("sync a record of 1,000 fields", "sync", "--store", stores["bob"])
        timed("pull a record of 1,000 fields", "sync", "--store", stores["alice"])
        fields = subprocess.run([CAIRN, "query", "--store", stores["alice"], "SELECT f998, f999 FROM wide WHERE id = 'w1'"],
                                capture_output=True, text=True, check=True).stdout
        check("v998" in fields and "999" in fields, "a record of 1,000 fields syncs", "v998, 999", fields.strip()[-200:])

        status, body = call(base, "POST", "/v1/auth/login", body={"username": "alice", "password": PASSWORD})
        token = body["accessToken"]
        limit_id, long_id = "i" * 128, "i" * 129
        status, body = call(base, "POST", "/v1/projects/field/batch", bearer=token, body={"operations": [
            {"opId": "limit-1", "collection": "notes", "id": limit_id, "op": "create", "data": {"title": "at the limit", "x" * 63: "named at the limit"}}]})
        check(status == 200 and body["results"][0]["status"] == "applied", "an id of 128 characters and a field name of 63 are stored", "applied", body)
        status, body = call(base, "POST", "/v1/projects/field/batch", bearer=token, body={"operations": [
            {"opId": "limit-2", "collection": "notes", "id": long_id, "op": "create", "data": {"title": "past the limit"}}]})
        result = body["results"][0] if status == 200 else body.get("error", {})
        check((result.get("error") or result).get("code") == "validation_failed", "an id of 129 characters is refused with validation_failed", "validation_failed", body)

        too_long = dict(SCHEMA)
        too_long["collections"] = [{"name": "notes", "fields": [{"name": "title", "type": "string"}, {"name": "x" * 64, "type": "string"}]}]
        path = os.path.join(work, "too-long.json")
        with open(path, "w") as file:
            json.dump(too_long, file)
        refused = subprocess.run([CAIRN, "admin", "--data", data, "set-schema", "--project", "field", path], capture_output=True, text=True)
        check(refused.returncode != 0 and "x" * 64 in refused.stdout + refused.stderr, "a field name of 64 characters is refused by set-schema", "an error naming it", (refused.stdout + refused.stderr)[-300:])

        server_kb = server_peak_kb(server)
        for label, kb in peaks.items():
            print("  %-40s %6.1f MB" % (label, kb / 1024))
            check(kb < CLIENT_BOUND_KB, "cairn (%s) peaked under %d MB" % (label, CLIENT_BOUND_KB // 1024), CLIENT_BOUND_KB, kb)
        print("  %-40s %6.1f MB" % ("the server, over its whole life", server_kb / 1024))
        check(server_kb < SERVER_BOUND_KB, "the server peaked under %d MB" % (SERVER_BOUND_KB // 1024), SERVER_BOUND_KB, server_kb)
        print("big inputs: every check passed")
    finally:
        stop(server)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
