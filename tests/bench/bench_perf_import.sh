#!/usr/bin/env bash
# Importing `perf script` text against `perf report` on the same perf.data, side by side in one run: records the
# cpu_split test target with frame-pointer call chains until it holds about SAMPLES samples, writes its
# `perf script --no-inline` text once, then times, each under /usr/bin/time:
#   perf_report   perf report --stdio --no-children (what a perf user runs to read the file)
#   import_text   emberline report TEXT --json     (parsing the text into a profile, plus the report)
#   import_data   emberline report perf.data --json (perf script in a child process, streamed into the parser)
# and prints wall time, peak memory and the ratios import/perf report.
#   tests/bench/bench_perf_import.sh [SAMPLES]   (default 1000000; env BUILD_DIR, default build/dev)
# CALL_GRAPH=fp (the default) records frame-pointer chains, which perf report reads fastest; CALL_GRAPH=dwarf
# records 2 KiB stack copies (`--call-graph dwarf,2048`), which perf report and perf script unwind sample by
# sample, as they do for the programs built without frame pointers that most native code is.
# The goal (issue 18): importing the text takes at most 1/3 of perf report's time.
# Builds and measurements take /tmp/emberline-build.lock; do not call this script while holding that lock.
set -euo pipefail
source "$(dirname "$0")/common.sh"

SAMPLES=${1:-1000000}
CALL_GRAPH=${CALL_GRAPH:-fp}
case "$CALL_GRAPH" in
fp) CALL_GRAPH_OPTION=fp; SUFFIX= ;;
dwarf) CALL_GRAPH_OPTION=dwarf,2048; SUFFIX=-dwarf ;;
*) echo "bench_perf_import.sh: CALL_GRAPH is fp or dwarf" >&2; exit 2 ;;
esac
WORK=$WORK/perf-$SAMPLES$SUFFIX
mkdir -p "$WORK"

command -v perf >/dev/null || { echo "bench_perf_import.sh: perf is needed (apt install linux-perf)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench_perf_import.sh: /usr/bin/time (package time) is needed" >&2; exit 1; }

flock "$LOCK" cmake --build "$BUILD_DIR" --target emberline cpu_split >/dev/null
DATA="$WORK/perf.data"
TEXT="$WORK/perf.txt"
FREQ=20000
if [ ! -s "$DATA" ]; then
    # One thread at FREQ Hz: SAMPLES / FREQ seconds (the kernel may lower the rate; the count is printed below).
    SECONDS_NEEDED=$(( (SAMPLES + FREQ - 1) / FREQ ))
    perf record -q -e cpu-clock -F "$FREQ" --call-graph "$CALL_GRAPH_OPTION" -o "$DATA" -- \
        "$BUILD_DIR/tests/targets/cpu_split" "$SECONDS_NEEDED" >/dev/null 2>"$WORK/record.err"
fi
[ -s "$TEXT" ] || perf script --no-inline -i "$DATA" >"$TEXT" 2>/dev/null
echo "perf.data: $DATA ($(du -h "$DATA" | cut -f1)); perf script text: $(du -h "$TEXT" | cut -f1)," \
    "$(grep -c 'cpu-clock' "$TEXT") samples"

# One lock for every run: they are measured under the same conditions, one after the other. The text is read
# once beforehand so that every run finds it in the page cache.
cat "$TEXT" >/dev/null
flock "$LOCK" bash -c "$(declare -f measure); WORK='$WORK'; BENCH_NAME='$BENCH_NAME'
    measure perf_report perf report -i '$DATA' --stdio --no-children
    measure import_text '$BUILD_DIR/app/emberline' report '$TEXT' --json
    measure import_data '$BUILD_DIR/app/emberline' report '$DATA' --json"

read -r pr_s pr_kb <"$WORK/perf_report.time"
read -r it_s it_kb <"$WORK/import_text.time"
read -r id_s id_kb <"$WORK/import_data.time"
printf '%-40s %10s %12s\n' "run" "seconds" "peak MiB"
printf '%-40s %10s %12d\n' "perf report --stdio --no-children" "$pr_s" $((pr_kb / 1024))
printf '%-40s %10s %12d\n' "emberline report perf.txt (import)" "$it_s" $((it_kb / 1024))
printf '%-40s %10s %12d\n' "emberline report perf.data (perf script)" "$id_s" $((id_kb / 1024))
awk -v a="$it_s" -v b="$pr_s" -v c="$id_s" 'BEGIN {
    printf "import of the text / perf report: %.3f (goal <= 0.333)\n", a / b
    printf "perf.data through perf script / perf report: %.3f\n", c / b }'
