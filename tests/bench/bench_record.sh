#!/usr/bin/env bash
# The sampling engine's cost, side by side in one run with `perf record --call-graph dwarf` at the same
# frequency, on a CPU-bound target that reports its own throughput (tests/targets/cpu_split).
#
#   tests/bench/bench_record.sh [BUILD_DIR] [SECONDS_PER_RUN] [ROUNDS]
#   EMBERLINE_BENCH_SOAK=600 tests/bench/bench_record.sh   # also a 10-minute 999 Hz memory soak
#
# Prints, per configuration, the median target throughput and its slowdown against the unprofiled target,
# the profiler's own CPU time per target CPU-second, and then the processing throughput: samples unwound and
# recorded per second of our CPU, next to `perf report` processing the same perf.data. Emberline runs with wall
# time (its default) and, at 999 Hz, once more without it (--no-wall-time). Needs root (or
# perf_event_paranoid <= 1) and linux-perf. Runs are interleaved round by round so that a busy machine
# affects every configuration alike.
set -euo pipefail
build=${1:-build/dev}
secs=${2:-5}
rounds=${3:-3}
emberline=$build/app/emberline
target=$build/tests/targets/cpu_split
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

command -v perf >/dev/null || { echo "linux-perf is not installed" >&2; exit 1; }
[[ -x $emberline && -x $target ]] || { echo "build $build first (targets: emberline emberline_targets)" >&2; exit 1; }

throughput() { sed -n 's/^chunks_per_second \([0-9.]*\).*/\1/p' "$1"; }
cpu_of() { awk '{print $1 + $2}' "$1"; } # user + sys seconds from /usr/bin/time -f '%U %S'
# A profiler's own CPU: everything its /usr/bin/time counted (it waits for the target, so the target's time is
# included) minus what the target's own /usr/bin/time counted.
own_cpu() { awk -v a="$(cpu_of "$1")" -v b="$(cpu_of "$2")" 'BEGIN { print a - b }'; }

# EMBERLINE_BENCH_PIN=1 runs every target on CPU 1 and every profiler on CPU 0 (taskset), so that the scheduler's
# placement does not add its own noise to the slowdowns.
pin_target=() pin_profiler=()
if [[ ${EMBERLINE_BENCH_PIN:-0} == 1 ]]; then
    pin_target=(taskset -c 1) pin_profiler=(taskset -c 0)
fi

declare -A thr cpu
# emberNNN records wall time (the default); emberNNNcpu passes --no-wall-time; a `kN` suffix (ember999k8,
# ember999cpuk8) copies N KiB of stack per sample instead of the default 32. floor999 is `perf record -e
# cpu-clock` at 999 Hz with no stacks at all: what the timer interrupts alone cost the target, under which no
# sampler can go. inprocNNN and inprocNNNcpu are the same through the in-process sampler (--sampler inprocess).
# EMBERLINE_BENCH_CONFIGS="none floor999 ember999 ember999k8" runs other configurations
# (`none` is the base every slowdown is measured against).
configs=(none floor999 perf99 ember99 perf999 ember999 ember999cpu)
# EMBERLINE_BENCH_TARGET=thread runs cpu_split's work on a second thread (a pthread stack) instead of main's.
target_args=()
[[ ${EMBERLINE_BENCH_TARGET:-} == thread ]] && target_args=(thread)
if [[ -n ${EMBERLINE_BENCH_CONFIGS:-} ]]; then
    read -r -a configs <<<"$EMBERLINE_BENCH_CONFIGS"
