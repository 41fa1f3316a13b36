"""Private and shared files, checked from outside with the built `cairn`, curl and urllib, as people would use them.

Python's standard library and curl only. It sets up a project with `cairn admin`, starts `cairn serve` on a free port,
and checks that:
- `cairn files upload --private --source S --share bob` uploads a file that only its uploader, the admin and bob see:
  bob downloads it with `cairn files download` and with curl; carl (another writer) is refused with 404 by the CLI,
  by curl and by the search, and cannot share it;
- `cairn files unshare` takes bob off again, and `cairn files share` by bob (not the uploader) is refused;
- a private file cannot be made public (422 naming `public`).

Usage: python3 scripts/outside/shared_files.py [path/to/cairn]   (default: $CAIRN, else .build/debug/cairn)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import live_server
from live_server import call, check, serve, set_up_project, stop, tool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAIRN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CAIRN", os.path.join(ROOT, ".build", "debug", "cairn"))
PASSWORD = "an outside password"
SCHEMA = {"collections": [{"name": "reports", "fields": [{"name": "title", "type": "string"}, {"name": "pdf", "type": "file"}]}]}


def main():
    if not os.path.exists(CAIRN):
        raise SystemExit("FAILED: no cairn binary at %s (build it, or pass its path)" % CAIRN)
    work = tempfile.mkdtemp(prefix="cairn-shared-files-")
    server = None
    try:
        data = os.path.join(work, "data")
        cairn, json_of = tool(CAIRN, PASSWORD)
        set_up_project(cairn, data, work, "field", {"ana": "writer", "bob": "writer", "carl": "writer", "ada": "admin"}, SCHEMA)
        server, base = serve(CAIRN, work, data)
        stores = live_server.stores(cairn, work, base, ["ana", "bob", "carl"])

        def token(user):
            status, tokens = call(base, "POST", "/v1/auth/login", body={"username": user, "password": PASSWORD})
            check(status == 200, user + " signs in over HTTP", 200, status)
            return tokens["accessToken"]

        def curl_status(user, path):
            done = subprocess.run(["curl", "-s", "-o", os.devnull, "-w", "%{http_code}", "-H", "Authorization: Bearer " + token(user),
                                   base + path], capture_output=True, text=True, timeout=60)
            return int(done.stdout or "0")

        print("== cairn files upload --private --share bob")
        original = os.path.join(work, "figures.txt")
        with open(original, "wb") as file:
            file.write(b"quarterly figures\n" * 1000)
        file_id = cairn("files", "upload", "--store", stores["ana"], original, "--type", "text/plain", "--source", "scan",
                        "--private", "--share", "bob").strip().splitlines()[-1]
        info = json_of("files", "info", "--store", stores["ana"], file_id)
        check(info["permissions"] == {"access": "private", "sharedWith": ["bob"]} and info["source"] == "scan",
              "the file is private, shared with bob, with its source", got=info)

        print("== bob, named, downloads it; carl does not see it")
        copy = os.path.join(work, "bob-copy.txt")
        cairn("files", "download", "--store", stores["bob"], file_id, "--output", copy)
        with open(copy, "rb") as a, open(original, "rb") as b:
            check(a.read() == b.read(), "bob's copy (cairn files download) is the uploaded bytes")
        content = "/v1/projects/field/files/%s/content" % file_id
        check(curl_status("bob", content) == 200, "curl downloads it as bob")
        check(curl_status("carl", content) == 404, "curl as carl gets 404")
        check(curl_status("carl", "/v1/projects/field/files/" + file_id) == 404, "carl cannot read its metadata either")
        refused = subprocess.run([CAIRN, "files", "download", "--store", stores["carl"], file_id, "--output", os.path.join(work, "carl.txt")],
                                 capture_output=True, text=True, timeout=120, env=dict(os.environ, CAIRN_PASSWORD=PASSWORD))
        check(refused.returncode == 1 and "not_found" in refused.stderr, "carl's cairn files download exits 1 naming not_found",
              got=(refused.returncode, refused.stderr))
        listed = cairn("files", "list", "--store", stores["carl"])
        check(file_id not in listed, "carl's cairn files list does not show it", got=listed)
        listed = cairn("files", "list", "--store", stores["bob"])
        check(file_id in listed, "bob's cairn files list shows it", got=listed)
        cairn("files", "share", "--store", stores["carl"], file_id, "carl", expect=1)
        check(curl_status("carl", content) == 404, "carl could not share it with himself")

        print("== sharing is the uploader's: bob may not, ana unshares")
        cairn("files", "share", "--store", stores["bob"], file_id, "carl", expect=1)
        after = json_of("files", "unshare", "--store", stores["ana"], file_id, "bob")
        check(after["permissions"]["sharedWith"] == [], "ana takes bob off", got=after)
        check(curl_status("bob", content) == 404, "bob gets 404 now")

        print("== a private file is never public")
        status, answer = call(base, "PATCH", "/v1/projects/field/files/" + file_id, token("ana"), body={"public": True})
        check(status == 422 and answer["error"]["details"]["field"] == "public", "making it public is 422 naming public",
              got=(status, answer))
        status, _ = call(base, "GET", "/v1/public/files/" + file_id)
        check(status == 404, "the public path answers 404", 404, status)
        print("outside shared files: all checks passed")
    finally:
        stop(server)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
