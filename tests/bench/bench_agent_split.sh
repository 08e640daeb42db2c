#!/usr/bin/env bash
# The memory agent's cost in sampled mode (the default interval) on CPython decoding and encoding JSON
# (tests/targets/json_workload.py, PYTHONMALLOC=malloc: some 17 million allocations a second), measured where a wall
# clock cannot: on a shared virtual machine whose CPUs change speed from run to run (the same run here took 0.43 s
# and 0.88 s), a 3% slowdown is far inside the spread of any handful of timed runs.
#
# Each configuration runs ROUNDS times, interleaved, under `perf record` (cpu-clock, 4999 Hz). Of the program's own
# samples (the python3 process, not the session) it takes three shares: the preloaded library (the agent, or the
# floor interposer), the C library's allocator (malloc, free and their helpers), and the rest: the program's own work,
# which no interposer changes. The rest's share against the `alone` run's gives the slowdown of the whole program:
# rest_alone / rest - 1. The allocator's share is counted apart from the rest because an interposer moves some of
# its time: a free hook that reads the block's header takes the cache miss the allocator's free would have taken.
# The rest holds the C library's other functions and the kernel too, which an interposer can change (a realloc hook
# that copies into fresh pages adds memcpy and page faults there): a second slowdown takes the interpreter's own code
# alone (own: the rest less those two).
# Each share's spread over the rounds is printed beside its mean; the slowdown's error is some 0.7 points at 8 rounds.
#
#   bench_agent_split.sh BUILD_DIR [ROUNDS] [JSON_ROUNDS]
# Configurations: alone; floor (an interposer that only forwards: tests/bench/bench_interposer_floor.c, compiled
# here); memory (`emberline record --memory`, BUILD_DIR's); and, with OTHER="NAME=DIR ...", the same for other
# builds (an agent with one part of its fast path taken out, to see what that part costs).
set -euo pipefail
BUILD=${1:?usage: bench_agent_split.sh BUILD_DIR [ROUNDS] [JSON_ROUNDS]}
ROUNDS=${2:-8}
JSON=${3:-60}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v perf >/dev/null || { echo "bench_agent_split.sh: needs perf (linux-perf)" >&2; exit 1; }
PYTHON=/usr/bin/python3 # Debian's CPython, as bench_memory.sh runs it
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export PYTHONMALLOC=malloc
cc -O2 -shared -fPIC "$HERE/bench_interposer_floor.c" -ldl -o "$TMP/floor.so"

declare -A builds=([memory]=$BUILD)
names=(alone floor memory)
for pair in ${OTHER:-}; do
    builds[${pair%%=*}]=${pair#*=}
    names+=("${pair%%=*}")
done

run() {
    local name=$1 data=$TMP/$1.data
    local program=("$PYTHON" "$HERE/../targets/json_workload.py" "$JSON")
    case $name in
    alone) perf record -q -F 4999 -o "$data" -- "${program[@]}" >/dev/null 2>&1 ;;
    floor) perf record -q -F 4999 -o "$data" -- env LD_PRELOAD="$TMP/floor.so" "${program[@]}" >/dev/null 2>&1 ;;
    *)
        perf record -q -F 4999 -o "$data" -- "${builds[$name]}/app/emberline" record --memory --output "$TMP/run" -- \
            "${program[@]}" >/dev/null 2>&1
        rm -rf "$TMP/run"
        ;;
    esac
    # Sorted by command, library and symbol, then filtered here: `perf report --comm` with `--sort dso,sym` leaves out
    # a symbol that another command also has (the allocator's, which the session calls too).
    perf report -i "$data" --sort comm,dso,sym --stdio -q 2>/dev/null | awk -v comm=python3 '
        $2 == comm {
            share = $1; sub("%", "", share); library = $3; symbol = $5; total += share
            if (library == "libemberline_agent.so" || library == "floor.so") hooks += share
            else if (library ~ /^libc\.so/ && symbol ~ /malloc|free|realloc|calloc|unlink_chunk|consolidate|alloc_perturb|tcache|memalign|usable/) allocator += share
            else if (library ~ /^libc\.so/) libc += share
            else if (library ~ /kernel/) kernel += share
        }
        END { if (total > 0) printf "%.3f %.3f %.3f %.3f\n", 100 * hooks / total, 100 * allocator / total,
                                   100 * libc / total, 100 * kernel / total }' >>"$TMP/$name.shares"
}

for ((i = 1; i <= ROUNDS; i++)); do
    order=("${names[@]}")
    if ((i % 2 == 0)); then
        order=()
        for ((k = ${#names[@]} - 1; k >= 0; k--)); do order+=("${names[k]}"); done
    fi
    for name in "${order[@]}"; do run "$name"; done
done

stats() { awk -v c="$1" '{s += $c; q += $c * $c; n++} END {m = s / n; printf "%.2f %.2f\n", m, sqrt(q / n - m * m)}' "$2"; }
read -r aloneHooks _ < <(stats 1 "$TMP/alone.shares")
read -r aloneAlloc _ < <(stats 2 "$TMP/alone.shares")
read -r aloneLibc _ < <(stats 3 "$TMP/alone.shares")
read -r aloneKernel _ < <(stats 4 "$TMP/alone.shares")
aloneRest=$(echo "100 - $aloneHooks - $aloneAlloc" | bc -l)
aloneOwn=$(echo "$aloneRest - $aloneLibc - $aloneKernel" | bc -l)
echo "CPython JSON ($JSON rounds), $ROUNDS runs each; shares of the program's own samples (mean ± sd)"
# `own`: the rest less the C library's other functions (memcpy: a realloc's copy) and the kernel (page faults), which
# an interposer can change too (a realloc that copies into fresh pages): the interpreter's own code alone.
printf '%-10s %-18s %-18s %-8s %-8s %-8s %-34s %s\n' config interposer allocator rest "libc" kernel \
    "slowdown (rest alone / rest - 1)" "slowdown (own alone / own - 1)"
for name in "${names[@]}"; do
    read -r hooks hooksSd < <(stats 1 "$TMP/$name.shares")
    read -r alloc allocSd < <(stats 2 "$TMP/$name.shares")
    read -r libc _ < <(stats 3 "$TMP/$name.shares")
    read -r kernel _ < <(stats 4 "$TMP/$name.shares")
    rest=$(echo "100 - $hooks - $alloc" | bc -l)
    own=$(echo "$rest - $libc - $kernel" | bc -l)
    printf '%-10s %6.2f%% ± %-6.2f %6.2f%% ± %-6.2f %6.2f%%  %6.2f%%  %6.2f%%  %+-34.2f %+.2f\n' "$name" "$hooks" "$hooksSd" \
        "$alloc" "$allocSd" "$rest" "$libc" "$kernel" "$(echo "($aloneRest / $rest - 1) * 100" | bc -l)" \
        "$(echo "($aloneOwn / $own - 1) * 100" | bc -l)"
done
