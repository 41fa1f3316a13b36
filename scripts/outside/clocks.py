"""Devices whose clocks are wrong, checked from outside: the built `cairn` run under `faketime` (hours ahead, days
behind, a month ahead) against a server on the right time.

Python's standard library and Debian's `faketime`. It starts `cairn serve` on a free port and, for each clock, checks
that a store signs in, writes offline, syncs both ways with a store on the right time, uploads and downloads a file, and
that `cairn status --json` says up to date with no negative age or duration.

Usage: python3 scripts/outside/clocks.py [path/to/cairn]   (default: $CAIRN, else .build/debug/cairn)
"""
import json
import os
import shutil
import sys
import tempfile

from live_server import check, serve, set_up_project, stop, stores, tool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAIRN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CAIRN", os.path.join(ROOT, ".build", "debug", "cairn"))
PASSWORD = "an outside password"
SCHEMA = {"collections": [{"name": "notes", "fields": [{"name": "title", "type": "string"}]}]}
# faketime's offsets: hours ahead, days behind, a month ahead.
CLOCKS = {"ahead5h": "+5h", "behind3d": "-3d", "ahead30d": "+30d"}


def negative_numbers(value, path="report"):
    """The places in a JSON value that hold a negative number (an age or a duration)."""
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in negative_numbers(item, path + "." + key)]
    if isinstance(value, list):
        return [found for index, item in enumerate(value) for found in negative_numbers(item, "%s[%d]" % (path, index))]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        return [path]
    return []


def main():
    if not os.path.exists(CAIRN):
        raise SystemExit("FAILED: no cairn binary at %s (build it, or pass its path)" % CAIRN)
    if not shutil.which("faketime"):
        raise SystemExit("FAILED: faketime is not installed (Debian: apt-get install faketime)")
    work = tempfile.mkdtemp(prefix="cairn-clocks-")
    server = None
    try:
        data = os.path.join(work, "data")
        cairn, json_of = tool(CAIRN, PASSWORD)
        set_up_project(cairn, data, work, "field", {"ana": "writer", "bob": "writer"}, SCHEMA)
        server, base = serve(CAIRN, work, data)
        bob = stores(cairn, work, base, ["bob"])["bob"]
        skewed, skewed_json = tool("faketime", PASSWORD)

        for name, offset in CLOCKS.items():
            print("== a device whose clock is %s" % offset)

            def at(*args):
                return skewed("-f", offset, CAIRN, *args)

            store = os.path.join(work, name + ".sqlite")
            at("sync", "--store", store, "--server", base, "--project", "field", "--user", "ana")
            at("put", "--store", store, "notes", "from-" + name, json.dumps({"title": "written at " + offset}))
            cairn("put", "--store", bob, "notes", "for-" + name, json.dumps({"title": "written on time"}))
            cairn("sync", "--store", bob)
            at("sync", "--store", store)
            mine = skewed_json("-f", offset, CAIRN, "query", "--store", store, "--collection", "notes")["result"]["records"]
            check({"from-" + name, "for-" + name} <= {record["id"] for record in mine},
                  "it signs in, uploads its write and receives the other store's", got=[record["id"] for record in mine])
            cairn("sync", "--store", bob)
            theirs = json_of("query", "--store", bob, "--collection", "notes")["result"]["records"]
            check("from-" + name in {record["id"] for record in theirs}, "the store on time receives its write")

            original = os.path.join(work, name + ".txt")
            with open(original, "wb") as file:
                file.write(("a file from a device at %s\n" % offset).encode() * 500)
            file_id = at("files", "upload", "--store", store, original, "--type", "text/plain").strip().splitlines()[-1]
            copy = os.path.join(work, name + "-copy.txt")
            cairn("files", "download", "--store", bob, file_id, "--output", copy)
            with open(copy, "rb") as a, open(original, "rb") as b:
                check(a.read() == b.read(), "its file uploads, and downloads byte for byte on time")

            report = json.loads(at("status", "--store", store, "--json"))
            report = report.get("result", report)
            check(report.get("verdict") == "up-to-date", "cairn status says up to date", got=report.get("verdict"))
            check(negative_numbers(report) == [], "no age or duration in the report is negative", got=negative_numbers(report))
        print("outside clocks: all checks passed")
    finally:
        stop(server)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
