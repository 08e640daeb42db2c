#!/usr/bin/env bash
# Builds the asan preset (AddressSanitizer + UndefinedBehaviorSanitizer, -O1, no benchmarks) and runs the unit and
# gui tiers under it. Only what those tiers need is built: their test programs, with the targets they depend on
# (the emberline executable, the live-session target programs). Any sanitizer report fails its test: ASan and
# UBSan stop the program at the first error (halt_on_error, set by the asan test preset), LeakSanitizer reports
# leaks at exit.
#   tests/run_asan.sh [CTEST ARGS...]     e.g. tests/run_asan.sh -R tst_merge
# EMBERLINE_ASAN_STEP=build builds and stops, =test only runs the tests (built before); EMBERLINE_ASAN_EXTRA_TARGETS
# names more targets of the tree to build with the tests (CI builds the fuzzer with them: tests/run_all.sh).
# Configure, build and test take /tmp/emberline-build.lock (the workspace builds one thing at a time).
set -euo pipefail
cd "$(dirname "$0")/.."

LOCK=/tmp/emberline-build.lock
flock "$LOCK" cmake --preset asan >/dev/null
mapfile -t tests < <(ctest --preset asan -N | sed -n 's/^ *Test *#[0-9]*: *//p')
# A test that is a program of its own is built; the tree's own checks (tests/layout) are scripts, not targets.
declare -A known=()
while read -r name; do
    known[$name]=1
done < <(ninja -C build/asan -t targets all | sed -n 's/^\([^:/]*\): phony$/\1/p')
targets=()
for t in "${tests[@]}"; do
    if [[ -n "${known[$t]:-}" ]]; then
        targets+=("$t")
    fi
done
if [[ ${#targets[@]} -eq 0 ]]; then
    echo "asan: no unit or gui tests found" >&2
    exit 1
fi
STEP=${EMBERLINE_ASAN_STEP:-all}
if [[ $STEP != test ]]; then
    # shellcheck disable=SC2086 # a list of target names
    flock "$LOCK" cmake --build build/asan --parallel "$(nproc)" --target "${targets[@]}" ${EMBERLINE_ASAN_EXTRA_TARGETS:-}
fi
if [[ $STEP != build ]]; then
    flock "$LOCK" ctest --preset asan --parallel 2 --timeout 900 "$@"
fi
