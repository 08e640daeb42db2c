#!/usr/bin/env bash
# The ptrace sampler's cost, side by side in one run with the perf sampler and with no profiler, on targets
# with 1, 8 and 64 busy threads (tests/targets/many_threads prints its own throughput), and the perf
# sampler's cost with wall time (context-switch samples) on versus off.
#
#   tests/bench/bench_ptrace.sh [BUILD_DIR] [SECONDS_PER_RUN] [ROUNDS]
#
# EMBERLINE_BENCH_THREADS (default "1 8 64") and EMBERLINE_BENCH_CONFIGS (default "none perf ptrace perf-wall")
# narrow a run to some targets or configurations; "none" must stay in for the slowdowns.
#
# Prints every round's throughput and slowdown (against that round's run without a profiler), then per
# configuration the median throughput, the slowdown of the medians, the per-round slowdowns' min / median /
# max, and the ptrace sampler's effective rate. Runs are interleaved round by round, so a busy machine affects
# every configuration alike; the VM's run-to-run noise is about 3-5%, hence the spread.
set -euo pipefail
build=${1:-build/dev}
secs=${2:-4}
rounds=${3:-3}
emberline=$build/app/emberline
target=$build/tests/targets/many_threads
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ -x $emberline && -x $target ]] || { echo "build $build first (targets: emberline emberline_targets)" >&2; exit 1; }

throughput() { sed -n 's/^chunks_per_second \([0-9.]*\).*/\1/p' "$1"; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

declare -A thr rate spent
read -ra configs <<<"${EMBERLINE_BENCH_CONFIGS:-none perf ptrace perf-wall}"
read -ra thread_counts <<<"${EMBERLINE_BENCH_THREADS:-1 8 64}"
for threads in "${thread_counts[@]}"; do
    for ((r = 1; r <= rounds; r++)); do
        for c in "${configs[@]}"; do
            out=$work/$threads.$c.$r
            cmd=("$target" "$threads" "$secs")
            case $c in
            none) "${cmd[@]}" >"$out.out" ;;
            perf) "$emberline" record --sampler perf --output "$out.d" -- "${cmd[@]}" >"$out.out" 2>"$out.err" ;;
            perf-wall) "$emberline" record --sampler perf --wall-time --output "$out.d" -- "${cmd[@]}" >"$out.out" 2>"$out.err" ;;
            ptrace) "$emberline" record --sampler ptrace --output "$out.d" -- "${cmd[@]}" >"$out.out" 2>"$out.err" ;;
            esac
            thr[$threads.$c]+="$(throughput "$out.out") "
            if [[ $c == ptrace ]]; then
                rate[$threads]+="$(sed -n 's/.*(\([0-9.]*\) Hz effective).*/\1/p' "$out.err") "
                spent[$threads]+="$(sed -n 's/.*(spent \([0-9.]*\)%.*/\1/p' "$out.err") "
            fi
        done
    done
done

# Per round: each configuration's throughput and its slowdown against the same round's run without a profiler.
slowdown() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.2f", 100 * (b - t) / b }'; }
declare -A slows
echo "per round (chunks/s, slowdown against the same round's 'none'):"
for threads in "${thread_counts[@]}"; do
    read -ra base_runs <<<"${thr[$threads.none]}"
    for c in "${configs[@]}"; do
        read -ra runs <<<"${thr[$threads.$c]}"
        line=""
        for ((r = 0; r < ${#runs[@]}; r++)); do
            s=$(slowdown "${base_runs[$r]}" "${runs[$r]}")
            slows[$threads.$c]+="$s "
            line+=$(printf ' %9s' "${runs[$r]}")
            [[ $c != none ]] && line+=$(printf ' (%5s%%)' "$s")
        done
        printf '  %-3s %-10s%s\n' "$threads" "$c" "$line"
    done
done
echo
printf '%-8s %-10s %16s %10s %22s %s\n' threads config "chunks/s (median)" slowdown "per-round min/med/max" note
for threads in "${thread_counts[@]}"; do
    base=$(echo "${thr[$threads.none]}" | median)
    for c in "${configs[@]}"; do
        t=$(echo "${thr[$threads.$c]}" | median)
        slow="$(slowdown "$base" "$t")%"
        spread=""
        if [[ $c != none ]]; then
            sorted=$(echo "${slows[$threads.$c]}" | tr ' ' '\n' | grep -v '^$' | sort -g)
            spread="$(echo "$sorted" | head -1) / $(echo "${slows[$threads.$c]}" | median) / $(echo "$sorted" | tail -1)"
        fi
        note=""
        [[ $c == ptrace ]] && note="effective rate $(echo "${rate[$threads]}" | median) Hz (99 Hz asked), cost it measured $(echo "${spent[$threads]}" | median)% of a CPU"
        printf '%-8s %-10s %16s %10s %22s %s\n' "$threads" "$c" "$t" "$slow" "$spread" "$note"
    done
done
