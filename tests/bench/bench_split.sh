#!/usr/bin/env bash
# How far each sampler's 60/30/10 split strays from the truth, side by side in one run: records
# tests/targets/cpu_split (one thread whose CPU time goes 60/30/10 to hot_sixty, warm_thirty and cool_ten, chunk by
# random chunk) RUNS times with every sampler in turn, interleaved, and prints per run the stacks sampled and each
# function's share of the CPU time, with the error in points and in binomial standard deviations
# (sqrt(p(1-p)/n) for n stacks). A sampler whose errors stay within about two deviations is as exact as its sample
# count allows; the spread then only says how many stacks it took.
#
#   tests/bench/bench_split.sh [BUILD_DIR] [SECONDS_PER_RUN] [RUNS]
#   EMBERLINE_BENCH_SAMPLERS="perf inprocess" (the default) chooses the samplers; EMBERLINE_BENCH_TARGET=thread
#   runs the work on a second thread; EMBERLINE_BENCH_RECORD_ARGS adds options to `emberline record`.
#
# The in-process sampler's CPU timers fire at the kernel's tick (CONFIG_HZ), whatever the frequency asked: at 250
# Hz it takes a quarter of perf's stacks at 999 Hz, each weighted by the periods it covers, so its deviation is
# twice perf's over the same run. Needs python3; hold /tmp/emberline-build.lock around it on a shared machine.
set -euo pipefail
build=${1:-build/dev}
secs=${2:-10}
runs=${3:-5}
emberline=$build/app/emberline
target=$build/tests/targets/cpu_split
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ -x $emberline && -x $target ]] || { echo "build $build first (targets: emberline emberline_targets)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench_split.sh: needs python3" >&2; exit 1; }
read -ra samplers <<<"${EMBERLINE_BENCH_SAMPLERS:-perf inprocess}"
read -ra extra <<<"${EMBERLINE_BENCH_RECORD_ARGS:-}"
target_args=()
[[ ${EMBERLINE_BENCH_TARGET:-} == thread ]] && target_args=(thread)

for ((r = 1; r <= runs; r++)); do
    for s in "${samplers[@]}"; do
        out=$work/$s.$r
        "$emberline" record --sampler "$s" --frequency 999 --no-wall-time "${extra[@]}" --output "$out.d" -- \
            "$target" "$secs" "${target_args[@]}" >"$out.out" 2>"$out.err"
        "$emberline" report --json --sample-type cpu-time "$out.d" >"$out.json"
    done
done

python3 - "$work" "$runs" "${samplers[@]}" <<'EOF'
import json, math, re, sys
work, runs, samplers = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
truth = {"hot_sixty": 0.60, "warm_thirty": 0.30, "cool_ten": 0.10}
print(f"{'sampler':<10} {'run':>3} {'stacks':>7}  " + "  ".join(f"{n:>22}" for n in truth))
for s in samplers:
    worst = {n: 0.0 for n in truth}
    worst_sd = {n: 0.0 for n in truth}
    means = {n: 0.0 for n in truth}
    for r in range(1, runs + 1):
        err = open(f"{work}/{s}.{r}.err").read()
        stacks = int(re.search(r"unwind health: \d+ of (\d+) stacks", err).group(1))
        report = json.load(open(f"{work}/{s}.{r}.json"))
        total = next(t["total"] for t in report["sample_types"] if t["type"] == "cpu-time")
        shares = {f["name"]: f["total"] / total for f in report["functions"] if f["name"] in truth}
        cells = []
        for n, p in truth.items():
            got = shares.get(n, 0.0)
            sd = math.sqrt(p * (1 - p) / stacks) if stacks else float("inf")
            e = got - p
            worst[n] = max(worst[n], abs(e))
            worst_sd[n] = max(worst_sd[n], abs(e) / sd)
            means[n] += got / runs
            cells.append(f"{100 * got:6.2f}% {100 * e:+5.2f} ({e / sd:+4.1f} sd)")
        print(f"{s:<10} {r:>3} {stacks:>7}  " + "  ".join(f"{c:>22}" for c in cells))
    print(f"{s:<10} mean of {runs}: " + ", ".join(f"{n} {100 * means[n]:.2f}%" for n in truth))
    print(f"{s:<10} worst error: " + ", ".join(f"{n} {100 * worst[n]:.2f} points ({worst_sd[n]:.1f} sd)" for n in truth))
EOF
