#!/usr/bin/env bash
# How far the ptrace sampler's 60/30/10 split strays from the truth, run after run: records
# tests/targets/cpu_split (one thread whose CPU time goes 60/30/10 to hot_sixty, warm_thirty and cool_ten by
# construction) RUNS times at the default budget, and prints for every run the samples taken, the effective
# rate, the cost of a round and each function's share of the CPU time, then the largest error of each function
# over the runs. With n samples the binomial noise alone is sqrt(p(1-p)/n): about 2.8 points for hot_sixty at
# 300 samples, so the spread mostly says how many samples the budget buys.
#
#   tests/bench/bench_ptrace_split.sh [BUILD_DIR] [SECONDS_PER_RUN] [RUNS]
#
# When the build has benchmarks, it ends with bench_ptrace_round at the median run's rate: the cost of a round
# made of the bare system calls and nothing else, the floor under the sampler's own "us a round".
#
# EMBERLINE_BENCH_RECORD_ARGS adds options to `emberline record` (say "--frequency 199"). Needs python3.
# Hold /tmp/emberline-build.lock around it on a shared machine: the budget follows what rounds cost, so a busy
# machine buys fewer samples.
set -euo pipefail
build=${1:-build/dev}
secs=${2:-6}
runs=${3:-10}
emberline=$build/app/emberline
target=$build/tests/targets/cpu_split
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ -x $emberline && -x $target ]] || { echo "build $build first (targets: emberline emberline_targets)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench_ptrace_split.sh: needs python3" >&2; exit 1; }
read -ra extra <<<"${EMBERLINE_BENCH_RECORD_ARGS:-}"

for ((r = 1; r <= runs; r++)); do
    out=$work/$r
    "$emberline" record --sampler ptrace "${extra[@]}" --output "$out.d" -- "$target" "$secs" >"$out.out" 2>"$out.err"
    "$emberline" report --json --sample-type cpu-time "$out.d" >"$out.json"
done

python3 - "$work" "$runs" <<'EOF'
import json, re, sys
work, runs = sys.argv[1], int(sys.argv[2])
truth = {"hot_sixty": 0.60, "warm_thirty": 0.30, "cool_ten": 0.10}
worst = {name: 0.0 for name in truth}
samples_all, rates, costs = [], [], []
print(f"{'run':>3} {'samples':>8} {'Hz':>6} {'us/round':>9} {'spent%':>7}  " +
      "  ".join(f"{name:>11}" for name in truth))
for r in range(1, runs + 1):
    err = open(f"{work}/{r}.err").read()
    samples = int(re.search(r": (\d+) samples \(", err).group(1))
    rate = float(re.search(r"\(([0-9.]+) Hz effective\)", err).group(1))
    spent = float(re.search(r"\(spent ([0-9.]+)%", err).group(1))
    # What a round cost: the share of a CPU spent, over the rounds a second.
    cost_us = spent / 100 * 1e6 / rate if rate > 0 else float("nan")
    report = json.load(open(f"{work}/{r}.json"))
    total = next(t["total"] for t in report["sample_types"] if t["type"] == "cpu-time")
    shares = {f["name"]: f["total"] / total for f in report["functions"] if f["name"] in truth}
    for name in truth:
        worst[name] = max(worst[name], abs(shares.get(name, 0) - truth[name]))
    samples_all.append(samples); rates.append(rate); costs.append(cost_us)
    print(f"{r:>3} {samples:>8} {rate:>6.1f} {cost_us:>9.0f} {spent:>7.2f}  " +
          "  ".join(f"{100 * shares.get(name, 0):>10.1f}%" for name in truth))
median = lambda v: sorted(v)[len(v) // 2]
print(f"median: {median(samples_all)} samples, {median(rates):.1f} Hz, {median(costs):.0f} us a round")
open(f"{work}/interval_us", "w").write(str(int(1e6 / median(rates))) if median(rates) > 0 else "10000")
print("max abs error (points): " + ", ".join(f"{name} {100 * worst[name]:.1f}" for name in truth))
EOF

floor=$build/tests/bench/bench_ptrace_round
if [[ -x $floor ]]; then
    echo "the bare mechanism at that rate (bench_ptrace_round):"
    "$floor" 1000 8192 "$(cat "$work/interval_us")"
fi
