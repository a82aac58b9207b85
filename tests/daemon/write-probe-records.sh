#!/bin/bash
# The daemon's side of the BPF write probe, fed by a probe of the test's own
# (tests/helpers/probe-inject.c: a real BPF ring and link, records put in
# when the test says): what the real probe on this kernel cannot be made to
# do on cue. A write through the daemon's own sysfs mount is announced by
# inotify alone (its record asks for no wakeup), and on the syscall-exit
# hook of a preemptible kernel the record comes after the correction. So:
#  1. a drift whose record comes 100 ms after it was corrected, unannounced,
#     is named after that record's writer (the corrector looks for it),
#     whether the corrector thread or the loop corrected it;
#  2. a record of a write of the policy's own value, followed by a drift
#     whose record comes late, names the drift's writer, not the other;
#  3. a drift whose record never comes is recorded with no writer after
#     1 s, and the corrector stops looking: a bounded number of wakeups,
#     then none;
#  4. many drifts whose records never come, with records of the daemon's
#     own corrections in the ring between them: the looks stay on the
#     clock, no busy loop;
#  5. a kprobe's record (made at the write's entry, before the value is
#     stored) of a write through another network namespace's sysfs, which
#     raises no inotify event: the knob reads compliant when the record
#     wakes the corrector, and the write lands 50 ms later. It is corrected
#     at once all the same, trigger bpf, its writer named.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
: "${PROBE_INJECT:?PROBE_INJECT is not set: run this test through ctest}"
real_sysfs_begin

thp_set enabled madvise
thp_set defrag madvise
thp_set khugepaged/defrag 0
write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0;
thp = { enabled = "madvise"; defrag = "madvise"; khugepaged = { defrag = false; }; };'
mkfifo "$TMP/inject" "$TMP/inject.ack"
"$PROBE_INJECT" "$THP" "$TMP/inject" true 2>"$TMP/probe.err" || {
        rc=$?
        [ "$rc" -eq 125 ] && skip "no BPF ring or program here: $(cat "$TMP/probe.err")"
        fail "probe-inject failed ($rc): $(cat "$TMP/probe.err")"
}
daemon_start_cmd "$PROBE_INJECT" "$THP" "$TMP/inject" "$THPGUARDD" --config "$POLICY" --log-target=console
has_event write_source write_source=bpf ||
        fail "the daemon did not take the passed probe: $(grep -m1 'write source' "$TMP/daemon.log")"
ino=$(stat -c %i "$THP/enabled")

daemon_state() { [ -d "/proc/$DAEMON_PID" ] && echo running || echo gone; }
# inject KEY=VALUE...: one record into the ring (probe-inject.c says the
# keys); a record of a write through the daemon's own mount must be quiet,
# by the superblock the daemon wrote into the probe's config map itself.
# INJECTED_SELF: what the config map then says of the daemon's own tgid.
inject() {
        local ack how
        # Read-write: never blocks in open(), even with the helper gone.
        echo "$*" 1<>"$TMP/inject"
        read -r -t 5 ack how INJECTED_SELF <>"$TMP/inject.ack" ||
                fail "probe-inject did not answer (the daemon is $(daemon_state))"
        [ "$ack $how" = "ok quiet" ] ||
                fail "a record through the daemon's own mount was not quiet ($ack $how): the daemon did not say its superblock in the config map; $(grep probe-inject "$TMP/daemon.log")"
}
# mark: the time a later record's write can be dated at (inject at=mark).
mark() {
        local ack
        echo mark 1<>"$TMP/inject"
        read -r -t 5 ack <>"$TMP/inject.ack" || fail "probe-inject did not answer the mark"
        [ "$ack" = "ok mark" ] || fail "probe-inject answered the mark with: $ack"
}
# drift [trunc]: a one-shot writer sets enabled to always, and the daemon
# puts it back. Opened without O_TRUNC (sh's <>): one event, the write's,
# which the corrector thread corrects. With trunc (sh's >): the truncation's
# event comes first and the knob reads compliant, and the write's event
# comes while that outcome waits for the loop, which then corrects it itself.
drift() {
        if [ "${1:-}" = trunc ]; then
                sh -c 'echo always > "$1"' sh "$THP/enabled"
        else
                sh -c 'echo always 1<> "$1"' sh "$THP/enabled"
        fi
        thp_wait_for enabled madvise 1 || fail "a drift of enabled was not corrected within 1 s"
}

# ---- 1. A record that comes after the correction, unannounced. ----
pid=4242
for how in plain trunc trunc trunc trunc; do
        drift $how
        sleep 0.1
        inject ino="$ino" pid=$pid comm=latewriter 'value=always\n'
        wait_event 1 corrected knob=enabled observed=always trigger=inotify writer_pid=$pid writer_comm=latewriter
        pid=$((pid + 1))
done
echo "a record 100 ms after its drift was corrected (by the thread, or by the loop after a truncation), with no wakeup: the drift named after it, 5 of 5"

