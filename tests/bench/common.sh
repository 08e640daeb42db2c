# Sourced by the bench scripts that open generated profiles (bench_open.sh, bench_explain.sh, bench_compare.sh),
# by bench_perf_import.sh and by bench_live_compare.sh: it moves to the repository's root and sets
#   BUILD_DIR  the build (env BUILD_DIR, default build/dev)
#   LOCK       /tmp/emberline-build.lock, held by builds and measurements alike
#   WORK       where generated inputs and outputs stay between runs (env BENCH_DIR, default $TMPDIR/emberline-bench)
# The script sets SAMPLES before calling generate_profile.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
BUILD_DIR=${BUILD_DIR:-build/dev}
LOCK=/tmp/emberline-build.lock
WORK=${BENCH_DIR:-${TMPDIR:-/tmp}/emberline-bench}
BENCH_NAME=$(basename "$0")

# generate_profile FILE SEED: unless FILE exists, writes a generated profile of SAMPLES samples there (32 frames
# deep, 5000 functions, 30% of the samples labelled) with emberline_gen_pprof, which must be built.
generate_profile() {
    [ -s "$1" ] || "$BUILD_DIR/tests/bench/emberline_gen_pprof" --output "$1" --samples "$SAMPLES" --depth 32 \
        --functions 5000 --label-fraction 0.3 --seed "$2"
}

# measure NAME COMMAND...: runs the command under /usr/bin/time; leaves "seconds kilobytes" in $WORK/NAME.time
# and its output in $WORK/NAME.out and .err. Stops the script when the command fails.
measure() {
    local name=$1
    shift
    /usr/bin/time -f '%e %M' -o "$WORK/$name.time" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || {
        echo "$BENCH_NAME: $name failed:" >&2
        cat "$WORK/$name.err" >&2
        exit 1
    }
}
