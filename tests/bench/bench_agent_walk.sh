#!/usr/bin/env bash
# The agent's own stack walk against its copies, as a user runs Emberline: whole processes, unpinned, side by side.
#   bench_agent_walk.sh BUILD_DIR [ROUNDS] [SAMPLED_ROUNDS] [EXACT_ROUNDS]
# - Sampled (default interval): CPython (PYTHONMALLOC=malloc) encoding and decoding JSON (tests/targets/json_workload.py,
#   SAMPLED_ROUNDS rounds, about 10 s) alone, under `record --memory` (the walk) and under `record --memory
#   --agent-stacks copy`, in alternating order, ROUNDS times: each run's wall time start to exit (GNU time), the
#   median of each round's slowdown against that round's run alone, and the session's own CPU as its summary says it.
# - Exact (--alloc-interval 1): the same program at EXACT_ROUNDS rounds (about 0.6 s alone) alone, walked, and under
#   heaptrack, 3 rounds; the copy once (it is slow).
set -euo pipefail
BUILD=${1:?usage: bench_agent_walk.sh BUILD_DIR [ROUNDS] [SAMPLED_ROUNDS] [EXACT_ROUNDS]}
ROUNDS=${2:-8}
SAMPLED=${3:-1150}
EXACT=${4:-70}
HERE=$(cd "$(dirname "$0")" && pwd)
EMBERLINE=$BUILD/app/emberline
WORKLOAD=$HERE/../targets/json_workload.py
PY=/usr/bin/python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export PYTHONMALLOC=malloc
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# run NAME COMMAND...: appends the wall seconds of the whole command to $TMP/NAME, its stderr to $TMP/NAME.err
run() {
    local name=$1
    shift
    /usr/bin/time -f %e -o "$TMP/time" "$@" >/dev/null 2>"$TMP/err" || true
    cat "$TMP/time" >>"$TMP/$name"
    cat "$TMP/err" >>"$TMP/$name.err"
    sed -nE 's/.*profiler CPU [^(]*\(([0-9.]+)% of a core.*/\1/p' "$TMP/err" >>"$TMP/$name.session"
}

report() {
    local name=$1 base=$2
    local m paired
    m=$(median <"$TMP/$name")
    paired=$(paste -d' ' "$TMP/$base" "$TMP/$name" | awk '$2 != "" {print ($2 / $1 - 1) * 100}' | median)
    printf '%-12s wall median %7.3f s  paired slowdown median %+6.2f%%  runs: %s\n' "$name" "$m" "$paired" \
        "$(tr '\n' ' ' <"$TMP/$name")"
    if [[ -s $TMP/$name.session ]]; then
        printf '%-12s session CPU median %s%% of a core; runs: %s\n' "" "$(median <"$TMP/$name.session")" \
            "$(tr '\n' ' ' <"$TMP/$name.session")"
    fi
    grep -hoE 'agent stacks: [0-9]+ of [0-9]+ \([0-9.]+%\) walked' "$TMP/$name.err" | tail -1 | sed 's/^/             /' || true
    grep -hoE 'waited [^ ]+ [a-z]+ for room' "$TMP/$name.err" | tail -1 | sed 's/^/             /' || true
}

if ((ROUNDS > 0)); then
echo "== sampled: json_workload.py $SAMPLED, $ROUNDS alternating rounds, unpinned, whole processes"
configs=(alone walk copy)
for ((i = 1; i <= ROUNDS; i++)); do
    order=("${configs[@]}")
    ((i % 2 == 0)) && order=(copy walk alone)
    for c in "${order[@]}"; do
        case $c in
        alone) run alone "$PY" "$WORKLOAD" "$SAMPLED" ;;
        walk) run walk "$EMBERLINE" record --memory --output "$TMP/out" -- "$PY" "$WORKLOAD" "$SAMPLED" ;;
        copy) run copy "$EMBERLINE" record --memory --agent-stacks copy --output "$TMP/out" -- "$PY" "$WORKLOAD" "$SAMPLED" ;;
        esac
        rm -rf "$TMP/out"
    done
done
report walk alone
report copy alone
fi

echo "== exact: json_workload.py $EXACT, 3 rounds; the copy once"
for ((i = 1; i <= 3; i++)); do
    run exalone "$PY" "$WORKLOAD" "$EXACT"
    run exwalk "$EMBERLINE" record --memory --alloc-interval 1 --output "$TMP/out" -- "$PY" "$WORKLOAD" "$EXACT"
    rm -rf "$TMP/out"
    if command -v heaptrack >/dev/null; then
        run heaptrack heaptrack -o "$TMP/ht" "$PY" "$WORKLOAD" "$EXACT"
        rm -f "$TMP"/ht*
    fi
done
run excopy "$EMBERLINE" record --memory --alloc-interval 1 --agent-stacks copy --output "$TMP/out" -- "$PY" "$WORKLOAD" "$EXACT"
report excopy exalone
report exwalk exalone
[[ -s $TMP/heaptrack ]] && report heaptrack exalone
echo "alone: $(tr '\n' ' ' <"$TMP/exalone")"
