#!/usr/bin/env bash
# The cost of CPython frames at 999 Hz on a pure-Python CPU-bound program, side by side in one run: the program
# alone, under `perf record -e cpu-clock -F 999` without stacks (the floor: what the timer interrupts alone cost), with
# bench_signal_floor preloaded (a cpu-clock perf event signalling the thread at 999 Hz and a handler that only counts:
# what the signals alone cost, the floor under any sampler that runs code on the sampled thread), and under `emberline
# record` (the in-process sampler: a cpu-clock perf event per thread, each sample walking the thread's Python frames
# and its native stack). The program (tests/targets/python_split.py's rounds, a fixed number of them) times its own
# work: wall time, and its thread's CPU time (what the timer interrupts and a handler running on the thread cost it;
# a shared machine's steal and waits for a core are not in it). Interleaved ROUNDS times; prints each configuration's
# medians, its slowdown against `alone` and the median of its slowdowns paired round by round, and Emberline's
# 60/30/10 split from the last session.
#   bench_python.sh BUILD_DIR [ROUNDS] [PYTHON]
set -euo pipefail
BUILD=$(realpath "${1:?usage: bench_python.sh BUILD_DIR [ROUNDS] [PYTHON]}")
ROUNDS=${2:-5}
PYTHON=${3:-$(python3 -c 'import sys; print(sys.executable)')}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
EMBERLINE=$BUILD/app/emberline
SIGNAL_FLOOR=$BUILD/tests/bench/bench_signal_floor.so
[ -f "$SIGNAL_FLOOR" ] || { echo "build $BUILD's bench_signal_floor first" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
work() { sed -n 's/^work \([0-9.]*\).*/\1/p' "$1" | tail -1; }
cpu() { sed -n 's/^work [0-9.]* cpu \([0-9.]*\)/\1/p' "$1" | tail -1; }
declare -A times cpus
for round in $(seq "$ROUNDS"); do
    "$PYTHON" tests/targets/python_split.py rounds 600 2>"$WORK/err"
    times[alone]+="$(work "$WORK/err") "
    cpus[alone]+="$(cpu "$WORK/err") "
    perf record -q -e cpu-clock -F 999 -o "$WORK/perf.data" -- "$PYTHON" tests/targets/python_split.py rounds 600 \
        2>"$WORK/err" >/dev/null
    times[perf]+="$(work "$WORK/err") "
    cpus[perf]+="$(cpu "$WORK/err") "
    LD_PRELOAD=$SIGNAL_FLOOR "$PYTHON" tests/targets/python_split.py rounds 600 2>"$WORK/err"
    times[signal]+="$(work "$WORK/err") "
    cpus[signal]+="$(cpu "$WORK/err") "
    "$EMBERLINE" record --frequency 999 --output "$WORK/out" -- "$PYTHON" tests/targets/python_split.py rounds 600 \
        >"$WORK/session" 2>"$WORK/err" || { cat "$WORK/session" "$WORK/err"; exit 1; }
    cat "$WORK/err" >>"$WORK/session"
    times[emberline]+="$(work "$WORK/err") "
    cpus[emberline]+="$(cpu "$WORK/err") "
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# paired A B: the median of B's slowdowns against A, round by round
paired() { paste -d' ' <(echo "$1" | tr ' ' '\n' | grep .) <(echo "$2" | tr ' ' '\n' | grep .) |
    awk '{print ($2 / $1 - 1) * 100}' | median; }
for config in alone perf signal emberline; do
    for kind in wall cpu; do
        if [ "$kind" = wall ]; then all=${times[$config]} base=${times[alone]}; else all=${cpus[$config]} base=${cpus[alone]}; fi
        m=$(echo "$all" | median)
        b=$(echo "$base" | median)
        awk -v c="$config" -v k="$kind" -v m="$m" -v b="$b" -v p="$(paired "$base" "$all")" \
            'BEGIN {printf "%-10s %-4s %.3f s  %+.1f%%  paired %+.1f%%\n", c, k, m, (m - b) / b * 100, p}'
    done
done
grep -E "sampler \(|handler took|python:" "$WORK/session" | sed 's/^/  /'
"$EMBERLINE" report "$WORK/out/profile.pprof" | grep -E " (Worker\.hot|hot|plain|outer\.<locals>\.cool|cool)$" | sed 's/^/  /'
