"""The other systems the integrations check plays, from Python's standard library: a webhook receiver that checks
every delivery's signature, an action's backend that writes back with a service key, writers pushing over HTTP
through server restarts, and the feed read to its end to compare what the receiver holds with it.

    from integration_systems import Backend, Receiver, Writers, wait_for_delivery
"""
import hashlib
import hmac
import http.server
import json
import threading
import time
import uuid

from live_server import call, check, free_port

class Receiver:
    """A webhook receiver on a free port: checks each POST's signature and shape, records what it accepted, and
    answers as the check tells it (`ok`, `fail` with 500, `hang` past the server's timeout)."""

    def __init__(self, secret):
        self.secret = secret
        self.lock = threading.Lock()
        self.mode = "ok"
        self.posts = []          # every accepted delivery body, in arrival order
        self.refused = 0
        self.problems = []
        self.in_flight = 0
        self.most_in_flight = 0
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.in_flight += 1
                    receiver.most_in_flight = max(receiver.most_in_flight, receiver.in_flight)
                    mode = receiver.mode
                try:
                    if mode == "hang":
                        time.sleep(13)   # past the server's 10 s timeout: not accepted
                        return self.answer(200, b"too late")
                    if mode == "fail":
                        with receiver.lock:
                            receiver.refused += 1
                        return self.answer(500, b'{"error": "maintenance"}')
                    expected = "sha256=" + hmac.new(receiver.secret.encode(), body, hashlib.sha256).hexdigest()
                    if not hmac.compare_digest(self.headers.get("Cairn-Signature", ""), expected):
                        with receiver.lock:
                            receiver.problems.append("a bad signature")
                        return self.answer(401, b"bad signature")
                    document = json.loads(body)
                    if not self.headers.get("Cairn-Delivery") or not 1 <= len(document["deliveries"]) <= 100:
                        with receiver.lock:
                            receiver.problems.append("a bad delivery: %s" % self.headers.get("Cairn-Delivery"))
                    with receiver.lock:
                        receiver.posts.append(document)
                    self.answer(200, b'{"ok": true}')
                finally:
                    with receiver.lock:
                        receiver.in_flight -= 1

            def answer(self, status, body):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass   # the server gave up on a hanging delivery, as it should

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d/cairn" % self.server.server_address[1]

    def set_mode(self, mode):
        with self.lock:
            self.mode = mode

    def deliveries(self):
        with self.lock:
            return [delivery for post in self.posts for delivery in post["deliveries"]]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Backend:
    """An action's backend on a free port: checks each call's signature with the project's action secret, closes the
    job it names by writing back through a service key (only once per idempotency key), and answers what it did."""

    def __init__(self):
        self.lock = threading.Lock()
        self.secret = None
        self.base = None
        self.key = None
        self.calls = []          # (idempotencyKey, body) of every signed call
        self.problems = []
        backend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                expected = "sha256=" + hmac.new(backend.secret.encode(), body, hashlib.sha256).hexdigest()
                if not hmac.compare_digest(self.headers.get("Cairn-Signature", ""), expected):
                    with backend.lock:
                        backend.problems.append("a bad signature")
                    return self.answer(401, {"message": "bad signature"})
                call_body = json.loads(body)
                job = (call_body.get("arguments") or {}).get("job")
                with backend.lock:
                    backend.calls.append((call_body["idempotencyKey"], call_body))
                if str(job).startswith("slow-"):
                    time.sleep(4)   # long enough for the check to kill the device's sync meanwhile
                # The job must be on the server already: the device's save was sent before its call.
                status, page = call(backend.base, "GET", "/v1/projects/field/collections/jobs/changes", bearer=backend.key,
                                    query={"limit": "10000"})
                if status != 200 or not any(change["id"] == job for change in page["changes"]):
                    return self.answer(409, {"message": "no job %s on the server" % job})
                status, _ = call(backend.base, "POST", "/v1/projects/field/batch", bearer=backend.key, body={"operations": [
                    {"opId": "close-" + call_body["idempotencyKey"], "collection": "jobs", "id": job, "op": "patch",
                     "data": {"status": "closed"}}]})
                self.answer(200 if status == 200 else 503,
                            {"closed": job, "by": call_body["caller"]["user"], "role": call_body["caller"]["role"]})

            def answer(self, status, value):
                raw = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d/close" % self.server.server_address[1]

    def calls_with(self, key):
        with self.lock:
            return [body for called, body in self.calls if called == key]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Writers:
    """Threads pushing batches of job changes over HTTP to the given servers, round robin, until stopped; a server
    that is down (killed, restarting) costs a retry, never a lost write: each batch is retried with its opIds until
    one server answers it."""

    def __init__(self, bases, token, prefix):
        self.bases, self.token, self.prefix = bases, token, prefix
        self.stopping = threading.Event()
        self.batches = 0
        self.errors = []
        self.threads = [threading.Thread(target=self.run, args=(index,), daemon=True) for index in range(2)]
        for thread in self.threads:
            thread.start()

    def run(self, index):
        number = 0
        while not self.stopping.is_set():
            operations = []
            for slot in range(20):
                # The first 160 changes of a thread make its records, the later ones rewrite them.
                position = number * 20 + slot
                record = "%s-%d-%d" % (self.prefix, index, position % 160)
                operations.append({"opId": str(uuid.uuid4()), "collection": "jobs", "id": record,
                                   "op": "create" if position < 160 else "update", "data": {"title": "job %s" % record, "n": number}})
            operations.append({"opId": str(uuid.uuid4()), "collection": "notes", "id": "note-%d-%d" % (index, number), "op": "create",
                               "data": {"title": "not delivered"}})
            body = {"atomic": False, "operations": operations}
            attempt = 0
            while not self.stopping.is_set():
                base = self.bases[(number + attempt) % len(self.bases)]
                attempt += 1
                try:
                    status, answer = call(base, "POST", "/v1/projects/field/batch", bearer=self.token, body=body)
                except OSError:
                    status, answer = 0, None
                if status == 200:
                    refused = [result for result in answer["results"] if result["status"] not in ("applied", "unchanged")]
                    if refused:
                        self.errors.append("refused: %s" % refused[0])
                        return
                    break
                if status not in (0, 502, 503):
                    self.errors.append("%d %s" % (status, answer))
                    return
                time.sleep(0.2)
            number += 1
            self.batches += 1

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=60)


