#!/bin/bash
# A writer that makes every read of its command line wait for good
# (fuse-hang: a FUSE page never served, read through /proc/self/mem while
# another thread is queued in mmap()) writes a knob. The daemon corrects it
# and names it by pid and comm; the gate gives up on its command line and
# counts that in the metrics; the next one-shot writer is still corrected
# and named; and SIGTERM still ends the daemon at once.
set -euo pipefail
. "$SRCDIR/tests/lib/mount-ns.sh"
own_mount_namespace "$0" "$@"
source "$SRCDIR/tests/lib/daemon.sh"
source "$SRCDIR/tests/lib/metrics.sh"
real_sysfs_begin
source "$SRCDIR/tests/lib/fuse-hang.sh"

thp_set enabled madvise
write_policy "$POLICY" "recheck_interval = 30; fight_threshold = 0; metrics_file = \"$TMP/thpguard.prom\";
thp = { enabled = \"madvise\"; };"
daemon_start

fuse_hang_start wrote "$THP/enabled" always
# The positive control: its command line cannot be read.
fuse_hang_blocks cmdline

wait_event 5 corrected knob=enabled observed=always trigger=inotify writer_pid="$HANG" writer_comm=fuse-hang
! grep "writer_pid=$HANG " "$TMP/daemon.log" | grep -q 'writer_cmdline=' || fail "a command line that cannot be read was recorded"
echo "the hostile writer $HANG was corrected and named without its command line"

# The next writer: corrected and named while the gate's command-line read is still stuck.
sleep 0.3
sh -c "echo never > $THP/enabled" 9>&- &
pid=$!
wait "$pid"
thp_wait_for enabled madvise 2 || fail "the next drift was not corrected"
wait_event 5 corrected knob=enabled observed=never writer=sh writer_pid="$pid" writer_comm=sh
wait_metric_ge "$TMP/thpguard.prom" thpguard_writer_lookups_abandoned_total 1 3
metric_is "$TMP/thpguard.prom" thpguard_writer_gate_up 1 || fail "the gate was lost to a stuck command-line read"
echo "the next writer $pid was named; abandoned lookups: $(metric "$TMP/thpguard.prom" thpguard_writer_lookups_abandoned_total)"

# Shutdown does not wait for the stuck read: the gate's thread waits killably.
kill -TERM "$DAEMON_PID"
t0=$SECONDS
wait_until 10 sh -c "! kill -0 $DAEMON_PID 2>/dev/null" || fail "SIGTERM did not end the daemon within 10 s"
rc=0
wait "$DAEMON_PID" || rc=$?
DAEMON_PID=
[ "$rc" = 0 ] || fail "thpguardd exited $rc on SIGTERM"
echo "SIGTERM ended the daemon after $((SECONDS - t0)) s"
echo PASS
