#!/usr/bin/env bash
# The cost of memory profiling a running program, against the same program launched under it, side by side in one
# run. CPython (PYTHONMALLOC=malloc: every object a malloc) encodes and decodes JSON (tests/targets/json_workload.py),
# timing its own work, which starts once a file appears: each configuration starts the program, attaches (or not),
# then lets it go. Configurations, interleaved ROUNDS times:
#   alone     no profiler;
#   launched  `emberline record --memory -- python3 json_workload.py` (the agent preloaded);
#   attached  the program started alone, then `emberline record --pid PID --memory` (the agent loaded into it);
#   heaptrack the program started alone, then `heaptrack -p PID` (gdb loads heaptrack's library), when both are
#             installed.
# Prints the median work time and slowdown of each against `alone`, in wall time and in the program's own CPU time
# (the agent's work runs on the program's threads; CPU time moves less with the machine's other load), and the attached sessions' pauses (how long the
# injected thread was stopped, from each summary) and the time from `emberline record`'s start until the program's
# ring was mapped, beside the time heaptrack -p took to attach; and the allocations each counted since its attach
# (heaptrack's from its first round's file).
#   bench_attach.sh BUILD_DIR [ROUNDS] [PYTHON_ROUNDS] [EXTRA RECORD OPTIONS...]
# BENCH_ATTACH_CONFIGS (say "alone launched attached") runs only those configurations.
# BENCH_ATTACH_QUIET=SECONDS waits that long before each attach, with nothing else running: the kernel turns its
# scheduler's perf hooks off a second after the last perf event closes, and the first event opened after that waits
# for an RCU grace period (the attach right after a launched run, as the rounds run by default, finds them on).
# BENCH_ATTACH_SHARE=1: `perf record` samples each profiled program while it works, and the agent's share of its
# samples is printed: the agent's own cost, whatever the machine's speed does meanwhile.
# BENCH_ATTACH_PAIRED=1: each profiled program runs beside an unprofiled twin started with it (one per core; the
# session's own threads share them), and each round's slowdown is the profiled program's time over its twin's. A
# virtual machine's speed can change by half between runs a minute apart; twins run through the same changes, so
# their ratio moves far less than separate runs' times do.
set -euo pipefail
BUILD=$(realpath "${1:?usage: bench_attach.sh BUILD_DIR [ROUNDS] [PYTHON_ROUNDS]}")
ROUNDS=${2:-5}
PYROUNDS=${3:-400}
shift $(($# < 3 ? $# : 3))
EXTRA=("$@")
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
EMBERLINE=$BUILD/app/emberline
PYTHON=$(python3 -c 'import sys; print(sys.executable)')
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export PYTHONMALLOC=malloc
CONFIGS="alone launched attached"
if [ -n "${BENCH_ATTACH_CONFIGS:-}" ]; then
    CONFIGS=$BENCH_ATTACH_CONFIGS
elif command -v heaptrack >/dev/null && command -v gdb >/dev/null; then
    CONFIGS="$CONFIGS heaptrack"
else
    echo "bench_attach: heaptrack -p needs heaptrack and gdb: left out" >&2
fi

# work_time FILE: the workload's own seconds from its stderr.
work_time() { sed -n 's/^workload \([0-9.]*\) s.*/\1/p' "$1" | tail -1; }
# work_cpu FILE: the workload's own CPU seconds.
work_cpu() { sed -n 's/^workload [0-9.]* s cpu \([0-9.]*\) s.*/\1/p' "$1" | tail -1; }

# start_program GO ERR: the workload started, waiting for GO; its pid in $PID.
start_program() {
    EMBERLINE_WORKLOAD_GO=$1 "$PYTHON" tests/targets/json_workload.py "$PYROUNDS" >/dev/null 2>"$2" &
    PID=$!
}

# alive PID: whether the process runs (a child of this script that ended stays until waited for, a zombie).
alive() {
    local state
    state=$(sed -E 's/.*\) (.).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

# wait_for PID PATTERN [OTHER]: until the process maps something matching PATTERN (at most 20 s); not once it has
# ended, or process OTHER has (the profiler that was to load it gave up).
wait_for() {
    for _ in $(seq 2000); do
        grep -q "$2" "/proc/$1/maps" 2>/dev/null && return 0
        if ! alive "$1" || { [ -n "${3:-}" ] && ! alive "$3"; }; then
            echo "bench_attach: $2 never mapped in $1 (the program or its profiler ended first)" >&2
            return 1
        fi
        sleep 0.01
    done
    echo "bench_attach: $2 never mapped in $1" >&2
    return 1
}

# start_share PID CONFIG ROUND: with BENCH_ATTACH_SHARE=1, perf samples the program until end_share.
SHARER=""
start_share() {
    [ "${BENCH_ATTACH_SHARE:-0}" = 1 ] || return 0
    perf record -q -F 499 -p "$1" -o "$WORK/share-$2-$3.data" 2>/dev/null &
    SHARER=$!
    sleep 0.3
}
end_share() {
    [ -n "$SHARER" ] || return 0
    kill -INT "$SHARER" 2>/dev/null || true
    wait "$SHARER" 2>/dev/null || true
    SHARER=""
}

run() { # CONFIG ROUND
    local c=$1 r=$2 go=$WORK/go-$1-$2 err=$WORK/$1-$2.err twin=""
    rm -f "$go"
    if [ "${BENCH_ATTACH_PAIRED:-0}" = 1 ] && [ "$c" != alone ]; then
        EMBERLINE_WORKLOAD_GO=$go "$PYTHON" tests/targets/json_workload.py "$PYROUNDS" >/dev/null \
            2>"$WORK/twin-$c-$r.err" &
        twin=$!
    fi
    case $c in
    alone)
        start_program "$go" "$err"
        touch "$go"
        wait "$PID"
        ;;
    launched)
        EMBERLINE_WORKLOAD_GO=$go "$EMBERLINE" record --memory --output "$WORK/out-$c-$r" "${EXTRA[@]}" -- \
            "$PYTHON" tests/targets/json_workload.py "$PYROUNDS" >/dev/null 2>"$err" &
        local session=$!
        sleep 1
        start_share "$(pgrep -P "$session" | head -1)" "$c" "$r"
        touch "$go"
        wait "$session"
        end_share
        ;;
    attached)
        start_program "$go" "$err"
        sleep "${BENCH_ATTACH_QUIET:-0.3}"
        local t0
        t0=$(date +%s.%N)
        "$EMBERLINE" record --pid "$PID" --memory --output "$WORK/out-$c-$r" "${EXTRA[@]}" >/dev/null \
            2>"$WORK/$c-$r.session" &
        local session=$!
        wait_for "$PID" '\.ring'
        echo "$(date +%s.%N) - $t0" | bc >>"$WORK/attach-ready"
        start_share "$PID" "$c" "$r"
        touch "$go"
        wait "$PID" || true
        wait "$session" || true
        end_share
        sed -n 's/.*its thread stopped \([^ ]* [^ ]*\) to load.*/\1/p' "$WORK/$c-$r.session" >>"$WORK/pauses"
        # the allocations the session counted, since the attach (exact mode: every one; sampled: the hooks' count)
        sed -nE 's/.*allocated in ([0-9]+) allocations.*/\1/p' "$WORK/$c-$r.session" | head -1 >>"$WORK/$c.counts"
        ;;
    heaptrack)
        start_program "$go" "$err"
        sleep 0.3
        local t0
        t0=$(date +%s.%N)
        (cd "$WORK" && exec setsid heaptrack -p "$PID" >"$WORK/$c-$r.session" 2>&1) &
        local session=$!
        if wait_for "$PID" libheaptrack_inject "$session"; then
            echo "$(date +%s.%N) - $t0" | bc >>"$WORK/heaptrack-attach"
            touch "$go"
            wait "$PID" || true
        else
            # heaptrack -p failed (gdb could not make the call): what the program said, and it goes.
            echo "heaptrack -p round $r: $(tr '\n' ' ' <"$WORK/$c-$r.session" | cut -c1-300); the program: $(tail -1 "$err")" \
                >>"$WORK/heaptrack-failures"
            kill "$PID" 2>/dev/null || true
            wait "$PID" || true
            rm -f "$err"
            # heaptrack (and its gdb) would wait on for the program: let go at once.
            pkill -s "$(ps -o sid= -p "$session" 2>/dev/null | tr -d ' ')" 2>/dev/null || true
        fi
        # heaptrack ends once it has written its file (a minute at most here); a heaptrack -p left hanging by gdb is
        # ended.
        for _ in $(seq 600); do
            alive "$session" || break
            sleep 0.1
        done
        pkill -s "$(ps -o sid= -p "$session" 2>/dev/null | tr -d ' ')" 2>/dev/null || true
        wait "$session" || true
        # Its count of the allocations since its attach, from the first round's file (heaptrack_print takes a while).
        local file
        file=$(ls "$WORK"/heaptrack.*.zst "$WORK"/heaptrack.*.gz 2>/dev/null | head -1 || true)
        if [ "$r" = 1 ] && [ -n "$file" ] && command -v heaptrack_print >/dev/null; then
            heaptrack_print "$file" 2>/dev/null | sed -nE 's/^calls to allocation functions: ([0-9]+).*/\1/p' \
                >>"$WORK/heaptrack.counts"
        fi
        rm -f "$WORK"/heaptrack.*.zst "$WORK"/heaptrack.*.gz
        ;;
    esac
    if [ -n "$twin" ]; then
        wait "$twin" || true
        if [ -f "$err" ]; then
            echo "$(work_time "$err") / $(work_time "$WORK/twin-$c-$r.err")" | bc -l >>"$WORK/$c.ratio"
            echo "$(work_cpu "$err") / $(work_cpu "$WORK/twin-$c-$r.err")" | bc -l >>"$WORK/$c.cpuratio"
        fi
    fi
    if [ -f "$err" ]; then
        work_time "$err" >>"$WORK/$c.times"
        work_cpu "$err" >>"$WORK/$c.cpu"
    fi
    return 0
}

