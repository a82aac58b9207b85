# shellcheck shell=bash
# Helpers for tests that run thpguardd in the background (this brings
# test.sh, real-sysfs.sh, policy.sh and fixture-tree.sh). A test on the
# real sysfs calls real_sysfs_begin: the knobs are put back after the daemon
# is stopped; a test on a fixture tree calls fixture_on_tmpfs instead. The
# policy is $POLICY; the daemon's stderr goes to $TMP/daemon.log.

# shellcheck source=real-sysfs.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/real-sysfs.sh"
# shellcheck source=policy.sh
. "$SRCDIR/tests/lib/policy.sh"
# shellcheck source=fixture-tree.sh
. "$SRCDIR/tests/lib/fixture-tree.sh"

: "${THPGUARDD:?THPGUARDD is not set: run this test through ctest}"
POLICY=$TMP/thpguard.conf
DAEMON_PID=

# daemon_kill: stops a daemon still running (terminate).
daemon_kill() {
        terminate "$DAEMON_PID"
}
on_exit daemon_kill

# daemon_started_or_gone: the log has the startup line, or the daemon has exited.
daemon_started_or_gone() {
        grep -q 'msg="started' "$TMP/daemon.log" 2>/dev/null || ! kill -0 "$DAEMON_PID" 2>/dev/null
}

# daemon_start_cmd CMD...: runs CMD, which must exec thpguardd (with
# --log-target=console or journal) in the background, its stderr in
# $TMP/daemon.log, and waits for the startup line, for at most
# $DAEMON_START_SECONDS (default 10). A wrapper that execs the daemon
# (unshare, strace, valgrind) has the daemon's PID once it has exec'd.
daemon_start_cmd() {
        # Emptied here, not only by the child's redirection: until the child
        # runs, the previous daemon's "started" line would pass the wait below.
        : >"$TMP/daemon.log"
        "$@" 9>&- 2>"$TMP/daemon.log" &
        DAEMON_PID=$!
        wait_until "${DAEMON_START_SECONDS:-10}" daemon_started_or_gone 2>/dev/null || true
        grep -q 'msg="started' "$TMP/daemon.log" 2>/dev/null && return 0
        cat "$TMP/daemon.log" >&2
        # Say how it ended: a status, or a signal (128+N) when the log is empty.
        local how="still running, no startup line" rc=0
        if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
                wait "$DAEMON_PID" || rc=$?
                how="exited with status $rc"
                [ "$rc" -gt 128 ] && how="killed by signal $((rc - 128))"
                DAEMON_PID=
        fi
        fail "thpguardd did not start ($how): $*"
}

# daemon_start [ARGS...]: starts thpguardd on $POLICY and waits for its startup line.
daemon_start() {
        daemon_start_cmd "$THPGUARDD" --config "$POLICY" --log-target=console "$@"
}

# daemon_stop: SIGTERM, and the exit status must be 0.
daemon_stop() {
        local rc=0
        kill -TERM "$DAEMON_PID"
        wait "$DAEMON_PID" || rc=$?
        DAEMON_PID=
        [ "$rc" -eq 0 ] || fail "thpguardd exited $rc on SIGTERM"
}

# log_has REGEX: a line of the daemon's log matches the extended regex.
log_has() {
        grep -Eq -- "$1" "$TMP/daemon.log"
}

# wait_log REGEX [SECONDS]: waits (default 2 s) until a line of the daemon's log matches the extended regex.
wait_log() {
        wait_until "${2:-2}" log_has "$1" 2>/dev/null && return 0
        cat "$TMP/daemon.log" >&2
        fail "daemon log never matched within ${2:-2} s: $1"
}

# log_count REGEX: how many lines of the daemon's log match the extended regex.
log_count() {
        grep -Ec -- "$1" "$TMP/daemon.log" || true
}

# log_count_ge REGEX N: at least N lines of the daemon's log match the extended regex.
log_count_ge() {
        [ "$(log_count "$1")" -ge "$2" ]
}

# The journal MESSAGE_IDs, by name (corrected, correction_failed,
# audit_drift, policy_reloaded, policy_rejected, writer_fight), read from
# the header that defines them. A test asserts on an event's id and fields,
# which are a contract, not on its prose, which may be reworded.
declare -A MESSAGE_ID=()
while read -r name id; do
        MESSAGE_ID[${name,,}]=$id
done < <(sed -n 's/^#define THPGUARD_MESSAGE_\([A-Z_]*\) *"\([0-9a-f]*\)".*/\1 \2/p' \
        "$SRCDIR/include/thpguard/message-ids.h")
[ "${#MESSAGE_ID[@]}" -ge 6 ] || fail "test bug: no message ids read from include/thpguard/message-ids.h"

# event_lines NAME [FIELD=VALUE...]: the daemon's log lines (logfmt) of the
# event NAME (a key of MESSAGE_ID) whose fields have these exact values, in
# any order (a value with a blank or an = is matched in the quotes logfmt
# gives it; one with a quote or a backslash, escaped there, never matches).
event_lines() {
        local id=${MESSAGE_ID[$1]:-}
        [ -n "$id" ] || fail "test bug: no message id named '$1' (have: ${!MESSAGE_ID[*]})"
        shift
        awk -v id="$id" '
        function has(k, v) {
                return index(line, " " k "=" v " ") || index(line, " " k "=\"" v "\" ")
        }
        BEGIN { for (i = 1; i < ARGC; i++) want[i] = ARGV[i]; n = ARGC - 1; ARGC = 1 }
        {
                line = " " $0 " "
                if (!index(line, " message_id=" id " ")) next
                for (i = 1; i <= n; i++) {
                        eq = index(want[i], "=")
                        if (!has(substr(want[i], 1, eq - 1), substr(want[i], eq + 1))) next
                }
                print
        }' "$@" <"$TMP/daemon.log"
}

# event_count NAME [FIELD=VALUE...]: how many such lines the daemon's log has.
event_count() {
        local lines
        lines=$(event_lines "$@") || return 1
        [ -z "$lines" ] && echo 0 || wc -l <<<"$lines"
}

# has_event NAME [FIELD=VALUE...]: the daemon's log has at least one such line.
has_event() {
        [ -n "$(event_lines "$@")" ]
}

# wait_event SECONDS NAME [FIELD=VALUE...]: waits until the log has such a
# line; on timeout prints the log and fails, naming the event.
wait_event() {
        local seconds=$1
        shift
        wait_until "$seconds" has_event "$@" 2>/dev/null && return 0
        cat "$TMP/daemon.log" >&2
        fail "no $1 event (message_id=${MESSAGE_ID[$1]}) with ${*:2} in the daemon's log within $seconds s"
}

# notify_listen_start SOCKET OUT: runs tests/helpers/notify-listen on
# SOCKET in the background, its messages in OUT, stopped at exit; waits
# for the socket.
notify_listen_start() {
        "$NOTIFY_LISTEN" "$1" 9>&- >"$2" &
        NOTIFY_PID=$!
        on_exit 'kill "$NOTIFY_PID" 2>/dev/null || true'
        wait_until 1 test -S "$1" || fail "notify-listen did not make $1"
}
