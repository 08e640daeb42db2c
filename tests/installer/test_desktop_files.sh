#!/usr/bin/env bash
# Checks the desktop integration files as the desktop tools read them, without installing anything:
# the .desktop entry and the AppStream metainfo validate; the entry, the metainfo, the MIME declaration and the
# icon agree on one application id and one MIME type; the shared-mime-info database built from our XML gives
# that type to every test profile, *.pb.gz included, and leaves plain *.gz files alone; the rendered icons have
# their sizes; the man page formats without warnings and documents every option that `emberline --help` and
# `emberline report --help` and `emberline record --help` print.
#   test_desktop_files.sh SOURCE_DIR BUILD_DIR
set -euo pipefail

SRC=$(realpath "$1")
BUILD=$(realpath "$2")
APP_ID=io.github.emberline.Emberline
MIME_TYPE=application/x-pprof
DESKTOP=$SRC/resources/desktop/$APP_ID.desktop
METAINFO=$SRC/resources/desktop/$APP_ID.metainfo.xml
MIME_XML=$SRC/resources/desktop/$APP_ID.mime.xml
EMBERLINE=$BUILD/app/emberline

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

for tool in desktop-file-validate appstreamcli update-mime-database gio groff identify; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (installer/install-deps.sh --test)"; exit 1; }
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# --- validators ---------------------------------------------------------------------------------------------
if out=$(desktop-file-validate "$DESKTOP" 2>&1) && [[ -z "$out" ]]; then
    pass "desktop-file-validate $APP_ID.desktop"
else
    fail "desktop-file-validate: $out"
fi
if out=$(appstreamcli validate --no-net "$METAINFO" 2>&1); then
    pass "appstreamcli validate --no-net: $(echo "$out" | tail -n 1)"
else
    fail "appstreamcli validate --no-net: $out"
fi

# --- one id, one type ---------------------------------------------------------------------------------------
desktop_key() { sed -n "s/^$1=//p" "$DESKTOP"; }
[[ "$(desktop_key Icon)" == "$APP_ID" ]] || fail "desktop Icon= is '$(desktop_key Icon)', not $APP_ID"
[[ "$(desktop_key Exec)" == "emberline %F" ]] || fail "desktop Exec= is '$(desktop_key Exec)'"
OTHER_TYPES="application/x-perf-data text/x-folded-stacks text/x-perf-script"
[[ "$(desktop_key MimeType)" == "$MIME_TYPE;${OTHER_TYPES// /;};" ]] || fail "desktop MimeType= is '$(desktop_key MimeType)'"
for type in $OTHER_TYPES; do
    grep -q "<mediatype>$type</mediatype>" "$METAINFO" || fail "metainfo does not provide $type"
    grep -q "<mime-type type=\"$type\">" "$MIME_XML" || fail "MIME XML does not declare $type"
done
grep -q "<id>$APP_ID</id>" "$METAINFO" || fail "metainfo id is not $APP_ID"
grep -q "<launchable type=\"desktop-id\">$APP_ID.desktop</launchable>" "$METAINFO" \
    || fail "metainfo launchable is not $APP_ID.desktop"
grep -q "<mediatype>$MIME_TYPE</mediatype>" "$METAINFO" || fail "metainfo does not provide $MIME_TYPE"
grep -q "<mime-type type=\"$MIME_TYPE\">" "$MIME_XML" || fail "MIME XML does not declare $MIME_TYPE"
pass "application id and MIME type agree across desktop entry, metainfo and MIME XML"

# --- MIME detection as a desktop sees it ---------------------------------------------------------------------
mkdir -p "$scratch/data/mime/packages" "$scratch/files"
cp "$MIME_XML" "$scratch/data/mime/packages/$APP_ID.xml"
XDG_DATA_HOME=$scratch/data update-mime-database "$scratch/data/mime" >/dev/null 2>&1
cp "$SRC"/tests/data/pprof/*.pprof "$SRC"/tests/data/pprof/*.pb.gz "$scratch/files/"
printf 'not a profile\n' | gzip -n >"$scratch/files/notes.txt.gz"
printf 'not a profile\n' | gzip -n >"$scratch/files/archive.gz"
content_type() {
    XDG_DATA_HOME=$scratch/data gio info -a standard::content-type "$1" | sed -n 's/.*standard::content-type: //p'
}
for f in "$scratch"/files/*.pprof "$scratch"/files/*.pb.gz; do
    type=$(content_type "$f")
    [[ "$type" == "$MIME_TYPE" ]] && pass "$(basename "$f") is $type" || fail "$(basename "$f") is '$type'"
done
for f in "$scratch"/files/*.gz; do
    [[ "$f" == *.pb.gz ]] && continue
    type=$(content_type "$f")
    [[ "$type" != "$MIME_TYPE" ]] && pass "$(basename "$f") stays $type" || fail "$(basename "$f") taken as pprof"
done

# The other formats Emberline opens: perf.data by its magic (whatever its name), folded stacks and perf script
# text by their names.
printf 'PERFILE2\x68\x00\x00\x00' >"$scratch/files/perf.data"
printf 'PERFILE2\x68\x00\x00\x00' >"$scratch/files/recording.bin"
printf 'main;work 10\n' >"$scratch/files/cpu.folded"
printf 'app 123 1.0: cpu-clock:\n\t4005d0 work (/app)\n' >"$scratch/files/cpu.perf"
for expected in "perf.data application/x-perf-data" "recording.bin application/x-perf-data" \
    "cpu.folded text/x-folded-stacks" "cpu.perf text/x-perf-script"; do
    set -- $expected
    type=$(content_type "$scratch/files/$1")
    [[ "$type" == "$2" ]] && pass "$1 is $type" || fail "$1 is '$type', not $2"
done

# --- icons ---------------------------------------------------------------------------------------------------
for size in 16 32 48 128 256; do
    png=$BUILD/installer/icons/${size}x${size}/$APP_ID.png
    if [[ ! -f "$png" ]]; then
        fail "icon $png was not rendered"
    elif [[ "$(identify -format '%wx%h' "$png")" != "${size}x${size}" ]]; then
        fail "icon $png is $(identify -format '%wx%h' "$png")"
    fi
done
pass "icons rendered at 16, 32, 48, 128 and 256 px"

# --- man page ------------------------------------------------------------------------------------------------
MAN=$BUILD/installer/man/emberline.1
if out=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1) && [[ -z "$out" ]]; then
    pass "man page formats without warnings"
else
    fail "man page: $out"
fi
grep -q '@PROJECT_VERSION@' "$MAN" && fail "man page version was not filled in"
if [[ -x "$EMBERLINE" ]]; then
    man_text=$(groff -man -Tutf8 "$MAN" 2>/dev/null | col -b)
    # Every long option the binary prints must be documented.
    for options in "$("$EMBERLINE" --help 2>&1 || true)" "$("$EMBERLINE" report --help 2>&1 || true)" \
        "$("$EMBERLINE" record --help 2>&1 || true)"; do
        for opt in $(grep -oE '(^|[ ,])--[a-z][a-z-]*' <<<"$options" | tr -d ' ,' | sort -u); do
            grep -qe "$opt" <<<"$man_text" && pass "man page documents $opt" || fail "man page lacks $opt"
        done
    done
else
    fail "$EMBERLINE is not built"
fi

if ((failures > 0)); then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all desktop integration checks passed"
