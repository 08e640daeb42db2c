#!/usr/bin/env bash
# Every C++ file of the tree as the repository's .clang-format lays it out (clang-format --dry-run --Werror):
# lists the files that differ and fails. Fix with: clang-format -i FILE... (or git clang-format on a change).
#   tests/layout/check_format.sh [SOURCE_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/../..}"
command -v clang-format >/dev/null || { echo "check_format: clang-format is not installed (installer/install-deps.sh --test)"; exit 1; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.h' '*.c')
else
    mapfile -t files < <(find engine ui app tests -name '*.cpp' -o -name '*.h' -o -name '*.c' | sort)
fi
bad=()
for f in "${files[@]}"; do
    [[ -f "$f" ]] || continue
    if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
        bad+=("$f")
    fi
done
if (( ${#bad[@]} > 0 )); then
    printf 'check_format: not as .clang-format lays it out: %s\n' "${bad[@]}"
    echo "check_format: ${#bad[@]} of ${#files[@]} files differ (clang-format -i them)"
    exit 1
fi
echo "check_format: ${#files[@]} files, all formatted"
