#!/usr/bin/env bash
# Memory profiling's cost on real malloc-heavy programs, side by side in one run. Four workloads:
#   python  CPython (PYTHONMALLOC=malloc, so that every object is a malloc) encoding and decoding JSON
#           (tests/targets/json_workload.py), which times itself;
#   python-pretty  the same, the documents indented with sorted keys, 3/8 as many rounds: 43 million allocations
#           (4.7 GiB) in 4.8 s here, 9 million a second, where plain JSON makes 16 to 19 million;
#   g++     Debian's compiler building tests/targets/cxx_workload.cpp with -O2, timed by /usr/bin/time inside the
#           profiled program (g++, cc1plus and as are all profiled);
#   spawns  bash starting /bin/true 300 times, timed by /usr/bin/time inside the profiled program: what each short-lived
#           process pays for the agent's start and its ring (a build's shell commands, a script's pipelines);
# each alone, under `emberline record` (CPU only), under `emberline record --memory` (default interval), with the
# agent preloaded and no session, and under heaptrack (Debian's package). Each configuration runs ROUNDS times,
# interleaved; a workload's own time leaves out the profiler's start and end. Prints the medians of wall and CPU
# time and the slowdowns; the median of each round's own slowdown (a configuration against the `alone` run of the same
# round, which cancels the machine's slow drifts) with its 95% confidence interval (from the ranks); and Emberline's
# estimate of the allocations beside heaptrack's count.
#   bench_memory.sh BUILD_DIR [ROUNDS] [PYTHON_ROUNDS]
# WORKLOADS="python python-pretty g++ spawns" (the default) chooses the workloads, CONFIGS="alone cpu memory agent" (the default) the
# configurations beside heaptrack (which runs in the first HEAPTRACK_ROUNDS rounds, 2 by default; HEAPTRACK=no leaves it out, so that the rounds
# right after it do not run slow on a small machine); `alone` must be among them. Two more may be named: `copy` (the
# memory session with --agent-stacks copy: every stack copied, the agent's walk off) and `exact` (--alloc-interval 1).
# Three floors, with nothing of Emberline's in them: `floor` (an interposer whose malloc, free, calloc and realloc only
# call the C library's), `signals` (99 Hz of cpu-clock signals to the main thread, a handler that only counts) and
# `both`.
# Each session configuration's own CPU, as its summary states it, is printed under its times. BASE=BUILD_DIR adds `base`: the
# `memory` configuration run by another build's emberline and agent, to compare two builds side by side; CONFIGS may
# name `base-exact` beside it (the `exact` configuration run by that build).
set -euo pipefail
BUILD=${1:?usage: bench_memory.sh BUILD_DIR [ROUNDS] [PYTHON_ROUNDS]}
ROUNDS=${2:-5}
PYROUNDS=${3:-800}
WORKLOADS=${WORKLOADS:-python python-pretty g++ spawns}
CONFIGS=${CONFIGS:-alone cpu memory agent}
BASE=${BASE:-}
HEAPTRACK=${HEAPTRACK:-yes}
HEAPTRACK_ROUNDS=${HEAPTRACK_ROUNDS:-2}
# PIN=1 runs each workload on the last CPU and Emberline's session on the first (heaptrack unpinned): on a virtual
# machine whose CPUs run at different speeds (here one ran 1.6 times slower than the other), an unpinned run measures
# mostly which CPU the program landed on.
PIN=${PIN:-0}
TARGET_CPU=() SESSION_CPU=()
if [[ $PIN == 1 ]]; then
    TARGET_CPU=(taskset -c "$(($(nproc) - 1))")
    SESSION_CPU=(taskset -c 0)
fi
HERE=$(cd "$(dirname "$0")" && pwd)
EMBERLINE=$BUILD/app/emberline
AGENT=$BUILD/lib/emberline/libemberline_agent.so
# `floor`: an interposer that only forwards; `signals`: 99 Hz of cpu-clock signals to a handler that counts
FLOOR=${FLOOR:-$BUILD/tests/bench/bench_interposer_floor.so}
SIGNALS=${SIGNALS:-$BUILD/tests/bench/bench_signal_floor.so}
for config in $CONFIGS; do
    case $config in
    floor | both) [[ -f $FLOOR ]] || { echo "no $FLOOR: build the benchmarks (or set FLOOR)" >&2; exit 1; } ;;&
    signals | both) [[ -f $SIGNALS ]] || { echo "no $SIGNALS: build the benchmarks (or set SIGNALS)" >&2; exit 1; } ;;
    esac
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export PYTHONMALLOC=malloc

