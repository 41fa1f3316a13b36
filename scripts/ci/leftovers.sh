# What a CI run must not leave behind, sourced by .ci/run: entries of Cairn's tests in the temporary folder, and
# `cairn` processes of this checkout still running. Each check compares with a list taken before, so only what the
# run itself made counts, whatever the machine held already.
#
#   leftovers_take_temp_list         # before the tests
#   leftovers_take_process_list      # at the start of the run
#   ...
#   leftovers_check_temp "swift test" || exit 1
#   leftovers_check_processes || exit 1
leftovers_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
leftovers_temp="${TMPDIR:-/tmp}"
leftovers_temp="${leftovers_temp%/}"
leftovers_temp_before=""
leftovers_processes_before=""

# The temporary folder's entries that Cairn's tests make: every one is named `cairn-...` (TestScratch's
# `cairn-tests-PID-...` folder, PostgresCluster's `cairn-pg-...`, the SDK's `cairn-files-...`, the tests' own
# `cairn-...-UUID`), less CI's own logs (`cairn-ci-*.log`).
leftovers_temp_entries() {
  find "$leftovers_temp" -mindepth 1 -maxdepth 1 -name 'cairn-*' ! -name 'cairn-ci-*' -printf '%f\n' 2>/dev/null | sort
}

leftovers_take_temp_list() { leftovers_temp_before="$(leftovers_temp_entries)"; }

# leftovers_check_temp WHAT: fails, naming each one, when entries appeared since leftovers_take_temp_list.
leftovers_check_temp() {
  local left
  left="$(leftovers_temp_entries | comm -13 <(echo "$leftovers_temp_before") -)"
  [ -z "$left" ] && return 0
  echo "FAILED: $1 left $(echo "$left" | wc -l) new entries in $leftovers_temp:" >&2
  echo "$left" | sed "s|^|  $leftovers_temp/|" >&2
  return 1
}

# The PIDs of running processes whose program is a `cairn` binary inside this checkout (.build, .build-apple...).
leftovers_processes() {
  local proc exe
  for proc in /proc/[0-9]*; do
    exe="$(readlink "$proc/exe" 2>/dev/null)" || continue
    exe="${exe% (deleted)}"
    case "$exe" in "$leftovers_root"/*/cairn) echo "${proc#/proc/}" ;; esac
  done | sort
}

leftovers_take_process_list() { leftovers_processes_before="$(leftovers_processes)"; }

# leftovers_check_processes: fails when `cairn` processes started since leftovers_take_process_list still run after
# 10 s of grace (for those just told to stop); prints each one's command line, then kills it.
leftovers_check_processes() {
  local left pid
  for _ in $(seq 1 100); do
    left="$(leftovers_processes | comm -13 <(echo "$leftovers_processes_before") -)"
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  echo "FAILED: the run left $(echo "$left" | wc -l) cairn processes running:" >&2
  for pid in $left; do
    echo "  $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" >&2
    kill -KILL "$pid" 2>/dev/null || true
  done
  return 1
}
