"""Two `cairn sync --watch` processes from outside: they converge through `cairn put` alone, across a server restart.
Usage: outside_watch.py CAIRN_BINARY

Starts a `cairn serve` of its own (a temporary data directory, a free loopback port it picks, so that it can restart
the server on the same port), sets it up as run.sh does with two writers, alice and bob, and gives each a store. Then
it starts one `cairn sync --watch` per store, puts a record into each store and, running no other command than
`cairn query`, waits until both stores hold both records. It stops the server with SIGTERM, puts a change into
alice's store while the server is down, starts the server again and waits until bob's store shows the change. Last,
both watchers get SIGINT (exit 0, output naming the syncs and ending with "stopped") and `cairn status` must say
up-to-date, with --json holding no record data. Everything it starts is stopped, and everything it writes removed.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

cairn = os.path.abspath(sys.argv[1])
here = os.path.dirname(os.path.abspath(__file__))
schema_path = os.path.join(here, "schema.json")
PASSWORD = "outside-watch-password"
PROJECT = "field"
USERS = ("alice", "bob")
environment = dict(os.environ, CAIRN_PASSWORD=PASSWORD)
processes = []  # every process started, for the cleanup


def fail(message):
    print("outside watch: FAILED: " + message)
    sys.exit(1)


def run(*arguments, timeout=30, expect=0):
    """Runs one cairn command to its end; any exit status other than `expect` fails the check with its output."""
    command = [cairn, *arguments]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=environment, stdin=subprocess.DEVNULL,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        fail(f"`{' '.join(command)}` did not end within {timeout}s")
    if expect is not None and done.returncode != expect:
        fail(f"`{' '.join(command)}` exited {done.returncode}, expected {expect}\nstdout: {done.stdout}\nstderr: {done.stderr}")
    return done


def wait_until(predicate, timeout, interval=0.1):
    """Seconds until predicate() held, or None after timeout."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        time.sleep(interval)
    return time.monotonic() - started if predicate() else None


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def string_field():
    """The first collection of schema.json with a string field: (collection, field)."""
    with open(schema_path) as handle:
        schema = json.load(handle)
    for collection in schema["collections"]:
        for field in collection["fields"]:
            if field["type"] == "string":
                return collection["name"], field["name"]
    fail(f"{schema_path} has no collection with a string field")


# --- The server -----------------------------------------------------------------------------------------------------

class Server:
    def __init__(self, data, port, log):
        self.data, self.port, self.log = data, port, log
        self.process = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        offset = os.path.getsize(self.log) if os.path.exists(self.log) else 0
        with open(self.log, "a") as log:
            self.process = subprocess.Popen([cairn, "serve", "--data", self.data, "--host", "127.0.0.1",
                                             "--port", str(self.port)], stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=environment)
        processes.append(self.process)
        banner = f"listening on {self.url}"
        if wait_until(lambda: banner in self.output(offset) or self.process.poll() is not None, 15) is None \
                or banner not in self.output(offset):
            fail(f"`cairn serve --port {self.port}` did not say '{banner}' (exit status {self.process.poll()}):\n"
                 + self.output(offset)[-3000:])

    def stop(self):
        """SIGTERM, then waits; returns the exit status."""
        self.process.terminate()
        try:
            return self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            fail(f"`cairn serve` did not exit within 15s of SIGTERM; its log ends:\n{self.output()[-3000:]}")

    def output(self, offset=0):
        with open(self.log, errors="replace") as handle:
            handle.seek(offset)
            return handle.read()


def set_up(data):
    run("admin", "--data", data, "add-project", PROJECT)
    for user in USERS:
        run("admin", "--data", data, "add-user", user, "--password", PASSWORD)
        run("admin", "--data", data, "grant", user, "--project", PROJECT, "--role", "writer")
    run("admin", "--data", data, "set-schema", "--project", PROJECT, schema_path)


# --- The watchers ---------------------------------------------------------------------------------------------------

