#!/bin/bash
# A foreign user-space write is put back through the inotify path; SIGTERM
# exits 0 and leaves the knobs as they are (no rollback).
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin

thp_set enabled always
thp_set khugepaged/defrag 1
write_policy "$POLICY" 'recheck_interval = 3600;
thp = { enabled = "madvise"; defrag = "madvise"; khugepaged = { defrag = false; }; };'
daemon_start

# Startup applied the policy.
[ "$(thp_get enabled)" = madvise ] || fail "startup did not correct enabled"
has_event corrected knob=enabled observed=always desired=madvise trigger=startup result=corrected ||
        fail "no startup correction line"

# Drift through inotify; the recheck is an hour away, so only inotify can fix it.
for v in always never; do
        thp_set enabled "$v"
        thp_wait_for enabled madvise 1 || fail "enabled=$v was not corrected within 1 s"
        wait_event 2 corrected knob=enabled observed=$v desired=madvise trigger=inotify result=corrected
done
thp_set khugepaged/defrag 1
thp_wait_for khugepaged/defrag 0 1 || fail "khugepaged/defrag was not corrected"
wait_event 2 corrected knob=khugepaged/defrag observed=1 trigger=inotify result=corrected
thp_set defrag always
thp_wait_for defrag madvise 1 || fail "defrag was not corrected"
# The thread corrects first and the loop records after: wait for the record before counting.
wait_event 2 corrected knob=defrag observed=always trigger=inotify result=corrected

# The same value rewritten raises IN_MODIFY too; it must not count as a correction.
before=$(event_count corrected)
thp_set enabled madvise
sleep 0.2
[ "$(event_count corrected)" = "$before" ] || fail "rewriting the desired value logged a correction"

daemon_stop
grep -q 'exiting, knobs left as they are' "$TMP/daemon.log" || fail "no exit line"
# No rollback: the values stay the policy's, not the ones found at start.
[ "$(thp_get enabled)" = madvise ] || fail "enabled changed on exit"
[ "$(thp_get khugepaged/defrag)" = 0 ] || fail "khugepaged/defrag changed on exit"
echo PASS
