#!/usr/bin/env bash
# Runs the built `cairn` as a newcomer would, with nothing else started: the demo; a SQLite server with two stores
# that write offline, sync, delete, attach and download a file; then `admin migrate` of that server into a
# throwaway PostgreSQL cluster, two `cairn serve --postgres` instances, and the same two stores going on through
# them (each through another instance) from where they were. Exits non-zero at the first step that disagrees.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/scripts/lib/stop_process.sh"
source "$root/scripts/lib/serve.sh"
cairn="${CAIRN:-$root/.build/debug/cairn}"
work="$(mktemp -d)"
servers=()
as_postgres=()
bin=""
cleanup() {
  for pid in "${servers[@]}"; do stop_process "$pid"; done
  if [ -n "$bin" ] && [ -d "$work/pg" ]; then
    "${as_postgres[@]}" "$bin/pg_ctl" -D "$work/pg" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
on_signals_exit
step() { echo "== $*"; }
fail() { echo "FAILED: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# serve NAME ARGS...: start_serve (scripts/lib/serve.sh) with a log of its own; fails the check when it cannot start.
serve() {
  local name=$1; shift
  start_serve "$name" "$work/serve-$RANDOM.log" "$@" || fail "cairn serve $* did not report its port"
}
stop_servers() {
  for pid in "${servers[@]}"; do stop_process "$pid"; done
  servers=()
}
ids() { "$cairn" query --store "$1" "SELECT id, status FROM inspections ORDER BY id"; }

step "cairn demo"
"$cairn" demo >"$work/demo.log" 2>&1 || { cat "$work/demo.log"; fail "the demo exited non-zero"; }
tail -1 "$work/demo.log"

step "a SQLite server with a project, a user and a schema"
data="$work/data"
export CAIRN_PASSWORD="a long newcomer password"
cat >"$work/schema.json" <<'JSON'
{"collections": [{"name": "inspections",
  "fields": [{"name": "site", "type": "string"}, {"name": "status", "type": "string"}, {"name": "photo", "type": "file"}],
  "conflictPolicy": "merge-fields"}]}
JSON
"$cairn" admin --data "$data" add-project field >/dev/null
"$cairn" admin --data "$data" add-user alice --password "$CAIRN_PASSWORD" >/dev/null
"$cairn" admin --data "$data" grant alice --project field --role writer >/dev/null
"$cairn" admin --data "$data" set-schema --project field "$work/schema.json" >/dev/null
serve base --data "$data"

step "two stores write offline and sync through it"
a="$work/a.sqlite"; b="$work/b.sqlite"
"$cairn" sync --store "$a" --server "$base" --project field --user alice >/dev/null
"$cairn" sync --store "$b" --server "$base" --project field --user alice >/dev/null
"$cairn" put --store "$a" inspections insp-1 '{"site": "North depot", "status": "open"}'
"$cairn" put --store "$a" inspections insp-2 '{"site": "Quay 4", "status": "open"}'
"$cairn" sync --store "$a" >/dev/null
"$cairn" sync --store "$b" >/dev/null
"$cairn" put --store "$b" inspections insp-2 '{"site": "Quay 4", "status": "closed"}'
"$cairn" delete --store "$b" inspections insp-1
"$cairn" sync --store "$b" >/dev/null
"$cairn" sync --store "$a" >/dev/null
[ "$(ids "$a")" = "$(ids "$b")" ] || fail "the stores differ: $(ids "$a") / $(ids "$b")"
ids "$a" | grep -q '"closed"' || fail "store a did not receive b's change: $(ids "$a")"
ids "$a" | grep -q 'insp-1' && fail "store a still holds the deleted insp-1"
echo "both stores: $(ids "$a")"

step "a file attached from one store, downloaded through the other"
head -c 300000 /dev/urandom >"$work/photo.bin"
file_id="$("$cairn" files upload --store "$a" "$work/photo.bin" --type image/jpeg --tag site-7 \
  --attach inspections/insp-2/photo | tail -1)"
"$cairn" files list --store "$b" --tag site-7 | grep -q "$file_id" || fail "store b does not list $file_id"
"$cairn" files download --store "$b" "$file_id" --output "$work/photo-b.bin" >/dev/null
cmp -s "$work/photo.bin" "$work/photo-b.bin" || fail "the downloaded file differs"
"$cairn" sync --store "$b" >/dev/null
"$cairn" query --store "$b" "SELECT photo FROM inspections WHERE id = 'insp-2'" | grep -q "$file_id" \
  || fail "insp-2's photo field does not name $file_id in store b"
echo "file $file_id: same bytes, attached"

bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
[ -n "$bin" ] && [ -x "$bin/initdb" ] || bin="$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")"
if ! [ -x "$bin/initdb" ]; then
  bin=""
  echo "skipped: the PostgreSQL steps (no initdb on this machine)"
  echo "newcomer check: passed"
  exit 0
fi

step "admin migrate into a throwaway PostgreSQL cluster"
stop_servers
if [ "$(id -u)" = 0 ]; then chown postgres "$work"; chmod 777 "$work"; as_postgres=(runuser -u postgres --); fi
pg_port="$(free_port)"
"${as_postgres[@]}" "$bin/initdb" -D "$work/pg" -U cairn -A trust -E UTF8 --no-sync >"$work/initdb.log"
"${as_postgres[@]}" "$bin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w \
  -o "-p $pg_port -k $work -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
"${as_postgres[@]}" "$bin/createdb" -h 127.0.0.1 -p "$pg_port" -U cairn cairn
url="postgres://cairn@127.0.0.1:$pg_port/cairn?sslmode=disable"
"$cairn" admin migrate --from-data "$data" --to-postgres "$url" >"$work/migrate.log"
tail -1 "$work/migrate.log"

step "two instances on PostgreSQL; each store goes on through another one"
serve first --postgres "$url"
serve second --postgres "$url"
"$cairn" put --store "$a" inspections insp-3 '{"site": "Dock 9", "status": "open"}'
"$cairn" sync --store "$a" --server "$first" >/dev/null
"$cairn" sync --store "$b" --server "$second" >/dev/null
[ "$(ids "$a")" = "$(ids "$b")" ] || fail "after the move the stores differ: $(ids "$a") / $(ids "$b")"
ids "$b" | grep -q 'insp-3' || fail "store b did not receive insp-3 through the second instance"
"$cairn" files download --store "$b" "$file_id" --output "$work/photo-pg.bin" >/dev/null
cmp -s "$work/photo.bin" "$work/photo-pg.bin" || fail "the file downloaded after the move differs"
echo "both stores: $(ids "$b")"
echo "newcomer check: passed"
