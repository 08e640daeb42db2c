#!/usr/bin/env bash
# Installs what is missing, builds Emberline with its tests, and runs the whole suite:
# unit, widget (offscreen), CLI, real-process and packaging tests through ctest, then the reader's fuzzer
# for a bounded time. Used by CI (.ci/run) exactly as a developer runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

installer/install-deps.sh --test
cmake --preset dev
cmake --build build/dev --parallel "$(nproc)"
ctest --preset dev --parallel 1 --timeout 900 2>&1 | tee build/dev/ctest-summary.log
tests=$(sed -n 's/.* tests failed out of \([0-9]*\)$/\1/p' build/dev/ctest-summary.log | tail -1)
tests=${tests:-0}
fuzz=0
if [[ -x tests/fuzz/run_fuzz.sh ]]; then
    tests/fuzz/run_fuzz.sh "${EMBERLINE_FUZZ_SECONDS:-60}"
    fuzz=1
fi
# Reached only when every step passed (set -e): ctest's tests plus the fuzzing run.
echo "suite: $((tests + fuzz)) passed, 0 failed"
