#!/usr/bin/env bash
# clang-tidy with the project's .clang-tidy over the C++ files a change touched, through the dev build's
# compile_commands.json (build it first; a unity build's works too). Every finding in those files is an error; findings in files the change
# did not touch are not reported.
#   tests/run_clang_tidy.sh           files changed since the last commit's first parent (a merge: everything
#                                     it brought in), plus uncommitted changes; none without a parent commit.
#                                     Files only moved (renamed unchanged) are not checked.
#   tests/run_clang_tidy.sh BASE      files changed since BASE (a commit, a branch)
#   tests/run_clang_tidy.sh --all     every source file in the compilation database
# A changed header is checked through a source file that includes it. EMBERLINE_TIDY_BUILD names another build
# directory. Prints "clang-tidy: N file(s) checked, M finding(s)" last.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${EMBERLINE_TIDY_BUILD:-build/dev}
db="$build/compile_commands.json"
[[ -f "$db" ]] || { echo "clang-tidy: $db is missing (cmake --preset dev first)" >&2; exit 2; }

# Source files of the database that are in the repository (not moc or protobuf output in the build folder).
# A unity build's database names its unity_N_cxx.cxx files; each source they include is checked with its unity
# file's command, from a database written beside the checks' output.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mapfile -t known < <(python3 - "$db" "$root" "$out" <<'EOF'
import json, os, re, sys
db, root, out = sys.argv[1], sys.argv[2], sys.argv[3]
# The tests' precompiled header is the compiler's own format (gcc's .gch is unreadable to clang): checks go
# without it, through the headers each test includes itself.
pch = re.compile(r" -Winvalid-pch| -Xclang -include-pch -Xclang \S+| (-Xclang )?-include (-Xclang )?\S*cmake_pch\.hxx")
entries = []
for entry in json.load(open(db)):
    if "command" in entry:
        entry["command"] = pch.sub("", entry["command"])
    path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
    if re.search(r"/unity_[0-9]+_cxx\.cxx$", path):
        for line in open(path):
            m = re.match(r'#include "(.+\.cpp)"', line.strip())
            if m:
                e = dict(entry)
                e["file"] = m.group(1)
                if "command" in e:
                    e["command"] = e["command"].replace(entry["file"], m.group(1))
                if "arguments" in e:
                    e["arguments"] = [m.group(1) if a == entry["file"] else a for a in e["arguments"]]
                entries.append(e)
    else:
        entries.append(entry)
json.dump(entries, open(os.path.join(out, "compile_commands.json"), "w"))
for entry in entries:
    path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
    rel = os.path.relpath(path, root)
    if rel.endswith(".cpp") and not rel.startswith(("..", "build")):
        print(rel)
EOF
)

sources=()
headers=()
if [[ "${1:-}" == "--all" ]]; then
    sources=("${known[@]}")
else
    base=${1:-HEAD^1}
    if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
        echo "clang-tidy: no commit $base to compare with; nothing to check"
        echo "clang-tidy: 0 file(s) checked, 0 finding(s)"
        exit 0
    fi
    # Added, modified and renamed-and-edited files; a file only moved (a 100% rename) has nothing new to check.
    mapfile -t changed < <(git diff --name-status -M --diff-filter=d "$base" -- '*.cpp' '*.h' |
        awk -F '\t' '$1 != "R100" { print $NF }')
    for f in "${changed[@]}"; do
        if [[ "$f" == *.h ]]; then
            headers+=("$f")
            # The header's own .cpp, else the first source that includes it.
            owner=""
            for k in "${known[@]}"; do
                [[ "$k" == "${f%.h}.cpp" ]] && { owner=$k; break; }
            done
            if [[ -z "$owner" ]]; then
                owner=$( (grep -lF "#include \"$f\"" "${known[@]}" 2>/dev/null || true) | head -1)
            fi
            [[ -n "$owner" ]] && sources+=("$owner")
        elif printf '%s\n' "${known[@]}" | grep -qxF "$f"; then
            sources+=("$f")
        fi
    done
fi
mapfile -t sources < <(printf '%s\n' "${sources[@]}" | sed '/^$/d' | sort -u)
if [[ ${#sources[@]} -eq 0 ]]; then
    echo "clang-tidy: 0 file(s) checked, 0 finding(s)"
    exit 0
fi

# Headers are reported only when the change touched them (--all: every header of the repository).
if [[ "${1:-}" == "--all" ]]; then
    headerFilter="^$root/(engine|ui|app|tests)/"
else
    headerFilter=""
    for h in "${headers[@]}"; do
        headerFilter+="${headerFilter:+|}$(printf '%s' "$h" | sed 's/[.[\*^$()+?{|]/\\&/g')"
    done
    [[ -n "$headerFilter" ]] && headerFilter="^$root/($headerFilter)\$"
fi

# One output file per source, so that parallel runs do not mix their lines.
printf '%s\n' "${sources[@]}" |
    xargs -P "$(nproc)" -I{} sh -c 'clang-tidy -p "$1" --quiet --header-filter="$2" "$3" >"$4/$(echo "$3" | tr / _).log" 2>/dev/null || true' \
        _ "$out" "$headerFilter" {} "$out"
cat "$out"/*.log
# One finding per distinct "file:line:col: warning|error:" line (a header's is reported by every source that
# includes it); notes belong to the finding above them. A source checked only for a header it includes counts
# for that header alone.
findingLines() { cat "$out"/*.log | { grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' || true; } | sort -u; }
# An error without a place (a compile command clang cannot follow) means the file was not checked: it fails.
unchecked=$(cat "$out"/*.log | { grep -cE '^error:' || true; })
if [[ "${1:-}" == "--all" ]]; then
    findings=$(findingLines | wc -l)
else
    findings=$(findingLines | { grep -F -f <(printf "$root/%s:\n" "${changed[@]}") || true; } | wc -l)
fi
findings=$((findings + unchecked))
echo "clang-tidy: ${#sources[@]} file(s) checked, $findings finding(s)"
[[ "$findings" -eq 0 ]]