for r in $(seq "$ROUNDS"); do
    for c in $CONFIGS; do
        run "$c" "$r"
    done
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
if [ -s "$WORK/alone.times" ]; then
    ALONE=$(median <"$WORK/alone.times")
    ALONE_CPU=$(median <"$WORK/alone.cpu")
    printf '%-10s %10s %10s %10s %10s\n' config "work (s)" slowdown "cpu (s)" "cpu more"
    for c in $CONFIGS; do
        [ -s "$WORK/$c.times" ] || continue
        m=$(median <"$WORK/$c.times")
        cpu=$(median <"$WORK/$c.cpu")
        printf '%-10s %10.3f %+9.1f%% %10.3f %+9.1f%%\n' "$c" "$m" "$(echo "($m / $ALONE - 1) * 100" | bc -l)" "$cpu" \
            "$(echo "($cpu / $ALONE_CPU - 1) * 100" | bc -l)"
    done
fi
for c in $CONFIGS; do
    [ -s "$WORK/$c.cpu" ] && echo "$c cpu: $(paste -sd, "$WORK/$c.cpu")"
done
# The totals each counted from its attach to the program's end (the attach happens while the program waits to start
# its work: the same allocations but a few, where every allocation is counted).
for c in attached heaptrack; do
    [ -s "$WORK/$c.counts" ] && echo "$c: allocations counted since the attach: $(paste -sd, "$WORK/$c.counts")"
