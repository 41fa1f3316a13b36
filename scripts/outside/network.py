"""A first sync measured from outside: bytes on the wire, time beside plain SQLite, and the client's peak memory.

Python's standard library only. It sets up a project of records in the bench's shape (about 500 bytes of varied field notes each) with `cairn admin`,
starts `cairn serve`, creates --records records over plain HTTP, then runs `cairn sync` into a fresh store through a
byte-counting TCP proxy of its own, under `/usr/bin/time -v`. In the same run, plain SQLite (Python's `sqlite3`, WAL,
`synchronous=FULL`, `executemany` in one transaction) inserts the same rows: typed columns and the whole JSON.

Then it queues up to 100,000 records offline in a second store (`cairn put`, 1000 per call) and times their push
(`cairn sync`, which pushes then pulls), again under `/usr/bin/time -v` and through a second counting proxy.

It checks that:
- the sync brings every record (the store's count, through `cairn query`);
- the bytes the server sent are at most 0.25x the same pages as plain JSON (fetched once without `Accept-Encoding`);
- the client's peak resident memory is under 64 MB, for the first sync and for the push;
- the push's sync does not download the store's own records again: it pulls 0 and downloads at most 5% of the bytes
  it uploads;
- the server's peak resident memory (VmHWM, over its whole life, the records' creation included) is under 200 MB;
and prints the sync's and the push's rates as ratios to the SQLite rate measured beside them.

Usage: python3 scripts/outside/network.py [path/to/cairn] [--records N] [--json]
(default cairn: $CAIRN, else .build/release/cairn, else .build/debug/cairn; default 100000 records)
"""
import json
import os
import random
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from live_server import call, check, serve, stop

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PASSWORD = "an outside password"
FIELDS = [("title", "string"), ("body", "string"), ("count", "integer"), ("score", "number"), ("done", "boolean"),
          ("due", "datetime"), ("tags", "json")]
SCHEMA = {"collections": [{"name": "items", "conflictPolicy": "merge-fields",
                           "fields": [{"name": name, "type": kind} for name, kind in FIELDS]}]}


def arguments():
    args = sys.argv[1:]
    records, as_json, cairn = 100_000, False, None
    while args:
        arg = args.pop(0)
        if arg == "--records":
            records = int(args.pop(0))
        elif arg == "--json":
            as_json = True
        else:
            cairn = arg
    if cairn is None:
        cairn = os.environ.get("CAIRN")
    if cairn is None:
        release = os.path.join(ROOT, ".build", "release", "cairn")
        cairn = release if os.path.exists(release) else os.path.join(ROOT, ".build", "debug", "cairn")
    return cairn, records, as_json


WORDS = ("inspected replaced checked cleaned tested adjusted reported missing damaged worn loose leaking cracked corroded "
         "blocked noisy hot cold wet dry pump valve filter belt motor panel cable fuse switch sensor gauge door window roof "
         "floor wall stair exit sign alarm extinguisher sprinkler hose ladder scaffold crane forklift truck trailer pallet "
         "shelf rack bin label seal lock key badge log permit report photo north south east west upper lower left right "
         "front rear inner outer main spare backup temporary new old first second third morning noon evening night shift "
         "crew team site zone bay dock yard gate office storeroom workshop plant tank pipe duct fan heater chiller boiler "
         "meter breaker transformer generator battery charger light lamp").split()


def record(index):
    """About 500 bytes of JSON in the bench's shape, its note drawn from field words, so that it compresses as real
    notes do (about 4:1), not as a repeated sentence does."""
    pick = random.Random(index)
    return {"title": "Inspection %d at site %d" % (index, pick.randrange(5000)),
            "body": " ".join(pick.choice(WORDS) for _ in range(40 + pick.randrange(31))),
            "count": pick.randrange(1_000_000), "score": pick.randrange(100_000) / 100, "done": pick.random() < 0.5,
            "due": "2026-%d-%dT10:00:00.000Z" % (10 + pick.randrange(3), 10 + pick.randrange(18)),
            "tags": [pick.choice(WORDS) for _ in range(1 + pick.randrange(3))]}


