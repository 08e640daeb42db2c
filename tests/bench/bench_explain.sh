#!/usr/bin/env bash
# The costs of explaining a profile, each beside what opening the file takes, in one process (bench_explain):
#   - on the generated 1,000,000-sample profile of bench_open.sh: the source listing of the function with the
#     largest total, and Focus, Ignore and Hide on the function ranked 10th, each with the analysis the flame graph
#     is drawn from;
#   - on a recording of CPython (`emberline record` of python3 running a loop for 4 s): disassembling and
#     annotating its interpreter loop (_PyEval_EvalFrameDefault, about 40 KB) and two small functions.
#   tests/bench/bench_explain.sh [SAMPLES]     (default 1000000; env BUILD_DIR, default build/dev)
# The goals (issue 18): a listing under 200 ms; a 10 KB function disassembled and annotated under 100 ms; a
# transform in at most a third of the time opening takes.
# Builds and measurements take /tmp/emberline-build.lock; do not call this script while holding that lock.
set -euo pipefail
source "$(dirname "$0")/common.sh"

SAMPLES=${1:-1000000}
FILE="$WORK/bench-$SAMPLES.pprof"
mkdir -p "$WORK"
command -v python3 >/dev/null || { echo "bench_explain.sh: python3 is needed for the disassembly run" >&2; exit 1; }

flock "$LOCK" cmake --build "$BUILD_DIR" --target emberline_gen_pprof bench_explain emberline >/dev/null
generate_profile "$FILE" 1
RECORDING="$WORK/explain-python"
if [ ! -s "$RECORDING/profile.pprof" ]; then
    rm -rf "$RECORDING"
    "$BUILD_DIR/app/emberline" record --frequency 999 --duration 4 --output "$RECORDING" -- python3 -c '
def work(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s
while True:
    work(100000)
' >"$WORK/explain-record.log" 2>&1
fi

flock "$LOCK" "$BUILD_DIR/tests/bench/bench_explain" "$FILE"
flock "$LOCK" "$BUILD_DIR/tests/bench/bench_explain" "$RECORDING/profile.pprof" \
    --disasm '^(_PyEval_EvalFrameDefault|PyLong_FromLong|_PyObject_Malloc)$'
