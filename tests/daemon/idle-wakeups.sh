#!/bin/bash
# An idle daemon sleeps: with nothing drifting and nothing opening the knob
# files, neither thpguardd (any of its threads) nor its writer gate wakes
# over 5 s, the recheck being 30 s away and no watchdog set; and the same
# with the BPF write probe as the write source, where there is no gate. A gate
# supervised by a timer woke the daemon twice a second. On a fixture tree,
# so no lock: fanotify marks and permission events work on tmpfs as on
# sysfs, and the gate runs as on the real one.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
fixture_on_tmpfs

SECONDS_IDLE=${SECONDS_IDLE:-5}
# At most this many over the whole interval, every thread of both processes.
MAX_WAKEUPS=${MAX_WAKEUPS:-2}

write_policy "$POLICY" 'recheck_interval = 30; thp = { use_zero_page = false; };'
unset WATCHDOG_USEC WATCHDOG_PID NOTIFY_SOCKET
daemon_start --sysfs-root "$ROOT"
tree_wait_for use_zero_page 0 2
log_has 'attribution is off|no fanotify permission events' &&
        skip "no writer gate here: $(grep -E 'attribution is off|permission events' "$TMP/daemon.log")"
gate=$(child_pids "$DAEMON_PID" thpguardd-gate)
[ -n "$gate" ] || fail "no thpguardd-gate child of the daemon: $(ps -o pid,comm --ppid "$DAEMON_PID")"

# switches PID...: voluntary plus involuntary context switches of every thread of each.
switches() {
        local pid
        for pid in "$@"; do
                cat "/proc/$pid/task/"*/status
        done | awk '/^(non)?voluntary_ctxt_switches:/ { n += $2 } END { print n + 0 }'
}
# per_thread PID...: each thread's name and switches, for the failure message.
per_thread() {
        local pid t
        for pid in "$@"; do
                for t in "/proc/$pid/task/"*; do
                        printf '%s:%s %s; ' "$pid" "$(cat "$t/comm")" \
                                "$(awk '/ctxt_switches:/ { n += $2 } END { print n + 0 }' "$t/status")"
                done
        done
}

# idle_check WHAT PID...: PIDs (every thread) wake at most MAX_WAKEUPS times in SECONDS_IDLE.
idle_check() {
        local what=$1 before after woke threads_before
        shift
        # Startup's own work (the first metrics, late records) settles first.
        sleep 1
        before=$(switches "$@")
        threads_before=$(per_thread "$@")
        sleep "$SECONDS_IDLE"
        after=$(switches "$@")
        woke=$((after - before))
        echo "idle for $SECONDS_IDLE s, $what: woke $woke times (at most $MAX_WAKEUPS allowed)"
        if [ "$woke" -gt "$MAX_WAKEUPS" ]; then
                echo "threads before: $threads_before" >&2
                echo "threads after:  $(per_thread "$@")" >&2
                fail "$what: the idle daemon woke $woke times in $SECONDS_IDLE s (want <= $MAX_WAKEUPS)"
        fi
}

idle_check "fanotify: the daemon and its gate" "$DAEMON_PID" "$gate"
kill -0 "$gate" || fail "the gate $gate is gone"
daemon_stop

# The BPF write probe: no gate; the corrector sleeps in poll() on the ring and the watch.
daemon_start --sysfs-root "$ROOT" --write-source=auto
if has_event write_source write_source=bpf; then
        [ -z "$(child_pids "$DAEMON_PID")" ] || fail "a child of the daemon with the probe in force: $(child_pids "$DAEMON_PID")"
        idle_check "bpf: the daemon" "$DAEMON_PID"
else
        echo "no BPF write probe here: $(grep -m1 'write source' "$TMP/daemon.log")"
fi
daemon_stop
echo PASS
