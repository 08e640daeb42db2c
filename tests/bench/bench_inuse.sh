#!/usr/bin/env bash
# How close a flush's inuse-space is to the live heap at the default interval, on CPython (PYTHONMALLOC=malloc) holding
# heaps of known steps (tests/targets/heap_plateaus.py). One run with every allocation recorded (--alloc-interval 1)
# gives each step's true live heap (its flushes that end while the heap holds agree to the byte); RUNS runs at the
# default interval then give an estimate at every flush that ends during a step. Prints, per step, the true heap,
# each estimate's error, the largest error and the sampling's own standard deviation for small blocks,
# sqrt(interval / heap), which is what the error of one flush is expected to be; and how many flushes hold the true
# heap within the 95% range they state (the margin in each flush's comment; about 19 in 20 should).
#   bench_inuse.sh BUILD_DIR [RUNS] [STEPS_MIB] [HOLD_SECONDS]
set -euo pipefail
BUILD=${1:?usage: bench_inuse.sh BUILD_DIR [RUNS] [STEPS_MIB] [HOLD_SECONDS]}
RUNS=${2:-5}
STEPS=${3:-32,128,512}
HOLD=${4:-3.5}
HERE=$(cd "$(dirname "$0")" && pwd)
EMBERLINE=$BUILD/app/emberline
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export PYTHONMALLOC=malloc

run() { # NAME INTERVAL
    "$EMBERLINE" record --memory --alloc-interval "$2" --flush-period 1 --output "$TMP/$1" -- \
        /usr/bin/python3 "$HERE/../targets/heap_plateaus.py" "$STEPS" "$HOLD" >/dev/null 2>"$TMP/$1.err"
    grep '^plateau ' "$TMP/$1.err" >"$TMP/$1.plateaus"
    python3 "$HERE/flush_inuse.py" "$TMP/$1" >"$TMP/$1.flushes"
}

run exact 1
for ((i = 1; i <= RUNS; i++)); do
    run "sampled$i" 524288
done

python3 - "$TMP" "$RUNS" <<'PY'
import math, sys
tmp, runs = sys.argv[1], int(sys.argv[2])

def load(name):
    plateaus = [l.split()[1:] for l in open("%s/%s.plateaus" % (tmp, name))]
    flushes = [l.split()[1:] for l in open("%s/%s.flushes" % (tmp, name))]
    out = {}
    for mib, start, end in plateaus:
        # a flush that ends while the heap holds (a little margin on each side for the clocks)
        values = [(int(v), int(m)) for t, v, _, m in flushes if float(start) + 0.05 < float(t) < float(end) - 0.05]
        out[int(mib)] = values
    return out

exact = load("exact")
truth = {}
for mib, values in exact.items():
    if not values:
        sys.exit("no exact flush ended during the %d MiB step" % mib)
    if max(values) != min(values):
        print("note: the exact flushes of the %d MiB step differ: %s" % (mib, values))
    truth[mib] = values[-1][0]
worst_all = 0
for mib in sorted(truth):
    errors = []
    held = stated = 0
    for i in range(1, runs + 1):
        for v, m in load("sampled%d" % i).get(mib, []):
            errors.append((v / truth[mib] - 1) * 100)
            if m >= 0:
                stated += 1
                held += abs(v - truth[mib]) <= m
    worst = max(abs(e) for e in errors) if errors else float("nan")
    within = sum(1 for e in errors if abs(e) <= 5)
    sd = math.sqrt(524288 / truth[mib]) * 100
    print("step %4d MiB: true in-use %8.1f MiB; %2d flushes, %2d within 5%%, largest error %5.2f%%, "
          "sampling sd %4.2f%%, %d of %d within their stated range; errors: %s"
          % (mib, truth[mib] / 2**20, len(errors), within, worst, sd, held, stated,
             " ".join("%+.1f" % e for e in errors)))
PY
