"""What the outside checks share: a live `cairn serve` on a free port, one HTTP call, and a checked step.

Python's standard library only. The checks import it from their own folder:

    from live_server import call, check, serve, stop
    process, base = serve(cairn, work, data)
    try:
        status, answer = call(base, "GET", "/health")
        check(status == 200, "the server answers", 200, status)
    finally:
        stop(process)
"""
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request


def check(condition, what, expected=None, got=None):
    """Prints `ok: what`, or stops the run saying what was expected and what came back."""
    if not condition:
        message = "FAILED: " + what
        if expected is not None or got is not None:
            message += "\n  expected: %s\n  got:      %s" % (expected, got)
        raise SystemExit(message)
    print("ok: " + what)


def call(base, method, path, bearer=None, body=None, query=None):
    """One request; returns (status, parsed JSON body or None)."""
    url = base + path + ("?" + urllib.parse.urlencode(query) if query else "")
    headers = {"Content-Type": "application/json"}
    if bearer:
        headers["Authorization"] = "Bearer " + bearer
    request = urllib.request.Request(url, method=method, headers=headers,
                                     data=json.dumps(body).encode() if body is not None else None)
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    return status, (json.loads(raw) if raw else None)


def run_admin(cairn, data, *args):
    """Runs `cairn admin --data DATA ARGS...` and returns what it printed; stops the run when it fails."""
    done = subprocess.run([cairn, "admin", "--data", data] + list(args), capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit("FAILED: cairn admin %s exited %d:\n%s%s"
                         % (" ".join(args), done.returncode, done.stdout, done.stderr))
    return done.stdout


def tool(cairn, password):
    """The built `cairn` with CAIRN_PASSWORD set: returns `run(*args, expect=0)`, which returns what a command printed
    and stops the check when it exits otherwise, and `json_of(*args)`, its last line read as JSON."""
    environment = dict(os.environ, CAIRN_PASSWORD=password)

    def run(*args, expect=0):
        done = subprocess.run([cairn] + list(args), capture_output=True, text=True, timeout=120, env=environment)
        if done.returncode != expect:
            raise SystemExit("FAILED: cairn %s exited %d (expected %d):\n%s%s"
                             % (" ".join(args), done.returncode, expect, done.stdout, done.stderr))
        return done.stdout

    def json_of(*args):
        return json.loads(run(*args).strip().splitlines()[-1])

    run.password = password
    return run, json_of


def set_up_project(run, data, work, project, users, schema):
    """With `run` from ``tool``: makes `project` in the data directory `data`, each of `users` ({name: role}) with the
    tool's password, and sets `schema` (a dict, written to WORK/schema.json)."""
    run("admin", "--data", data, "add-project", project)
    for user, role in users.items():
        run("admin", "--data", data, "add-user", user, "--password", run.password)
        run("admin", "--data", data, "grant", user, "--project", project, "--role", role)
    schema_path = os.path.join(work, "schema.json")
    with open(schema_path, "w") as file:
        json.dump(schema, file)
    run("admin", "--data", data, "set-schema", "--project", project, schema_path)


def stores(run, work, base, users, project="field"):
    """With `run` from ``tool``: a store file in `work` for each of `users`, each signed in to `project` on `base` by
    a first `cairn sync`; returns {user: path}."""
    paths = {}
    for user in users:
        paths[user] = os.path.join(work, user + ".sqlite")
        run("sync", "--store", paths[user], "--server", base, "--project", project, "--user", user)
    return paths


def stop(process, timeout=15):
    """Ends a process this check started, also when a step failed: SIGTERM, up to `timeout` seconds to exit, then
    SIGKILL. Does nothing for None or a process that already ended."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve(cairn, work, data):
    """Starts `cairn serve` on a free port and waits for /health; returns (process, base URL)."""
    log = open(os.path.join(work, "serve.log"), "w+")
    port = free_port()
    base = "http://127.0.0.1:%d" % port
    process = subprocess.Popen([cairn, "serve", "--data", data, "--host", "127.0.0.1", "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT)
    for _ in range(300):
        if process.poll() is not None:
            break
        try:
            with urllib.request.urlopen(base + "/health", timeout=2) as response:
                if response.status == 200:
                    return process, base
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        time.sleep(0.1)
    stop(process)
    log.seek(0)
    raise SystemExit("FAILED: cairn serve did not answer /health on %s:\n%s" % (base, log.read()))
