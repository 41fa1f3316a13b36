"""Other systems' ways in and out, checked from outside: service keys and webhooks through `cairn admin`, a Python
receiver that checks every delivery's signature, writers pushing over HTTP, and the servers killed and restarted.

Python's standard library only. Part one runs one `cairn serve` on a data directory: a service key writes and is
revoked; a webhook's receiver answers 500 for a while, then hangs past the timeout, while the server is SIGKILLed and
started again in the middle of deliveries. Part two (when the machine has PostgreSQL's binaries) runs two
`cairn serve --postgres` instances on a throwaway cluster, with writers on both, one instance SIGKILLed and the
database restarted. Each part ends when the receiver holds every change of the feed: for every record, the last
delivery the receiver accepted carries the feed's version and data; changes came in feed order (a repeat is a whole
delivery again, never a change out of order); and, on PostgreSQL, no two deliveries were in flight at once.

Usage: python3 scripts/outside/integrations.py [path/to/cairn]   (default: $CAIRN, else .build/debug/cairn)
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

from integration_systems import Backend, Receiver, Writers, feed, wait_for_delivery
from live_server import call, check, free_port, serve, stop

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAIRN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CAIRN", os.path.join(ROOT, ".build", "debug", "cairn"))
PASSWORD = "an outside password"
SECRET = "outside-webhook-secret-" + uuid.uuid4().hex
SCHEMA = {"collections": [{"name": "jobs", "fields": [{"name": "title", "type": "string"}, {"name": "n", "type": "integer"},
                                                      {"name": "status", "type": "string"}]},
                          {"name": "notes", "fields": [{"name": "title", "type": "string"}]}]}


def part_one(work):
    data = os.path.join(work, "data")
    environment = dict(os.environ, CAIRN_PASSWORD=PASSWORD)

    def admin(*args, ok=True):
        done = subprocess.run([CAIRN, "admin", "--data", data] + list(args), capture_output=True, text=True, timeout=120, env=environment)
        if ok and done.returncode != 0:
            raise SystemExit("FAILED: cairn admin %s exited %d:\n%s%s" % (" ".join(args), done.returncode, done.stdout, done.stderr))
        return done

    print("== cairn admin: a project, a writer, a reader, a schema with an action, a service key and a webhook")
    backend = Backend()
    admin("add-project", "field")
    for user, role in (("ana", "writer"), ("rita", "reader")):
        admin("add-user", user, "--password", PASSWORD)
        admin("grant", user, "--project", "field", "--role", role)
    schema = os.path.join(work, "schema.json")
    with open(schema, "w") as file:
        json.dump(dict(SCHEMA, actions=[{"name": "closeJob", "url": backend.url, "timeoutSeconds": 10}]), file)
    admin("set-schema", "--project", "field", schema)
    backend.secret = admin("action-secret", "--project", "field").stdout.strip()
    check(len(backend.secret) >= 16, "action-secret prints the project's signing secret")
    made = admin("add-service-key", "erp", "--project", "field", "--role", "writer")
    key = made.stdout.strip()
    check(key.startswith("cairn_sk_") and "not shown again" in made.stderr,
          "add-service-key prints the key once (stdout) and says so (stderr)", "cairn_sk_...", made.stdout + made.stderr)
    listed = json.loads(admin("list-service-keys", "--project", "field", "--json").stdout)
    check([item["name"] for item in listed["items"]] == ["erp"] and key not in json.dumps(listed),
          "list-service-keys --json names the key and never shows it", ["erp"], listed)
    check(admin("add-service-key", "erp", "--project", "field", "--role", "reader", ok=False).returncode != 0,
          "a second key of the same name is refused")
    secret_file = os.path.join(work, "webhook.secret")
    with open(secret_file, "w") as file:
        file.write(SECRET + "\n")
    receiver = Receiver(SECRET)
    process = None
    writers = None
    try:
        added = admin("add-webhook", "erp", "--project", "field", "--url", receiver.url, "--collection", "jobs", "--secret-file", secret_file)
        check("added webhook erp" in added.stdout, "add-webhook adds it", "added webhook erp ...", added.stdout)
        short = os.path.join(work, "short.secret")
        with open(short, "w") as file:
            file.write("short")
        refused = admin("add-webhook", "weak", "--project", "field", "--url", receiver.url, "--secret-file", short, ok=False)
        check(refused.returncode != 0 and "secret" in refused.stderr, "a short secret is refused, naming it", "an error", refused.stderr)

        print("== cairn serve; the service key writes as service:erp")
        process, base = serve(CAIRN, work, data)
        status, _ = call(base, "POST", "/v1/projects/field/batch", bearer=key, body={"operations": [
            {"opId": str(uuid.uuid4()), "collection": "jobs", "id": "from-erp", "op": "create", "data": {"title": "made by the ERP"}}]})
        check(status == 200, "the service key pushes", 200, status)
        status, answer = call(base, "POST", "/v1/auth/login", body={"username": "ana", "password": PASSWORD})
        token = answer["accessToken"]
        records = feed(base, token)
        check(records["from-erp"]["updatedBy"] == "service:erp", "its write carries updatedBy service:erp", "service:erp", records["from-erp"])
        status, _ = call(base, "GET", "/v1/projects/field/members", bearer=key)
        check(status == 403, "a writer key may not list members", 403, status)

        print("== actions: a call queued behind a save, sent once, its answer stored; the backend's write pulled")
        backend.base, backend.key = base, key
        store = os.path.join(work, "ana.sqlite")
        stores = dict(environment, CAIRN_PASSWORD=PASSWORD)
        stores.pop("CAIRN_STORE_KEY", None)

        def tool(*args, ok=True):
            done = subprocess.run([CAIRN] + list(args), capture_output=True, text=True, timeout=120, env=stores)
            if ok and done.returncode != 0:
                raise SystemExit("FAILED: cairn %s exited %d:\n%s%s" % (" ".join(args), done.returncode, done.stdout, done.stderr))
            return done

        tool("sync", "--store", store, "--server", base, "--project", "field", "--user", "ana")
        tool("put", "--store", store, "jobs", "pump-7", json.dumps({"title": "Pump 7"}))
        queued_key = tool("call", "--store", store, "closeJob", "--arguments", json.dumps({"job": "pump-7"}), "--queue").stdout.strip().splitlines()[-1]
        listed = json.loads(tool("queue", "--store", store).stdout)
        check("action" in json.dumps(listed) and "closeJob" in json.dumps(listed), "cairn queue lists the queued call", "closeJob", listed)
        check(backend.calls_with(queued_key) == [], "nothing is called before a sync")
        tool("sync", "--store", store)
        tool("sync", "--store", store)
        calls = backend.calls_with(queued_key)
        check(len(calls) == 1, "two syncs sent the queued call once, after the save it follows (the backend found pump-7)", 1, len(calls))
        check(calls[0]["caller"]["user"] == "ana" and calls[0]["caller"]["role"] == "writer" and calls[0]["project"] == "field",
              "the backend is told the caller (user, role) and the project", "ana writer", calls[0]["caller"])
        results = tool("action-results", "--store", store, "--json").stdout
        check('"closed"' in results and "pump-7" in results, "cairn action-results holds the backend's answer", "closed pump-7", results)
        pulled = tool("query", "--store", store, "SELECT status FROM jobs WHERE id = 'pump-7'").stdout
        check("closed" in pulled, "the backend's write through its service key reached the store by the normal pull", "closed", pulled)
        online = tool("call", "--store", store, "closeJob", "--arguments", json.dumps({"job": "pump-7"}))
        check('"closed"' in online.stdout, "cairn call answers online with the backend's JSON", "closed", online.stdout)
        refused = tool("call", "--store", store, "closeJob", "--arguments", json.dumps({"job": "nope"}), ok=False)
        check(refused.returncode != 0 and "action_failed" in refused.stdout + refused.stderr and "409" in refused.stdout + refused.stderr,
              "a backend's refusal is action_failed with its status", "action_failed 409", refused.stdout + refused.stderr)
        print("== a queued call whose sync is SIGKILLed while the backend works: the backend is still called once")
        tool("put", "--store", store, "jobs", "slow-1", json.dumps({"title": "Slow pump"}))
        slow_key = tool("call", "--store", store, "closeJob", "--arguments", json.dumps({"job": "slow-1"}), "--queue").stdout.strip().splitlines()[-1]
        syncing = subprocess.Popen([CAIRN, "sync", "--store", store], env=stores, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while not backend.calls_with(slow_key) and time.monotonic() < deadline and syncing.poll() is None:
            time.sleep(0.05)
        check(backend.calls_with(slow_key) and syncing.poll() is None, "the backend received the call while cairn sync waits for it")
        syncing.send_signal(signal.SIGKILL)
        syncing.wait()
        time.sleep(5)   # the backend answers the server meanwhile
        tool("sync", "--store", store)
        tool("sync", "--store", store)
        check(len(backend.calls_with(slow_key)) == 1, "after the killed sync, two more syncs: the backend was called once for the key",
              1, len(backend.calls_with(slow_key)))
        slow_results = tool("action-results", "--store", store, "--json").stdout
        check(slow_key in slow_results and "slow-1" in slow_results, "its answer is stored on the device", slow_key, slow_results)

        reader = os.path.join(work, "rita.sqlite")
        tool("sync", "--store", reader, "--server", base, "--project", "field", "--user", "rita")
        forbidden = tool("call", "--store", reader, "closeJob", "--arguments", json.dumps({"job": "pump-7"}), ok=False)
        check(forbidden.returncode != 0 and "forbidden" in forbidden.stdout + forbidden.stderr,
              "a reader may not call a writer's action", "forbidden", forbidden.stdout + forbidden.stderr)
        check(not backend.problems, "every call the backend received carried a valid Cairn-Signature", [], backend.problems)

        print("== writers push while the receiver fails, hangs, and the server is SIGKILLed and restarted")
        writers = Writers([base], token, "one")
        time.sleep(2)
        receiver.set_mode("fail")
        time.sleep(4)
        status_json = json.loads(admin("webhook-status", "--project", "field", "--json").stdout)["items"][0]
        check(status_json["status"] == "retrying" and status_json["failures"] > 0 and receiver.refused > 0,
              "webhook-status says retrying while the receiver answers 500", "retrying", status_json)
        receiver.set_mode("hang")
        time.sleep(3)
        process.send_signal(signal.SIGKILL)
        process.wait()
        print("ok: the server was SIGKILLed in the middle of deliveries")
        receiver.set_mode("ok")
        log = os.path.join(work, "serve.log")
        shutil.copy(log, log + ".before-kill")
        process, base2 = serve(CAIRN, work, data)
        writers.bases[0] = base2
        time.sleep(4)
        writers.stop()
        check(not writers.errors, "%d batches pushed through it all" % writers.batches, [], writers.errors)
        records = wait_for_delivery(receiver, base2, token, "one server")
        check(len(records) > 100, "the feed holds the %d jobs written" % len(records))
        status_json = json.loads(admin("webhook-status", "--project", "field", "--json").stdout)["items"][0]
        check(status_json["status"] == "ok" and status_json["delivered"] >= len(records),
              "webhook-status: ok, %d changes delivered" % status_json["delivered"], "ok", status_json)

        print("== the key revoked")
        admin("revoke-service-key", "erp", "--project", "field")
        status, answer = call(base2, "GET", "/v1/projects/field/collections/jobs/changes", bearer=key)
        check(status == 401, "a revoked key is refused at once", 401, "%d %s" % (status, answer))
        admin("remove-webhook", "erp", "--project", "field")
        check(json.loads(admin("list-webhooks", "--project", "field", "--json").stdout)["items"] == [], "remove-webhook removes it")
    finally:
        if writers:
            writers.stop()
        stop(process)
        receiver.close()
        backend.close()


def postgres_binaries():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


def part_two(work):
    binaries = postgres_binaries()
    if not binaries:
        print("skipped: the PostgreSQL part (no initdb on this machine)")
        return
    cluster = os.path.join(work, "pg")
    as_postgres = []
    if os.geteuid() == 0:
        shutil.chown(work, "postgres")
        os.chmod(work, 0o777)
        as_postgres = ["runuser", "-u", "postgres", "--"]
    port = free_port()

    def pg(*args):
        subprocess.run(as_postgres + list(args), check=True, capture_output=True, timeout=120)

    pg(os.path.join(binaries, "initdb"), "-D", cluster, "-U", "cairn", "-A", "trust", "-E", "UTF8", "--no-sync")
    options = "-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off" % (port, work)
    pg_ctl = os.path.join(binaries, "pg_ctl")
    pg(pg_ctl, "-D", cluster, "-l", os.path.join(work, "pg.log"), "-w", "-o", options, "start")
    receiver, servers, writers = Receiver(SECRET), [], None
    try:
        pg(os.path.join(binaries, "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "cairn", "cairn")
        url = "postgres://cairn@127.0.0.1:%d/cairn?sslmode=disable" % port
        environment = dict(os.environ, CAIRN_PASSWORD=PASSWORD, CAIRN_POSTGRES_URL=url)

        def admin(*args):
            done = subprocess.run([CAIRN, "admin"] + list(args), capture_output=True, text=True, timeout=120, env=environment)
            if done.returncode != 0:
                raise SystemExit("FAILED: cairn admin %s exited %d:\n%s%s" % (" ".join(args), done.returncode, done.stdout, done.stderr))
            return done

        print("== PostgreSQL: two instances, one webhook")
        admin("add-project", "field")
        admin("add-user", "ana", "--password", PASSWORD)
        admin("grant", "ana", "--project", "field", "--role", "writer")
        schema = os.path.join(work, "schema.json")
        with open(schema, "w") as file:
            json.dump(SCHEMA, file)
        admin("set-schema", "--project", "field", schema)
        secret_file = os.path.join(work, "webhook.secret")
        with open(secret_file, "w") as file:
            file.write(SECRET)
        admin("add-webhook", "erp", "--project", "field", "--url", receiver.url, "--collection", "jobs", "--secret-file", secret_file)

        def start(name):
            log = open(os.path.join(work, "serve-%s.log" % name), "w")
            server_port = free_port()
            process = subprocess.Popen([CAIRN, "serve", "--postgres", url, "--host", "127.0.0.1", "--port", str(server_port)],
                                       stdout=log, stderr=subprocess.STDOUT, env=environment)
            servers.append(process)
            base = "http://127.0.0.1:%d" % server_port
            for _ in range(300):
                try:
                    if call(base, "GET", "/health")[0] == 200:
                        return process, base
                except OSError:
                    pass
                time.sleep(0.1)
            raise SystemExit("FAILED: cairn serve --postgres did not start")

        first, base1 = start("first")
        second, base2 = start("second")
        status, answer = call(base1, "POST", "/v1/auth/login", body={"username": "ana", "password": PASSWORD})
        token = answer["accessToken"]
        writers = Writers([base1, base2], token, "two")
        time.sleep(3)
        first.send_signal(signal.SIGKILL)
        first.wait()
        print("ok: instance one was SIGKILLed while both delivered and took writes")
        time.sleep(2)
        pg(pg_ctl, "-D", cluster, "-l", os.path.join(work, "pg.log"), "-w", "-m", "fast", "restart", "-o", options)
        print("ok: the database restarted under load")
        time.sleep(3)
        first, base1 = start("first-again")
        writers.bases[0] = base1
        time.sleep(3)
        writers.stop()
        check(not writers.errors, "%d batches pushed over both instances" % writers.batches, [], writers.errors)
        wait_for_delivery(receiver, base2, token, "two PostgreSQL instances")
        check(receiver.most_in_flight == 1, "one delivery in flight at a time across both instances (a lease in the database)",
              1, receiver.most_in_flight)
    finally:
        if writers:
            writers.stop()
        for process in servers:
            stop(process)
        receiver.close()
        subprocess.run(as_postgres + [pg_ctl, "-D", cluster, "-m", "immediate", "-w", "stop"], capture_output=True)


def main():
    if not os.path.exists(CAIRN):
        raise SystemExit("FAILED: no cairn binary at %s (build it, or pass its path)" % CAIRN)
    started = time.monotonic()
    for part in (part_one, part_two):
        work = tempfile.mkdtemp(prefix="cairn-integrations-")
        try:
            part(work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print("integrations: all checks passed in %.1f s" % (time.monotonic() - started))


if __name__ == "__main__":
    main()
