#!/bin/bash
# Fault: the inotify queue overflows. The kernel sizes an inotify instance's
# queue from fs.inotify.max_queued_events when it is created, so we lower the
# sysctl only while the daemon starts (then put it back at once: other
# processes on the machine create instances too), freeze the daemon with
# SIGSTOP, make far more events than its queue holds, leave two knobs
# drifted, and let it run again.
#
# Expected: "inotify queue overflowed; rechecking every knob" and a
# full recheck that corrects the drift (trigger=recheck: the events that
# named the knobs were lost). recheck_interval is an hour, so only the
# overflow handling can have corrected them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
real_sysfs_begin
SYSCTL=/proc/sys/fs/inotify/max_queued_events
[ -w $SYSCTL ] || skip "$SYSCTL is not writable here"
for k in enabled defrag khugepaged/defrag; do [ -f "$THP/$k" ] || skip "this kernel has no $k"; done
SAVED_QUEUE=$(cat $SYSCTL)
on_exit '[ "$(cat $SYSCTL)" = "$SAVED_QUEUE" ] || echo "$SAVED_QUEUE" >$SYSCTL'
QUEUE=16

thp_set enabled madvise
thp_set defrag madvise
thp_set khugepaged/defrag 1
write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0;
thp = { enabled = "madvise"; defrag = "madvise"; khugepaged = { defrag = true; }; };'

echo $QUEUE >$SYSCTL
daemon_start
echo "$SAVED_QUEUE" >$SYSCTL
[ "$(cat $SYSCTL)" = "$SAVED_QUEUE" ] || fail "could not restore $SYSCTL"

kill -STOP "$DAEMON_PID"
# Alternate knobs: the kernel merges an event identical to the one queued last.
for i in $(seq 100); do
        thp_set enabled "$([ $((i % 2)) = 0 ] && echo always || echo never)"
        thp_set defrag "$([ $((i % 2)) = 0 ] && echo always || echo defer)"
        thp_set khugepaged/defrag $((i % 2))
done
thp_set enabled never
thp_set defrag defer
thp_set khugepaged/defrag 1
kill -CONT "$DAEMON_PID"

wait_log '^level=warn msg="inotify queue overflowed; rechecking every knob"$' 10
thp_wait_for enabled madvise 10 || fail "enabled not corrected after the overflow"
thp_wait_for defrag madvise 10 || fail "defrag not corrected after the overflow"
wait_event 5 corrected knob=enabled observed=never desired=madvise trigger=recheck
wait_event 5 corrected knob=defrag observed=defer desired=madvise trigger=recheck
[ "$(log_count 'khugepaged/defrag')" = 0 ] || fail "khugepaged/defrag ended compliant but was acted on"
[ "$(event_count corrected trigger=inotify)" = 0 ] || fail "an inotify correction happened: the queue did not overflow as planned"

# Still watching: the next drift is corrected by inotify.
thp_set enabled always
thp_wait_for enabled madvise 5 || fail "inotify no longer works after the overflow"
wait_event 5 corrected knob=enabled observed=always desired=madvise trigger=inotify
daemon_stop
[ "$(log_count 'inotify queue overflowed')" = 1 ] || fail "overflow logged $(log_count 'inotify queue overflowed') times"
echo "PASS: an overflowed queue led to a full recheck that corrected the drift"
