#!/bin/bash
# Fault: the policy file goes bad while the daemon runs: deleted, made
# world-writable, replaced by a directory, changed to invalid syntax, and
# truncated to 0 bytes. Each change raises events on the policy's directory,
# which the daemon watches; reloads are debounced (100 ms).
#
# Expected, for each: exactly one "policy rejected" error (not one
# per recheck), the last good policy still enforced (a drift on the real
# sysfs is corrected), and putting a good file back reloads it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
real_sysfs_begin
# shellcheck disable=SC2034 # used by the commands fault() evals
P=$POLICY
GOOD='recheck_interval = 1; fight_threshold = 0;
thp = { enabled = "madvise"; };'

thp_set enabled always
write_policy "$POLICY" "$GOOD"
daemon_start --metrics-file "$M"
thp_wait_for enabled madvise 5 || fail "startup did not correct"

# fault NAME REASON_REGEX BREAK RESTORE: BREAK and RESTORE are run with the
# daemon frozen (SIGSTOP), so a change made of two steps (rm, then mkdir) is
# one change to it, as it is to anyone reading the file.
fault() {
        local name=$1 why=$2 break_cmd=$3 restore_cmd=$4 rej0 rel0 r0
        rej0=$(event_count policy_rejected)
        rel0=$(event_count policy_reloaded)
        echo "--- $name"
        kill -STOP "$DAEMON_PID"
        eval "$break_cmd"
        kill -CONT "$DAEMON_PID"
        wait_until 10 event_count_ge $((rej0 + 1)) policy_rejected level=error policy="$POLICY" ||
                { cat "$TMP/daemon.log"; fail "$name: not rejected"; }
        # What was wrong has no field: the rejection's text says it.
        event_lines policy_rejected | tail -n 1 | grep -E -- "$why" >/dev/null ||
                { cat "$TMP/daemon.log"; fail "$name: the rejection does not say /$why/"; }
        # Several rechecks later: still one error, and no reload either.
        r0=$(metric "$M" thpguard_rechecks_total)
        wait_metric_ge "$M" thpguard_rechecks_total $((${r0:-0} + 2)) 30
        [ "$(event_count policy_rejected)" = $((rej0 + 1)) ] ||
                fail "$name: $(($(event_count policy_rejected) - rej0)) rejections, want exactly 1"
        [ "$(event_count policy_reloaded)" = "$rel0" ] || fail "$name: a bad policy file was loaded"
        # The last good policy is still enforced.
        thp_set enabled never
        thp_wait_for enabled madvise 5 || fail "$name: the last good policy is not enforced"
        # A good file back: reloaded.
        kill -STOP "$DAEMON_PID"
        eval "$restore_cmd"
        kill -CONT "$DAEMON_PID"
        wait_until 10 event_count_ge $((rel0 + 1)) policy_reloaded policy="$POLICY" || true
        [ "$(event_count policy_reloaded)" = $((rel0 + 1)) ] ||
                fail "$name: restoring a good file: $(($(event_count policy_reloaded) - rel0)) reloads, want 1"
        [ "$(event_count policy_rejected)" = $((rej0 + 1)) ] || fail "$name: restoring the file was rejected"
        thp_set enabled always
        thp_wait_for enabled madvise 5 || fail "$name: not enforced after the good file came back"
}

fault deleted 'thpguard.conf: cannot open: No such file or directory' \
        'rm "$P"' 'write_policy "$POLICY" "$GOOD"'
fault world-writable 'thpguard.conf: mode 0666 lets group or others write it; refusing it' \
        'chmod 0666 "$P"' 'chmod 0644 "$P"'
fault directory 'thpguard.conf: not a regular file' \
        'rm "$P"; mkdir "$P"' 'rmdir "$P"; write_policy "$POLICY" "$GOOD"'
fault invalid-syntax 'thpguard.conf:2: syntax error' \
        'printf "recheck_interval = 1;\nthp = { enabled = madvise; };\n" >"$P"' 'write_policy "$POLICY" "$GOOD"'
# Last: an empty policy is valid syntax that manages nothing, and taking it
# would silently stop enforcement.
fault truncated 'thpguard.conf: .*(empty|no knob)' \
        ': >"$P"' 'write_policy "$POLICY" "$GOOD"'

daemon_stop
[ "$(metric "$M" 'thpguard_policy_reloads_total{result="failed"}')" = 5 ] || fail "metrics: $(metric "$M" 'thpguard_policy_reloads_total{result="failed"}') failed reloads, want 5"
echo "PASS: each bad policy file was rejected once and the last good one kept"
