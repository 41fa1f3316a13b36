# Starting `cairn serve` from a bash check, sourced after scripts/lib/stop_process.sh. The caller sets `cairn` (the
# binary) and an array `servers`, which its exit trap stops with stop_process.
#
# start_serve NAME LOG ARGS...: starts `cairn serve --host 127.0.0.1 --port 0 ARGS...` in the background with its
# output in LOG, adds its PID to `servers`, and sets the variable NAME to its base URL once it says it listens.
# It runs in the caller's shell, never in a `$(...)` subshell, so that `servers` reaches the exit trap. After 15 s
# without a port it prints the log and returns 1.
start_serve() {
  local name=$1 log=$2 port=""
  shift 2
  "$cairn" serve --host 127.0.0.1 --port 0 "$@" >"$log" 2>&1 &
  servers+=($!)
  for _ in $(seq 1 150); do
    port="$(grep -oE 'listening on http://127\.0\.0\.1:[0-9]+' "$log" | grep -oE '[0-9]+$' | head -1 || true)"
    if [ -n "$port" ]; then printf -v "$name" '%s' "http://127.0.0.1:$port"; return 0; fi
    sleep 0.1
  done
  echo "cairn serve $* did not report its port:" >&2
  cat "$log" >&2
  return 1
}
