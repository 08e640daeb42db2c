#!/usr/bin/env bash
# The cost of counting a CPython's memory, side by side in one run: tests/targets/json_workload.py (JSON encoded and
# decoded, a share kept alive) with CPython's own allocator (pymalloc, as programs run it), alone, under
# `emberline record --memory` (its small objects counted by pymalloc's arenas, larger ones at malloc) and under
# `emberline record --memory --python-allocators` (every object counted at CPython's own allocators). Whole process,
# wall time as `time` sees it, unpinned, configurations interleaved ROUNDS times; prints each one's median and its
# slowdown against `alone`, the session's memory lines, and the top allocating functions of each profile.
#   bench_python_memory.sh BUILD_DIR [ROUNDS] [WORKLOAD_ROUNDS] [PYTHON]
set -euo pipefail
BUILD=$(realpath "${1:?usage: bench_python_memory.sh BUILD_DIR [ROUNDS] [WORKLOAD_ROUNDS] [PYTHON]}")
ROUNDS=${2:-8}
WORKLOAD=${3:-150}
PYTHON=${4:-$(python3 -c 'import sys; print(sys.executable)')}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
EMBERLINE=$BUILD/app/emberline
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
seconds() { /usr/bin/time -f %e -o "$WORK/time" "$@" >/dev/null 2>>"$WORK/err" && cat "$WORK/time"; }
declare -A times
for round in $(seq "$ROUNDS"); do
    times[alone]+="$(seconds "$PYTHON" tests/targets/json_workload.py "$WORKLOAD") "
    : >"$WORK/err"
    times[arenas]+="$(seconds "$EMBERLINE" record --memory --output "$WORK/arenas" -- "$PYTHON" \
        tests/targets/json_workload.py "$WORKLOAD") "
    cp "$WORK/err" "$WORK/arenas.session"
    : >"$WORK/err"
    times[objects]+="$(seconds "$EMBERLINE" record --memory --python-allocators --output "$WORK/objects" -- "$PYTHON" \
        tests/targets/json_workload.py "$WORKLOAD") "
    cp "$WORK/err" "$WORK/objects.session"
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
base=$(echo "${times[alone]}" | median)
for config in alone arenas objects; do
    m=$(echo "${times[$config]}" | median)
    awk -v c="$config" -v m="$m" -v b="$base" 'BEGIN {printf "%-8s %.2f s  %+.1f%%\n", c, m, (m - b) / b * 100}'
done
for config in arenas objects; do
    echo "$config:"
    grep -E "emberline: memory" "$WORK/$config.session" | sed 's/^/  /'
    "$EMBERLINE" report --sample-type alloc-space --top 6 "$WORK/$config/profile.pprof" | sed 's/^/  /'
done
