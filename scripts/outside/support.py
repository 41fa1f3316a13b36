"""Support without the device in hand, checked from outside against a live `cairn serve`.

Python's standard library only, as a newcomer with curl or Python would: it sets up a project with `cairn admin`,
starts `cairn serve` on a free port, syncs a store with `cairn sync`, writes a record holding a marker string and
uploads a file whose name holds it, then uploads the store's diagnostics with `cairn diagnostics --upload`. It checks
with urllib that `GET /health` names the protocol and release, that the diagnostics route answers admins only (no token
401, a non-member 404, a writer 403) and that the stored report holds no marker; that `cairn admin diagnostics` prints
the report readably and as JSON; that `cairn unregister --delete-store` uploads what waited, removes the client from
the project's list and deletes the store; and that `cairn admin remove-client` and `DELETE .../clients/{id}` remove
clients.

Usage: python3 scripts/outside/support.py [path/to/cairn]   (default: $CAIRN, else .build/debug/cairn)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

from live_server import call, check, serve, stop

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAIRN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CAIRN", os.path.join(ROOT, ".build", "debug", "cairn"))
PASSWORD = "an outside password"
PROJECT = "/v1/projects/field"
SCHEMA = {"collections": [{"name": "notes", "fields": [{"name": "title", "type": "string"},
                                                       {"name": "photo", "type": "file"}]}]}


def main():
    if not os.path.exists(CAIRN):
        raise SystemExit("FAILED: no cairn binary at %s (build it, or pass its path)" % CAIRN)
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="cairn-support-")
    process = None
    marker = "MARKER-" + uuid.uuid4().hex[:10]
    try:
        data = os.path.join(work, "data")
        store = os.path.join(work, "field.sqlite")
        environment = dict(os.environ, CAIRN_PASSWORD=PASSWORD)
        environment.pop("CAIRN_STORE_KEY", None)

        def run(*args, admin=False, ok=True):
            command = [CAIRN] + (["admin", "--data", data] if admin else []) + list(args)
            done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=environment)
            if ok and done.returncode != 0:
                raise SystemExit("FAILED: %s exited %d:\n%s%s"
                                 % (" ".join(command[1:]), done.returncode, done.stdout, done.stderr))
            return done

        print("== cairn admin: a project, a writer, an admin, an outsider, a schema")
        run("add-project", "field", admin=True)
        run("add-project", "other", admin=True)
        for user, project, role in (("ana", "field", "writer"), ("boss", "field", "admin"), ("olga", "other", "admin")):
            run("add-user", user, "--password", PASSWORD, admin=True)
            run("grant", user, "--project", project, "--role", role, admin=True)
        schema = os.path.join(work, "schema.json")
        with open(schema, "w") as file:
            json.dump(SCHEMA, file)
        run("set-schema", "--project", "field", schema, admin=True)

        print("== cairn serve")
        process, base = serve(CAIRN, work, data)
        status, health = call(base, "GET", "/health")
        release = run("--version").stdout.strip()
        check(status == 200 and health.get("protocol") == "1" and health.get("version") == release,
              "GET /health names protocol 1 and the release cairn --version prints (%s)" % release,
              {"status": "ok", "protocol": "1", "version": release}, health)
        tokens = {}
        for user in ("ana", "boss", "olga"):
            status, answer = call(base, "POST", "/v1/auth/login", body={"username": user, "password": PASSWORD})
            check(status == 200, "%s signs in" % user, 200, "%d %s" % (status, answer))
            tokens[user] = answer["accessToken"]

        print("== a store with a marker in a record and in a file name")
        run("sync", "--store", store, "--server", base, "--project", "field", "--user", "ana")
        run("put", "--store", store, "notes", "n1", json.dumps({"title": marker}))
        photo = os.path.join(work, marker + "-site.jpg")
        with open(photo, "wb") as file:
            file.write(os.urandom(2048))
        run("files", "upload", "--store", store, photo, "--attach", "notes/n1/photo")
        run("sync", "--store", store)
        run("put", "--store", store, "notes", "n2", json.dumps({"title": marker + " again"}))
        print("ok: ana's store synced n1 and its photo, and holds n2 offline")

        print("== cairn diagnostics --upload")
        uploaded = run("diagnostics", "--store", store, "--upload").stdout
        check(uploaded.startswith("waiting: 1 change wait") and "uploaded the diagnostics of client c-" in uploaded,
              "cairn diagnostics --upload prints the report (waiting: 1 change) and the upload", "waiting..., uploaded...",
              uploaded)
        client = uploaded.split("uploaded the diagnostics of client ")[1].split(" ")[0]
        path = PROJECT + "/clients/%s/diagnostics" % client
        for user, code in ((None, 401), ("olga", 404), ("ana", 403)):
            status, answer = call(base, "GET", path, tokens.get(user))
            check(status == code, "GET .../clients/%s/diagnostics as %s answers %d" % (client, user or "nobody", code),
                  code, "%d %s" % (status, answer))
        status, stored = call(base, "GET", path, tokens["boss"])
        check(status == 200 and stored["client"]["clientId"] == client and stored["client"]["user"] == "ana"
              and stored["report"]["queueDepth"] == 1 and stored["report"]["verdict"] == "waiting",
              "boss (admin) reads the report: ana's client, 1 change waiting", "200 waiting, queueDepth 1", stored)
        check(marker not in json.dumps(stored), "the stored report holds no marker (record data, file name)",
              "no " + marker, json.dumps(stored)[:400])
        printed = run("diagnostics", "--project", "field", "--client", client, admin=True).stdout
        check(printed.startswith("waiting: 1 change wait") and ("client %s of ana" % client) in printed
              and "queue: 1 change(s)" in printed and marker not in printed,
              "cairn admin diagnostics prints the verdict, the client and the queue, without the marker",
              "waiting..., client %s of ana..., queue: 1 change(s)" % client, printed)
        as_json = json.loads(run("diagnostics", "--project", "field", "--client", client, "--json", admin=True).stdout)
        check(as_json["report"] == stored["report"] and as_json["client"]["clientId"] == client,
              "cairn admin diagnostics --json gives the route's report", stored["report"], as_json.get("report"))

        print("== cairn unregister")
        done = run("unregister", "--store", store, "--delete-store")
        check(("unregistered client %s" % client) in done.stdout and not os.path.exists(store),
              "cairn unregister --delete-store removes the client and the store", "unregistered, no store file",
              done.stdout + " exists=%s" % os.path.exists(store))
        status, page = call(base, "GET", PROJECT + "/clients", tokens["boss"])
        check(status == 200 and page["items"] == [], "the project lists no client any more", [], page)
        status, page = call(base, "GET", PROJECT + "/collections/notes/changes", tokens["boss"])
        check(sorted(change["id"] for change in page["changes"]) == ["n1", "n2"],
              "n2, written offline, was uploaded before the client left", ["n1", "n2"], page["changes"])
        status, _ = call(base, "GET", path, tokens["boss"])
        check(status == 404, "its diagnostics went with it (404)", 404, status)

        print("== removing clients: cairn admin remove-client and DELETE .../clients/{id}")
        ids = []
        for _ in range(2):
            status, answer = call(base, "POST", PROJECT + "/clients", tokens["ana"], {"device": "phone"})
            check(status == 201, "ana registers a client", 201, "%d %s" % (status, answer))
            ids.append(answer["clientId"])
        removed = run("remove-client", "--project", "field", ids[0], admin=True).stdout
        check(("removed client %s from field" % ids[0]) in removed, "cairn admin remove-client removes a lost device",
              "removed client ...", removed)
        again = run("remove-client", "--project", "field", ids[0], admin=True, ok=False)
        check(again.returncode != 0 and "has no client" in again.stderr, "removing it again fails, naming why",
              "non-zero, has no client", "%d %s" % (again.returncode, again.stderr))
        client_path = PROJECT + "/clients/" + ids[1]
        for user, code in ((None, 401), ("olga", 404)):
            status, answer = call(base, "DELETE", client_path, tokens.get(user))
            check(status == code, "DELETE .../clients/{id} as %s answers %d" % (user or "nobody", code), code,
                  "%d %s" % (status, answer))
        status, _ = call(base, "DELETE", client_path, tokens["ana"])
        check(status == 204, "ana removes her own client (204)", 204, status)
        status, page = call(base, "GET", PROJECT + "/clients", tokens["boss"])
        check(page["items"] == [], "no client is left", [], page)
        print("support check: all passed in %.1f s" % (time.monotonic() - started))
    finally:
        stop(process)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
