#!/usr/bin/env bash
# The engine's cost per sample, replayed: CPython running tests/targets/varied_work.py (json, re, zlib, hashlib,
# sorting with a key, a recursive walk: a real program none of us wrote, no frame pointers, several libraries and
# many distinct stacks) is recorded at 999 Hz with `emberline record --sampler perf --sample-log`, and the captured
# samples (registers, 32 KiB stack copies, maps) are replayed on one core through the unwinder, recorder and exporter
# by bench_replay: with libunwind alone and with the modules' unwind tables first, side by side, then where a warm
# sample's time goes. Beside it, in the same run, `perf record --call-graph dwarf` samples the same program for the
# same time and `perf report --stdio` processes its perf.data: its samples per second of CPU.
#
#   tests/bench/bench_replay.sh [BUILD_DIR] [SECONDS] [PASSES]
#
# Needs root (or perf_event_paranoid <= 1), linux-perf and python3. EMBERLINE_REPLAY_KEEP=DIR keeps the log and
# the replay's folded stacks there.
set -euo pipefail
build=${1:-build/dev}
secs=${2:-5}
passes=${3:-5}
emberline=$build/app/emberline
bench=$build/tests/bench/bench_replay
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

command -v perf >/dev/null || { echo "linux-perf is not installed" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is not installed" >&2; exit 1; }
[[ -x $emberline && -x $bench ]] || { echo "build $build first (targets: emberline bench_replay)" >&2; exit 1; }

program=$(dirname "$0")/../targets/varied_work.py
cpu_of() { awk '{print $1 + $2}' "$1"; } # user + sys seconds from /usr/bin/time -f '%U %S'

"$emberline" record --sampler perf --frequency 999 --no-wall-time --duration "$secs" --sample-log "$work/python.samples" \
    --output "$work/ember" -- python3 "$program" "$secs" >/dev/null 2>"$work/ember.err" || true
grep -E 'samples \(|incomplete' "$work/ember.err" | sed 's/^/record: /' | head -3
perf record -q -F 999 --call-graph dwarf -o "$work/perf.data" -- python3 "$program" "$secs" \
    >/dev/null 2>&1 || true
/usr/bin/time -f '%U %S' -o "$work/report.time" perf report --stdio -i "$work/perf.data" >/dev/null 2>&1
report_cpu=$(cpu_of "$work/report.time")
perf_samples=$(perf script -i "$work/perf.data" -F tid 2>/dev/null | wc -l)

echo
folded=()
if [[ -n ${EMBERLINE_REPLAY_KEEP:-} ]]; then
    mkdir -p "$EMBERLINE_REPLAY_KEEP"
    cp "$work/python.samples" "$EMBERLINE_REPLAY_KEEP/"
    folded=(--folded "$EMBERLINE_REPLAY_KEEP/replay.folded")
fi
"$bench" "$work/python.samples" "$passes" "${folded[@]}"
printf 'perf report --stdio         %d samples in %.3f s CPU = %.0f samples/s (perf record --call-graph dwarf -F 999, %s s)\n' \
    "$perf_samples" "$report_cpu" "$(awk -v n="$perf_samples" -v c="$report_cpu" 'BEGIN { print n / c }')" "$secs"
