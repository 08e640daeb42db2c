#!/usr/bin/env bash
# Builds the .deb with CPack and installs it the way a user would on a clean Debian 12: into a fresh root made
# by debootstrap from Debian's archive, with apt resolving the package's dependencies (no recommends, so the
# declared Depends alone must be enough). Then, inside that root: `emberline --version` prints the package's
# version, `emberline report` prints a test profile's functions, `emberline record --memory` records a program's
# allocations through the installed agent, and the GUI opens a window on an Xvfb display
# (a visible window of the emberline process, with its icon, and a screenshot that is not blank).
#
# If this fails, a user installing the package gets a broken program: a library missing from Depends, a file
# installed in the wrong place, or a GUI that cannot start outside the build machine.
#
#   test_deb.sh BUILD_DIR TEST_DATA_DIR
#
# Needs root (debootstrap, chroot, mounts in a private mount namespace); without root it skips (exit 77), and
# fails instead when CI=true. The debootstrap root is cached as a tarball under BUILD_DIR/installer-test/cache
# (rebuilt after EMBERLINE_ROOT_MAX_AGE_DAYS, default 30), and so are the .debs apt downloads, so a rerun
# needs no download but the package lists. Environment:
#   EMBERLINE_DEBIAN_MIRROR   archive to debootstrap from (default: the Debian mirror this machine's apt uses)
#   EMBERLINE_DEB_TEST_MODE   chroot (default) | extract: unpack with dpkg -x into a scratch prefix and check with
#                             apt-get --simulate that every Depends is satisfiable, for machines where
#                             debootstrap cannot run. When debootstrap fails outside CI, extract is used.
set -euo pipefail

BUILD=$(realpath "$1")
DATA=$(realpath "$2")
SUITE=${EMBERLINE_DEBIAN_SUITE:-bookworm}
VARIANT=minbase
WORK=$BUILD/installer-test
CACHE=$WORK/cache
ROOT=$WORK/root
PROFILE=go-cpu.pprof
MODE=${EMBERLINE_DEB_TEST_MODE:-chroot}
XVFB_PID=""
GUI_PID=""

