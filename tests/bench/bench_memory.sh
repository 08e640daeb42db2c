#!/usr/bin/env bash
# Memory profiling's cost on a real malloc-heavy program, side by side in one run: CPython (PYTHONMALLOC=malloc, so
# that every object is a malloc) encoding and decoding JSON (tests/targets/json_workload.py), alone, under `emberline record`
# (CPU only), under `emberline record --memory` (default interval), with the agent preloaded and no session, and
# under heaptrack (Debian's package). Each configuration runs ROUNDS times, interleaved; the workload times itself
# (its start and end are not the profiler's). Prints the medians and the slowdowns, and Emberline's estimate of
# the allocations beside heaptrack's count.
#   bench_memory.sh BUILD_DIR [ROUNDS] [WORKLOAD_ROUNDS]
set -euo pipefail
BUILD=${1:?usage: bench_memory.sh BUILD_DIR [ROUNDS] [WORKLOAD_ROUNDS]}
ROUNDS=${2:-5}
WORK=${3:-800}
HERE=$(cd "$(dirname "$0")" && pwd)
EMBERLINE=$BUILD/app/emberline
AGENT=$BUILD/lib/emberline/libemberline_agent.so
PY=/usr/bin/python3
W=$HERE/../targets/json_workload.py
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export PYTHONMALLOC=malloc

# The workload's wall time, and its CPU time in a second column (what it spent itself, less sensitive to a busy
# machine than the wall time).
workload() { grep -oE 'workload [0-9.]+ s cpu [0-9.]+' "$1" | awk '{print $2, $5}'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
column() { awk -v c="$1" '{print $c}' "$2"; }

for ((i = 1; i <= ROUNDS; i++)); do
    "$PY" "$W" "$WORK" >/dev/null 2>"$TMP/err"; workload "$TMP/err" >>"$TMP/alone"
    "$EMBERLINE" record --output "$TMP/cpu$i" -- "$PY" "$W" "$WORK" >/dev/null 2>"$TMP/err"
    workload "$TMP/err" >>"$TMP/cpu"
    "$EMBERLINE" record --memory --output "$TMP/mem$i" -- "$PY" "$W" "$WORK" >/dev/null 2>"$TMP/err"
    workload "$TMP/err" >>"$TMP/memory"
    grep -oE 'allocated in [0-9]+ allocations' "$TMP/err" | awk '{print $3}' >>"$TMP/estimates"
    LD_PRELOAD=$AGENT "$PY" "$W" "$WORK" >/dev/null 2>"$TMP/err"; workload "$TMP/err" >>"$TMP/agent"
    if command -v heaptrack >/dev/null && ((i <= 2)); then
        heaptrack -o "$TMP/ht$i" "$PY" "$W" "$WORK" >/dev/null 2>"$TMP/err"; workload "$TMP/err" >>"$TMP/heaptrack"
    fi
done
alone=$(column 1 "$TMP/alone" | median)
aloneCpu=$(column 2 "$TMP/alone" | median)
report() {
    local name=$1 file=$2
    [[ -s $file ]] || return 0
    local m c; m=$(column 1 "$file" | median); c=$(column 2 "$file" | median)
    printf '%-30s wall %7.3f s (%+6.2f%%)  cpu %7.3f s (%+6.2f%%)  wall runs: %s\n' "$name" "$m" \
        "$(awk -v a="$alone" -v b="$m" 'BEGIN {print (b / a - 1) * 100}')" "$c" \
        "$(awk -v a="$aloneCpu" -v b="$c" 'BEGIN {print (b / a - 1) * 100}')" "$(column 1 "$file" | tr '\n' ' ')"
}
report "alone" "$TMP/alone"
report "emberline record (CPU)" "$TMP/cpu"
report "emberline record --memory" "$TMP/memory"
report "agent preloaded, no session" "$TMP/agent"
report "heaptrack" "$TMP/heaptrack"
if [[ -s $TMP/heaptrack ]]; then
    calls=$(heaptrack_print "$TMP/ht1.zst" 2>/dev/null | grep -oE '^calls to allocation functions: [0-9]+' | awk '{print $5}')
    est=$(median <"$TMP/estimates")
    echo "allocations: heaptrack counted $calls; emberline estimated (median) $est ($(awk -v a="$calls" -v b="$est" 'BEGIN {printf "%+.2f%%", (b / a - 1) * 100}'))"
fi
