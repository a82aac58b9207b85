# shellcheck shell=bash
# What the integration tests share beyond tests/lib (which this brings:
# test.sh, real-sysfs.sh, policy.sh, fixture-tree.sh). Source after
# `set -euo pipefail`.
#
#   fixture_copy NAME    a private, writable copy of tests/fixtures/NAME
#   line_of FILE REGEX   the line number of the one line matching REGEX

# shellcheck source=../lib/real-sysfs.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/real-sysfs.sh"
# shellcheck source=../lib/policy.sh
. "$SRCDIR/tests/lib/policy.sh"
# shellcheck source=../lib/fixture-tree.sh
. "$SRCDIR/tests/lib/fixture-tree.sh"

: "${THPGUARDD:?THPGUARDD is not set: run this test through ctest}"
: "${FIXTURES:?FIXTURES is not set: run this test through ctest}"
[ -x "$THPGUARDD" ] || fail "THPGUARDD=$THPGUARDD is not an executable"

# shellcheck disable=SC2034 # used by the tests that source this
FIXTURE_NAMES=(el7-3.10 5.15 6.1 6.18)

# fixture_copy NAME: prints the path of a fresh, writable copy of tests/fixtures/NAME under $TMP.
fixture_copy() {
        local name=$1 dst
        [ -d "$FIXTURES/$name/kernel/mm/transparent_hugepage" ] || fail "fixture $name is missing under $FIXTURES"
        dst=$TMP/sysfs-$name
        rm -rf -- "$dst"
        cp -a -- "$FIXTURES/$name" "$dst"
        chmod -R a+rX "$dst"
        echo "$dst"
}

# expect_fixture_unchanged NAME COPY: fails unless COPY is byte-identical to tests/fixtures/NAME.
expect_fixture_unchanged() {
        local name=$1 copy=$2 d
        d=$(diff -r "$FIXTURES/$name" "$copy" 2>&1) || fail "fixture $name changed: $d"
}

# line_of FILE REGEX: the number of the one line of FILE matching REGEX; fails (a test bug) on none or several.
line_of() {
        local n
        n=$(grep -En -- "$2" "$1" | cut -d: -f1)
        if [ -z "$n" ] || [ "$(wc -w <<<"$n")" -ne 1 ]; then
                fail "test bug: /$2/ matches no line or several in $1"
        fi
        echo "$n"
}

# fx_get ROOT KNOB: the active value of a knob in a fixture copy: the bracketed word, or the number.
fx_get() {
        T=$1/kernel/mm/transparent_hugepage tree_get "$2"
}

# thp_watch_dirs: the real THP directories, one a line (a watch is not recursive).
thp_watch_dirs() {
        local d
        echo "$THP"
        [ -d "$THP/khugepaged" ] && echo "$THP/khugepaged"
        for d in "$THP"/hugepages-*kB; do
                [ -d "$d" ] && echo "$d"
        done
        return 0
}

# inotify_total: the "total N" line of inotify-count in the last run's stdout.
inotify_total() {
        local t
        t=$(sed -n 's/^total \([0-9][0-9]*\)$/\1/p' "$OUT_FILE" | tail -n1)
        [ -n "$t" ] || fail "inotify-count printed no total line"
        echo "$t"
}
