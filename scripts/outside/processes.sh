#!/usr/bin/env bash
# One store file, several processes, through a server restart: `cairn serve`, one `cairn sync --watch` and a loop of
# `cairn put` and `cairn query` on the same store (plus a second watcher that must stand by, and is then killed
# with SIGKILL while it holds the sync lease). The server is stopped and started again on the same port and data
# directory in the middle. At the end every write is on the server exactly once: a fresh store pulls each record
# with its data, and the project's head version says no write was applied twice. Exits non-zero at the first step
# that disagrees.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/scripts/lib/stop_process.sh"
cairn="${CAIRN:-$root/.build/debug/cairn}"
work="$(mktemp -d)"
server=""
watchers=()
cleanup() {
  for pid in "${watchers[@]}"; do stop_process "$pid" KILL; done
  stop_process "$server"
  rm -rf "$work"
}
trap cleanup EXIT
on_signals_exit
step() { echo "== $*"; }
fail() { echo "FAILED: $*" >&2; for log in "$work"/*.log; do echo "--- $log" >&2; tail -20 "$log" >&2; done; exit 1; }
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
base="http://127.0.0.1:$port"
data="$work/data"
# Starts `cairn serve` on the fixed port and data directory, and waits until it listens.
start_server() {
  "$cairn" serve --host 127.0.0.1 --port "$port" --data "$data" >>"$work/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 1 150); do
    if python3 -c "import urllib.request; urllib.request.urlopen('$base/health', timeout=1)" 2>/dev/null; then return; fi
    sleep 0.1
  done
  fail "cairn serve did not answer on port $port"
}
stop_server() { kill "$server"; wait "$server" 2>/dev/null || true; server=""; }
# Starts `cairn sync --watch` on the shared store; its pid goes into `watchers`, its output into LOG.
watch() {
  "$cairn" sync --watch --store "$store" >"$work/$1" 2>&1 &
  watchers+=($!)
}
scalar() { "$cairn" query --store "$1" "$2" | python3 -c 'import json, sys; print(list(json.load(sys.stdin)["result"]["database"]["records"][0].values())[0])'; }
wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...: polls until COMMAND succeeds
  local limit=$1 what=$2; shift 2
  for _ in $(seq 1 $((limit * 10))); do if "$@"; then return; fi; sleep 0.1; done
  fail "$what (after ${limit}s)"
}

step "a server with a project, a user and a schema"
export CAIRN_PASSWORD="a long shared-store password"
cat >"$work/schema.json" <<'JSON'
{"collections": [{"name": "notes", "fields": [{"name": "title", "type": "string"}, {"name": "step", "type": "integer"}]}]}
JSON
"$cairn" admin --data "$data" add-project field >/dev/null
"$cairn" admin --data "$data" add-user alice --password "$CAIRN_PASSWORD" >/dev/null
"$cairn" admin --data "$data" grant alice --project field --role writer >/dev/null
"$cairn" admin --data "$data" set-schema --project field "$work/schema.json" >/dev/null
start_server
store="$work/shared.sqlite"
"$cairn" sync --store "$store" --server "$base" --project field --user alice >/dev/null

step "two watchers on one store: one syncs, the other stands by"
watch first.log
sleep 1
watch second.log
wait_for 10 "the second watcher did not say it stands by" grep -q "standing by" "$work/second.log"
grep -q "standing by" "$work/first.log" && fail "the first watcher stood by although it came first"

total=60
step "$total writes by cairn put while the server stops and starts again"
for i in $(seq 1 $total); do
  "$cairn" put --store "$store" notes "note-$i" "{\"title\": \"written by put $i\", \"step\": $i}" >/dev/null
  if [ $((i % 10)) -eq 0 ]; then
    seen="$(scalar "$store" "SELECT count(*) AS n FROM notes")"
    [ "$seen" -ge "$i" ] || fail "cairn query sees $seen notes after $i writes"
  fi
  if [ "$i" -eq 20 ]; then echo "stopping the server"; stop_server; fi
  if [ "$i" -eq 40 ]; then echo "starting the server again"; start_server; fi
  sleep 0.05
done
pending() { [ "$(scalar "$store" "SELECT count(*) AS n FROM cairn_queue")" -eq 0 ]; }
wait_for 60 "writes still wait for upload" pending

step "the watcher that syncs is killed with SIGKILL; the one standing by takes over"
kill -9 "${watchers[0]}"; wait "${watchers[0]}" 2>/dev/null || true
wait_for 15 "the second watcher did not take over" grep -q "this process syncs" "$work/second.log"
for i in $(seq $((total + 1)) $((total + 10))); do
  "$cairn" put --store "$store" notes "note-$i" "{\"title\": \"written by put $i\", \"step\": $i}" >/dev/null
done
total=$((total + 10))
wait_for 30 "writes after the takeover still wait for upload" pending
kill -INT "${watchers[1]}"; wait "${watchers[1]}" || fail "the second watcher did not stop cleanly"
watchers=()

step "every write is on the server exactly once"
check="$work/check.sqlite"
"$cairn" sync --store "$check" --server "$base" --project field --user alice >/dev/null
"$cairn" query --store "$check" "SELECT id, title, step FROM notes" >"$work/notes.json"
python3 - "$work/notes.json" "$total" <<'PY'
import json, sys
records = json.load(open(sys.argv[1]))["result"]["database"]["records"]
total = int(sys.argv[2])
ids = [r["id"] for r in records]
assert len(ids) == len(set(ids)) == total, f"{len(ids)} records, {len(set(ids))} ids, expected {total}"
for r in records:
    step = int(r["id"].split("-")[1])
    assert r["title"] == f"written by put {step}" and r["step"] == step, r
PY
stop_server
head="$("$cairn" admin --data "$data" list-projects --json | python3 -c 'import json, sys; print([p["headVersion"] for p in json.load(sys.stdin)["items"] if p["name"] == "field"][0])')"
[ "$head" -eq "$total" ] || fail "the project's head version is $head after $total writes: some write was applied twice or lost"
echo "$total writes, each once (head version $head)"
echo "processes check: passed"
