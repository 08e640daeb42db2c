#!/usr/bin/env bash
# Two generated 1,000,000-sample profiles (different seeds, so paths grow, shrink, appear and vanish), then
# bench_compare: opening one against comparing both, files to flame graph drawn, in one run, offscreen.
#   tests/bench/bench_compare.sh [SAMPLES] [REPEAT]     (env BUILD_DIR, default build/dev)
# The goal (issue 17): the comparison takes at most twice the time of opening one, and the GUI thread is never
# busy for more than 50 ms at a time. Takes /tmp/emberline-build.lock; do not call it while holding the lock.
set -euo pipefail
source "$(dirname "$0")/common.sh"
SAMPLES=${1:-1000000}
REPEAT=${2:-3}
mkdir -p "$WORK"
flock "$LOCK" cmake --build "$BUILD_DIR" --target emberline_gen_pprof bench_compare >/dev/null
for seed in 1 2; do
    generate_profile "$WORK/compare-$SAMPLES-$seed.pprof" "$seed"
done
flock "$LOCK" env QT_QPA_PLATFORM=offscreen "$BUILD_DIR/tests/bench/bench_compare" \
    "$WORK/compare-$SAMPLES-1.pprof" "$WORK/compare-$SAMPLES-2.pprof" --repeat "$REPEAT"
