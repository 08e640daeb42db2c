#!/usr/bin/env bash
# The profiler's own CPU at 999 Hz on two CPython programs, all in (start, sampling, unwinding, recording,
# symbolizing, writing, exit), as a share of one CPU over the run, side by side in one run. The programs: varied
# (tests/targets/varied_work.py: json, re, zlib, hashing, a sort with a key, a recursive walk: several libraries and
# many distinct stacks) and deep (one Python function recursing 60 deep: one stack repeated). For each:
#   attach  emberline record --pid for SECONDS, attached to the running program (the sampler auto picks: for CPython,
#           the in-process one through the injected agent);
#   perf    perf record --call-graph dwarf -p for SECONDS, the same program (its own CPU; perf report not included);
#   inproc  emberline record --sampler inprocess launching the program for SECONDS (the agent's cost is the
#           target's, not counted here).
#   tests/bench/bench_own_cpu.sh [BUILD_DIR] [SECONDS] [ROUNDS]
# The goal: at most 2% of one CPU for the perf and the in-process samplers.
set -euo pipefail
build=${1:-build/ci}
secs=${2:-20}
rounds=${3:-2}
emberline=$build/app/emberline
work=$(mktemp -d)
trap 'rm -rf "$work"; [[ -n ${pid:-} ]] && kill "$pid" 2>/dev/null; true' EXIT
python=$(python3 -c 'import sys; print(sys.executable)')
varied=$(cd "$(dirname "${BASH_SOURCE[0]}")/../targets" && pwd)/varied_work.py
deep='
import sys
def deep(n, k):
    if n == 0:
        s = 0
        for i in range(k):
            s += i * i % 7
        return s
    return deep(n - 1, k)
while True:
    deep(60, 20000)
'
cpu_of() { tail -1 "$1" | awk '{print $1 + $2}'; } # the last line: time may say first how the command ended
# The session's own count (its CPU from the sampler's start to the summary; the start and exit are left out): for
# the in-process sampler, whose process also waits for the program's CPU time.
session_share() {
    sed -n 's/.*profiler CPU \([0-9.]*\) \(m\?s\).*/\1 \2/p' "$1" |
        awk -v s="$secs" '{ c = ($2 == "ms") ? $1 / 1000 : $1; printf "%.2f%%", 100 * c / s }'
}
share() { awk -v c="$(cpu_of "$1")" -v s="$secs" 'BEGIN { printf "%.2f%%", 100 * c / s }'; }
for ((r = 1; r <= rounds; r++)); do
  for name in varied deep; do
    # Each program runs until it is ended.
    if [[ $name == varied ]]; then
        cmd=("$python" "$varied" 1000000)
    else
        cmd=("$python" -c "$deep")
    fi
    "${cmd[@]}" &
    pid=$!
    sleep 1
    /usr/bin/time -f '%U %S' -o "$work/attach.$r" "$emberline" record --frequency 999 --pid "$pid" --duration "$secs" \
        --output "$work/a$r" >/dev/null 2>"$work/attach.$r.err"
    /usr/bin/time -f '%U %S' -o "$work/perf.$r" perf record -q -F 999 --call-graph dwarf -p "$pid" -o "$work/p$r.data" \
        -- sleep "$secs" >/dev/null 2>&1
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    pid=
    /usr/bin/time -f '%U %S' -o "$work/inproc.$r" "$emberline" record --frequency 999 --sampler inprocess \
        --duration "$secs" --output "$work/i$r" -- "${cmd[@]}" >/dev/null 2>"$work/inproc.$r.err" ||
        true # the program is ended when the duration is reached: its status is the session's
    printf 'round %d, %-6s: attach %s (session alone %s), perf record %s, in-process session %s of one CPU\n' \
        "$r" "$name" "$(share "$work/attach.$r")" "$(session_share "$work/attach.$r.err")" "$(share "$work/perf.$r")" \
        "$(session_share "$work/inproc.$r.err")"
    grep -h "samples (" "$work/attach.$r.err" "$work/inproc.$r.err" | sed 's/^/    /'
  done
done
