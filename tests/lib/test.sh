# shellcheck shell=bash
# The base of every shell test. A test starts with
#
#   set -euo pipefail
#   . "$SRCDIR/tests/lib/test.sh"      (or another tests/lib/*.sh: each sources this one)
#
# and gets $TMP, a scratch directory removed at exit; on_exit for its own
# cleanups; fail, skip and need; run with the expect_* assertions on what the
# last run printed; and wait_until, the one polling loop.

[ -z "${THPGUARD_TEST_SH:-}" ] || return 0
THPGUARD_TEST_SH=1

: "${SRCDIR:?SRCDIR is not set: run this test through ctest}"

# Under set -e a failing command ends a test; say which one, so that no
# test ever fails without a word (a busy machine makes such failures rare
# and worth reading).
trap 'echo "FAIL: ${BASH_SOURCE[0]##*/}:$LINENO: \"$BASH_COMMAND\" failed with exit $?" >&2' ERR

TEST_EXIT_HOOKS=()

# on_exit CMD: CMD (a string, eval'd) runs when the test exits, however it exits; the last added runs first.
on_exit() {
        TEST_EXIT_HOOKS=("$1" "${TEST_EXIT_HOOKS[@]}")
}

# on_exit_last CMD: CMD runs at exit after every other cleanup, added before or after it.
on_exit_last() {
        TEST_EXIT_HOOKS+=("$1")
}

# The cleanups run with TEST_RC, the status the test exits with: a cleanup
# that finds a failure (something left behind) sets it to 1.
test_exit() {
        TEST_RC=$?
        local h
        for h in "${TEST_EXIT_HOOKS[@]}"; do
                eval "$h" || echo "WARNING: cleanup failed: $h" >&2
        done
        exit "$TEST_RC"
}
trap test_exit EXIT

# shellcheck source=safe-tmp.sh
. "$SRCDIR/tests/lib/safe-tmp.sh"
# The test's scratch directory: mode 0755 (a test may drop privileges),
# removed at exit, after every cleanup added later.
TMP=$(safe_mktemp "thpguard-${0##*/}")
chmod 0755 "$TMP"
on_exit 'rm -rf -- "$TMP"'
OUT_FILE=$TMP/.out
ERR_FILE=$TMP/.err
LAST_CMD=""
RC=0

# fail MESSAGE: ends the test (exit 1) with MESSAGE and what the last `run` printed.
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

# skip REASON: ends the test as skipped (exit 77, CTest's SKIP_RETURN_CODE), saying why.
skip() {
        echo "SKIP: $*"
        exit 77
}

# need CMD [PACKAGE]: skips unless CMD is on PATH, naming the Debian package that has it.
need() {
        command -v "$1" >/dev/null ||
                skip "$1 is not installed (Debian package ${2:-$1}; packaging/install-deps test installs it)"
}

# need_mount_ns: skips unless a private mount namespace can be made (unshare, CAP_SYS_ADMIN).
need_mount_ns() {
        need unshare util-linux
        unshare -m --propagation private true 2>/dev/null ||
                skip "cannot make a private mount namespace here (needs CAP_SYS_ADMIN)"
}

# Debian's interpreter, whatever python3 comes first in PATH: the modules the
# tests import are Debian packages (python3-yaml, python3-prometheus-client).
PY=/usr/bin/python3

# python_with MODULE [PACKAGE]: skips unless $PY imports MODULE.
python_with() {
        [ -x "$PY" ] || skip "$PY is not installed"
        "$PY" -c "import $1" 2>/dev/null || skip "$PY cannot import $1 (apt-get install ${2:-python3-$1})"
}

# run CMD...: runs CMD, keeping its exit status in $RC, its stdout in $OUT_FILE and its stderr in $ERR_FILE; never fails by itself.
run() {
        LAST_CMD="$*"
        RC=0
        "$@" >"$OUT_FILE" 2>"$ERR_FILE" || RC=$?
}

# out: the last run's stdout.
out() { cat "$OUT_FILE"; }
# err: the last run's stderr.
err() { cat "$ERR_FILE"; }

# expect_rc WANT [WHAT]: the last run exited WANT.
expect_rc() {
        [ "$RC" -eq "$1" ] || fail "${2:-$LAST_CMD}: exit status $RC, expected $1"
}
# expect_out REGEX [WHAT]: a line of the last run's stdout matches the extended regex.
expect_out() {
        grep -Eq -- "$1" "$OUT_FILE" || fail "${2:-stdout} has no line matching /$1/"
}
# expect_err REGEX [WHAT]: a line of the last run's stderr matches the extended regex.
expect_err() {
        grep -Eq -- "$1" "$ERR_FILE" || fail "${2:-stderr} has no line matching /$1/"
}
# expect_no_out REGEX [WHAT]: no line of the last run's stdout matches.
expect_no_out() {
        ! grep -Eq -- "$1" "$OUT_FILE" || fail "${2:-stdout} has a line matching /$1/, it must not"
}
# expect_no_err REGEX [WHAT]: no line of the last run's stderr matches.
expect_no_err() {
        ! grep -Eq -- "$1" "$ERR_FILE" || fail "${2:-stderr} has a line matching /$1/, it must not"
}
# expect_out_empty [WHAT]: the last run printed nothing on stdout.
expect_out_empty() {
        [ ! -s "$OUT_FILE" ] || fail "${1:-stdout} is not empty"
}
# expect_err_empty [WHAT]: the last run printed nothing on stderr.
expect_err_empty() {
        [ ! -s "$ERR_FILE" ] || fail "${1:-stderr} is not empty"
}
# expect_out_lines N [WHAT]: the last run's stdout has exactly N lines.
expect_out_lines() {
        local n
        n=$(wc -l <"$OUT_FILE")
        [ "$n" -eq "$1" ] || fail "${2:-stdout} has $n lines, expected $1"
}
# expect_err_lines N [WHAT]: the last run's stderr has exactly N lines.
expect_err_lines() {
        local n
        n=$(wc -l <"$ERR_FILE")
        [ "$n" -eq "$1" ] || fail "${2:-stderr} has $n lines, expected $1"
}

