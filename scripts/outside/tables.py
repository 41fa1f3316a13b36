"""Collections kept in PostgreSQL tables of their own ("table": "SCHEMA.NAME"), checked from outside with the built
`cairn`, `psql` and a throwaway PostgreSQL cluster this check starts (Python's standard library otherwise).

On `cairn serve --postgres`, with erp.work_orders (a table collection, merge-fields) and notes (an ordinary one):
set-schema creates the typed table; psql writes from a session whose search path is erp (INSERT, COPY, UPDATE, DELETE,
a rollback) reach two stores as changes by `sql`, exactly as the table holds them; `cairn put`/`delete` reach the
table; an offline edit and a psql UPDATE of another field are both kept; TRUNCATE is refused; existing tables lacking
a column or with one of the wrong type are refused naming it, one with an extra column adopted and that column left
alone; `cairn admin create-views` makes typed views; a SQLite data directory refuses "table".

Usage: python3 scripts/outside/tables.py [path/to/cairn]   (default: $CAIRN, else .build/debug/cairn)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime

from integrations import postgres_binaries
from live_server import call, check, free_port, stop

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAIRN = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CAIRN", os.path.join(ROOT, ".build", "debug", "cairn"))
PASSWORD = "an outside password"
FIELDS = [("title", "string"), ("qty", "integer"), ("weight", "number"), ("due", "datetime"), ("done", "boolean"),
          ("meta", "json")]
NOTES = [("text", "string"), ("n", "integer"), ("w", "number"), ("ok", "boolean"), ("at", "datetime"),
         ("extra", "json")]
SQL_TYPES = {"string": "text", "integer": "bigint", "number": "double precision", "boolean": "boolean",
             "datetime": "timestamp with time zone", "json": "jsonb"}
COLUMNS = ["id"] + [name for name, _ in FIELDS]


def collection(name, fields, table=None):
    spec = {"name": name, "conflictPolicy": "merge-fields", "fields": [{"name": n, "type": t} for n, t in fields]}
    return dict(spec, table=table) if table else spec


def typed(envelope, fields):
    """The columns expected of a table or view: the envelope, then each field in its natural type."""
    return ", ".join(envelope + ["%s %s" % (name, SQL_TYPES[kind]) for name, kind in fields])


# How a value read from psql's JSON or from a store's SQL becomes comparable, by field type: booleans (a store's 0 and
# 1) as bool, JSON (a store's text) parsed, instants as datetimes, numbers as floats.
CONVERT = {"boolean": bool, "number": float, "json": lambda text: json.loads(text) if isinstance(text, str) else text,
           "datetime": lambda value: datetime.fromisoformat(value.replace("Z", "+00:00"))}
KINDS = dict(FIELDS + NOTES)


def normal(rows):
    """Rows as comparable values, keyed by id."""
    return {row["id"]: {name: CONVERT[KINDS[name]](value) if value is not None and KINDS.get(name) in CONVERT else value
                        for name, value in row.items()} for row in rows}


class Cluster:
    """A throwaway PostgreSQL cluster in `work` (run as the postgres user when this check runs as root)."""

    def __init__(self, work):
        self.binaries, self.work, self.port = postgres_binaries(), work, free_port()
        self.as_postgres = []
        if os.geteuid() == 0:
            shutil.chown(work, "postgres")
            os.chmod(work, 0o777)
            self.as_postgres = ["runuser", "-u", "postgres", "--"]
        self.data = os.path.join(work, "pg")

    def start(self):
        self.run("initdb", "-D", self.data, "-U", "cairn", "-A", "trust", "-E", "UTF8", "--no-sync")
        self.run("pg_ctl", "-D", self.data, "-l", os.path.join(self.work, "pg.log"), "-w", "-o",
                 "-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off" % (self.port, self.work), "start")
        self.run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "cairn", "cairn")
        self.url = "postgres://cairn@127.0.0.1:%d/cairn?sslmode=disable" % self.port

    def run(self, program, *args, ok=True):
        done = subprocess.run(self.as_postgres + [os.path.join(self.binaries, program)] + list(args), text=True,
                              capture_output=True, timeout=120)
        if ok and done.returncode != 0:
            raise SystemExit("FAILED: %s exited %d:\n%s%s" % (program, done.returncode, done.stdout, done.stderr))

    def stop(self):
        self.run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop", ok=False)


def main():
    if not os.path.exists(CAIRN):
        raise SystemExit("FAILED: no cairn binary at %s (build it, or pass its path)" % CAIRN)
    if not postgres_binaries() or not shutil.which("psql"):
        raise SystemExit("FAILED: this check needs PostgreSQL's binaries (initdb, pg_ctl) and psql")
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="cairn-tables-")
    cluster = server = None
    environment = dict(os.environ, CAIRN_PASSWORD=PASSWORD)
    environment.pop("CAIRN_STORE_KEY", None)
    try:
        cluster = Cluster(work)
        cluster.start()
        url = cluster.url

        def cairn(*args, expect=0):
            done = subprocess.run([CAIRN] + list(args), capture_output=True, text=True, timeout=180, env=environment)
            if expect is not None and done.returncode != expect:
                raise SystemExit("FAILED: cairn %s exited %d (expected %d):\n%s%s"
                                 % (" ".join(args), done.returncode, expect, done.stdout, done.stderr))
            return done

        def psql(sql, search_path=None, ok=True):
            env = dict(environment, PGOPTIONS="-c search_path=%s" % search_path) if search_path else environment
            done = subprocess.run(["psql", url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"], input=sql, text=True,
                                  capture_output=True, timeout=120, env=env)
            if ok and done.returncode != 0:
                raise SystemExit("FAILED: psql exited %d on:\n%s\n%s" % (done.returncode, sql, done.stderr))
            return done

        def schema_file(name, collections):
            path = os.path.join(work, name + ".json")
            with open(path, "w") as file:
                json.dump({"collections": collections}, file)
            return path

        def table(name="erp.work_orders", columns=COLUMNS):
            """The rows of a table or view, read with psql as JSON."""
            listed = ", ".join("'%s', %s" % (column, column) for column in columns)
            sql = "SELECT coalesce(json_agg(json_build_object(%s) ORDER BY id), '[]') FROM %s" % (listed, name)
            return normal(json.loads(psql(sql).stdout))

        def store_rows(store, name="work_orders", columns=COLUMNS):
            sql = "SELECT %s FROM %s ORDER BY id" % (", ".join(columns), name)
            return normal(json.loads(cairn("query", "--store", store, sql).stdout)["result"]["database"]["records"])

        def column_types(schema, name):
            return psql("SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position) FROM "
                        "information_schema.columns WHERE table_schema = '%s' AND table_name = '%s'"
                        % (schema, name)).stdout.strip()

        def agree(what, *stores):
            rows = table()
            for store in stores:
                got = store_rows(store)
                check(got == rows, "%s: %s holds exactly the table's %d rows"
                      % (what, os.path.basename(store), len(rows)), rows, got)
            return rows

        def refused(done):
            return "exit %d: %s" % (done.returncode, done.stderr.strip())

        print("== a project, two writers, a schema with erp.work_orders (a table) and notes (ordinary)")
        admin = ["admin", "--postgres", url]
        cairn(*admin, "add-project", "field")
        for user in ("ana", "bob"):
            cairn(*admin, "add-user", user, "--password", PASSWORD)
            cairn(*admin, "grant", user, "--project", "field", "--role", "writer")
        cairn(*admin, "set-schema", "--project", "field", schema_file("field", [
            collection("work_orders", FIELDS, "erp.work_orders"), collection("notes", NOTES)]))
        types, expected = column_types("erp", "work_orders"), typed(["id text"], FIELDS)
        check(types == expected, "set-schema created erp.work_orders with typed columns", expected, types)

        # cairn serve --postgres on a free port, waited for until /health answers.
        port = free_port()
        base = "http://127.0.0.1:%d" % port
        log = open(os.path.join(work, "serve.log"), "w+")
        server = subprocess.Popen([CAIRN, "serve", "--postgres", url, "--host", "127.0.0.1", "--port", str(port)],
                                  stdout=log, stderr=subprocess.STDOUT, env=environment)
        for _ in range(300):
            try:
                if server.poll() is None and call(base, "GET", "/health")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            log.seek(0)
            raise SystemExit("FAILED: cairn serve --postgres did not answer /health:\n" + log.read())

        print("== psql writes, search_path=erp: INSERT, COPY, UPDATE, DELETE, and a transaction rolled back")
        psql("""
            INSERT INTO work_orders (id, title, qty, weight, due, done, meta) VALUES
              ('wo-1', 'Pump', 3, 1.5, '2026-05-01 10:00:00+02', false, '{"bins": [1, 2]}'),
              ('wo-2', 'Valve', 1, NULL, NULL, true, NULL),
              ('wo-3', 'Belt', NULL, 0.25, '2026-06-01 08:30:00.123456+00', NULL, '{"note": "x"}');
            COPY work_orders (id, title, qty, due, done, meta) FROM STDIN;
            wo-4\tGear\t7\t2026-07-02 00:00:00+00\tt\t{"a": {"b": null}}
            wo-5\tChain\t\\N\t\\N\tf\t[1, "two"]
            \\.
            UPDATE work_orders SET qty = qty + 2, done = true WHERE id = 'wo-1';
            DELETE FROM work_orders WHERE id = 'wo-2';
            BEGIN;
            INSERT INTO work_orders (id, title) VALUES ('wo-rolled-back', 'never');
            UPDATE work_orders SET title = 'rolled back' WHERE id = 'wo-3';
            DELETE FROM work_orders WHERE id = 'wo-4';
            ROLLBACK;
            """.replace("\n            ", "\n"), search_path="erp")
        rows, ids = table(), ["wo-1", "wo-3", "wo-4", "wo-5"]
        check(sorted(rows) == ids and rows["wo-1"]["qty"] == 5 and rows["wo-3"]["title"] == "Belt",
              "the table holds wo-1 (updated), wo-3, wo-4, wo-5; nothing of the rolled-back transaction", ids, rows)

        print("== two stores sync: exactly the table's rows, as changes by sql")
        stores = [os.path.join(work, "a.sqlite"), os.path.join(work, "b.sqlite")]
        for store, user in zip(stores, ("ana", "bob")):
            cairn("sync", "--store", store, "--server", base, "--project", "field", "--user", user)
        agree("after the psql writes (none rolled back)", *stores)
        by = cairn("query", "--store", stores[0], "SELECT DISTINCT cairn_updated_by AS by FROM work_orders").stdout
        check(json.loads(by)["result"]["database"]["records"] == [{"by": "sql"}],
              "every pulled change says updatedBy sql", "sql", by)

        print("== cairn put on store A lands as a row; store B gets it; cairn delete removes it")
        put = {"title": "From the field", "qty": 2, "weight": 3.75, "due": "2026-08-01T12:00:00Z", "done": False,
               "meta": {"photos": ["p1", "p2"], "n": 1}}
        cairn("put", "--store", stores[0], "work_orders", "wo-6", json.dumps(put))
        note = {"text": "hello", "n": 42, "w": 2.5, "ok": True, "at": "2026-03-04T05:06:07.5Z",
                "extra": {"k": [1, None]}}
        cairn("put", "--store", stores[0], "notes", "n-1", json.dumps(note))
        cairn("put", "--store", stores[0], "notes", "n-2", json.dumps({"text": "sparse"}))
        cairn("sync", "--store", stores[0])
        row, wanted = table().get("wo-6"), normal([dict(put, id="wo-6")])["wo-6"]
        check(row == wanted, "psql reads wo-6 in the table, with typed values", wanted, row)
        cairn("sync", "--store", stores[1])
        agree("after the put", *stores)
        cairn("delete", "--store", stores[1], "work_orders", "wo-6")
        cairn("sync", "--store", stores[1])
        check("wo-6" not in table(), "B's cairn delete removed wo-6 from the table")
        cairn("sync", "--store", stores[0])
        agree("after the delete", *stores)

        print("== a conflict: A retitles wo-4 offline while psql changes its qty; merge-fields keeps both")
        # A's put is the whole record as A holds it, with a new title; psql then changes qty before A syncs.
        data = {key: value for key, value in store_rows(stores[0])["wo-4"].items() if key != "id" and value is not None}
        data["due"] = data["due"].isoformat()
        cairn("put", "--store", stores[0], "work_orders", "wo-4", json.dumps(dict(data, title="Gear (field)")))
        psql("UPDATE work_orders SET qty = 70 WHERE id = 'wo-4'", search_path="erp")
        for store in stores + stores[:1]:
            cairn("sync", "--store", store)
        rows = agree("after the conflict", *stores)
        got = (rows["wo-4"]["title"], rows["wo-4"]["qty"])
        check(got == ("Gear (field)", 70), "wo-4 keeps A's title and psql's qty", ("Gear (field)", 70), got)

        print("== TRUNCATE is refused")
        done = psql("TRUNCATE erp.work_orders", ok=False)
        check(done.returncode != 0 and "DELETE" in done.stderr, "psql's TRUNCATE fails, naming DELETE", "DELETE",
              done.stderr)
        check(len(table()) == 4, "the table still holds its 4 rows", 4, len(table()))

        print("== adopting existing tables: a column missing, a column of the wrong type, an extra column")
        psql("""CREATE SCHEMA legacy;
                CREATE TABLE legacy.lacks (id text PRIMARY KEY, title text);
                CREATE TABLE legacy.wrong (id text PRIMARY KEY, title integer, qty bigint);
                CREATE TABLE legacy.extra (id text PRIMARY KEY, title varchar(80), qty integer,
                                           note text DEFAULT 'kept');
                INSERT INTO legacy.extra VALUES ('old-1', 'Old order', 1, 'a legacy note');""")
        cairn(*admin, "add-project", "adopt")
        cairn(*admin, "grant", "ana", "--project", "adopt", "--role", "writer")
        small = [("title", "string"), ("qty", "integer")]
        for name, column in (("lacks", "qty"), ("wrong", "title")):
            done = cairn(*admin, "set-schema", "--project", "adopt",
                         schema_file(name, [collection("orders", small, "legacy." + name)]), expect=None)
            check(done.returncode == 1 and '"%s"' % column in done.stderr,
                  "legacy.%s is refused with exit 1, naming column %s" % (name, column), column, refused(done))
            triggers = psql("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'legacy.%s'::regclass "
                            "AND NOT tgisinternal" % name).stdout.strip()
            check(triggers == "0", "and left no trigger on it", "0", triggers)
        cairn(*admin, "set-schema", "--project", "adopt",
              schema_file("extra", [collection("orders", small, "legacy.extra")]))
        store = os.path.join(work, "adopt.sqlite")
        cairn("sync", "--store", store, "--server", base, "--project", "adopt", "--user", "ana")
        got = store_rows(store, "orders", ["id", "title", "qty"])
        wanted = {"id": "old-1", "title": "Old order", "qty": 1}
        check(got == {"old-1": wanted}, "legacy.extra (varchar, integer, an extra column) is adopted; its row synced",
              wanted, got)
        cairn("put", "--store", store, "orders", "old-1", json.dumps({"title": "Old order, edited", "qty": 2}))
        cairn("put", "--store", store, "orders", "new-1", json.dumps({"title": "New order", "qty": 3}))
        cairn("sync", "--store", store)
        rows = table("legacy.extra", ["id", "title", "qty", "note"])
        wanted = {"old-1": {"id": "old-1", "title": "Old order, edited", "qty": 2, "note": "a legacy note"},
                  "new-1": {"id": "new-1", "title": "New order", "qty": 3, "note": "kept"}}
        check(rows == wanted, "device writes set title and qty and left note alone", wanted, rows)

        print("== reporting views, and a SQLite server refusing a table")
        cairn(*admin, "create-views", "--project", "field", "--schema", "reports")
        views = table("reports.notes", ["id", "updated_by"] + [name for name, _ in NOTES])
        wanted = normal([dict(note, id="n-1", updated_by="ana"),
                         dict({name: None for name, _ in NOTES}, id="n-2", updated_by="ana", text="sparse")])
        check(views == wanted, "psql reads reports.notes with the notes' values", wanted, views)
        types = column_types("reports", "notes")
        expected = typed(["id text", "version bigint", "updated_at timestamp with time zone", "updated_by text"], NOTES)
        check(types == expected, "its columns are typed", expected, types)
        view = psql("SELECT to_regclass('reports.work_orders') IS NULL").stdout.strip()
        check(view == "t", "the table collection gets no view", "t", view)
        sqlite = ["admin", "--data", os.path.join(work, "sqlite-data")]
        cairn(*sqlite, "add-project", "field")
        done = cairn(*sqlite, "set-schema", "--project", "field", schema_file("field", [
            collection("work_orders", FIELDS, "erp.work_orders")]), expect=None)
        check(done.returncode == 1 and "PostgreSQL" in done.stderr,
              "a SQLite data directory refuses \"table\" (exit 1), saying PostgreSQL is needed", "exit 1, PostgreSQL",
              refused(done))
    finally:
        stop(server)
        if cluster:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    check(server.poll() is not None and not os.path.exists(work), "the server stopped; cluster and %s gone" % work)
    print("tables: all checks passed in %.1f s" % (time.monotonic() - started))


if __name__ == "__main__":
    main()