started=$SECONDS
step() { echo "[$((SECONDS - started))s] $*"; }
die() { echo "FAIL: $*"; exit 1; }
skip() {
    [[ "${CI:-}" == "true" ]] && die "$* (CI=true: this test must run)"
    echo "SKIP: $*"
    exit 77
}
cleanup() {
    [[ -n "$GUI_PID" ]] && kill "$GUI_PID" 2>/dev/null || true
    [[ -n "$XVFB_PID" ]] && kill "$XVFB_PID" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT

[[ $(id -u) -eq 0 ]] || skip "needs root for debootstrap and chroot"
for tool in cpack dpkg-deb apt-get debootstrap unshare chroot Xvfb xdotool xprop import convert python3; do
    command -v "$tool" >/dev/null || skip "$tool is missing (installer/install-deps.sh --test installs it)"
done
mkdir -p "$CACHE/apt-archives/partial" "$CACHE/debootstrap-debs"

# The host's Debian archive: the first apt source whose path ends in /debian and that carries SUITE. Reads both
# one-line (sources.list) and deb822 (*.sources) entries.
host_debian_mirror() {
    local files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources)
    for f in "${files[@]}"; do
        [[ -f "$f" ]] || continue
        if [[ "$f" == *.sources ]]; then
            awk -v RS= -v suite="$SUITE" '
                { uris = ""; suites = ""
                  n = split($0, lines, "\n")
                  for (i = 1; i <= n; i++) {
                      if (lines[i] ~ /^URIs:/) uris = substr(lines[i], 6)
                      if (lines[i] ~ /^Suites:/) suites = " " substr(lines[i], 8) " " }
                  if (index(suites, " " suite " ") == 0) next
                  split(uris, u, " ")
                  for (j in u) if (u[j] ~ /\/debian\/?$/) print u[j] }' "$f"
        else
            sed -E 's/\[[^]]*\]//' "$f" | awk -v suite="$SUITE" '$1 == "deb" && $3 == suite && $2 ~ /\/debian\/?$/ { print $2 }'
        fi
    done | awk "NR == 1"
}
MIRROR=${EMBERLINE_DEBIAN_MIRROR:-$(host_debian_mirror)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
MIRROR=${MIRROR%/}

# --- 1. the package ------------------------------------------------------------------------------------------
step "building the package (cpack in $BUILD)"
cmake --build "$BUILD" --target emberline emberline_desktop_data >/dev/null
rm -f "$BUILD"/package/emberline_*.deb
(cd "$BUILD" && cpack -G DEB >"$WORK/cpack.log" 2>&1) || { cat "$WORK/cpack.log"; die "cpack failed"; }
DEB=$(ls "$BUILD"/package/emberline_*.deb)
VERSION=$(dpkg-deb -f "$DEB" Version)
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
echo "package: $(basename "$DEB"), $(stat -c %s "$DEB") bytes"
echo "Depends: $DEPENDS"
[[ -n "$DEPENDS" ]] || die "the package declares no dependencies (shlibdeps did not run?)"

# Exactly our files, so that an install rule added elsewhere (a test program, a benchmark) cannot slip in.
dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { print $6 }' | sed 's|^\./||' | sort >"$WORK/contents.txt"
sort "$(dirname "$0")/expected-contents.txt" | diff -u - "$WORK/contents.txt" \
    || die "package contents differ from tests/installer/expected-contents.txt (- expected, + packaged)"

# --- 2. a fresh Debian root ----------------------------------------------------------------------------------
# A command in the root, with /proc, /dev, the apt cache and the X socket directory mounted in a private mount
# namespace: the mounts vanish with the command, whatever way it ends.
IN_ROOT=(unshare --mount --propagation private -- bash -euc '
        root=$1 cache=$2; shift 2
        mount -t proc proc "$root/proc"
        mount --rbind /dev "$root/dev"
        mount --bind "$cache" "$root/var/cache/apt/archives"
        if [[ -d /tmp/.X11-unix ]]; then mkdir -p "$root/tmp/.X11-unix"; mount --bind /tmp/.X11-unix "$root/tmp/.X11-unix"; fi
        exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
    ' in_root "$ROOT" "$CACHE/apt-archives")
in_root() { "${IN_ROOT[@]}" "$@"; }

make_root_tarball() {
    local tarball=$1 scratch=$WORK/debootstrap
    rm -rf "$scratch"
    step "debootstrap --variant=$VARIANT $SUITE from $MIRROR"
    if ! debootstrap --variant="$VARIANT" --cache-dir="$CACHE/debootstrap-debs" "$SUITE" "$scratch" "$MIRROR" \
        >"$WORK/debootstrap.log" 2>&1; then
        tail -n 20 "$WORK/debootstrap.log"
        rm -rf "$scratch"
        return 1
    fi
    # The archive's updates and security suites too, as on any installed Debian, so that a library built
    # against an updated version is found.
    {
        echo "deb $MIRROR $SUITE main"
        echo "deb $MIRROR $SUITE-updates main"
        echo "deb ${EMBERLINE_DEBIAN_SECURITY_MIRROR:-${MIRROR%/debian}/debian-security} $SUITE-security main"
    } >"$scratch/etc/apt/sources.list"
    tar -C "$scratch" --numeric-owner -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
    rm -rf "$scratch"
}

install_in_root() {
    local tarball
    tarball=$CACHE/debian-$SUITE-$VARIANT-$(echo "$MIRROR" | md5sum | cut -c1-8).tar
    if [[ -f "$tarball" ]] && (($(find "$tarball" -mtime +"${EMBERLINE_ROOT_MAX_AGE_DAYS:-30}" | wc -l) > 0)); then
        step "cached root is older than ${EMBERLINE_ROOT_MAX_AGE_DAYS:-30} days: rebuilding it"
        rm -f "$tarball"
    fi
    if [[ ! -f "$tarball" ]]; then
        make_root_tarball "$tarball" || return 1
    else
        step "fresh root from the cached debootstrap tarball $(basename "$tarball")"
    fi
    rm -rf "$ROOT"
    mkdir -p "$ROOT"
    tar -C "$ROOT" --numeric-owner -xf "$tarball"
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
    cp "$DEB" "$ROOT/tmp/"
    cp "$DATA/pprof/$PROFILE" "$ROOT/tmp/"

    step "apt-get install ./$(basename "$DEB") in the root (apt resolves the dependencies)"
    local apt=(apt-get -q -y -o APT::Sandbox::User=root -o Dpkg::Use-Pty=0)
    if ! in_root "${apt[@]}" update >"$WORK/apt.log" 2>&1 \
        || ! in_root env DEBIAN_FRONTEND=noninteractive "${apt[@]}" install --no-install-recommends \
            "/tmp/$(basename "$DEB")" >>"$WORK/apt.log" 2>&1; then
        tail -n 30 "$WORK/apt.log"
        die "apt could not install the package in a clean $SUITE root"
    fi
    grep -E '^[0-9]+ upgraded, [0-9]+ newly installed' "$WORK/apt.log" || true
    in_root dpkg-query -W -f='${Status}\n' emberline | grep -q "install ok installed" || die "emberline not installed"
    return 0
}

# --- 3. the three checks -------------------------------------------------------------------------------------
# run COMMAND...: runs an emberline command where the package was installed.
run_prefix() {
    if [[ "$MODE" == chroot ]]; then
        RUN=("${IN_ROOT[@]}")
    else
        RUN=(env LD_LIBRARY_PATH= PATH="$WORK/extract/usr/bin:/usr/bin:/bin")
    fi
}
run() { run_prefix; "${RUN[@]}" "$@"; }

check_version() {
    step "emberline --version"
    local out
    out=$(run emberline --version 2>&1) || die "emberline --version failed: $out"
    echo "$out"
    grep -qF "$VERSION" <<<"$out" || die "emberline --version does not print the package version $VERSION"
}

check_report() {
    local profile=$1
    step "emberline report --top 5 $profile"
    local out
    out=$(run emberline report --top 5 "$profile" 2>&1) || die "emberline report failed: $out"
    echo "$out"
    grep -q 'main\.' <<<"$out" || die "report shows none of the profile's main.* functions"
    out=$(run emberline report --json "$profile" 2>&1) || die "emberline report --json failed: $out"
    python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["functions"] and d["samples"] > 0' \
        <<<"$out" || die "report --json is not JSON with functions: ${out:0:300}"
}

# The memory agent as installed (/usr/lib/emberline/libemberline_agent.so, found beside the executable): every
# allocation of a small real program recorded.
check_memory() {
    step "emberline record --memory --alloc-interval 1 -- ls /usr"
    local out
    out=$(run emberline record --memory --alloc-interval 1 --output /tmp/emberline-memory -- /bin/ls /usr 2>&1 \
        >/dev/null) || die "emberline record --memory failed: $out"
    grep 'memory' <<<"$out"
    grep -qE 'memory \(every allocation\): .* allocated in [1-9][0-9]* allocations' <<<"$out" \
        || die "record --memory recorded no allocation: $out"
    grep -qE 'read from 1 process' <<<"$out" || die "the agent did not run in the program: $out"
}

check_gui() {
    local profile=$1
    step "GUI on Xvfb: emberline $profile"
    rm -f "$WORK/display"
    Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$WORK/display" >"$WORK/xvfb.log" 2>&1 &
    XVFB_PID=$!
    for _ in $(seq 50); do [[ -s "$WORK/display" ]] && break; sleep 0.1; done
    [[ -s "$WORK/display" ]] || { cat "$WORK/xvfb.log"; die "Xvfb did not start"; }
    local display=":$(head -n 1 "$WORK/display")"

    # exec all the way down (subshell, unshare, bash, chroot, env), so that $! is emberline's own pid.
    run_prefix
    (exec "${RUN[@]}" env DISPLAY="$display" QT_QPA_PLATFORM=xcb emberline "$profile" >"$WORK/gui.log" 2>&1) &
    GUI_PID=$!
    local window=""
    for _ in $(seq 60); do
        # The window must be emberline's own: its _NET_WM_PID is the process started here.
        window=$(DISPLAY=$display xdotool search --onlyvisible --pid "$GUI_PID" 2>/dev/null | head -n 1) || true
        [[ -n "$window" ]] && break
        kill -0 "$GUI_PID" 2>/dev/null || break
        sleep 0.5
    done
    if [[ -z "$window" ]]; then
        cat "$WORK/gui.log"
        kill -0 "$GUI_PID" 2>/dev/null && die "no window appeared within 30 s"
        local status=0
        wait "$GUI_PID" || status=$?
        GUI_PID=""
        die "emberline exited (status $status) without showing a window"
    fi
    local title
    title=$(DISPLAY=$display xdotool getwindowname "$window")
    echo "window $window: \"$title\""
    # A window icon means the embedded SVG icon loaded, so the SVG plugin the package depends on is there.
    local icon
    icon=$(DISPLAY=$display xprop -id "$window" _NET_WM_ICON 2>&1) || true
    [[ "$icon" == "_NET_WM_ICON(CARDINAL)"* ]] || die "the window has no icon: ${icon:0:200}"
    echo "window icon set"
    # X11 desktops tie the window to the menu entry (its name and icon in the task bar) through WM_CLASS.
    local installed wm_class startup_class
    installed=$([[ "$MODE" == chroot ]] && echo "$ROOT" || echo "$WORK/extract")
    startup_class=$(sed -n 's/^StartupWMClass=//p' "$installed/usr/share/applications/io.github.emberline.Emberline.desktop")
    wm_class=$(DISPLAY=$display xprop -id "$window" WM_CLASS 2>&1) || true
    [[ "$wm_class" == *", \"$startup_class\"" ]] \
        || die "window $wm_class does not match the desktop entry's StartupWMClass=$startup_class"
    echo "$wm_class matches StartupWMClass"
    sleep 2 # let the first paint finish
    kill -0 "$GUI_PID" 2>/dev/null || { cat "$WORK/gui.log"; die "emberline died after showing its window"; }
    DISPLAY=$display import -window root "$WORK/gui.png"
    local colours
    colours=$(convert "$WORK/gui.png" -format %k info:)
    echo "screenshot $WORK/gui.png: $colours colours"
    ((colours > 16)) || die "the screen is blank ($colours colours)"
    kill "$GUI_PID"
    wait "$GUI_PID" 2>/dev/null || true
    GUI_PID=""
    kill "$XVFB_PID"
    wait "$XVFB_PID" 2>/dev/null || true
    XVFB_PID=""
}

# --- run -----------------------------------------------------------------------------------------------------
if [[ "$MODE" == chroot ]]; then
    if ! install_in_root; then
        [[ "${CI:-}" == "true" ]] && die "debootstrap failed (see $WORK/debootstrap.log)"
        echo "WARNING: debootstrap cannot run here; falling back to dpkg -x and apt-get --simulate"
        MODE=extract
    fi
fi
if [[ "$MODE" == extract ]]; then
    step "dpkg -x into $WORK/extract"
    rm -rf "$WORK/extract"
    dpkg -x "$DEB" "$WORK/extract"
    step "apt-get install --simulate: is every Depends satisfiable?"
    apt-get install --simulate --no-install-recommends "$DEB" >"$WORK/apt-simulate.log" 2>&1 \
        || { cat "$WORK/apt-simulate.log"; die "the package's Depends cannot be satisfied"; }
    profile_path=$DATA/pprof/$PROFILE
else
    profile_path=/tmp/$PROFILE
fi

check_version
check_report "$profile_path"
check_memory
check_gui "$profile_path"

rm -rf "$ROOT" "$WORK/extract"
step "passed ($MODE mode)"
