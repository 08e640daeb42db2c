#!/usr/bin/env bash
# The injector's cost (engine/inject): INJECTIONS injections (default 20) of the probe library
# (tests/targets/inject_probe.c) into a running program through the helper emberline-inject, as the profiler runs it:
# how long the target's thread stood stopped (the helper's stopped_ns: p50, p99, max), the helper's whole run (wall
# time, start to exit), and the stops it took to find the thread at a safe point (an injection that found none in its
# 200 stops fails, and is counted), and where the helper's time went. The first injection loads the library; the others find it loaded (dlopen returns
# its handle) and only call. Targets: inject_target idle (a sleeping program: the floor), many_threads (8 busy threads, and 500), inject_target alloc (4 threads in malloc and free
# without pause, the main thread a third of its time) and inject_target alloc ... nonstop (the main thread too: the
# safe point's hard case). On a machine with fewer cores than busy threads, the stop includes the wait for a core
# each time the thread is let run the call.
#
# Beside it, when heaptrack and gdb are installed: `heaptrack -p` into the idle and the busy program, which injects
# its library through gdb (every thread stopped meanwhile), timed from its start to its "injection finished", with
# whether the program still runs a second later and what gdb and the program said.
#
#   tests/bench/bench_inject.sh [BUILD_DIR] [INJECTIONS]
#
# The rows run the helper at the priority it is started with here (the profiler starts it at nice -20 where it may:
# the _nice row does the same).
#
# Needs to trace processes that are not its children: root, or kernel.yama.ptrace_scope=0.
set -euo pipefail
build=${1:-build/dev}
count=${2:-20}
helper=$build/lib/emberline/emberline-inject
probe=$(realpath "$build/tests/targets/inject/libinject_probe.so" 2>/dev/null || true)
targets=$build/tests/targets
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
[[ -x $helper && -n $probe && -x $targets/many_threads && -x $targets/inject_target ]] ||
    { echo "build $build first (targets: emberline-inject emberline_inject_targets many_threads)" >&2; exit 1; }

