#!/usr/bin/env bash
# The memory agent's cost counted, not timed: the instructions the profiled program executes, with the data-cache
# misses and mispredicted branches of Valgrind's simulation (cachegrind), for CPython decoding and encoding JSON
# (tests/targets/json_workload.py, PYTHONMALLOC=malloc: every object a malloc). On a virtual machine whose CPUs change
# speed from minute to minute (the same program took 0.9 s and 1.6 s back to back), a slowdown of a few percent is far
# inside the spread of any timed run; these counts move by a few thousandths of a percent from run to run (the
# agent's random sampling points), so that a change of a tenth of a point shows. They are a model of the cost, not the cost: they leave out the time a miss or a mispredicted branch
# costs a real CPU, and the session's own work on another CPU (as a timed run on two CPUs mostly does too).
#
# Configurations, each run under cachegrind (whole process: the interpreter's start, the work, its end):
#   alone    the program alone;
#   floor    an interposer whose malloc, free, calloc and realloc only call the C library's
#            (tests/bench/bench_interposer_floor.c, compiled here): what any preloaded allocation profiler costs;
#   memory   `emberline record --memory` (the default interval);
#   exact    `emberline record --memory --alloc-interval 1`;
#   and, with OTHER="NAME=DIR ...", `memory` run by other builds (the build before a change, or one with a part of the
#   fast path taken out, to see what that part costs).
# heaptrack cannot be counted so: its library records nothing in a program that Valgrind runs.
# Each configuration runs twice, with 0 JSON rounds and with ROUNDS: the second less the first is the work's own count.
# Prints, for each: instructions, D1 misses, last-level misses and mispredicted branches of the whole run, and the
# instructions' increase over `alone`, whole and the work's; and the allocations Emberline counted.
#   bench_agent_instructions.sh BUILD_DIR [ROUNDS]      (default 10; some 20 s a configuration)
# CONFIGS="alone floor memory exact" (the default) chooses the configurations (`alone` first). The interpreter's hash
# seed is fixed (PYTHONHASHSEED=0): with a random one, the same run's count moves by some 0.3%.
set -euo pipefail
BUILD=$(realpath "${1:?usage: bench_agent_instructions.sh BUILD_DIR [ROUNDS]}")
ROUNDS=${2:-10}
CONFIGS=${CONFIGS:-alone floor memory exact}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null || { echo "bench_agent_instructions.sh: needs valgrind" >&2; exit 1; }
PYTHON=/usr/bin/python3 # Debian's CPython, as bench_agent_split.sh runs it
WORKLOAD=$HERE/../targets/json_workload.py
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export PYTHONMALLOC=malloc PYTHONHASHSEED=0
cc -O2 -shared -fPIC "$HERE/bench_interposer_floor.c" -ldl -o "$TMP/floor.so"
GRIND=(valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes)

declare -A builds=([memory]=$BUILD [exact]=$BUILD)
for pair in ${OTHER:-}; do
    builds[${pair%%=*}]=$(realpath "${pair#*=}")
    CONFIGS="$CONFIGS ${pair%%=*}"
done

# run CONFIG ROUNDS: the configuration's counts into $TMP/CONFIG.ROUNDS.counts ("Ir D1 LL mispredicts").
run() {
    local name=$1 rounds=$2 out=$TMP/$1.$2
    local grind=("${GRIND[@]}" "--cachegrind-out-file=$out.cg" "--log-file=$out.log")
    local program=("$PYTHON" "$WORKLOAD" "$rounds")
    case $name in
    alone) "${grind[@]}" "${program[@]}" >/dev/null 2>&1 ;;
    floor) LD_PRELOAD="$TMP/floor.so" "${grind[@]}" "${program[@]}" >/dev/null 2>&1 ;;
    exact) "${builds[$name]}/app/emberline" record --memory --alloc-interval 1 --output "$out.run" -- \
        "${grind[@]}" "${program[@]}" >/dev/null 2>"$out.session" ;;
    *) "${builds[$name]}/app/emberline" record --memory --output "$out.run" -- "${grind[@]}" "${program[@]}" \
        >/dev/null 2>"$out.session" ;;
    esac
    rm -rf "$out.run"
    # The client's totals (the log's last summary: valgrind's own launcher logs nothing of the kind).
    awk '
        /I *refs:/ { ir = $NF }
        /D1 *misses:/ { d1 = $4 }
        /LL misses:/ { ll = $4 }
        /Mispredicts:/ { bm = $3 }
        END { gsub(",", "", ir); gsub(",", "", d1); gsub(",", "", ll); gsub(",", "", bm); print ir, d1, ll, bm }' \
        "$out.log" >"$out.counts"
}

names=()
for name in $CONFIGS; do
    names+=("$name")
    run "$name" 0
    run "$name" "$ROUNDS"
done

echo "CPython JSON ($ROUNDS rounds, PYTHONMALLOC=malloc) under cachegrind: counts of the whole run; 'work' is the run"
echo "less the same configuration's run with no rounds"
printf '%-14s %15s %13s %11s %13s %12s %12s\n' config instructions "D1 misses" "LL misses" mispredicted "more (whole)" \
    "more (work)"
read -r aloneIr _ <"$TMP/alone.$ROUNDS.counts"
read -r aloneIr0 _ <"$TMP/alone.0.counts"
for name in "${names[@]}"; do
    read -r ir d1 ll bm <"$TMP/$name.$ROUNDS.counts"
    read -r ir0 _ <"$TMP/$name.0.counts"
    printf '%-14s %15s %13s %11s %13s %+11.2f%% %+11.2f%%\n' "$name" "$ir" "$d1" "$ll" "$bm" \
        "$(echo "($ir / $aloneIr - 1) * 100" | bc -l)" \
        "$(echo "(($ir - $ir0) / ($aloneIr - $aloneIr0) - 1) * 100" | bc -l)"
done
for name in "${names[@]}"; do
    if [ -f "$TMP/$name.$ROUNDS.session" ]; then
        counted=$(sed -n 's/.* allocated in \([0-9]*\) allocations.*/\1/p' "$TMP/$name.$ROUNDS.session" | head -1)
        if [ -n "$counted" ]; then
            read -r ir _ <"$TMP/$name.$ROUNDS.counts"
            echo "$name: $counted allocations counted; $(echo "($ir - $aloneIr) / $counted" | bc -l |
                xargs printf '%.1f') instructions more than alone per allocation"
        fi
    fi
done
