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
                wait_until 5 log_count_ge 'corrected enabled: .* \(inotify(; written by [^)]*)?\)' "$i" || true
        done
        # A valid reload that changes the value, then an invalid one.
        write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0;
thp = { enabled = "never"; };'
        kill -HUP "$DAEMON_PID"
        thp_wait_for enabled never 5 || fail "$case: reload not applied"
        wait_log 'msg="policy reloaded' 5
        write_policy "$POLICY" 'thp = { enabled = "sometimes"; };'
        wait_log 'msg="policy rejected' 5
        daemon_stop

        cat "$TMP/daemon.log"
        want() { # COUNT REGEX
                local n
                n=$(log_count "$2")
                [ "$n" = "$1" ] || fail "$case: $n lines match /$2/, want $1"
        }
        want 1 '^level=info msg="started: enforcing 1 knobs'
        want 1 '^level=notice msg="corrected enabled: always -> madvise \(startup\)" message_id=5b0a3c7e2f8d4e61a9c4d2b7f1e08a31 knob=enabled .*trigger=startup result=corrected'
        want $DRIFTS '^level=notice msg="corrected enabled: (always|never) -> madvise \(inotify(; written by [^)]*)?\)" message_id=5b0a3c7e2f8d4e61a9c4d2b7f1e08a31 knob=enabled .*trigger=inotify result=corrected'
        want 1 '^level=notice msg="corrected enabled: madvise -> never \(reload(; written by [^)]*)?\)".*trigger=reload'
        want 1 '^level=notice msg="policy reloaded from .* 1 knobs, mode enforce, 1 corrected" message_id=[0-9a-f]{32} policy='
        want 1 '^level=error msg="policy rejected, keeping the last good one: .*invalid value \\"sometimes\\"'
        want 1 '^level=info msg="received Terminated; exiting, knobs left as they are"$'
        want $((DRIFTS + 6)) '^level=[a-z]+ msg="'
        lines=$(wc -l <"$TMP/daemon.log")
        [ "$lines" = $((DRIFTS + 6)) ] || fail "$case: $lines lines on stderr, want $((DRIFTS + 6)): something else or something partial"
done
echo "PASS: with no journald every event came out on stderr as logfmt"
