#!/usr/bin/env bash
# A program that runs on after attaches and detaches: is it as it was? CPython runs tests/targets/steady_service.py
# (a JSON round trip every 50 ms, a level heap, a sleeping thread); after BASELINE minutes alone it gets five
# sessions in a row, each attached and detached: exact memory, sampled memory, the in-process CPU sampler with
# memory, exact again, sampled with wall time. Then it runs on for MINUTES more, and the check compares the minutes
# before the attaches with the last ones: CPU per iteration (no timer, hook or slow path left behind), resident
# memory, sleeps cut short, its signal masks, its POSIX timers (/proc/PID/timers), rings still mapped, and its exit.
# A twin of the service runs beside it the whole time and is never attached: the machine's own drift shows in both,
# so the verdict is the attached service's change over the twin's (per minute, attached / twin).
#   soak_detach.sh BUILD_DIR [MINUTES] [BASELINE]
set -euo pipefail
BUILD=$(realpath "${1:?usage: soak_detach.sh BUILD_DIR [MINUTES] [BASELINE]}")
MINUTES=${2:-60}
BASELINE=${3:-3}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
EMBERLINE=$BUILD/app/emberline
PYTHON=$(python3 -c 'import sys; print(sys.executable)')
WORK=$(mktemp -d)
trap 'exec 3>&- 4>&- ; rm -rf "$WORK"' EXIT
export PYTHONMALLOC=malloc

mkfifo "$WORK/in" "$WORK/twin_in"
"$PYTHON" tests/targets/steady_service.py <"$WORK/in" >"$WORK/out" 2>&1 &
PID=$!
"$PYTHON" tests/targets/steady_service.py <"$WORK/twin_in" >"$WORK/twin_out" 2>&1 &
TWIN=$!
exec 3>"$WORK/in" 4>"$WORK/twin_in"
until grep -q ready "$WORK/out" && grep -q ready "$WORK/twin_out"; do sleep 0.1; done

state() { # the program's signal masks, timers and rings
    grep -E '^Sig(Ign|Cgt)' "/proc/$PID/status"
    echo "timers: $(grep -c '^ID' "/proc/$PID/timers" 2>/dev/null || true)"
    echo "rings: $(grep -c '\.ring' "/proc/$PID/maps" || true)"
}
minutes_seen() { grep -c '^minute' "$WORK/out" || true; }
wait_minutes() { until [ "$(minutes_seen)" -ge "$1" ]; do kill -0 "$PID" || return 1; sleep 5; done; }

wait_minutes "$BASELINE"
state >"$WORK/before"
sessions=("--alloc-interval 1 --duration 3" "--duration 4" "--sampler inprocess --duration 4"
          "--alloc-interval 1 --duration 3" "--wall-time --duration 4")
for options in "${sessions[@]}"; do
    # shellcheck disable=SC2086
    "$EMBERLINE" record --pid "$PID" --memory $options --output "$WORK/session-out" >"$WORK/session" 2>&1 ||
        { echo "soak_detach: session ($options) failed:"; cat "$WORK/session"; exit 1; }
    grep -E 'stopped|attach' "$WORK/session" | head -2 | sed "s/^/  [$options] /"
done
state >"$WORK/after_detach"
AT=$(minutes_seen)
wait_minutes $((AT + 1 + MINUTES))
state >"$WORK/end"
exec 3>&- 4>&-
STATUS=0
wait "$PID" || STATUS=$?
wait "$TWIN" || true

echo "steady_service: exit $STATUS, $(grep -c done "$WORK/out") done; its minutes (the sessions ran after minute $BASELINE):"
grep '^minute' "$WORK/out" | sed 's/^/  /'
echo "its twin, never attached:"
grep '^minute' "$WORK/twin_out" | sed 's/^/  /'
awk -v base="$BASELINE" '
    FNR == 1 { file++ }
    /^minute/ { n = $2; if (file == 1) { cpu[n] = $6; rss[n] = $8; shorts = $10; last = n } else { tcpu[n] = $6; trss[n] = $8 } }
    END {
        for (i = 1; i <= base; ++i) { b += cpu[i]; tb += tcpu[i]; r0 = rss[i]; t0 = trss[i] }
        for (i = last - base + 1; i <= last; ++i) { e += cpu[i]; te += tcpu[i]; r1 = rss[i]; t1 = trss[i] }
        printf "cpu per iteration: first %d minutes %.1f us, last %d minutes %.1f us (%+.1f%%); twin %.1f -> %.1f us (%+.1f%%)\n",
               base, b / base, base, e / base, (e - b) / b * 100, tb / base, te / base, (te - tb) / tb * 100
        printf "attached over twin: %+.1f%% (first %d minutes %.3f, last %d minutes %.3f)\n",
               ((e / te) / (b / tb) - 1) * 100, base, b / tb, base, e / te
        printf "resident: %d KiB after minute %d, %d KiB after minute %d (%+d KiB); twin %+d KiB; sleeps cut short: %d\n",
               r0, base, r1, last, r1 - r0, t1 - t0, shorts
    }' "$WORK/out" "$WORK/twin_out"
for f in after_detach end; do
    if diff -q "$WORK/before" "$WORK/$f" >/dev/null; then echo "state $f: as before"; else
        echo "state $f: CHANGED"; diff "$WORK/before" "$WORK/$f" || true; fi
done
cat "$WORK/before"
