#!/bin/bash
# A write through a second sysfs mount, made in new mount and network
# namespaces like a privileged container's own /sys, raises no event on our
# watch (sysfs has one superblock per network namespace: it is a
# different superblock); only the periodic recheck catches it.
# With fanotify as the write source: the BPF write probe sees such a write at
# once (tests/daemon/write-probe.sh), and no recheck would be needed.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin
need unshare util-linux
unshare -m -n true 2>/dev/null || skip "cannot create a mount namespace here"

write_through_second_mount() {
        unshare -m -n --propagation private sh -c "mkdir -p $TMP/sys && mount -t sysfs sysfs $TMP/sys &&
                echo $1 > $TMP/sys/kernel/mm/transparent_hugepage/enabled"
}

# First prove the premise: the second mount's write raises no inotify event here.
thp_set enabled madvise
out=$("$INOTIFY_COUNT" "$THP" -- bash -c "$(declare -f write_through_second_mount); TMP=$TMP write_through_second_mount never")
echo "$out"
[ "$(thp_get enabled)" = never ] || fail "the write through the second mount did not land"
echo "$out" | grep -q '^total 0$' || skip "a second sysfs mount raises inotify events on this kernel; nothing to prove"
thp_set enabled madvise

write_policy "$POLICY" 'recheck_interval = 1;
thp = { enabled = "madvise"; };'
daemon_start --write-source=fanotify
write_through_second_mount never

thp_wait_for enabled madvise 3 || fail "the recheck did not correct a write made through another sysfs mount"
wait_event 1 corrected knob=enabled observed=never desired=madvise trigger=recheck
[ "$(event_count corrected trigger=inotify)" = 0 ] || fail "an inotify correction happened, so the test proved nothing"
# The operator is told once why corrections wait for the recheck, and how to fix it.
unseen='no inotify event announced.*network namespace'
wait_log "level=warn msg=\"the recheck corrected a drift that $unseen" 1
write_through_second_mount always
thp_wait_for enabled madvise 3 || fail "the recheck did not correct the second write through another sysfs mount"
wait_event 1 corrected knob=enabled observed=always desired=madvise trigger=recheck
[ "$(log_count "$unseen")" = 1 ] || fail "the unseen-drift warning was logged $(log_count "$unseen") times, want once"

# A drift inotify does see is corrected at once and never warned about.
daemon_stop
rm -f "$TMP/daemon.log"
daemon_start --write-source=fanotify
thp_set enabled never
thp_wait_for enabled madvise 1 || fail "an ordinary drift was not corrected within 1 s"
sleep 1.5 # past a recheck
[ "$(log_count "$unseen")" = 0 ] || fail "warned about an unseen drift that inotify saw"
daemon_stop
echo PASS