# "workload WALL s cpu USER [SYSTEM]": the wall time, and the CPU time in a second column (what the program spent
# itself, less sensitive to a busy machine than the wall time).
workload() { grep -oE 'workload [0-9.]+ s cpu [0-9.]+( [0-9.]+)?' "$1" | awk '{print $2, $5 + $6}'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
column() { awk -v c="$1" '{print $c}' "$2"; }
# The median of the numbers on stdin, with its 95% interval (order statistics) where there are enough of them.
pairedMedian() {
    sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2
        lo = int(NR / 2 - 0.98 * sqrt(NR)); hi = int(NR / 2 + 0.98 * sqrt(NR)) + 1
        if (lo < 1 || hi > NR) printf "%+.2f%%", m; else printf "%+.2f%% [%+.2f, %+.2f]", m, a[lo], a[hi]}'
}

measure() {
    local name=$1 heaptrack=$2
    shift 2
    local d=$TMP/$name
    mkdir -p "$d"
    # One configuration's run, its times appended to its file. The order alternates from round to round (forward, then
    # backward), so that no configuration always runs after the same one.
    one() {
        local config=$1 i=$2
        shift 2
        case $config in
        alone) "${TARGET_CPU[@]}" "$@" >/dev/null 2>"$d/err" ;;
        cpu) "${SESSION_CPU[@]}" "$EMBERLINE" record --output "$d/run" -- "${TARGET_CPU[@]}" "$@" >/dev/null 2>"$d/err" ;;
        memory)
            "${SESSION_CPU[@]}" "$EMBERLINE" record --memory --output "$d/run" -- "${TARGET_CPU[@]}" "$@" >/dev/null \
                2>"$d/err"
            # the samples' estimate of the allocations ("the samples estimate 1.2 GiB (±3 MiB) in N)"), and the count
            sed -nE 's/.*the samples estimate .* in ([0-9]+)\).*/\1/p' "$d/err" >>"$d/estimates"
            sed -nE 's/.*allocated in ([0-9]+) allocations.*/\1/p' "$d/err" >>"$d/counts"
            ;;
        copy)
            # memory with every stack copied and unwound by the session (the agent's walk off): before and after
            "${SESSION_CPU[@]}" "$EMBERLINE" record --memory --agent-stacks copy --output "$d/run" -- "${TARGET_CPU[@]}" "$@" \
                >/dev/null 2>"$d/err"
            ;;
        exact)
            "${SESSION_CPU[@]}" "$EMBERLINE" record --memory --alloc-interval 1 --output "$d/run" -- "${TARGET_CPU[@]}" \
                "$@" >/dev/null 2>"$d/err"
            ;;
        base)
            "${SESSION_CPU[@]}" "$BASE/app/emberline" record --memory --output "$d/run" -- "${TARGET_CPU[@]}" "$@" \
                >/dev/null 2>"$d/err"
            ;;
        base-exact)
            "${SESSION_CPU[@]}" "$BASE/app/emberline" record --memory --alloc-interval 1 --output "$d/run" -- \
                "${TARGET_CPU[@]}" "$@" >/dev/null 2>"$d/err"
            ;;
        agent) LD_PRELOAD=$AGENT "${TARGET_CPU[@]}" "$@" >/dev/null 2>"$d/err" ;;
        floor) LD_PRELOAD=$FLOOR "${TARGET_CPU[@]}" "$@" >/dev/null 2>"$d/err" ;;
        signals) EMBERLINE_SIGNAL_HZ=99 LD_PRELOAD=$SIGNALS "${TARGET_CPU[@]}" "$@" >/dev/null 2>"$d/err" ;;
        both) EMBERLINE_SIGNAL_HZ=99 LD_PRELOAD="$FLOOR $SIGNALS" "${TARGET_CPU[@]}" "$@" >/dev/null 2>"$d/err" ;;
        heaptrack)
            if [[ $heaptrack != yes || $HEAPTRACK != yes ]] || ! command -v heaptrack >/dev/null || ((i > HEAPTRACK_ROUNDS)); then return; fi
            heaptrack -o "$d/ht$i" "$@" >/dev/null 2>"$d/err"
            ;;
        esac
        rm -rf "$d/run"
        workload "$d/err" >>"$d/$config"
        # the session's own CPU, as its summary says it ("profiler CPU 1.2 s (3.4% of a core, ...")
        sed -nE 's/.*profiler CPU [^(]*\(([0-9.]+)% of a core.*/\1/p' "$d/err" >>"$d/$config.session"
        grep -oE 'waited [^ ]+ [a-z]+ for room' "$d/err" >>"$d/$config.waited" || true
    }
    local configs=($CONFIGS) backward=()
    [[ -n $BASE && " $CONFIGS " != *" base "* && " $CONFIGS " != *" base-exact "* ]] && configs+=(base) # `base` runs once a round
    configs+=(heaptrack)
    for ((k = ${#configs[@]} - 1; k >= 0; k--)); do backward+=("${configs[k]}"); done
    for ((i = 1; i <= ROUNDS; i++)); do
        local order=("${configs[@]}")
        ((i % 2 == 0)) && order=("${backward[@]}")
        for config in "${order[@]}"; do one "$config" "$i" "$@"; done
    done
    local alone aloneCpu
    alone=$(column 1 "$d/alone" | median)
    aloneCpu=$(column 2 "$d/alone" | median)
    echo "== $name"
    for config in alone floor signals both agent cpu memory copy exact base base-exact heaptrack; do
        [[ -s $d/$config ]] || continue
        local m c
        m=$(column 1 "$d/$config" | median)
        c=$(column 2 "$d/$config" | median)
        # each round's configuration over the same round's `alone` (run beside it), the median and its 95% interval
        local paired pairedWall
        paired=$(paste -d' ' "$d/alone" "$d/$config" | awk '$3 > 0 {print ($4 / $2 - 1) * 100}' | pairedMedian)
        pairedWall=$(paste -d' ' "$d/alone" "$d/$config" | awk '$3 > 0 {print ($3 / $1 - 1) * 100}' | pairedMedian)
        printf '%-10s wall %7.3f s (%+7.2f%%)  cpu %7.3f s (%+7.2f%%)  paired wall %s  paired cpu %s  wall runs: %s\n' \
            "$config" "$m" "$(awk -v a="$alone" -v b="$m" 'BEGIN {print (b / a - 1) * 100}')" "$c" \
            "$(awk -v a="$aloneCpu" -v b="$c" 'BEGIN {print (b / a - 1) * 100}')" "$pairedWall" "$paired" \
            "$(column 1 "$d/$config" | tr '\n' ' ')"
        if [[ -s $d/$config.session ]]; then
            printf '%-10s session CPU (its summary) median %s%% of a core; runs: %s\n' "" \
                "$(median <"$d/$config.session")" "$(tr '\n' ' ' <"$d/$config.session")"
        fi
    done
    if [[ -s $d/heaptrack && -s $d/estimates ]]; then # the estimates come from the memory configuration
        local calls est counted
        calls=$(heaptrack_print "$(ls "$d"/ht1*zst | head -1)" 2>/dev/null | grep -oE '^calls to allocation functions: [0-9]+' | awk '{print $5}')
        est=$(median <"$d/estimates")
        counted=$(median <"$d/counts")
        echo "allocations: heaptrack counted $calls; emberline's samples estimated (median) $est" \
            "($(awk -v a="$calls" -v b="$est" 'BEGIN {printf "%+.2f%%", (b / a - 1) * 100}')), its hooks counted" \
            "(median) $counted ($(awk -v a="$calls" -v b="$counted" 'BEGIN {printf "%+.3f%%", (b / a - 1) * 100}'))"
    fi
}

if [[ " $WORKLOADS " == *" python "* ]]; then
    measure python yes /usr/bin/python3 "$HERE/../targets/json_workload.py" "$PYROUNDS"
fi
if [[ " $WORKLOADS " == *" python-pretty "* ]]; then
    measure python-pretty yes /usr/bin/python3 "$HERE/../targets/json_workload.py" "$((PYROUNDS * 3 / 8))" pretty
fi
# heaptrack follows only the first process of a command (here /usr/bin/time), not g++'s cc1plus: left out.
if [[ " $WORKLOADS " == *" g++ "* ]]; then
    measure g++ no /usr/bin/time -f 'workload %e s cpu %U %S' g++ -O2 -c "$HERE/../targets/cxx_workload.cpp" -o /dev/null
fi
if [[ " $WORKLOADS " == *" spawns "* ]]; then
    measure spawns no /usr/bin/time -f 'workload %e s cpu %U %S' bash -c 'for i in $(seq 300); do /bin/true; done'
fi
