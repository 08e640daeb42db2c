#!/usr/bin/env bash
# What the live diff mode adds: bench_live_gui with the views off compare and "with the previous flush", side by
# side in one run, in alternating rounds (off, previous, off, previous, ...) so that the machine's load weighs on
# both alike. Prints each round's line and, per mode over every round's flushes, the median and p99 of the time
# from a flush's arrival to the views repainted with it, and the ratios (the goal of issue 17: at most 1.20).
#   tests/bench/bench_live_compare.sh [SECONDS=30] [FLUSH_SECONDS=2] [ROUNDS=2]   (env BUILD_DIR, default build/dev)
# Takes /tmp/emberline-build.lock for the build and for each round; do not call it while holding the lock.
set -euo pipefail
source "$(dirname "$0")/common.sh"
SECONDS_PER_RUN=${1:-30}
FLUSH=${2:-2}
ROUNDS=${3:-2}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/emberline-live-compare.XXXXXX") # this run's outputs only
trap 'rm -rf "$WORK"' EXIT
flock "$LOCK" cmake --build "$BUILD_DIR" --target bench_live_gui >/dev/null
for round in $(seq 1 "$ROUNDS"); do
    for mode in off previous; do
        out="$WORK/$mode-$round.txt"
        flock "$LOCK" env QT_QPA_PLATFORM=offscreen "$BUILD_DIR/tests/bench/bench_live_gui" "$SECONDS_PER_RUN" "$FLUSH" \
            "$mode" >"$out" 2>/dev/null
        echo "round $round, compare $mode: $(grep '^views updated' "$out")"
        # The per-flush rows: "flush update_ms rss agg timeline samples gui_cpu max_event"; the first flush (the
        # window's first layout) is left out of both modes alike.
        awk '/^ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9]+ / && $1 > 1 { print $2 }' "$out" >>"$WORK/$mode.ms"
    done
done
python3 - "$WORK/off.ms" "$WORK/previous.ms" <<'EOF'
import sys
def stats(path):
    v = sorted(float(x) for x in open(path) if x.strip())
    pick = lambda p: v[min(len(v) - 1, int(p * len(v)))]
    return len(v), pick(0.5), pick(0.99)
n0, m0, p0 = stats(sys.argv[1])
n1, m1, p1 = stats(sys.argv[2])
print(f"flush to views repainted, off: {n0} flushes, median {m0:.1f} ms, p99 {p0:.1f} ms")
print(f"flush to views repainted, with the previous flush: {n1} flushes, median {m1:.1f} ms, p99 {p1:.1f} ms")
print(f"live diff mode / off: median {m1 / m0:.2f}, p99 {p1 / p0:.2f} (goal <= 1.20)")
EOF
