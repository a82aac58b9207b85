#!/bin/bash
# The corrector thread (src/daemon/daemon-corrector.c), on the real sysfs: it
# exists beside the loop, named thpguardd-corr and with no capability; it
# corrects a one-shot writer's drift and the loop records it, writer named;
# the writer gate wakes it once for each open of a knob by another process
# (its notice, so that it is next to the writer when the write comes) and
# nothing else does: without attribution no open wakes it; on Linux 6.12+
# it runs with the short time slice priority.h asks for when attribution
# is off, and the default one when it is on, as the loop always does; and
# SIGTERM ends both threads with exit status 0.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin

OPENS=20
thp_set enabled madvise
write_policy "$POLICY" "recheck_interval = 30; fight_threshold = 0; thp = { enabled = \"madvise\"; };"

# wakeups TID: how many times the thread has gone to sleep and been woken (voluntary switches).
wakeups() {
        awk '/^voluntary_ctxt_switches:/ { print $2 }' "/proc/$DAEMON_PID/task/$1/status"
}

# open_round: OPENS processes that each open enabled for reading and exit, 20 ms apart; nothing is written.
open_round() {
        for ((i = 0; i < OPENS; i++)); do
                sh -c "exec 3<$THP/enabled" 9>&-
                sleep 0.02
        done
}

# slice_of TID: the thread's time slice in ns, from /proc/PID/task/TID/sched (CONFIG_SCHED_DEBUG).
slice_of() {
        awk '$1 == "se.slice" { print $3 }' "/proc/$DAEMON_PID/task/$1/sched" 2>/dev/null
}

# check_slice LABEL TID WANT: the corrector's slice is 100 us (priority.h) if WANT is short, the
# default otherwise; the loop's is always the default.
check_slice() {
        local label=$1 tid=$2 want=$3 major minor corr loop
        IFS=. read -r major minor _ <<<"$(uname -r)"
        if [ "$major" -lt 6 ] || { [ "$major" -eq 6 ] && [ "$minor" -lt 12 ]; }; then
                echo "$label: slice not checked: Linux $(uname -r) has no custom slices (6.12+)"
                return 0
        fi
        corr=$(slice_of "$tid")
        loop=$(slice_of "$DAEMON_PID")
        if [ -z "$corr" ] || [ -z "$loop" ]; then
                echo "$label: slice not checked: /proc/PID/task/TID/sched has no se.slice (no CONFIG_SCHED_DEBUG)"
                return 0
        fi
        echo "$label: corrector slice $corr ns, loop slice $loop ns"
        [ "$loop" != 100000 ] || fail "$label: the loop thread got the corrector's short slice"
        if [ "$want" = short ]; then
                [ "$corr" = 100000 ] || fail "$label: the corrector thread's slice is $corr ns, expected 100000"
        else
                [ "$corr" = "$loop" ] || fail "$label: the corrector thread's slice is $corr ns, expected the default $loop"
        fi
}

# check_thread LABEL MIN MAX SLICE: the thread's wakeups over one open_round lie in [MIN, MAX],
# and its slice is SLICE (short or default).
check_thread() {
        local label=$1 min=$2 max=$3 slice=$4 tid before after
        tid=$(corrector_tid) || fail "$label: no thread named thpguardd-corr: $(cat /proc/"$DAEMON_PID"/task/*/comm | tr '\n' ' ')"
        grep -q '^CapEff:[[:space:]]*0*$' "/proc/$DAEMON_PID/task/$tid/status" ||
                fail "$label: the corrector thread holds capabilities: $(grep ^Cap "/proc/$DAEMON_PID/task/$tid/status")"
        check_slice "$label" "$tid" "$slice"
        sleep 0.2 # the startup's own events are read
        before=$(wakeups "$tid")
        open_round
        sleep 0.1
        after=$(wakeups "$tid")
        echo "$label: $OPENS opens by other processes woke the corrector thread $((after - before)) times"
        [ $((after - before)) -ge "$min" ] && [ $((after - before)) -le "$max" ] ||
                fail "$label: $OPENS opens woke the corrector thread $((after - before)) times, expected $min to $max"
        [ "$(event_count corrected)" = 0 ] || fail "$label: a read-only open was recorded as a correction"
        [ "$(thp_get enabled)" = madvise ] || fail "$label: enabled changed to $(thp_get enabled)"
}

# Attribution on: the gate's notice wakes the thread once per open (a
# lower bound on a busy machine: two notices that meet in the pipe wake it once).
daemon_start
wait_log 'msg="started' 2
check_thread "attribution on" $((OPENS / 2)) $((OPENS * 2)) default

# A one-shot writer's drift: corrected by the thread, recorded by the loop.
sh -c "echo always > $THP/enabled" 9>&- &
pid=$!
wait "$pid"
thp_wait_for enabled madvise 2 || fail "the drift was not corrected: enabled reads $(thp_get enabled)"
wait_event 5 corrected knob=enabled observed=always trigger=inotify writer_pid="$pid" writer_comm=sh
daemon_stop

# Attribution off: no gate, no notice; a read-only open raises no inotify
# event the daemon watches, so nothing wakes the thread.
: >"$TMP/daemon.log"
daemon_start_cmd setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin -- "$THPGUARDD" --config "$POLICY" --log-target=console --write-source=fanotify
wait_log 'msg="started' 2
log_has 'attribution is off' || fail "attribution is on without CAP_SYS_ADMIN: $(cat "$TMP/daemon.log")"
check_thread "attribution off" 0 2 short
daemon_stop
echo PASS