now_ns() { date +%s%N; }
# percentile P < numbers, one a line: the smallest value with at least P% of the values at or below it.
percentile() { sort -g | awk -v p="$1" '{a[NR] = $1} END {i = int((NR * p + 99) / 100); if (i < 1) i = 1; print a[i]}'; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
ms() { awk '{printf "%.3f", $1 / 1e6}'; }

# bench NAME COMMAND...: starts the command, injects COUNT times, prints the numbers, ends the command.
bench() {
    local name=$1
    shift
    "$@" >"$work/$name.out" 2>&1 &
    local pid=$!
    pids+=("$pid")
    sleep 0.5
    local stopped=() wall=() tries=() plan=() safe=() first_stopped="" first_wall="" failed=0 reason=""
    for ((i = 1; i <= count; i++)); do
        local start end line
        start=$(now_ns)
        line=$(${helper_nice:+nice -n "$helper_nice"} "$helper" --pid "$pid" --library "$probe" \
            --function inject_probe_entry --argument "$work/$name.calls") || true
        end=$(now_ns)
        if [[ $line != ok* ]]; then
            failed=$((failed + 1))
            reason=$line
            continue
        fi
        local s w
        s=$(field stopped_ns <<<"$line")
        w=$((end - start))
        if [[ -z $first_stopped ]]; then
            first_stopped=$s
            first_wall=$w
        else
            stopped+=("$s")
            wall+=("$w")
        fi
        tries+=("$(field tries <<<"$line")")
        plan+=("$(field plan_ns <<<"$line")")
        safe+=("$(field safe_point_ns <<<"$line")")
        sleep 0.05
    done
    kill "$pid" 2>/dev/null || true
    echo "$name: $count injections, $failed failed${reason:+ (last: $reason)}"
    echo "  first (dlopen loads the library): stopped $(ms <<<"$first_stopped") ms, wall $(ms <<<"$first_wall") ms"
    local s=$(printf '%s\n' "${stopped[@]}") w=$(printf '%s\n' "${wall[@]}") t=$(printf '%s\n' "${tries[@]}")
    printf '  the %d others (loaded already): stopped p50 %s ms, p99 %s ms, max %s ms; wall p50 %s ms, p99 %s ms\n' \
        "${#stopped[@]}" "$(percentile 50 <<<"$s" | ms)" "$(percentile 99 <<<"$s" | ms)" "$(percentile 100 <<<"$s" | ms)" \
        "$(percentile 50 <<<"$w" | ms)" "$(percentile 99 <<<"$w" | ms)"
    echo "  stops to find a safe point: p50 $(percentile 50 <<<"$t"), max $(percentile 100 <<<"$t")"
    local p=$(printf '%s\n' "${plan[@]}") q=$(printf '%s\n' "${safe[@]}")
    echo "  the helper's checks before any stop: p50 $(percentile 50 <<<"$p" | ms) ms; from them to the stop at a" \
        "safe point: p50 $(percentile 50 <<<"$q" | ms) ms, p99 $(percentile 99 <<<"$q" | ms) ms (the rest of the" \
        "wall time: the helper's start and end)"
}

# heaptrack_bench NAME COMMAND...: heaptrack -p into the command; seconds from its start to "injection finished".
heaptrack_bench() {
    local name=$1
    shift
    if ! command -v heaptrack >/dev/null || ! command -v gdb >/dev/null; then
        echo "heaptrack -p: skipped (heaptrack and gdb are not both installed)"
        return
    fi
    "$@" >"$work/$name.ht.out" 2>&1 &
    local pid=$!
    pids+=("$pid")
    sleep 0.5
    local start end=""
    start=$(now_ns)
    (cd "$work" && exec heaptrack -p "$pid") >"$work/$name.heaptrack" 2>&1 &
    local heaptrack=$!
    pids+=("$heaptrack")
    for ((i = 0; i < 600; i++)); do
        if grep -q "injection finished" "$work/$name.heaptrack"; then
            end=$(now_ns)
            break
        fi
        sleep 0.05
    done
    sleep 1
    local alive=no state
    state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1) || true
    [[ -n $state && $state != Z && $state != X ]] && alive=yes
    kill "$pid" 2>/dev/null || true
    sleep 0.2
    kill "$heaptrack" 2>/dev/null || true
    rm -f "/tmp/heaptrack_fifo$heaptrack" # heaptrack's own, left behind when it ends this way
    if [[ -z $end ]]; then
        echo "heaptrack -p into $name: no 'injection finished' within 30 s:"
        sed 's/^/  /' "$work/$name.heaptrack" | head -5
        return
    fi
    echo "heaptrack -p into $name: 'injection finished' after $(ms <<<"$((end - start))") ms (gdb stops every thread" \
        "meanwhile; 50 ms polling); the program still running a second later: $alive"
    # gdb's own complaints (a state it could not write back, a symbol the injection did not find).
    grep -E "Couldn't|No symbol|rror" "$work/$name.heaptrack" | sed 's/^/  heaptrack: /' || true
    grep -v '^$' "$work/$name.ht.out" | grep -v chunks_per_second | sed 's/^/  the program: /' || true
}

echo "emberline-inject: $helper, probe: $probe"
bench idle "$targets/inject_target" idle 60
bench many_threads "$targets/many_threads" 8 60
bench many_threads_500 "$targets/many_threads" 500 300
# As the profiler starts the helper where it may (root): at nice -20 (engine/inject/inject_client.cpp says why).
if [[ $(id -u) == 0 ]]; then
    helper_nice=-20 bench many_threads_500_nice "$targets/many_threads" 500 300
fi
bench alloc "$targets/inject_target" alloc 60 4
bench alloc_nonstop "$targets/inject_target" alloc 60 4 nonstop
heaptrack_bench idle "$targets/inject_target" idle 60
heaptrack_bench many_threads "$targets/many_threads" 8 60