# terminate PID: SIGTERM, SIGKILL if PID is still there after 10 s (so that a
# cleanup never waits for a hung process), and reaps it; nothing if it has gone.
terminate() {
        local i
        [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 0
        kill -TERM "$1" 2>/dev/null || true
        for ((i = 0; i < 1000; i++)); do
                kill -0 "$1" 2>/dev/null || break
                sleep 0.01
        done
        kill -KILL "$1" 2>/dev/null || true
        wait "$1" 2>/dev/null || true
}

# wait_exit PID SECONDS: waits, at most SECONDS, for PID (a child of this
# shell) to exit and returns its status; after SECONDS it says so and
# returns 124, leaving PID running (a cleanup's terminate stops it). A bare
# `wait` on a process that never exits would run into CTest's TIMEOUT
# with nothing said.
wait_exit() {
        local i rc=0
        for ((i = 0; i < $2 * 100; i++)); do
                kill -0 "$1" 2>/dev/null || break
                sleep 0.01
        done
        if kill -0 "$1" 2>/dev/null; then
                echo "gave up after $2 s waiting for pid $1 ($(cat "/proc/$1/comm" 2>/dev/null)) to exit" >&2
                return 124
        fi
        wait "$1" || rc=$?
        return "$rc"
}

# child_pids PARENT [COMM]: the pids of PARENT's children (named COMM), one
# a line, from every /proc/PID/stat. Not pgrep: it reads each process's
# cmdline too, and any process on the machine can make that read wait for
# good (one that holds its own memory lock, tests/lib/fuse-hang.sh).
child_pids() {
        local f line pid comm ppid
        for f in /proc/[0-9]*/stat; do
                read -r line 2>/dev/null <"$f" || continue
                stat_fields "$line"
                [ "$ppid" = "$1" ] && { [ -z "${2:-}" ] || [ "$comm" = "$2" ]; } && echo "$pid"
        done
        return 0
}

# stat_fields LINE: pid, comm and ppid (in the caller's locals) of a /proc/PID/stat line.
stat_fields() {
        local rest
        pid=${1%% *} comm=${1#*\(} comm=${comm%\)*}
        rest=${1##*) } # "S PPID ...": the comm may hold ") " itself, the last one ends it
        rest=${rest#* }
        ppid=${rest%% *}
}

# lock_holders FILE: every process that has FILE open and is not waiting
# for a lock on it, one "PID COMM (parent PPID COMM): COMMAND LINE" a line
# (a command line whose read blocks is given up after 1 s), then how many
# wait. A process asleep in flock(2) waits, and so does the shell whose
# flock(1) that is. Call it with no descriptor of FILE open itself.
lock_holders() {
        local want pids p line pid comm ppid pcomm args waiting=" "
        want=$(readlink -f -- "$1")
        pids=$({ find /proc/[0-9]*/fd -maxdepth 1 -lname "$want" 2>/dev/null || true; } | cut -d/ -f3 | sort -un)
        for p in $pids; do
                [[ $(cat "/proc/$p/wchan" 2>/dev/null) == *lock*wait* ]] || continue
                read -r line 2>/dev/null <"/proc/$p/stat" || continue
                stat_fields "$line"
                waiting+="$pid $ppid "
        done
        for p in $pids; do
                [[ $waiting == *" $p "* ]] && continue
                read -r line 2>/dev/null <"/proc/$p/stat" || continue
                stat_fields "$line"
                pcomm=$(cat "/proc/$ppid/comm" 2>/dev/null) || pcomm=gone
                args=$(timeout -s KILL 1 tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-300) ||
                        args="(its command line cannot be read)"
                echo "$pid $comm (parent $ppid $pcomm): $args"
        done
        # shellcheck disable=SC2086 # the words are the pids
        set -- $waiting
        [ $# -eq 0 ] || echo "(and $(($# / 2)) waiting for it: pids $*)"
}

# re STRING: STRING with every extended-regex character quoted (pure bash:
# process creation is slow on a loaded machine).
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

# wait_until SECONDS CMD...: polls CMD every 10 ms until it succeeds; after
# SECONDS (whole seconds: a correctness bound, not a timing) it says what it
# waited for and returns 1.
wait_until() {
        local wait_limit=$1 wait_i
        shift
        for ((wait_i = 0; wait_i < wait_limit * 100; wait_i++)); do
                "$@" && return 0
                sleep 0.01
        done
        echo "gave up after $wait_limit s waiting for: $*" >&2
        return 1
}
