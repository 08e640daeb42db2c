#!/usr/bin/env bash
# The profiler's own cost for whole launched sessions, most of which is spent at their end (symbolizing every address
# met, with the debug information of each module read then): for each program below, `emberline record` of each build
# given, one after the other, ROUNDS times. Prints per run the whole process's CPU as GNU time sees it (user + system,
# start and exit included) and the session's own 'profiler CPU' line, both as a share of one core over the session.
#   bench_session_end.sh BUILD_DIR [OTHER_BUILD_DIR] [ROUNDS]
# With two builds (e.g. main's and a branch's) the runs alternate, so that a busy machine weighs on both alike.
# The programs: CPython (pyenv's 3.12, else python3) running tests/targets/python_split.py and
# tests/targets/varied_work.py for 10 s each at 999 Hz and at 99 Hz, and two C programs of several libraries (dd and
# gzip) at 999 Hz.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
BUILDS=("$(realpath "${1:?usage: bench_session_end.sh BUILD_DIR [OTHER_BUILD_DIR] [ROUNDS]}")")
[ -n "${2:-}" ] && BUILDS+=("$(realpath "$2")")
ROUNDS=${3:-2}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PYTHON=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python3.12 2>/dev/null | tail -1 || true)
[ -n "$PYTHON" ] && [ -x "$PYTHON" ] || PYTHON=$(python3 -c 'import sys; print(sys.executable)')
SCRIPT=$PWD/tests/targets/python_split.py
VARIED=$PWD/tests/targets/varied_work.py
head -c 200000000 /dev/urandom >"$WORK/input"

# to_seconds VALUE UNIT: Emberline's formatted duration ("6.28 s", "741 ms", "950 µs") in seconds.
to_seconds() { awk -v v="$1" -v u="$2" 'BEGIN { printf "%.4f", (u == "s") ? v : (u == "ms") ? v / 1e3 : v / 1e6 }'; }

# run LABEL FREQUENCY BUILD COMMAND...: one session; prints its two measures. GNU time counts the launched program
# too (Emberline waits for it): the target's CPU as the session sampled it is taken off, so that the first measure
# is Emberline's whole process (start, end and exit included), give or take a sampling period per thread.
run() {
    local label=$1 frequency=$2 build=$3
    shift 3
    rm -rf "$WORK/out"
    /usr/bin/time -f '%U %S %e' -o "$WORK/time" "$build/app/emberline" record --frequency "$frequency" \
        --output "$WORK/out" -- "$@" >/dev/null 2>"$WORK/err" || true # the program's status is the session's
    local line target profiler
    line=$(grep -m1 'profiler CPU' "$WORK/err" || true)
    target=$(sed -n 's/.*target CPU sampled \([0-9.]*\) \([µm]\?s\) .*/\1 \2/p' <<<"$line")
    profiler=$(sed -n 's/.*profiler CPU \([0-9.]*\) \([µm]\?s\) .*/\1 \2/p' <<<"$line")
    if [ -z "$target" ] || [ -z "$profiler" ]; then
        echo "$label: no summary line from $build" >&2
        return
    fi
    # shellcheck disable=SC2086 # "VALUE UNIT" split in two on purpose
    tail -1 "$WORK/time" | awk -v l="$label" -v b="$build" -v t="$(to_seconds $target)" \
        -v p="$(to_seconds $profiler)" '{ own = $1 + $2 - t
            printf "%-20s %-28s whole process %5.0f ms (%.2f%% of a core over %.1f s); session %4.0f ms (%.2f%%)\n",
                l, b, 1000 * own, 100 * own / $3, $3, 1000 * p, 100 * p / $3 }'
}

for ((r = 1; r <= ROUNDS; r++)); do
    echo "round $r"
    for build in "${BUILDS[@]}"; do
        run "python 10 s 999 Hz" 999 "$build" "$PYTHON" "$SCRIPT" cpu 10
    done
    for build in "${BUILDS[@]}"; do
        run "python 10 s 99 Hz" 99 "$build" "$PYTHON" "$SCRIPT" cpu 10
    done
    for build in "${BUILDS[@]}"; do
        run "varied 10 s 999 Hz" 999 "$build" "$PYTHON" "$VARIED" 10
    done
    for build in "${BUILDS[@]}"; do
        run "varied 10 s 99 Hz" 99 "$build" "$PYTHON" "$VARIED" 10
    done
    for build in "${BUILDS[@]}"; do
        run "dd 2000 MiB 999 Hz" 999 "$build" dd if=/dev/urandom of=/dev/null bs=1M count=2000 status=none
    done
    for build in "${BUILDS[@]}"; do
        run "gzip 200 MB 999 Hz" 999 "$build" gzip -6 -c "$WORK/input"
    done
done