def feed(base, token):
    """The jobs feed read to its end: the latest state of every record, by id."""
    records, cursor = {}, None
    while True:
        query = {"limit": "1000"}
        if cursor:
            query["since"] = cursor
        status, page = call(base, "GET", "/v1/projects/field/collections/jobs/changes", bearer=token, query=query)
        if status != 200:
            raise SystemExit("FAILED: the jobs feed answered %d: %s" % (status, page))
        for change in page["changes"]:
            records[change["id"]] = change
        cursor = page["cursor"]
        if not page.get("hasMore"):
            return records


def wait_for_delivery(receiver, base, token, what):
    """Waits until the receiver's last delivery of every record matches the feed; then checks order and shape."""
    deadline = time.monotonic() + 300
    while True:
        records = feed(base, token)
        last = {}
        for delivery in receiver.deliveries():
            last[delivery["id"]] = delivery
        missing = [record for record in records.values()
                   if record["id"] not in last or last[record["id"]]["version"] != record["version"]]
        if not missing:
            break
        if time.monotonic() > deadline:
            raise SystemExit("FAILED: %s: %d of %d records not delivered at their feed version after 300 s (e.g. %s)"
                             % (what, len(missing), len(records), missing[0]))
        time.sleep(0.5)
    deliveries = receiver.deliveries()
    check(not receiver.problems, "%s: every delivery carried a valid Cairn-Signature and Cairn-Delivery" % what, [], receiver.problems)
    check(all(last[record["id"]].get("data") == record.get("data") for record in records.values()),
          "%s: the receiver's last delivery of each of the %d records holds the feed's data" % (what, len(records)))
    check(all(delivery["collection"] == "jobs" for delivery in deliveries), "%s: only the webhook's collection was delivered" % what)
    seen, first_times = set(), []
    for delivery in deliveries:
        if delivery["deliveryId"] not in seen:
            seen.add(delivery["deliveryId"])
            first_times.append(delivery["version"])
    check(first_times == sorted(first_times), "%s: %d changes arrived in feed order (%d deliveries, repeats included)"
          % (what, len(first_times), len(deliveries)))
    return records
