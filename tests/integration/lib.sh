# shellcheck shell=bash
# Common helpers for the integration tests. Source it after `set -euo pipefail`.
#
#   it_init              makes $TMP (removed on exit) and checks the environment
#   it_real_sysfs_begin  real_sysfs_begin, keeping $TMP's cleanup
#   run CMD...           runs CMD, keeping its status in $RC, stdout in $OUT_FILE,
#                        stderr in $ERR_FILE; never stops the test by itself
#   expect_rc / expect_out / expect_err / ...   assertions on the last run
#   fixture_copy NAME    a private, writable copy of tests/fixtures/NAME
#   policy FILE          writes stdin to FILE, root-owned 0644
#   line_of FILE REGEX   the line number of the one line matching REGEX

# real-sysfs.sh brings skip, fail, thp_get, thp_set and real_sysfs_begin.
# shellcheck source=../lib/real-sysfs.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/real-sysfs.sh"
# shellcheck source=../lib/safe-tmp.sh
. "$SRCDIR/tests/lib/safe-tmp.sh"

: "${THPGUARDD:?THPGUARDD is not set: run this test through ctest}"
: "${FIXTURES:?FIXTURES is not set: run this test through ctest}"

# shellcheck disable=SC2034 # used by the tests that source this
FIXTURE_NAMES=(el7-3.10 5.15 6.1 6.18)
LAST_CMD=""
RC=0

it_cleanup() {
        if [ -n "${TMP:-}" ] && [ -d "$TMP" ]; then
                rm -rf -- "$TMP"
        fi
}

it_init() {
        [ -x "$THPGUARDD" ] || fail "THPGUARDD=$THPGUARDD is not an executable"
        TMP=$(safe_mktemp thpguard-it)
        # Readable by nobody, for the tests that drop privileges.
        chmod 0755 "$TMP"
        OUT_FILE=$TMP/.out
        ERR_FILE=$TMP/.err
        trap it_cleanup EXIT
}

# real_sysfs_begin installs its own EXIT trap (restore); chain ours after it.
# Says how long the flock took: a timeout with no output otherwise looks
# like a hang of thpguardd, when another run held the real sysfs.
it_real_sysfs_begin() {
        local t0=$SECONDS
        echo "waiting for the real-sysfs lock ($THP_LOCK)"
        real_sysfs_begin
        trap 'real_sysfs_restore; it_cleanup' EXIT
        echo "got the real-sysfs lock after $((SECONDS - t0)) s"
}

# fail, with what the last command printed: a FAIL line alone rarely says why.
fail() {
        echo "FAIL: $*" >&2
        if [ -n "$LAST_CMD" ]; then
                echo "---- last command (exit $RC): $LAST_CMD" >&2
                echo "---- its stdout:" >&2
                cat "$OUT_FILE" >&2 2>/dev/null || true
                echo "---- its stderr:" >&2
                cat "$ERR_FILE" >&2 2>/dev/null || true
                echo "----" >&2
        fi
        exit 1
}

run() {
        LAST_CMD="$*"
        RC=0
        "$@" >"$OUT_FILE" 2>"$ERR_FILE" || RC=$?
}

out() { cat "$OUT_FILE"; }
err() { cat "$ERR_FILE"; }

expect_rc() {
        [ "$RC" -eq "$1" ] || fail "${2:-command}: exit status $RC, expected $1"
}

# expect_out REGEX [WHAT]: some stdout line matches the extended regex.
expect_out() {
        grep -Eq -- "$1" "$OUT_FILE" || fail "${2:-stdout} has no line matching /$1/"
}
expect_err() {
        grep -Eq -- "$1" "$ERR_FILE" || fail "${2:-stderr} has no line matching /$1/"
}
expect_no_out() {
        ! grep -Eq -- "$1" "$OUT_FILE" || fail "${2:-stdout} has a line matching /$1/, it must not"
}
expect_no_err() {
        ! grep -Eq -- "$1" "$ERR_FILE" || fail "${2:-stderr} has a line matching /$1/, it must not"
}
expect_out_empty() {
        [ ! -s "$OUT_FILE" ] || fail "${1:-stdout} is not empty"
}
expect_err_empty() {
        [ ! -s "$ERR_FILE" ] || fail "${1:-stderr} is not empty"
}
# expect_err_lines N [WHAT]: stderr has exactly N lines.
expect_err_lines() {
        local n
        n=$(wc -l <"$ERR_FILE")
        [ "$n" -eq "$1" ] || fail "${2:-stderr} has $n lines, expected $1"
}
expect_out_lines() {
        local n
        n=$(wc -l <"$OUT_FILE")
        [ "$n" -eq "$1" ] || fail "${2:-stdout} has $n lines, expected $1"
}

# Regex-quotes a literal string (file names contain dots; values contain +).
# Pure bash: process creation is slow on a loaded machine.
re() {
        local s=$1 out="" c i
        for ((i = 0; i < ${#s}; i++)); do
                c=${s:i:1}
                case $c in
                [][\\.*^\$+?\(\){}\|/]) out+="\\$c" ;;
                *) out+=$c ;;
                esac
        done
        printf '%s' "$out"
}

fixture_copy() {
        local name=$1 dst
        [ -d "$FIXTURES/$name/kernel/mm/transparent_hugepage" ] || fail "fixture $name is missing under $FIXTURES"
        dst=$TMP/sysfs-$name
        rm -rf -- "$dst"
        cp -a -- "$FIXTURES/$name" "$dst"
        chmod -R a+rX "$dst"
        echo "$dst"
}

# Fails unless a fixture copy is byte-identical to the tree in git.
expect_fixture_unchanged() {
        local name=$1 copy=$2 d
        d=$(diff -r "$FIXTURES/$name" "$copy" 2>&1) || fail "fixture $name changed: $d"
}

policy() {
        cat >"$1"
        chown 0:0 "$1" 2>/dev/null || true
        chmod 0644 "$1"
}

line_of() {
        local n
        n=$(grep -En -- "$2" "$1" | cut -d: -f1)
        if [ -z "$n" ] || [ "$(wc -w <<<"$n")" -ne 1 ]; then
                fail "test bug: /$2/ matches no line or several in $1"
        fi
        echo "$n"
}

# The active value of a knob in a fixture copy: the bracketed word, or the number.
fx_get() {
        local v
        v=$(<"$1/kernel/mm/transparent_hugepage/$2")
        if [[ $v =~ \[([^]]+)\] ]]; then
                echo "${BASH_REMATCH[1]}"
        else
                echo "$v"
        fi
}

# The real THP directories (a watch is not recursive).
thp_watch_dirs() {
        local d
        echo "$THP"
        [ -d "$THP/khugepaged" ] && echo "$THP/khugepaged"
        for d in "$THP"/hugepages-*kB; do
                [ -d "$d" ] && echo "$d"
        done
        return 0
}

# The "total N" line of inotify-count in the last run's stdout.
inotify_total() {
        local t
        t=$(sed -n 's/^total \([0-9][0-9]*\)$/\1/p' "$OUT_FILE" | tail -n1)
        [ -n "$t" ] || fail "inotify-count printed no total line"
        echo "$t"
}
