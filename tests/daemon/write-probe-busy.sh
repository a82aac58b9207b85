#!/bin/bash
# A record reserved in the BPF write probe's ring and not yet submitted (a
# program preempted while it fills it) keeps the ring's fd ready, yet
# nothing can be read before it is in. The probe of the test's own
# (tests/helpers/probe-inject.c) leaves one busy at the ring's head for
# 150 ms, on the real kernel's ring, spinning with preemption off on the
# last CPU; the daemon and this test are kept on the others, where
# meanwhile a drift wakes the corrector.
# The corrector must not spin on the ring: spinning, it reached its rate
# limit and slept out the rest of the second, so that the next drift,
# right after, waited most of a second. So:
#  1. the drift during the busy time is corrected at once;
#  2. the record, once submitted, is read and names that drift's writer
#     (it came late, as on the syscall-exit hook);
#  3. a drift right after is corrected within 0.5 s (it is a few ms; a
#     corrector that slept out its rate limit takes 0.8 s or more);
#  4. the corrector's CPU time over the busy time is printed.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
need taskset util-linux
cpus=$(nproc)
[ "$cpus" -ge 2 ] || skip "one CPU: the busy record's program would hold up everything else"
# The record's program on the last CPU; the test, and the daemon it starts, on the others.
BUSY_CPU=$((cpus - 1))
taskset -p -c "0-$((BUSY_CPU - 1))" $$ >/dev/null
real_sysfs_begin

thp_set enabled madvise
thp_set defrag madvise
write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0;
thp = { enabled = "madvise"; defrag = "madvise"; };'
probe_inject_start
ino=$(stat -c %i "$THP/enabled")

tid=$(corrector_tid) || fail "no thread thpguardd-corr in $DAEMON_PID"
# cpu_ns: the corrector's time on a CPU so far (schedstat, in ns).
cpu_ns() { cut -d' ' -f1 "/proc/$DAEMON_PID/task/$tid/schedstat"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# drift_ms: a one-shot writer sets enabled to always (one event, the
# write's: sh's <> does not truncate); prints how long the knob took to read
# madvise again, in ms (10 ms steps), after at most 2 s.
drift_ms() {
        local t0
        t0=$(now_ms)
        sh -c 'echo always 1<> "$1"' sh "$THP/enabled"
        thp_wait_for enabled madvise 2 || fail "a drift of enabled was not corrected within 2 s"
        echo $(($(now_ms) - t0))
}

# Whatever the startup cost the rate limit, its window is over.
sleep 1.1
cpu0=$(cpu_ns)
probe_inject_send busy_ms=150 cpu="$BUSY_CPU" ino="$ino" pid=7373 comm=slowwriter 'value=always\n'
# The record is reserved by now (the helper runs it at once), and stays busy.
sleep 0.03
first=$(drift_ms)
probe_inject_ack 5
cpu1=$(cpu_ns)
# At once, before anything else waits for the daemon: what a corrector asleep would hold up.
second=$(drift_ms)
echo "a drift while the ring's head was busy: corrected in $first ms; the next, right after: in $second ms;" \
        "the corrector used $(((cpu1 - cpu0) / 1000)) us of CPU over the busy 150 ms"
[ "$first" -lt 500 ] || fail "the drift during the busy record took $first ms to be corrected"
[ "$second" -lt 500 ] ||
        fail "a drift right after a busy record took $second ms to be corrected: the corrector spun on the ring to its rate limit and slept"
# The record, once submitted, names the first drift: it came after it was corrected.
wait_event 2 corrected knob=enabled observed=always writer_pid=7373 writer_comm=slowwriter
echo "the busy record, once in, named the drift it came after"
daemon_stop
echo "PASS: a busy record at the ring's head: no spin, the next drift corrected in $second ms"
