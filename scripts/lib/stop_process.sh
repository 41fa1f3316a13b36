# Stopping what a check started, sourced by the bash checks (`source "$root/scripts/lib/stop_process.sh"`).
#
# stop_process PID [SIGNAL]: sends SIGNAL (TERM unless told) to PID, waits up to 15 s for it to end, then SIGKILL;
# reaps it when it is this shell's child. Quiet, and never fails, so an exit trap can call it for every PID it holds.
stop_process() {
  local pid=$1 signal=${2:-TERM}
  [ -n "$pid" ] || return 0
  kill "-$signal" "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# on_signals_exit: makes SIGINT and SIGTERM end the script through its EXIT trap (bash alone may skip it).
on_signals_exit() {
  trap 'exit 130' INT
  trap 'exit 143' TERM
}