done
if [ "${BENCH_ATTACH_SHARE:-0}" = 1 ]; then
    echo "the agent's share of the program's samples (perf record -F 499 while it works), round by round:"
    for c in $CONFIGS; do
        [ "$c" = launched ] || [ "$c" = attached ] || continue
        shares=""
        for f in "$WORK"/share-"$c"-*.data; do
            [ -f "$f" ] || continue
            shares="$shares $(perf report -i "$f" --sort dso --stdio 2>/dev/null |
                sed -n 's/^ *\([0-9.]*\)%.*libemberline_agent.*/\1%/p' | head -1)"
        done
        echo "$c:$shares"
    done
fi
if [ "${BENCH_ATTACH_PAIRED:-0}" = 1 ]; then
    echo "paired with an unprofiled twin, the profiled program's time over the twin's (median, then each round):"
    for c in $CONFIGS; do
        [ -s "$WORK/$c.ratio" ] || continue
        printf '%-10s wall %+6.1f%%  cpu %+6.1f%%   wall: %s\n' "$c" \
            "$(echo "($(median <"$WORK/$c.ratio") - 1) * 100" | bc -l)" \
            "$(echo "($(median <"$WORK/$c.cpuratio") - 1) * 100" | bc -l)" \
            "$(awk '{ printf "%+.1f%% ", ($1 - 1) * 100 }' "$WORK/$c.ratio")"
    done
fi
if [ -s "$WORK/pauses" ]; then
    echo "attached: the injected thread stopped for $(paste -sd, "$WORK/pauses")"
    echo "attached: $(paste -sd, "$WORK/attach-ready") s from the session's start until the program's ring was mapped"
fi
if [ -s "$WORK/heaptrack-attach" ]; then
    echo "heaptrack -p: $(paste -sd, "$WORK/heaptrack-attach") s from its start until its library was mapped"
fi
if [ -s "$WORK/heaptrack-failures" ]; then
    cat "$WORK/heaptrack-failures"
fi
