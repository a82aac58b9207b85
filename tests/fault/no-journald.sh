#!/bin/bash
# Fault: --log-target=journal and no journald. The daemon runs in a private
# mount namespace with a fresh tmpfs on /run/systemd/journal (not on all of
# /run, which holds $TMP), so whatever runs on the host (a journald, a stale
# socket left by one) is out of its sight and nothing on the host is moved
# or stopped. Two cases:
#   - no socket at all (sd_journal_send() would return 0: the entry silently
#     lost);
#   - a stale socket file with no journald behind it (sendmsg: ECONNREFUSED).
#
# Expected: every event comes out as a logfmt line on stderr and
# none is lost: the startup line, each correction (startup, every inotify
# drift, reload), the reload, a rejected policy, and the exit line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_mount_ns
real_sysfs_begin

# in_ns_without_journal stale|none CMD...: execs CMD (call it in a subshell).
in_ns_without_journal() {
        # shellcheck disable=SC2016 # expanded by the inner bash
        exec unshare -m --propagation private bash -c '
                mkdir -p /run/systemd/journal &&
                        mount -t tmpfs -o mode=0755 tmpfs /run/systemd/journal || exit 99
                if [ "$1" = stale ]; then
                        python3 -c "import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind(sys.argv[1])" \
                                /run/systemd/journal/socket || exit 99
                        [ -S /run/systemd/journal/socket ] || exit 99
                fi
                shift
                exec "$@"' _ "$@"
}

DRIFTS=20
for case in none stale; do
        if [ $case = stale ] && ! command -v python3 >/dev/null; then
                echo "python3 is missing: the stale-socket case is not run"
                continue
        fi
        thp_set enabled always
        write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0;
thp = { enabled = "madvise"; };'
        daemon_start_cmd in_ns_without_journal $case "$THPGUARDD" --config "$POLICY" --log-target=journal
        thp_wait_for enabled madvise 5 || fail "$case: startup did not correct"
        for i in $(seq $DRIFTS); do
                thp_set enabled "$([ $((i % 2)) = 0 ] && echo always || echo never)"
                thp_wait_for enabled madvise 5 || fail "$case: drift $i not corrected"
                # The next drift only once the daemon is done with this one (its
                # line is written after the read-back): a write racing that
                # read-back would be a "did not stick", not another drift.
                wait_until 5 event_count_ge "$i" corrected knob=enabled trigger=inotify || true
        done
        # A valid reload that changes the value, then an invalid one.
        write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0;
thp = { enabled = "never"; };'
        kill -HUP "$DAEMON_PID"
        thp_wait_for enabled never 5 || fail "$case: reload not applied"
        wait_event 5 policy_reloaded policy="$POLICY"
        write_policy "$POLICY" 'thp = { enabled = "sometimes"; };'
        wait_event 5 policy_rejected policy="$POLICY"
        daemon_stop

        cat "$TMP/daemon.log"
        want() { # COUNT REGEX
                local n
                n=$(log_count "$2")
                [ "$n" = "$1" ] || fail "$case: $n lines match /$2/, want $1"
        }
        want 1 '^level=info msg="confined: '
        want 1 '^level=info msg="started: enforcing 1 knobs'
        want_event() { # COUNT NAME [FIELD=VALUE...]
                local n
                n=$(event_count "${@:2}")
                [ "$n" = "$1" ] || fail "$case: $n $2 events with ${*:3}, want $1"
        }
        want_event 1 write_source level=info
        want_event 1 corrected level=notice knob=enabled observed=always desired=madvise trigger=startup result=corrected
        want_event "$DRIFTS" corrected level=notice knob=enabled desired=madvise trigger=inotify result=corrected
        want_event 1 corrected level=notice knob=enabled observed=madvise desired=never trigger=reload
        want_event 1 policy_reloaded level=notice policy="$POLICY"
        event_says policy_reloaded ' 1 knobs, mode enforce, 1 corrected' || fail "$case: the reload does not say what it did"
        want_event 1 policy_rejected level=error policy="$POLICY"
        event_says policy_rejected 'invalid value' || fail "$case: the rejection does not say why"
        want 1 '^level=info msg="received Terminated; exiting, knobs left as they are"$'
        want $((DRIFTS + 8)) '^level=[a-z]+ msg="'
        lines=$(wc -l <"$TMP/daemon.log")
        [ "$lines" = $((DRIFTS + 8)) ] || fail "$case: $lines lines on stderr, want $((DRIFTS + 8)): something else or something partial"
done
echo "PASS: with no journald every event came out on stderr as logfmt"
