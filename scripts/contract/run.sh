#!/usr/bin/env bash
# Checks the HTTP contract from outside: starts `cairn serve` on a free loopback port with a temporary data
# directory, sends an ordinary Python client's requests, then runs schemathesis (pinned, every check enabled)
# against the served OpenAPI document. Exits non-zero on any finding.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/scripts/lib/stop_process.sh"
source "$root/scripts/lib/serve.sh"
here="$root/scripts/contract"
cairn="${CAIRN:-$root/.build/debug/cairn}"
venv="${CAIRN_CONTRACT_VENV:-$root/.build-schemathesis}"
version="4.32.5"

if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$version"; then
  echo "installing schemathesis $version into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "schemathesis==$version"
fi

data="$(mktemp -d)"
log="$data/serve.log"
servers=()
cleanup() {
  for pid in "${servers[@]}"; do stop_process "$pid"; done
  rm -rf "$data"
}
trap cleanup EXIT
on_signals_exit

export CAIRN_PASSWORD="contract-check-password"
"$cairn" admin --data "$data" add-project field >/dev/null
"$cairn" admin --data "$data" add-user ada --password "$CAIRN_PASSWORD" >/dev/null
"$cairn" admin --data "$data" grant ada --project field --role admin >/dev/null
"$cairn" admin --data "$data" set-schema --project field "$here/schema.json" >/dev/null

start_serve base "$log" --data "$data" --access-token-minutes 120

token="$(python3 "$here/login.py" "$base" ada "$CAIRN_PASSWORD")"

python3 "$here/outside_client.py" "$base" "$token"
python3 "$here/outside_files.py" "$base" "$token" "$cairn" "$CAIRN_PASSWORD"
python3 "$here/outside_where.py" "$base" "$token"
python3 "$here/outside_watch.py" "$cairn"
python3 "$here/outside_store_key.py" "$cairn" "$base" "$CAIRN_PASSWORD"

# Logout is left out (it would revoke the token the run uses; its tests are in the Swift suite), and so is the
# live-notices stream, which stays open by design. One check is off: use_after_free expects a deleted resource to
# answer 404, but a deleted file keeps its metadata with status "deleted" (PROTOCOL.md, Files), and there is no
# per-operation setting for it while every other check runs.
export CAIRN_CONTRACT_TOKEN="$token"
cd "$data"
"$venv/bin/schemathesis" --config-file "$here/schemathesis.toml" run "$base/v1/openapi.json" --url "$base" \
  --checks all --exclude-checks use_after_free --max-examples "${CAIRN_CONTRACT_EXAMPLES:-25}" --seed 1 --request-timeout 10 --no-color \
  --exclude-path /v1/auth/logout --exclude-path '/v1/projects/{project}/events'
