#!/usr/bin/env bash
# Installs what is missing, builds Emberline with its tests, and runs the whole suite: the unit, gui, process
# and package tiers through ctest (labels; see tests/CMakeLists.txt); clang-tidy over the C++ files that the
# last commit (or merge) changed (tests/run_clang_tidy.sh: any finding fails); the unit and gui tiers again under
# AddressSanitizer and UndefinedBehaviorSanitizer (tests/run_asan.sh), with the reader's fuzzer for a bounded time
# beside them. Used by CI (.ci/run) exactly as a developer runs it.
#
# The closing line counts test functions: QtTest's passed and skipped functions of every test (read from
# the JUnit report ctest writes, which keeps every test's output), plus one for each test that is not a QtTest
# program (the package tests), one for the clang-tidy check, one for the sanitizer run (its tests are the ones
# already counted, built again) and one for the fuzzing run. A skipped function is never counted as passed. With
# CI=true, the tests that need perf events or ptrace fail instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's wall time goes to the log, so that CI's time can be read step by step.
step_start=$SECONDS
step_done() {
    echo "run_all: $1 took $((SECONDS - step_start)) s"
    step_start=$SECONDS
}

installer/install-deps.sh --test
step_done "installing dependencies"
# The ci preset is the dev build as a unity build with line tables only: the same code and tests, built from
# scratch in far less time (tests/targets keep their own flags and full debug information).
cmake --preset ci
cmake --build build/ci --parallel "$(nproc)"
step_done "the ci build"
# The unit and gui tiers run two at a time (no privileges, no timing); the process and package tiers one at a
# time, alone on the machine, as their sampling and timing tests need (but installer_deb: see below).
rm -f build/ci/ctest-junit-*.xml build/ci/ctest-summary-*.log
ctest --preset ci -L '^(unit|gui)$' --parallel 2 --timeout 900 --output-junit "$PWD/build/ci/ctest-junit-fast.xml" \
    --test-output-size-passed 4194304 --test-output-size-failed 4194304 2>&1 | tee build/ci/ctest-summary-fast.log
step_done "the unit and gui tiers"
# The .deb's install test (installer_deb) waits mostly on Debian's archive and on dpkg: it runs beside the
# sanitizer build below rather than alone.
ctest --preset ci -LE '^(unit|gui)$' -E '^installer_deb$' --parallel 1 --timeout 900 \
    --output-junit "$PWD/build/ci/ctest-junit-slow.xml" \
    --test-output-size-passed 4194304 --test-output-size-failed 4194304 2>&1 | tee build/ci/ctest-summary-slow.log
step_done "the process and package tiers (but installer_deb)"
EMBERLINE_TIDY_BUILD=build/ci tests/run_clang_tidy.sh
tidy=1
step_done "clang-tidy"
ctest --preset ci -R '^installer_deb$' --timeout 900 --output-junit "$PWD/build/ci/ctest-junit-deb.xml" \
    --test-output-size-passed 4194304 --test-output-size-failed 4194304 > build/ci/ctest-summary-deb.log 2>&1 &
deb_pid=$!
# The fuzzer is built with the sanitizer run's tests (the same tree), and fuzzes beside their run: neither times
# anything. Beside them it runs some 1,400 inputs a second where alone it ran 3,300: 100 s there (about as long as
# their run) makes up most of what 60 s alone did.
fuzz=0
fuzzing=0
[[ -x tests/fuzz/run_fuzz.sh ]] && fuzzing=1
asan_status=0
extra=()
if (( fuzzing )); then
    extra=(fuzz_pprof_reader)
fi
EMBERLINE_ASAN_STEP=build EMBERLINE_ASAN_EXTRA_TARGETS="${extra[*]}" tests/run_asan.sh || asan_status=$?
fuzz_pid=0
if (( asan_status == 0 && fuzzing )); then
    EMBERLINE_FUZZ_BUILT=1 tests/fuzz/run_fuzz.sh "${EMBERLINE_FUZZ_SECONDS:-100}" > build/asan/fuzz.log 2>&1 &
    fuzz_pid=$!
fi
if (( asan_status == 0 )); then
    EMBERLINE_ASAN_STEP="test" tests/run_asan.sh --test-output-size-failed 4194304 || asan_status=$?
fi
fuzz_status=0
if (( fuzz_pid != 0 )); then
    wait "$fuzz_pid" || fuzz_status=$?
    cat build/asan/fuzz.log
fi
deb_status=0
wait "$deb_pid" || deb_status=$?
cat build/ci/ctest-summary-deb.log
(( asan_status == 0 )) || { echo "run_all: the sanitizer run failed"; exit "$asan_status"; }
(( deb_status == 0 )) || { echo "run_all: installer_deb failed"; exit "$deb_status"; }
(( fuzz_status == 0 )) || { echo "run_all: the fuzzer found something (build/asan/artifacts)"; exit "$fuzz_status"; }
asan=1
fuzz=$fuzzing
step_done "the sanitizer build and run, with installer_deb and the fuzzer beside it"
tests=$(cat build/ci/ctest-summary-fast.log build/ci/ctest-summary-slow.log build/ci/ctest-summary-deb.log |
    sed -n 's/.* tests failed out of \([0-9]*\)$/\1/p' | awk '{ n += $1 } END { print n + 0 }')
read -r qtPassed qtSkipped qtPrograms < <(cat build/ci/ctest-junit-fast.xml build/ci/ctest-junit-slow.xml \
    build/ci/ctest-junit-deb.xml | grep -oE 'Totals: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' |
    awk '{ p += $2; s += $6; n++ } END { print p + 0, s + 0, n + 0 }')
others=$((tests - qtPrograms))
(( others < 0 )) && others=0
echo "ctest: $tests tests ($qtPrograms QtTest programs: $qtPassed functions passed, $qtSkipped skipped; $others others)"
# Reached only when every step passed (set -e).
echo "suite: $((qtPassed + others + tidy + asan + fuzz)) passed, 0 failed, $qtSkipped skipped"