fi
for ((r = 1; r <= rounds; r++)); do
    for c in "${configs[@]}"; do
        out=$work/$c.$r.out
        timed=(/usr/bin/time -f '%U %S' -o "$work/$c.$r.target" "${pin_target[@]}" "$target" "$secs" "${target_args[@]}")
        case $c in
        none) "${pin_target[@]}" "$target" "$secs" "${target_args[@]}" >"$out" ;;
        floor*)
            /usr/bin/time -f '%U %S' -o "$work/$c.$r.time" "${pin_profiler[@]}" \
                perf record -q -e cpu-clock -F "${c#floor}" -o "$work/$c.$r.data" -- "${timed[@]}" >"$out" 2>/dev/null
            ;;
        perf*)
            /usr/bin/time -f '%U %S' -o "$work/$c.$r.time" "${pin_profiler[@]}" \
                perf record -q -F "${c#perf}" --call-graph dwarf -o "$work/$c.$r.data" -- "${timed[@]}" >"$out" 2>/dev/null
            ;;
        ember* | inproc*)
            hz=${c#ember}
            opts=()
            # inprocNNN: the in-process sampler (Emberline's agent in the target) instead of perf events.
            [[ $c == inproc* ]] && hz=${c#inproc} && opts+=(--sampler inprocess)
            if [[ $hz == *k* ]]; then
                opts+=(--stack-size "$((${hz##*k} * 1024))") && hz=${hz%k*}
            fi
            [[ $hz == *cpu ]] && opts+=(--no-wall-time) && hz=${hz%cpu}
            /usr/bin/time -f '%U %S' -o "$work/$c.$r.time" "${pin_profiler[@]}" \
                "$emberline" record --frequency "$hz" "${opts[@]}" --output "$work/$c.$r.dir" -- "${timed[@]}" \
                >"$out" 2>"$work/$c.$r.err"
            ;;
        esac
        thr[$c]+="$(throughput "$out") "
        if [[ -f $work/$c.$r.time ]]; then
            cpu[$c]+="$(own_cpu "$work/$c.$r.time" "$work/$c.$r.target") "
        fi
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
base=$(echo "${thr[none]}" | median)
printf '\n%-11s %16s %10s %22s  %s\n' config "chunks/s (median)" slowdown "profiler CPU / target s" "chunks/s, round by round"
for c in "${configs[@]}"; do
    t=$(echo "${thr[$c]}" | median)
    slow=$(awk -v b="$base" -v t="$t" 'BEGIN { printf "%.2f%%", 100 * (b - t) / b }')
    pc="-"
    if [[ -n ${cpu[$c]:-} ]]; then
        pc=$(echo "${cpu[$c]}" | median | awk -v s="$secs" '{ printf "%.4f s (%.2f%%)", $1 / s, 100 * $1 / s }')
    fi
    printf '%-11s %16s %10s %22s  %s\n' "$c" "$t" "$slow" "$pc" "${thr[$c]}"
done

# Processing throughput: our CPU per sample during a 999 Hz session, against perf report on perf.data.
if [[ -f $work/ember999.1.err && -f $work/perf999.1.data ]]; then
    ours_samples=$(sed -n 's/.* \([0-9]*\) samples (.*/\1/p' "$work/ember999.1.err")
    ours_cpu=$(own_cpu "$work/ember999.1.time" "$work/ember999.1.target")
    /usr/bin/time -f '%U %S' -o "$work/report.time" perf report --stdio -i "$work/perf999.1.data" >/dev/null 2>&1
    report_cpu=$(cpu_of "$work/report.time")
    perf_samples=$(perf script -i "$work/perf999.1.data" -F tid 2>/dev/null | wc -l)
    printf '\nprocessing: emberline %d samples in %.3f s CPU = %.0f samples/s (sampling, unwinding, recording, symbolizing, writing)\n' \
        "$ours_samples" "$ours_cpu" "$(awk -v n="$ours_samples" -v c="$ours_cpu" 'BEGIN { print n / c }')"
    printf '            perf report %d samples in %.3f s CPU = %.0f samples/s (unwinding and reporting perf.data)\n' \
        "$perf_samples" "$report_cpu" "$(awk -v n="$perf_samples" -v c="$report_cpu" 'BEGIN { print n / c }')"
fi

if [[ -n ${EMBERLINE_BENCH_SOAK:-} ]]; then
    soak=$EMBERLINE_BENCH_SOAK
    echo
    echo "memory soak: $soak s at 999 Hz, RSS of emberline every 30 s (KiB)"
    "$emberline" record --frequency 999 --output "$work/soak" -- "$target" "$soak" >/dev/null 2>"$work/soak.err" &
    sleep 1
    pid=$(pgrep -n -f "emberline record --frequency 999 --output $work/soak" || true)
    while [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; do
        printf '%s ' "$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null)"
        sleep 30
    done
    echo
    tail -3 "$work/soak.err"
fi
