#!/usr/bin/env bash
# Installs what is missing, builds Emberline with its tests, and runs the whole suite:
# unit, widget (offscreen), CLI, real-process and packaging tests through ctest, then the reader's fuzzer
# for a bounded time. Used by CI (.ci/run) exactly as a developer runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

installer/install-deps.sh --test
cmake --preset dev
cmake --build build/dev --parallel "$(nproc)"
ctest --preset dev --parallel 1 --timeout 900
if [[ -x tests/fuzz/run_fuzz.sh ]]; then
    tests/fuzz/run_fuzz.sh "${EMBERLINE_FUZZ_SECONDS:-60}"
fi