class Watcher:
    """`cairn sync --watch --store S`, its output read line by line in a background thread."""

    def __init__(self, store):
        self.store = store
        self.lines = []
        self.arrivals = []  # when each line was read, to tell live output from output flushed at exit
        self.interrupted_at = None
        self.process = subprocess.Popen([cairn, "sync", "--watch", "--store", store], stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, env=environment)
        processes.append(self.process)
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        for line in self.process.stdout:
            self.arrivals.append(time.monotonic())
            self.lines.append(line.rstrip("\n"))

    def output(self):
        return "\n".join(self.lines)

    def printed_live(self):
        """Whether a 'synced:' line was read before SIGINT (rather than all at once when the process ended)."""
        return any("synced:" in line and at < self.interrupted_at for at, line in zip(self.arrivals, self.lines))

    def interrupt(self):
        """SIGINT, then waits for the exit status and the last of the output."""
        self.interrupted_at = time.monotonic()
        self.process.send_signal(signal.SIGINT)
        try:
            status = self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            fail(f"`cairn sync --watch --store {self.store}` did not exit within 15s of SIGINT; its output:\n{self.output()}")
        self.reader.join(timeout=5)
        return status


# --- The stores -----------------------------------------------------------------------------------------------------

def records(store, collection, field):
    """The store's records as {id: value of field}, read with `cairn query`."""
    done = run("query", "--store", store, f"SELECT id, {field} FROM {collection}")
    try:
        answer = json.loads(done.stdout)
        return {row["id"]: row[field] for row in answer["result"]["database"]["records"]}
    except (ValueError, KeyError, TypeError) as error:
        fail(f"`cairn query --store {store}` printed something other than its JSON ({error}): {done.stdout!r}")


def check_status(store, secrets):
    done = run("status", "--store", store)
    first = done.stdout.splitlines()[0] if done.stdout else ""
    if not first.startswith("up-to-date"):
        fail(f"`cairn status --store {store}` says {first!r}, not up-to-date:\n{done.stdout}{done.stderr}")
    done = run("status", "--store", store, "--json")
    try:
        report = json.loads(done.stdout)
    except ValueError as error:
        fail(f"`cairn status --store {store} --json` is not JSON ({error}): {done.stdout!r}")
    if report.get("verdict") != "up-to-date":
        fail(f"`cairn status --store {store} --json` has verdict {report.get('verdict')!r}, not up-to-date:\n{done.stdout}")
    text = done.stdout + json.dumps(report, ensure_ascii=False)
    leaked = [secret for secret in secrets if secret in text]
    if leaked:
        fail(f"`cairn status --store {store} --json` holds record data {leaked}:\n{done.stdout}")


def check_stopped(watcher, status):
    output = watcher.output()
    if status != 0:
        fail(f"`cairn sync --watch --store {watcher.store}` exited {status} on SIGINT, expected 0; its output:\n{output}")
    if "synced:" not in output:
        fail(f"`cairn sync --watch --store {watcher.store}` printed no 'synced:' line; its output:\n{output}")
    last = next((line for line in reversed(watcher.lines) if line.strip()), "")
    if not last.startswith("stopped"):
        fail(f"`cairn sync --watch --store {watcher.store}` did not end with a 'stopped' line (last: {last!r}); "
             f"its output:\n{output}")


# --- The check ------------------------------------------------------------------------------------------------------

