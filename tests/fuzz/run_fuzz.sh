#!/usr/bin/env bash
# Builds the fuzz preset and runs the pprof reader's fuzzer for a bounded time, seeded with tests/fuzz/corpus.
# Exits non-zero on any crash, leak, timeout or out-of-memory; the offending input is kept in build/fuzz/artifacts.
#   tests/fuzz/run_fuzz.sh [SECONDS]      (default 60)
# Configure and build take /tmp/emberline-build.lock (the workspace builds one thing at a time).
set -euo pipefail
cd "$(dirname "$0")/../.."

SECONDS_TO_RUN=${1:-60}
LOCK=/tmp/emberline-build.lock
flock "$LOCK" cmake --preset fuzz >/dev/null
flock "$LOCK" cmake --build build/fuzz --target fuzz_pprof_reader

ARTIFACTS=build/fuzz/artifacts
WORK_CORPUS=build/fuzz/corpus # new inputs go here; the committed seed corpus stays as it is
mkdir -p "$ARTIFACTS" "$WORK_CORPUS"

echo "fuzzing the pprof reader for ${SECONDS_TO_RUN} s"
build/fuzz/tests/fuzz/fuzz_pprof_reader \
    -max_total_time="$SECONDS_TO_RUN" \
    -timeout=10 \
    -rss_limit_mb=2048 \
    -max_len=65536 \
    -print_final_stats=1 \
    -artifact_prefix="$ARTIFACTS/" \
    "$WORK_CORPUS" tests/fuzz/corpus
