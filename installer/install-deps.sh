#!/usr/bin/env bash
# Installs every Debian 12 package Emberline needs to build, test and run, and nothing when all are present.
#   installer/install-deps.sh          build + run dependencies
#   installer/install-deps.sh --test   also what the test suite uses (go tool pprof, Xvfb, linux-perf, ...)
set -euo pipefail

build_pkgs=(
    cmake ninja-build g++ pkg-config
    qt6-base-dev qt6-charts-dev libqt6opengl6-dev libqt6svg6 libgl-dev
    libunwind-dev libprotobuf-dev protobuf-compiler
    libcurl4-openssl-dev libdw-dev libelf-dev zlib1g-dev libzstd-dev
    libcapstone-dev libdebuginfod-dev
    librsvg2-bin
)
test_pkgs=(
    golang-go clang libclang-rt-14-dev clang-tidy clang-format lld strace
    nodejs  # node --perf-basic-prof: JIT frames named from perf maps
    xvfb xauth imagemagick xdotool
    linux-perf python3
    python3-dev  # Debian's CPython headers and libpython3.11.so: its layout and walk are tested beside pyenv's
    desktop-file-utils appstream dpkg-dev fakeroot debootstrap
    shared-mime-info libglib2.0-bin groff-base bsdextrautils x11-utils
    debuginfod  # a loopback debuginfod server for the disassembly tests
    binutils  # objcopy: stripped copies and separate debug files of tests/targets/symbols
    libc6-dbg  # libc's compressed debug file: its uncompressed copy names frames as the original (tst_symbol_caches)
    valgrind heaptrack  # the memory anchors: leaks as memcheck finds them, allocations as heaptrack counts them
    libjemalloc2 libgoogle-perftools4 libmimalloc2.0  # programs' own allocators, profiled through by the agent
)

pkgs=("${build_pkgs[@]}")
if [[ "${1:-}" == "--test" ]]; then
    pkgs+=("${test_pkgs[@]}")
fi

missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
    exit 0
fi

echo "Installing: ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
