#!/bin/bash
# A reload keeps a knob's writer fight: SIGHUP during the backoff neither
# corrects the knob at once (restarting the war) nor loses the summary
# that is logged when the fight ends.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin

thp_set enabled madvise
write_policy "$POLICY" 'recheck_interval = 4; fight_threshold = 3; fight_window = 10;
thp = { enabled = "madvise"; };'
daemon_start

# A writer that keeps at it until the daemon declares the fight.
for ((i = 0; i < 2000; i++)); do
        echo always >"$THP/enabled"
        has_event writer_fight knob=enabled desired=madvise && break
done
wait_event 2 writer_fight knob=enabled observed=always desired=madvise
thp_set enabled always # left drifted: the daemon is in its backoff

kill -HUP "$DAEMON_PID"
wait_event 3 policy_reloaded policy="$POLICY"
reload_corrections=$(event_count corrected knob=enabled trigger=reload)
[ "$reload_corrections" = 0 ] ||
        fail "the reload corrected the knob in a fight's backoff ($reload_corrections times): the fight was reset"

# The writer has stopped: the fight ends with its summary, and the knob is back.
wait_event 12 writer_fight level=notice knob=enabled
thp_wait_for enabled madvise 2 || fail "enabled is $(thp_get enabled) after the fight ended"
[ "$(event_count writer_fight knob=enabled desired=madvise)" = 1 ] ||
        fail "the fight was declared $(event_count writer_fight knob=enabled desired=madvise) times, want once"
daemon_stop
echo PASS