class CountingProxy:
    """A TCP proxy on a free loopback port that counts the bytes each way."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.upstream = 0  # client -> server
        self.downstream = 0  # server -> client
        self.lock = threading.Lock()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target_port))
            threading.Thread(target=self.pump, args=(client, server, "upstream"), daemon=True).start()
            threading.Thread(target=self.pump, args=(server, client, "downstream"), daemon=True).start()

    def pump(self, source, sink, direction):
        try:
            while True:
                chunk = source.recv(65536)
                if not chunk:
                    break
                with self.lock:
                    setattr(self, direction, getattr(self, direction) + len(chunk))
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.listener.close()


def push(base, token, records):
    """Creates the records over plain HTTP in batches of 1000."""
    for start in range(0, records, 1000):
        operations = [{"opId": "op-%d" % index, "collection": "items", "id": "item-%d" % index, "op": "create",
                       "data": record(index)} for index in range(start, min(start + 1000, records))]
        status, answer = call(base, "POST", "/v1/projects/bench/batch", bearer=token, body={"operations": operations})
        if status != 200 or any(result["status"] != "applied" for result in answer["results"]):
            raise SystemExit("FAILED: the records could not be created (%s)" % status)


def plain_json_bytes(base, token):
    """The bytes of every snapshot page (pages of 5000, the SDK's default) as plain JSON: no Accept-Encoding."""
    total, cursor = 0, None
    while True:
        path = "/v1/projects/bench/collections/items/changes?limit=5000" + ("&since=" + cursor if cursor else "")
        request = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token})
        with urllib.request.urlopen(request, timeout=60) as response:
            check_plain = response.headers.get("Content-Encoding") is None
            body = response.read()
        if not check_plain:
            raise SystemExit("FAILED: a request without Accept-Encoding got a compressed answer")
        total += len(body)
        page = json.loads(body)
        if not page["hasMore"]:
            return total
        cursor = urllib.parse.quote(page["cursor"])


