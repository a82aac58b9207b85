#!/bin/bash
# Every C file of the tree follows .clang-format. Formatting differs between
# clang-format releases, so the check runs with the one the tree is formatted
# with (Debian 12's clang-format 14) and skips, saying so, with another.
set -euo pipefail
: "${SRCDIR:?SRCDIR is not set: run this test through ctest}"
WANT_MAJOR=14

skip() { echo "SKIP: $*"; exit 77; }
fmt=$(command -v "clang-format-$WANT_MAJOR" || command -v clang-format || true)
[ -n "$fmt" ] || skip "clang-format is not installed (Debian package clang-format)"
major=$("$fmt" --version | sed -n 's/.*clang-format version \([0-9]*\).*/\1/p')
[ "$major" = "$WANT_MAJOR" ] || skip "$fmt is version $major; the tree is formatted with $WANT_MAJOR"

cd "$SRCDIR"
mapfile -t files < <(find src include tests bench -name '*.[ch]' -not -path '*/fixtures/*' | sort)
[ "${#files[@]}" -gt 20 ] || { echo "FAIL: found only ${#files[@]} C files under $SRCDIR"; exit 1; }
if ! "$fmt" --dry-run --Werror "${files[@]}"; then
        echo "FAIL: run: clang-format-$WANT_MAJOR -i <the files above>"
        exit 1
fi
echo "PASS: ${#files[@]} C files follow .clang-format ($fmt)"
