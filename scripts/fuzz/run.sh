#!/usr/bin/env bash
# Cairn's fuzz targets (Fuzz/): scripts/fuzz/run.sh TARGET SECONDS, or scripts/fuzz/run.sh all SECONDS.
#
# Builds the fuzz package when needed (in .build-fuzz, release, libFuzzer with AddressSanitizer), runs libFuzzer on a
# temporary copy of Fuzz/Corpus/TARGET (the repository is never written), prints executions and coverage, and exits
# non-zero when a target crashes or a property fails; the input that did it is kept under
# .build-fuzz/fuzz-artifacts/TARGET/ and its path printed.
#
# Environment: CAIRN_FUZZ_BUILD_PATH (default .build-fuzz), CAIRN_FUZZ_SANITIZERS (default fuzzer,address),
# CAIRN_FUZZ_NO_BUILD=1 (use the binary as it is), CAIRN_FUZZ_ARGS (more libFuzzer flags).
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
targets=(json changes-page batch-results filter schema sse cursor http-ranges gzip rfc3339 jwt jwks console-path)
build_path="${CAIRN_FUZZ_BUILD_PATH:-$root/.build-fuzz}"
sanitizers="${CAIRN_FUZZ_SANITIZERS:-fuzzer,address}"
binary="$build_path/release/CairnFuzz"
artifacts="$build_path/fuzz-artifacts"

usage() {
    echo "usage: $0 TARGET|all SECONDS" >&2
    echo "targets: ${targets[*]}" >&2
    exit 2
}

[ $# -eq 2 ] || usage
target="$1"
seconds="$2"
[[ "$seconds" =~ ^[0-9]+$ ]] || usage
if [ "$target" != all ] && [[ " ${targets[*]} " != *" $target "* ]]; then usage; fi

if [ "${CAIRN_FUZZ_NO_BUILD:-}" != 1 ]; then
    echo "== building the fuzz targets ($sanitizers) in $build_path"
    build_log="$(mktemp "${TMPDIR:-/tmp}/cairn-fuzz-build.XXXXXX")"
    # ld.gold warns "Cannot export local symbol __asan_..." for every sanitized module: harmless, left out.
    if ! swift build --package-path "$root/Fuzz" --scratch-path "$build_path" -c release \
        -Xswiftc "-sanitize=$sanitizers" -Xswiftc -parse-as-library >"$build_log" 2>&1; then
        grep -v "Cannot export local symbol" "$build_log" >&2
        echo "the fuzz build failed" >&2
        exit 1
    fi
    grep -v "Cannot export local symbol" "$build_log" | tail -1
    rm -f "$build_log"
fi

# Runs one target; prints its summary line; returns non-zero on a crash or a failed property.
run_target() {
    local name="$1" work corpus log status=0
    work="$(mktemp -d "${TMPDIR:-/tmp}/cairn-fuzz-$name.XXXXXX")"
    corpus="$work/corpus"
    log="$work/log"
    mkdir -p "$corpus" "$artifacts/$name"
    if [ -d "$root/Fuzz/Corpus/$name" ]; then cp -R "$root/Fuzz/Corpus/$name/." "$corpus/"; fi
    echo "== $name for ${seconds}s"
    # LeakSanitizer is off: the Swift runtime keeps caches alive to the end, which it would report as leaks.
    # The Swift runtime's backtracer is off too: libFuzzer reports the crash itself.
    # TMPDIR is the run's own folder: what a target makes there (the console's files) goes with it.
    TMPDIR="$work" ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" SWIFT_BACKTRACE=enable=no CAIRN_FUZZ_TARGET="$name" \
        "$binary" "$corpus" -max_total_time="$seconds" -timeout=20 -print_final_stats=1 \
        -artifact_prefix="$artifacts/$name/" ${CAIRN_FUZZ_ARGS:-} >"$log" 2>&1 || status=$?
    local executions coverage
    executions="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    coverage="$(grep -E '^#[0-9]+' "$log" | grep -o 'cov: [0-9]* ft: [0-9]*' | tail -1)"
    if [ "$status" -ne 0 ]; then
        grep -E "property failed|Fatal error|ERROR: (libFuzzer|AddressSanitizer)|SUMMARY" "$log" | head -5 >&2 || true
        local crash
        crash="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)"
        echo "FAIL $name: exit $status after ${executions:-?} executions; input kept at ${crash:-$artifacts/$name}; log at $log" >&2
        return 1
    fi
    echo "ok   $name: ${executions:-?} executions, ${coverage:-no coverage line}"
    # A passing run leaves nothing in the temporary folder; a failing one keeps its log and corpus.
    rm -rf "$work"
}

failed=0
if [ "$target" = all ]; then
    for name in "${targets[@]}"; do run_target "$name" || failed=1; done
else
    run_target "$target" || failed=1
fi
exit "$failed"
