# shellcheck shell=bash
# The daemon's events, matched by their journal MESSAGE_ID and fields in its
# logfmt output (--log-target=console): those are a contract (the catalog,
# alerting rules and `journalctl MESSAGE_ID=` depend on them); the prose of
# a message may be reworded. Sourced after test.sh (daemon.sh brings it).
# A line with no id (started, exiting, a diagnostic) is matched by its text.

[ -z "${THPGUARD_EVENTS_SH:-}" ] || return 0
THPGUARD_EVENTS_SH=1

# The MESSAGE_IDs by name (corrected, correction_failed, audit_drift,
# policy_reloaded, policy_rejected, writer_fight), read from the header
# that defines them.
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
# The log is $TMP/daemon.log, or $EVENT_LOG when set (EVENT_LOG=$ERR_FILE
# for what the last `run` printed on stderr). level=LEVEL matches too.
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
        }' "$@" <"${EVENT_LOG:-$TMP/daemon.log}"
}

# event_count NAME [FIELD=VALUE...]: how many such lines the daemon's log has.
event_count() {
        local lines
        lines=$(event_lines "$@") || return 1
        if [ -z "$lines" ]; then
                echo 0
        else
                wc -l <<<"$lines"
        fi
}

# has_event NAME [FIELD=VALUE...]: the daemon's log has at least one such line.
has_event() {
        [ -n "$(event_lines "$@")" ]
}

# event_count_ge N NAME [FIELD=VALUE...]: at least N such lines (for wait_until).
event_count_ge() {
        local n=$1
        shift
        [ "$(event_count "$@")" -ge "$n" ]
}

# event_says NAME REGEX [FIELD=VALUE...]: a line of such an event matches
# the extended REGEX: for what only its text says (the cause of a failure,
# what was wrong with a policy), which no field carries.
event_says() {
        local name=$1 regex=$2
        shift 2
        # Not grep -q: leaving early would cut the pipe, a failure under pipefail.
        event_lines "$name" "$@" | grep -E -- "$regex" >/dev/null
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

# writers_named PERCENT WHAT LOG PID...: at least PERCENT % of the PIDs are
# named (writer_pid=PID) by a line of LOG, the records event_lines picked;
# prints the count, and fails with the first ones missed and what the
# daemon's log says of them.
writers_named() {
        local percent=$1 what=$2 log=$3 pid named=0 missed=()
        shift 3
        for pid in "$@"; do
                if grep -Eq "(^| )writer_pid=$pid( |$)" "$log"; then
                        named=$((named + 1))
                else
                        missed+=("$pid")
                fi
        done
        echo "$what: $named of $# named"
        [ $((named * 100)) -ge $(($# * percent)) ] && return 0
        for pid in "${missed[@]:0:3}"; do
                grep -m2 -E "(^| )writer_pid=$pid( |$)" "${EVENT_LOG:-$TMP/daemon.log}" >&2 || true
        done
        fail "$what: only $named of $# were named (want >= $percent %); not named: ${missed[*]:0:10}"
}