def sqlite_floor(directory, records):
    """Plain SQLite inserting the same rows (typed columns and the JSON) in one transaction: rows per second."""
    path = os.path.join(directory, "floor.sqlite")
    database = sqlite3.connect(path, isolation_level=None)
    database.execute("PRAGMA journal_mode=WAL")
    database.execute("PRAGMA synchronous=FULL")
    database.execute("CREATE TABLE items (id TEXT PRIMARY KEY, version INTEGER, title TEXT, body TEXT, count INTEGER, "
                     "score REAL, done INTEGER, due TEXT, tags TEXT, data TEXT)")
    rows = []
    for index in range(records):
        data = record(index)
        rows.append(("item-%d" % index, index + 1, data["title"], data["body"], data["count"], data["score"],
                     int(data["done"]), data["due"], json.dumps(data["tags"]), json.dumps(data)))
    start = time.monotonic()
    database.execute("BEGIN")
    database.executemany("INSERT INTO items VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
    database.execute("COMMIT")
    seconds = time.monotonic() - start
    database.close()
    return records / seconds


def timed_cairn(cairn_path, *args):
    """Runs `cairn ARGS` under /usr/bin/time -v; returns (seconds, peak resident kB, its output)."""
    start = time.monotonic()
    timed = subprocess.run(["/usr/bin/time", "-v", cairn_path] + list(args), capture_output=True, text=True, timeout=3600,
                           env=dict(os.environ, CAIRN_PASSWORD=PASSWORD))
    seconds = time.monotonic() - start
    if timed.returncode != 0:
        raise SystemExit("FAILED: cairn %s exited %d:\n%s%s" % (" ".join(args), timed.returncode, timed.stdout, timed.stderr))
    return seconds, int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", timed.stderr).group(1)), timed.stdout


def server_peak_kb(process):
    """The server's peak resident memory so far, from /proc."""
    with open("/proc/%d/status" % process.pid) as status:
        return int(re.search(r"VmHWM:\s+(\d+) kB", status.read()).group(1))


def main():
    cairn_path, records, as_json = arguments()
    if not os.path.exists(cairn_path):
        raise SystemExit("FAILED: no cairn binary at %s (build it, or pass its path)" % cairn_path)
    work = tempfile.mkdtemp(prefix="cairn-network-")
    server = proxy = None
    try:
        data = os.path.join(work, "data")

        def cairn(*args):
            done = subprocess.run([cairn_path] + list(args), capture_output=True, text=True, timeout=600,
                                  env=dict(os.environ, CAIRN_PASSWORD=PASSWORD))
            if done.returncode != 0:
                raise SystemExit("FAILED: cairn %s exited %d:\n%s%s" % (" ".join(args), done.returncode, done.stdout, done.stderr))
            return done.stdout

        cairn("admin", "--data", data, "add-project", "bench")
        cairn("admin", "--data", data, "add-user", "field", "--password", PASSWORD)
        cairn("admin", "--data", data, "grant", "field", "--project", "bench", "--role", "writer")
        schema_path = os.path.join(work, "schema.json")
        with open(schema_path, "w") as file:
            json.dump(SCHEMA, file)
        cairn("admin", "--data", data, "set-schema", "--project", "bench", schema_path)
        server, base = serve(cairn_path, work, data)
        status, answer = call(base, "POST", "/v1/auth/login", body={"username": "field", "password": PASSWORD})
        check(status == 200, "signed in over plain HTTP", 200, status)
        token = answer["accessToken"]
        print("creating %d records over plain HTTP" % records)
        push(base, token, records)
        plain = plain_json_bytes(base, token)
        print("the snapshot as plain JSON: %d bytes" % plain)

        proxy = CountingProxy(int(base.rsplit(":", 1)[1]))
        store = os.path.join(work, "field.sqlite")
        seconds, peak_kb, _ = timed_cairn(cairn_path, "sync", "--store", store, "--server", "http://127.0.0.1:%d" % proxy.port,
                                       "--project", "bench", "--user", "field")
        counted = cairn("query", "--store", store, "--collection", "items", "--count").strip().splitlines()[-1]
        floor = sqlite_floor(work, records)
        rate = records / seconds
        print("cairn sync: %d records in %.2f s (%.0f records/s); plain SQLite beside it: %.0f rows/s; ratio %.2f"
              % (records, seconds, rate, floor, rate / floor))
        print("bytes from the server: %d (%.3f of the plain JSON); bytes to it: %d"
              % (proxy.downstream, proxy.downstream / plain, proxy.upstream))
        print("client peak memory: %.1f MB" % (peak_kb / 1024))
        check(str(records) in counted, "the store holds every record", records, counted)
        check(proxy.downstream <= 0.25 * plain, "the first sync moved at most 0.25x the plain JSON",
              "<= %d" % (0.25 * plain), proxy.downstream)
        check(peak_kb < 64 * 1024, "the client's peak memory is under 64 MB", "< 65536 kB", "%d kB" % peak_kb)

        pushed = min(records, 100_000)
        writer = os.path.join(work, "writer.sqlite")
        writer_proxy = CountingProxy(int(base.rsplit(":", 1)[1]))
        cairn("sync", "--store", writer, "--server", "http://127.0.0.1:%d" % writer_proxy.port, "--project", "bench", "--user", "field")
        print("queueing %d records offline with cairn put" % pushed)
        for start in range(0, pushed, 1000):
            pairs = []
            for index in range(start, min(start + 1000, pushed)):
                pairs += ["new-%d" % index, json.dumps(record(records + index))]
            cairn("put", "--store", writer, "items", *pairs)
        up_before, down_before = writer_proxy.upstream, writer_proxy.downstream
        push_seconds, push_peak_kb, push_output = timed_cairn(cairn_path, "sync", "--store", writer)
        push_up, push_down = writer_proxy.upstream - up_before, writer_proxy.downstream - down_before
        writer_proxy.close()
        print("the push's sync: %d bytes up, %d bytes down (%.4f of up): %s"
              % (push_up, push_down, push_down / push_up, push_output.strip().splitlines()[-1] if push_output.strip() else ""))
        check(re.search(r"\bpulled 0\b", push_output) is not None, "the push's sync pulls none of its own records", "pulled 0", push_output)
        check(push_down <= 0.05 * push_up, "the push's sync downloads at most 5% of what it uploads", "<= %d" % (0.05 * push_up), push_down)
        push_rate = pushed / push_seconds
        status, page = call(base, "GET", "/v1/projects/bench/collections/items/digest", bearer=token)
        print("cairn sync pushed %d queued records in %.2f s (%.0f records/s; %.2f of the SQLite rate); client peak %.1f MB"
              % (pushed, push_seconds, push_rate, push_rate / floor, push_peak_kb / 1024))
        check(status == 200 and page["count"] == records + pushed, "the server holds every pushed record", records + pushed, page)
        check(push_peak_kb < 64 * 1024, "the client's peak memory during the push is under 64 MB", "< 65536 kB", "%d kB" % push_peak_kb)
        server_kb = server_peak_kb(server)
        print("server peak memory: %.1f MB" % (server_kb / 1024))
        check(server_kb < 200 * 1024, "the server's peak memory is under 200 MB", "< 204800 kB", "%d kB" % server_kb)
        figures = {"records": records, "plainJSONBytes": plain, "bytesFromServer": proxy.downstream,
                   "bytesToServer": proxy.upstream, "wireToPlainRatio": round(proxy.downstream / plain, 3),
                   "syncSeconds": round(seconds, 2), "syncRecordsPerSecond": round(rate),
                   "sqliteRowsPerSecond": round(floor), "syncToSQLiteRatio": round(rate / floor, 3),
                   "clientPeakRSSBytes": peak_kb * 1024, "pushed": pushed, "pushSeconds": round(push_seconds, 2),
                   "pushToSQLiteRatio": round(push_rate / floor, 3), "pushClientPeakRSSBytes": push_peak_kb * 1024,
                   "pushBytesUp": push_up, "pushBytesDown": push_down,
                   "serverPeakRSSBytes": server_kb * 1024}
        if as_json:
            print(json.dumps(figures))
    finally:
        if proxy:
            proxy.close()
        stop(server)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