def main(folder):
    if not os.access(cairn, os.X_OK):
        fail(f"{cairn} is not an executable cairn binary")
    started = time.monotonic()
    collection, field = string_field()
    data = os.path.join(folder, "data")
    set_up(data)
    server = Server(data, free_port(), os.path.join(folder, "serve.log"))
    server.start()

    stores = {user: os.path.join(folder, f"{user}.sqlite") for user in USERS}
    for user, store in stores.items():
        run("sync", "--store", store, "--server", server.url, "--project", PROJECT, "--user", user)
    alice, bob = stores["alice"], stores["bob"]
    watchers = [Watcher(store) for store in stores.values()]

    def diagnose(message):
        for watcher in watchers:  # their output reaches a pipe only when they exit (see the note below)
            if watcher.process.poll() is None:
                watcher.process.send_signal(signal.SIGINT)
        for watcher in watchers:
            try:
                watcher.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            watcher.reader.join(timeout=5)
        fail(message + "".join(f"\n--- cairn sync --watch --store {w.store}:\n{w.output()}" for w in watchers)
             + f"\n--- cairn serve (last lines):\n{server.output()[-3000:]}")

    # Each store writes one record; the watchers alone must bring both to both stores.
    tag = uuid.uuid4().hex[:8]
    wanted = {f"watch-{user}": f"written by {user} in {tag}" for user in USERS}
    put_at = time.monotonic()
    for user, store in stores.items():
        run("put", "--store", store, collection, f"watch-{user}", json.dumps({field: wanted[f"watch-{user}"]}))
    seen = {}

    def converged():
        seen.update({user: records(store, collection, field) for user, store in stores.items()})
        return all(seen[user] == wanted for user in USERS)

    if wait_until(converged, 20, interval=0.2) is None:
        diagnose(f"20s after one `cairn put` into each store they still differ from {wanted}: {seen}")
    first_sync = time.monotonic() - put_at
    print(f"outside watch: a put into each store reached both stores through the watchers in {first_sync:.1f}s")

    # Idle: with nothing to do, a watcher holds its live connection and syncs no more (its output is live, line by
    # line, into this pipe).
    time.sleep(2)
    before = [sum("synced:" in line for line in watcher.lines) for watcher in watchers]
    time.sleep(4)
    after = [sum("synced:" in line for line in watcher.lines) for watcher in watchers]
    if after != before:
        diagnose(f"idle watchers kept syncing: 'synced:' lines went from {before} to {after} in 4s with nothing to do")
    if not all(watcher.lines for watcher in watchers):
        diagnose("a watcher printed nothing while running: its output is not line-buffered into a pipe")
    print("outside watch: idle for 4s, neither watcher synced (only the live connection is held)")

    # A server restart, with a change made offline while it is down.
    server_status = server.stop()
    changed = f"changed by alice while the server was down, {tag}"
    run("put", "--store", alice, collection, "watch-alice", json.dumps({field: changed}))
    offline_put_at = time.monotonic()
    time.sleep(1)
    server.start()
    restarted_at = time.monotonic()
    wanted["watch-alice"] = changed

    def arrived():
        seen["bob"] = records(bob, collection, field)
        return seen["bob"].get("watch-alice") == changed

    if wait_until(arrived, 30, interval=0.2) is None:
        diagnose(f"30s after `cairn serve` restarted on port {server.port}, bob's store still has {seen['bob']}, "
                 f"not alice's offline change {changed!r}")
    after_restart, after_put = time.monotonic() - restarted_at, time.monotonic() - offline_put_at
    if not converged():
        diagnose(f"after the restart the stores differ from {wanted}: {seen}")
    print(f"outside watch: `cairn serve` stopped on SIGTERM (exit status {server_status}) and restarted on the same "
          f"port; alice's offline change reached bob {after_restart:.1f}s after the restart")

    # Ctrl-C, then status.
    for watcher in watchers:
        check_stopped(watcher, watcher.interrupt())
    failures = sum(line.count("sync failed:") for watcher in watchers for line in watcher.lines)
    syncs = [sum("synced:" in line for line in watcher.lines) for watcher in watchers]
    quiet = [os.path.basename(watcher.store) for watcher in watchers if not watcher.printed_live()]
    if quiet:
        fail(f"{', '.join(quiet)}: no 'synced:' line could be read before SIGINT; all the output came at exit, so "
             "`cairn sync --watch | tee log` would show the syncs only then")
    for store in stores.values():
        check_status(store, list(wanted.values()) + [f"written by alice in {tag}"])
    print(f"outside watch: both watchers exited 0 on SIGINT with their syncs ({syncs[0]} and {syncs[1]} 'synced:' "
          f"lines, {failures} 'sync failed:' lines) and a 'stopped' line; "
          "`cairn status` says up-to-date, --json without record data")
    return first_sync, after_restart, after_put, time.monotonic() - started


def clean_up(folder):
    for process in processes:
        if process.poll() is None:
            process.kill()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if process.stdout:
            process.stdout.close()
    shutil.rmtree(folder, ignore_errors=True)


folder = tempfile.mkdtemp(prefix="cairn-outside-watch-")
try:
    first_sync, after_restart, after_put, total = main(folder)
finally:
    clean_up(folder)
print(f"outside watch: two `cairn sync --watch` stores converged on two puts in {first_sync:.1f}s and on a change made "
      f"while the server was down {after_restart:.1f}s after its restart ({after_put:.1f}s after the put); "
      f"{total:.1f}s in all")
