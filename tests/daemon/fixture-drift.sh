#!/bin/bash
# The event loop on a fixture tree (no real sysfs needed): the startup
# apply, a foreign write put back through inotify, a write no inotify event
# tells of put back by the recheck, the same value rewritten is no
# correction, and SIGTERM exits 0 leaving the knobs as they are.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
fixture_on_tmpfs

# The fixture has use_zero_page 1, khugepaged/defrag 1, max_ptes_none 511.
write_policy "$POLICY" 'recheck_interval = 1;
thp = { use_zero_page = false; khugepaged = { defrag = false; max_ptes_none = 256; }; };'
daemon_start --sysfs-root "$ROOT"

# Startup applied the policy.
tree_wait_for use_zero_page 0 1
tree_wait_for khugepaged/defrag 0 1
tree_wait_for khugepaged/max_ptes_none 256 1
for k in use_zero_page khugepaged/defrag; do
        has_event corrected knob=$k observed=1 desired=0 trigger=startup result=corrected ||
                { cat "$TMP/daemon.log"; fail "no startup correction of $k"; }
done
has_event corrected knob=khugepaged/max_ptes_none observed=511 desired=256 trigger=startup ||
        { cat "$TMP/daemon.log"; fail "no startup correction of khugepaged/max_ptes_none"; }

# Foreign writes, each put back through inotify (a recheck may win the race
# on a busy machine: the end state, the count and one inotify line are what
# count). The next write only once the correction is logged: the line comes
# after the daemon's read-back, which a write racing it would spoil.
for i in 1 2 3; do
        for kv in use_zero_page=1=0 khugepaged/max_ptes_none=511=256; do
                IFS== read -r k foreign desired <<<"$kv"
                tree_set "$k" "$foreign"
                tree_wait_for "$k" "$desired" 5
                wait_until 5 event_count_ge $((i + 1)) corrected knob="$k" observed="$foreign" result=corrected ||
                        { cat "$TMP/daemon.log"; fail "drift $i of $k: $(event_count corrected knob="$k") corrections logged"; }
        done
done
wait_event 5 corrected knob=use_zero_page observed=1 trigger=inotify result=corrected
wait_event 5 corrected knob=khugepaged/max_ptes_none observed=511 trigger=inotify

# A write that raises no event: only the 1 s recheck can see it.
tree_set_unseen khugepaged/defrag 1
tree_wait_for khugepaged/defrag 0 10
wait_event 5 corrected knob=khugepaged/defrag observed=1 trigger=recheck result=corrected

# The desired value rewritten raises IN_MODIFY too: no correction.
before=$(event_count corrected)
tree_set use_zero_page 0
sleep 0.3
[ "$(event_count corrected)" = "$before" ] || { cat "$TMP/daemon.log"; fail "rewriting the desired value logged a correction"; }
[ "$(event_count correction_failed)" = 0 ] || { cat "$TMP/daemon.log"; fail "a correction failed"; }

# SIGTERM: exit 0, no rollback to what was found at start.
daemon_stop
log_has 'exiting, knobs left as they are' || { cat "$TMP/daemon.log"; fail "no exit line"; }
tree_is use_zero_page 0 && tree_is khugepaged/defrag 0 && tree_is khugepaged/max_ptes_none 256 ||
        fail "a knob changed on exit: $(cat "$T/use_zero_page" "$T/khugepaged/defrag" "$T/khugepaged/max_ptes_none")"
echo PASS
