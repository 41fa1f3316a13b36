"""A backup made while writers keep writing, restored and served again, checked from outside.

Python's standard library only, with the built `cairn` as an operator runs it: it sets up a project with
`cairn admin`, starts `cairn serve`, writes records and files over HTTP, pulls the whole feed as a reader would (and
keeps its cursor), then starts writer threads that push batches and upload files without pause, and runs
`cairn admin backup --to DIR` while they do. After the writers stop and the server with them, it refuses a second
backup into the same directory, restores the backup with `cairn admin restore --from DIR` into a new data directory,
serves that, and checks: every write acknowledged before the backup began is there, the reader's cursor continues
with exactly the records it lacked (no new snapshot), every file completed before the backup downloads byte for byte,
and `GET /v1/admin/backups` lists the backup on both servers.

Usage: python3 scripts/outside/backup.py [path/to/cairn]   (default: $CAIRN, else .build/debug/cairn)
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid

from live_server import call, check, serve, stop

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAIRN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CAIRN", os.path.join(ROOT, ".build", "debug", "cairn"))
PASSWORD = "an outside password"
PROJECT = "/v1/projects/field"


def raw(base, method, path, bearer, data=None):
    """One request with a byte body; returns (status, bytes)."""
    request = urllib.request.Request(base + path, method=method, data=data,
                                     headers={"Authorization": "Bearer " + bearer, "Content-Type": "application/octet-stream"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def push(base, token, ids):
    """Creates the records `ids` in one batch; true when the server applied every one."""
    operations = [{"opId": str(uuid.uuid4()), "collection": "notes", "id": id, "op": "create",
                   "data": {"title": "note " + id, "n": index}} for index, id in enumerate(ids)]
    status, answer = call(base, "POST", PROJECT + "/batch", token, {"operations": operations})
    return status == 200 and all(result["status"] == "applied" for result in answer["results"])


def upload(base, token, name, data):
    """Creates, uploads and completes a file; returns its id, or None when a step failed."""
    status, created = call(base, "POST", PROJECT + "/files", token,
                           {"name": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    if status != 201:
        return None
    if raw(base, "PUT", PROJECT + "/files/%s/upload" % created["id"], token, data)[0] != 200:
        return None
    status, _ = call(base, "POST", PROJECT + "/files/%s/complete" % created["id"], token)
    return created["id"] if status == 200 else None


def pull(base, token, since=None):
    """Follows the feed of notes from `since` to its end; returns (status, live ids, cursor)."""
    ids, cursor = set(), since
    while True:
        query = {"limit": "1000"}
        if cursor:
            query["since"] = cursor
        status, page = call(base, "GET", PROJECT + "/collections/notes/changes", token, query=query)
        if status != 200:
            return status, ids, cursor
        ids |= {change["id"] for change in page["changes"] if not change.get("deleted")}
        cursor = page["cursor"]
        if not page["hasMore"]:
            return status, ids, cursor


class Writers:
    """Threads that push batches of records and upload files until stopped, noting when each was acknowledged."""

    def __init__(self, base, token):
        self.base, self.token = base, token
        self.lock = threading.Lock()
        self.records = []   # (acknowledged at, id)
        self.files = []     # (acknowledged at, id, bytes)
        self.errors = []
        self.stopping = threading.Event()
        # Daemon threads, and told to stop in `main`'s `finally` too, so that a failed step never leaves them writing.
        self.threads = [threading.Thread(target=self.write_records, args=(n,), daemon=True) for n in range(2)]
        self.threads.append(threading.Thread(target=self.write_files, daemon=True))

    def start(self):
        for thread in self.threads:
            thread.start()

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join()

    def write_records(self, writer):
        count = 0
        while not self.stopping.is_set():
            ids = ["w%d-%d" % (writer, count + n) for n in range(20)]
            if not push(self.base, self.token, ids):
                self.errors.append("writer %d: a batch was refused" % writer)
                return
            now = time.monotonic()
            with self.lock:
                self.records += [(now, id) for id in ids]
            count += len(ids)

    def write_files(self):
        count = 0
        while not self.stopping.is_set():
            data = os.urandom(150_000 + count * 1000)
            id = upload(self.base, self.token, "scan-%d.pdf" % count, data)
            if id is None:
                self.errors.append("file writer: an upload failed")
                return
            with self.lock:
                self.files.append((time.monotonic(), id, data))
            count += 1

    def acknowledged_before(self, moment):
        with self.lock:
            return ({id for at, id in self.records if at < moment},
                    {id: data for at, id, data in self.files if at < moment})


def main():
    if not os.path.exists(CAIRN):
        raise SystemExit("FAILED: no cairn binary at %s (build it, or pass its path)" % CAIRN)
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="cairn-backup-")
    process = writers = None
    try:
        data, backup, restored = (os.path.join(work, name) for name in ("data", "backup", "restored"))

        def run(*args, ok=True):
            command = [CAIRN] + list(args)
            done = subprocess.run(command, capture_output=True, text=True, timeout=600)
            if ok and done.returncode != 0:
                raise SystemExit("FAILED: %s exited %d:\n%s%s"
                                 % (" ".join(command[1:]), done.returncode, done.stdout, done.stderr))
            return done

        print("== cairn admin: a project, a writer, an operator, a schema")
        schema = os.path.join(work, "schema.json")
        with open(schema, "w") as file:
            file.write('{"collections": [{"name": "notes", "fields": [{"name": "title", "type": "string"}, '
                       '{"name": "n", "type": "integer"}]}]}')
        for args in (["add-project", "field"], ["add-user", "ana", "--password", PASSWORD],
                     ["grant", "ana", "--project", "field", "--role", "writer"], ["set-schema", "--project", "field", schema],
                     ["add-user", "opal", "--password", PASSWORD, "--operator"]):
            run("admin", "--data", data, *args)

        print("== cairn serve, records and files, a reader synced")
        process, base = serve(CAIRN, work, data)
        tokens = {}
        for user in ("ana", "opal"):
            status, answer = call(base, "POST", "/v1/auth/login", body={"username": user, "password": PASSWORD})
            check(status == 200, "%s signs in" % user, 200, status)
            tokens[user] = answer["accessToken"]
        ana = tokens["ana"]
        status, backups = call(base, "GET", "/v1/admin/backups", tokens["opal"])
        check(status == 200 and backups == {"backups": []}, "GET /v1/admin/backups lists none before the first",
              {"backups": []}, backups)
        for batch in range(4):
            check(push(base, ana, ["r-%d-%d" % (batch, n) for n in range(50)]), "a batch of 50 records is applied")
        status, read, cursor = pull(base, ana)
        check(status == 200 and len(read) == 200, "a reader pulls the 200 records and keeps its cursor", 200, len(read))
        check(push(base, ana, ["late-%d" % n for n in range(100)]), "100 more records after the reader synced")

        print("== writers keep writing while cairn admin backup runs")
        writers = Writers(base, ana)
        writers.start()
        time.sleep(1.0)
        moment = time.monotonic()
        before, files_before = writers.acknowledged_before(moment)
        made = run("admin", "--data", data, "backup", "--to", backup)
        during = writers.acknowledged_before(time.monotonic())[0]
        time.sleep(0.5)
        writers.stop()
        check(not writers.errors, "the writers wrote without an error during the backup", [], writers.errors)
        print(made.stdout.strip())
        check(made.stdout.startswith("backed up %s to %s: database " % (data, backup)),
              "cairn admin backup prints what it wrote and how long it took", "backed up ...", made.stdout)
        check(len(during) > len(before), "writes were acknowledged while the backup ran", "> %d" % len(before), len(during))
        check(len(files_before) >= 1, "files were completed before the backup began", ">= 1", len(files_before))
        status, backups = call(base, "GET", "/v1/admin/backups", tokens["opal"])
        check(status == 200 and [entry["path"] for entry in backups["backups"]] == [backup]
              and backups["backups"][0]["fileCount"] >= len(files_before) and backups["backups"][0]["databaseBytes"] > 0,
              "GET /v1/admin/backups lists the backup with its sizes", backup, backups)
        status, _ = call(base, "GET", "/v1/admin/backups", ana)
        check(status == 403, "a writer may not list backups", 403, status)
        stop(process)
        process = None

        print("== refusals, then cairn admin restore into a new data directory")
        again = run("admin", "--data", data, "backup", "--to", backup, ok=False)
        check(again.returncode != 0 and "is not empty" in again.stderr, "a second backup into the same directory is refused",
              "is not empty", again.stderr.strip())
        into_data = run("admin", "--data", data, "restore", "--from", backup, ok=False)
        check(into_data.returncode != 0 and "is not empty" in into_data.stderr,
              "a restore into a data directory in use is refused", "is not empty", into_data.stderr.strip())
        restore = run("admin", "--data", restored, "restore", "--from", backup)
        print(restore.stdout.strip())
        check("checked" in restore.stdout, "cairn admin restore checks and prints what it restored", "checked", restore.stdout)

        print("== the restored server")
        process, base = serve(CAIRN, work, restored)
        status, held, _ = pull(base, ana)
        check(status == 200 and before <= held, "every write acknowledged before the backup began is there (%d)" % len(before),
              [], sorted(before - held)[:10])
        check(held <= {id for _, id in writers.records} | read | {"late-%d" % n for n in range(100)},
              "and nothing that was never written", [], sorted(held)[:3])
        status, delta, _ = pull(base, ana, since=cursor)
        check(status == 200 and delta == held - read, "the reader's cursor continues with exactly what it lacked, no snapshot",
              len(held - read), "%d %d" % (status, len(delta)))
        for id, expected in files_before.items():
            status, body = raw(base, "GET", PROJECT + "/files/%s/content" % id, ana)
            check(status == 200 and body == expected, "file %s downloads byte for byte (%d bytes)" % (id, len(expected)),
                  len(expected), "%d %d" % (status, len(body)))
        status, backups = call(base, "GET", "/v1/admin/backups", tokens["opal"])
        check(status == 200 and [entry["path"] for entry in backups["backups"]] == [backup],
              "the restored server lists the backup it came from", backup, backups)
        print("all backup checks passed in %.1f s" % (time.monotonic() - started))
    finally:
        if writers is not None:
            writers.stopping.set()
        stop(process)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
