#!/usr/bin/env bash
# The 60/30/10 split of tests/targets/python_split.py (a method, a plain function and a nested function running the
# same loop body 60,000, 30,000 and 10,000 times a round) as Emberline measures it at 999 Hz, on every CPython this
# machine has (pyenv's 3.8 to 3.13 and /usr/bin/python3.N), each for SECONDS: launched on the main thread, launched
# with the rounds on a second thread, and attached to a running program (the agent injected into it). Prints each
# function's share of the three (its total: its Python frame and the interpreter's C under it) and the error in
# points.
#   bench_python_split.sh BUILD_DIR [SECONDS]
set -euo pipefail
BUILD=$(realpath "${1:?usage: bench_python_split.sh BUILD_DIR [SECONDS]}")
SECONDS_PER_RUN=${2:-10}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
EMBERLINE=$BUILD/app/emberline
SCRIPT=tests/targets/python_split.py
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"; [ -n "${PID:-}" ] && kill "$PID" 2>/dev/null; true' EXIT
mapfile -t PYTHONS < <(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3.[0-9]* /usr/bin/python3.[0-9]* \
    2>/dev/null | grep -E "python3\.([89]|1[0-9])$" | sort -u)
# Each function's share of the three and its error, from a profile's report (total% of each).
shares() {
    "$EMBERLINE" report --top 1000 "$1" | awk -v label="$2" '
        $NF ~ /^(Worker\.)?hot$/ {hot = $(NF - 1)} $NF == "plain" {plain = $(NF - 1)}
        $NF ~ /^((outer\.<locals>\.)?cool)$/ {cool = $(NF - 1)}
        END {sub(/%/, "", hot); sub(/%/, "", plain); sub(/%/, "", cool); s = hot + plain + cool
            if (s == 0) {printf "%-28s no samples of the three\n", label; exit}
            printf "%-28s %5.1f / %5.1f / %5.1f%%   errors %+.1f %+.1f %+.1f points\n", label, 100 * hot / s,
                100 * plain / s, 100 * cool / s, 100 * hot / s - 60, 100 * plain / s - 30, 100 * cool / s - 10}'
}
for python in "${PYTHONS[@]}"; do
    version=$("$python" -c 'import platform; print(platform.python_version())')
    "$EMBERLINE" record --frequency 999 --no-wall-time --output "$WORK/main" -- "$python" "$SCRIPT" cpu \
        "$SECONDS_PER_RUN" >/dev/null 2>&1
    shares "$WORK/main/profile.pprof" "$version main"
    "$EMBERLINE" record --frequency 999 --no-wall-time --output "$WORK/thread" -- "$python" "$SCRIPT" cpu \
        "$SECONDS_PER_RUN" thread >/dev/null 2>&1
    shares "$WORK/thread/profile.pprof" "$version thread"
    "$python" "$SCRIPT" cpu $((SECONDS_PER_RUN + 5)) &
    PID=$!
    sleep 1
    "$EMBERLINE" record --frequency 999 --no-wall-time --duration "$SECONDS_PER_RUN" --pid "$PID" \
        --output "$WORK/attached" >/dev/null 2>&1 || true
    kill "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=
    shares "$WORK/attached/profile.pprof" "$version attached"
    rm -rf "$WORK"/main "$WORK"/thread "$WORK"/attached
done
