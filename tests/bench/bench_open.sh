#!/usr/bin/env bash
# Opens a large generated profile with `go tool pprof -top`, `emberline report` and `bench_open` (read + frame
# table + call tree + function table: what the GUI does before it paints the flame graph), side by side in one
# run, each under /usr/bin/time, and prints wall time, peak memory and the ratios ours/go.
#   tests/bench/bench_open.sh [SAMPLES]        (default 1000000; env BUILD_DIR, default build/dev)
# The goal (issue 2): bench_open and emberline report each take at most 1/10 of go's time and 1/5 of its memory.
# Builds and measurements take /tmp/emberline-build.lock, so that builds of the shared workspace do not disturb
# the timings; do not call this script while holding that lock.
set -euo pipefail
source "$(dirname "$0")/common.sh"

SAMPLES=${1:-1000000}
FILE="$WORK/bench-$SAMPLES.pprof"
mkdir -p "$WORK"

command -v go >/dev/null || { echo "bench_open.sh: go (golang-go) is needed for the comparison" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench_open.sh: /usr/bin/time (package time) is needed" >&2; exit 1; }

flock "$LOCK" cmake --build "$BUILD_DIR" --target emberline_gen_pprof bench_open emberline >/dev/null
generate_profile "$FILE" 1
echo "profile: $FILE ($(du -h "$FILE" | cut -f1) compressed, $SAMPLES samples)"

# One lock for the three runs: they are measured under the same conditions, one after the other.
exec 9>"$LOCK"
flock 9
measure go go tool pprof -top "$FILE"
measure report "$BUILD_DIR/app/emberline" report "$FILE"
measure bench_open "$BUILD_DIR/tests/bench/bench_open" "$FILE"
flock -u 9

read -r go_s go_kb <"$WORK/go.time"
printf '\n%-34s %10s %12s %12s %12s\n' "tool" "wall s" "peak MB" "time/go" "memory/go"
row() {
    local name=$1 label=$2 s kb
    read -r s kb <"$WORK/$name.time"
    awk -v l="$label" -v s="$s" -v kb="$kb" -v gs="$go_s" -v gkb="$go_kb" 'BEGIN {
        printf "%-34s %10.2f %12.0f %12.3f %12.3f\n", l, s, kb / 1024, s / gs, kb / gkb }'
}
row go "go tool pprof -top"
row report "emberline report"
row bench_open "bench_open (open + flame graph)"
echo
echo "bench_open phases: $(tail -n 1 "$WORK/bench_open.out")"
echo "                   $(head -n 1 "$WORK/bench_open.out")"

verdict=0
for name in report bench_open; do
    read -r s kb <"$WORK/$name.time"
    if awk -v s="$s" -v kb="$kb" -v gs="$go_s" -v gkb="$go_kb" 'BEGIN { exit !(s * 10 <= gs && kb * 5 <= gkb) }'; then
        echo "$name: meets the goal (<= 1/10 of go's time, <= 1/5 of its memory)"
    else
        echo "$name: MISSES the goal (<= 1/10 of go's time, <= 1/5 of its memory)"
        verdict=1
    fi
done
exit $verdict
