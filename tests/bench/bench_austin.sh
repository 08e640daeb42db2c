#!/usr/bin/env bash
# Emberline beside austin (Debian's package: it reads CPython 3.8 and 3.9 from outside, by default every 500 µs:
# 2 kHz) on the same pure-Python program, side by side in one run: tests/targets/python_split.py's rounds (a method,
# a function and a nested function at 60/30/10 by construction, a fixed number of rounds that the program times
# itself) alone, under `austin -s` and under `emberline record --frequency 999`, interleaved ROUNDS times. Prints
# each one's median and its slowdown against `alone`, and each profiler's split of the three functions (austin's by
# the time of the samples whose leaf each function is; Emberline's from its report) with its error in points.
#   bench_austin.sh BUILD_DIR [ROUNDS] [PYTHON]   (PYTHON: a CPython 3.8 or 3.9; default the first pyenv has)
set -euo pipefail
BUILD=$(realpath "${1:?usage: bench_austin.sh BUILD_DIR [ROUNDS] [PYTHON]}")
ROUNDS=${2:-5}
PYTHON=${3:-$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.[89].*/bin/python3.[89] 2>/dev/null | head -1)}
[ -x "$PYTHON" ] || { echo "bench_austin.sh: no CPython 3.8 or 3.9 (austin reads those)" >&2; exit 2; }
command -v austin >/dev/null || { echo "bench_austin.sh: austin is not installed (apt-get install austin)" >&2; exit 2; }
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
EMBERLINE=$BUILD/app/emberline
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
work() { sed -n 's/^work \([0-9.]*\).*/\1/p' "$1" | tail -1; }
declare -A times
echo "CPython: $PYTHON"
for round in $(seq "$ROUNDS"); do
    "$PYTHON" tests/targets/python_split.py rounds 600 2>"$WORK/err"
    times[alone]+="$(work "$WORK/err") "
    austin -s -o "$WORK/austin.out" "$PYTHON" tests/targets/python_split.py rounds 600 2>"$WORK/err" >/dev/null
    times[austin]+="$(work "$WORK/err") "
    "$EMBERLINE" record --frequency 999 --output "$WORK/out" -- "$PYTHON" tests/targets/python_split.py rounds 600 \
        >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; exit 1; }
    times[emberline]+="$(work "$WORK/err") "
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
base=$(echo "${times[alone]}" | median)
for config in alone austin emberline; do
    m=$(echo "${times[$config]}" | median)
    awk -v c="$config" -v m="$m" -v b="$base" 'BEGIN {printf "%-10s %.3f s  %+.1f%%\n", c, m, (m - b) / b * 100}'
done
# The split, last round: each function's share of the three, and its error against 60/30/10.
split() {
    awk -v who="$1" '{t[$1] += $2} END {s = t["hot"] + t["plain"] + t["cool"]; if (s == 0) {print who ": none"; exit}
        printf "%-10s hot %.1f%% (%+.1f)  plain %.1f%% (%+.1f)  cool %.1f%% (%+.1f)\n", who,
        100 * t["hot"] / s, 100 * t["hot"] / s - 60, 100 * t["plain"] / s, 100 * t["plain"] / s - 30,
        100 * t["cool"] / s, 100 * t["cool"] / s - 10}'
}
# austin: "Thread ID;function (file);Lline;...;leaf (file);Lline MICROSECONDS".
awk '{n = split($0, parts, ";"); leaf = parts[n - 1]; sub(/ \(.*/, "", leaf); print leaf, $NF}' "$WORK/austin.out" |
    split austin
# Emberline: each function's total (its Python frame and the interpreter's C under it), as a share of the profile.
"$EMBERLINE" report --top 1000 "$WORK/out/profile.pprof" |
    awk '$NF ~ /^(hot|plain|cool)$/ {v = $(NF - 1); sub(/%/, "", v); print $NF, v}' | split emberline
