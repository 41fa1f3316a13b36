#!/usr/bin/env bash
# Checks the HTTP contract from outside against two `cairn serve` instances on one PostgreSQL database: starts a
# throwaway cluster from the machine's PostgreSQL binaries on a free loopback port, runs the ordinary Python
# clients against one instance and the cross-instance checks against both, then schemathesis against the second.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/scripts/lib/stop_process.sh"
source "$root/scripts/lib/serve.sh"
here="$root/scripts/contract"
cairn="${CAIRN:-$root/.build/debug/cairn}"
venv="${CAIRN_CONTRACT_VENV:-$root/.build-schemathesis}"
"$venv/bin/schemathesis" --version >/dev/null 2>&1 || { echo "run scripts/contract/run.sh first (it installs schemathesis)"; exit 1; }

bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
[ -x "$bin/initdb" ] || bin="$(dirname "$(command -v initdb)")"
work="$(mktemp -d)"
as_postgres=()
if [ "$(id -u)" = 0 ]; then chown postgres "$work"; as_postgres=(runuser -u postgres --); fi
pg_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
servers=()
cleanup() {
  for pid in "${servers[@]}"; do stop_process "$pid"; done
  "${as_postgres[@]}" "$bin/pg_ctl" -D "$work/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
on_signals_exit
"${as_postgres[@]}" "$bin/initdb" -D "$work/data" -U cairn -A trust -E UTF8 --no-sync >"$work/initdb.log"
"${as_postgres[@]}" "$bin/pg_ctl" -D "$work/data" -l "$work/pg.log" -w \
  -o "-p $pg_port -k $work -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
# An ICU English collation where the server has one (not byte order, as in many real deployments).
"${as_postgres[@]}" "$bin/createdb" -h 127.0.0.1 -p "$pg_port" -U cairn -T template0 --locale-provider=icu --icu-locale=en cairn 2>/dev/null \
  || "${as_postgres[@]}" "$bin/createdb" -h 127.0.0.1 -p "$pg_port" -U cairn cairn
export CAIRN_POSTGRES_URL="postgres://cairn@127.0.0.1:$pg_port/cairn?sslmode=disable"

export CAIRN_PASSWORD="contract-check-password"
"$cairn" admin add-project field >/dev/null
"$cairn" admin add-user ada --password "$CAIRN_PASSWORD" >/dev/null
"$cairn" admin grant ada --project field --role admin >/dev/null
"$cairn" admin set-schema --project field "$here/schema.json" >/dev/null

bases=()
for name in first second; do
  start_serve base "$work/$name.log" --access-token-minutes 120
  bases+=("$base")
done

token="$(python3 "$here/login.py" "${bases[0]}" ada "$CAIRN_PASSWORD")"

python3 "$here/outside_instances.py" "${bases[0]}" "${bases[1]}" "$token"
python3 "$here/outside_client.py" "${bases[1]}" "$token"
python3 "$here/outside_where.py" "${bases[0]}" "$token"
python3 "$here/outside_files.py" "${bases[1]}" "$token" "$cairn" "$CAIRN_PASSWORD"

export CAIRN_CONTRACT_TOKEN="$token"
cd "$work"
"$venv/bin/schemathesis" --config-file "$here/schemathesis.toml" run "${bases[1]}/v1/openapi.json" --url "${bases[1]}" \
  --checks all --exclude-checks use_after_free --max-examples "${CAIRN_CONTRACT_EXAMPLES:-25}" --seed 1 --request-timeout 10 --no-color \
  --exclude-path /v1/auth/logout --exclude-path '/v1/projects/{project}/events'
echo "outside checks on two instances over PostgreSQL: passed"
