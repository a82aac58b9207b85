#!/bin/bash
# Every C file of the tree follows .clang-format. Formatting differs between
# clang-format releases, so the check runs with the one the tree is formatted
# with (Debian 12's clang-format 14) and skips, saying so, with another.
set -euo pipefail
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/test.sh"
WANT_MAJOR=14

fmt=$(command -v "clang-format-$WANT_MAJOR" || command -v clang-format || true)
[ -n "$fmt" ] || skip "clang-format is not installed (Debian package clang-format)"
major=$("$fmt" --version | sed -n 's/.*clang-format version \([0-9]*\).*/\1/p')
[ "$major" = "$WANT_MAJOR" ] || skip "$fmt is version $major; the tree is formatted with $WANT_MAJOR"

cd "$SRCDIR"
mapfile -t files < <(find src include tests bench -name '*.[ch]' -not -path '*/fixtures/*' | sort)
[ "${#files[@]}" -gt 20 ] || fail "found only ${#files[@]} C files under $SRCDIR"
if ! "$fmt" --dry-run --Werror "${files[@]}"; then
        fail "run: clang-format-$WANT_MAJOR -i <the files above>"
fi
echo "PASS: ${#files[@]} C files follow .clang-format ($fmt)"
