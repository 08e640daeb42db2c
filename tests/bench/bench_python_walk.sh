#!/usr/bin/env bash
# The agent's walk of a thread's Python frames at each CPU sample, on its own: tests/targets/python_split.py's split
# run DEPTH Python frames deep, launched under `emberline record` at 999 Hz for SECONDS, for each depth and each CPython
# this machine has (pyenv's 3.8 to 3.13 and /usr/bin/python3.N). The agent times each walk (the chain read, and the
# code objects' fingerprints checked against those it described), apart from the rest of its handler; the session's
# summary says the walks' median and 99th percentile (quarter-octave buckets: a value is its bucket's lower bound) and
# the frames they gave on average, beside the whole handler's.
#   bench_python_walk.sh BUILD_DIR [SECONDS] [DEPTHS...]
set -euo pipefail
BUILD=$(realpath "${1:?usage: bench_python_walk.sh BUILD_DIR [SECONDS] [DEPTHS...]}")
SECONDS_PER_RUN=${2:-5}
shift $(($# >= 2 ? 2 : 1))
DEPTHS=("$@")
[ ${#DEPTHS[@]} -gt 0 ] || DEPTHS=(5 25 100 250)
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
EMBERLINE=$BUILD/app/emberline
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mapfile -t PYTHONS < <(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3.[0-9]* /usr/bin/python3.[0-9]* \
    2>/dev/null | grep -E "python3\.([89]|1[0-9])$" | sort -u)
printf '%-8s %6s  %-34s %s\n' CPython depth "walk p50 / p99 (frames)" "handler p50 / p99"
for python in "${PYTHONS[@]}"; do
    version=$("$python" -c 'import platform; print(platform.python_version())')
    for depth in "${DEPTHS[@]}"; do
        "$EMBERLINE" record --frequency 999 --no-wall-time --output "$WORK/out" -- "$python" \
            tests/targets/python_split.py deep "$depth" "$SECONDS_PER_RUN" >/dev/null 2>"$WORK/err" || true
        walk=$(sed -nE 's/.*Python frames took p50 (.*), p99 (.*) \(.*, ([0-9.]+) frames on average\).*/\1 \/ \2 (\3)/p' \
            "$WORK/err")
        handler=$(sed -nE 's/.*its handler took p50 (.*), p99 (.*) a sample.*/\1 \/ \2/p' "$WORK/err")
        printf '%-8s %6s  %-34s %s\n' "$version" "$depth" "${walk:-not timed}" "${handler:-not timed}"
        rm -rf "$WORK/out"
    done
done