# ---- 2. The policy's own value, its record late, then a drift whose record is late. ----
# The compliant write is read compliant (its inotify event) before its
# record comes; the record says it began before that read (at the mark):
# it names no later drift, whatever its value says (here always: a writer
# may change its buffer after the write).
mark
thp_set enabled madvise
sleep 0.1
inject ino="$ino" pid=5151 comm=compliant at=mark 'value=always\n'
drift
sleep 0.1
inject ino="$ino" pid=6161 comm=drifter value=always
wait_event 1 corrected knob=enabled observed=always writer_pid=6161 writer_comm=drifter
! grep -E "writer_comm=compliant( |$)" "$TMP/daemon.log" >&2 ||
        fail "the writer of a write read compliant was named for a drift (above)"
echo "a write read compliant before its record came, then a late drift record: the drift's writer named"

# ---- 2b. A drift whose record says the policy's own value (its buffer changed after the write): named. ----
# Such a record waits out the late-record window for a record that says
# otherwise (on the syscall-exit hook an honest write of the policy's own
# value can race a drift), then names its writer: the value never hides one.
mark
drift
sleep 0.1
inject ino="$ino" pid=7171 comm=flipper at=mark 'value=madvise\n'
wait_event 3 corrected knob=enabled observed=always writer_pid=7171 writer_comm=flipper
echo "a drift whose record carries the policy's own value: its writer named all the same"

# ---- 3. A record that never comes. ----
switches() { sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "/proc/$DAEMON_PID/task/$tid/status"; }
tid=$(corrector_tid) || fail "no thread thpguardd-corr in $DAEMON_PID"
before=$(switches)
n=$(event_count corrected knob=enabled)
drift
wait_until 3 event_count_ge $((n + 1)) corrected knob=enabled ||
        fail "the drift with no record was not recorded within 3 s"
event_lines corrected knob=enabled | tail -1 | grep -q 'writer_' &&
        fail "a drift with no record was named: $(event_lines corrected knob=enabled | tail -1)"
sleep 0.5
looked=$(($(switches) - before))
sleep 2
[ "$(switches)" -eq "$((before + looked))" ] ||
        fail "the corrector still wakes 1.5 s after a drift whose record never came: $looked, then $(($(switches) - before))"
# The drift, our write's echo, and at most ten looks (1 ms doubling to 1 s); a few to spare.
[ "$looked" -ge 3 ] && [ "$looked" -le 16 ] ||
        fail "the corrector woke $looked times for a drift whose record never came (want 3..16)"
echo "a record that never comes: the drift recorded with no writer after 1 s; the corrector looked $looked times, then slept"

# ---- 4. Many drifts whose records never come, our own corrections' records beside them. ----
# What the probe does on a syscall-exit kernel when the writers are unseen
# (io_uring): each correction of ours leaves its own record in the ring after
# the thread has read it, which makes the next poll() return at once. The
# looks must stay on the clock (about ten a second), never a busy loop.
own_pidns=$(stat -Lc %i "/proc/$DAEMON_PID/ns/pid")
before=$(switches)
DRIFTS=80
for ((i = 0; i < DRIFTS; i++)); do
        drift
        inject ino="$ino" pid="$DAEMON_PID" pidns="$own_pidns" comm=thpguardd-corr 'value=madvise\n'
        sleep 0.01
done
sleep 1.2
woke=$(($(switches) - before))
# Per drift: its event, our write's echo, our record; the looks: about ten a second.
[ "$woke" -le $((DRIFTS * 4 + 40)) ] ||
        fail "the corrector woke $woke times for $DRIFTS drifts whose records never came (want <= $((DRIFTS * 4 + 40)))"
! grep -q "writer_pid=$DAEMON_PID " "$TMP/daemon.log" || fail "the daemon named itself as a writer"
# Told its pid by its own records, it has the probe stop making them.
[ "$INJECTED_SELF" = "self=$DAEMON_PID" ] ||
        fail "after records of its own writes the config map says $INJECTED_SELF, want self=$DAEMON_PID"
echo "$DRIFTS drifts whose records never came, our own records beside them: the corrector woke $woke times"

# ---- 5. A kprobe's record, before its write through another mount lands. ----
need_mount_ns
echo "ino=$ino sb=other entry=1 pid=7171 comm=podwriter" 1<>"$TMP/inject"
read -r -t 5 ack how _ <>"$TMP/inject.ack" || fail "probe-inject did not answer (the daemon is $(daemon_state))"
[ "$ack $how" = "ok wake" ] || fail "a record through another superblock asked for no wakeup ($ack $how)"
sleep 0.05
unshare -m -n sh -c 'mount -t sysfs sysfs /sys && echo always > /sys/kernel/mm/transparent_hugepage/enabled'
thp_wait_for enabled madvise 1 ||
        fail "a write through another mount, 50 ms after its kprobe record, was not corrected within 1 s (reads $(thp_get enabled))"
wait_event 3 corrected knob=enabled observed=always trigger=bpf writer_pid=7171 writer_comm=podwriter ||
        fail "its correction is not trigger=bpf naming pid 7171: $(event_lines corrected knob=enabled | tail -n 1)"
echo "a kprobe's record 50 ms before its write through another mount landed: corrected, trigger bpf, writer named"

daemon_stop
