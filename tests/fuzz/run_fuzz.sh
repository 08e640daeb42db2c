#!/usr/bin/env bash
# Builds the pprof reader's fuzzer and runs it for a bounded time, seeded with tests/fuzz/corpus. Exits non-zero on
# any crash, sanitizer report (AddressSanitizer, UndefinedBehaviorSanitizer), leak, timeout or out-of-memory; the
# offending input is kept in build/PRESET/artifacts.
#   tests/fuzz/run_fuzz.sh [SECONDS]      (default 60)
# The fuzzer is built in the asan preset's tree, which the sanitizer run (tests/run_asan.sh) has built already:
# only the fuzzer's own source is compiled then. EMBERLINE_FUZZ_PRESET=fuzz builds it alone instead (ASan only,
# no UBSan). Configure and build take /tmp/emberline-build.lock (the workspace builds one thing at a time).
# EMBERLINE_FUZZ_BUILT=1 skips both: the fuzzer was built already (CI builds it with the sanitizer run's tests, and
# fuzzes beside their run: tests/run_all.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."

SECONDS_TO_RUN=${1:-60}
LOCK=/tmp/emberline-build.lock
PRESET=${EMBERLINE_FUZZ_PRESET:-asan}
if [[ ${EMBERLINE_FUZZ_BUILT:-0} != 1 ]]; then
    flock "$LOCK" cmake --preset "$PRESET" >/dev/null
    flock "$LOCK" cmake --build "build/$PRESET" --target fuzz_pprof_reader
fi

ARTIFACTS=build/$PRESET/artifacts
WORK_CORPUS=build/$PRESET/corpus # new inputs go here; the committed seed corpus stays as it is
# UndefinedBehaviorSanitizer's reports stop the fuzzer (a finding), as in the sanitizer run.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$ARTIFACTS" "$WORK_CORPUS"

echo "fuzzing the pprof reader for ${SECONDS_TO_RUN} s"
"build/$PRESET/tests/fuzz/fuzz_pprof_reader" \
    -max_total_time="$SECONDS_TO_RUN" \
    -timeout=10 \
    -rss_limit_mb=2048 \
    -max_len=65536 \
    -print_final_stats=1 \
    -artifact_prefix="$ARTIFACTS/" \
    "$WORK_CORPUS" tests/fuzz/corpus
