#!/bin/bash
# Another writer rewrites a knob in a loop: the daemon detects the fight, logs
# one warning naming the knob and the other writer's value, backs off instead
# of spinning, and logs a summary when the fight ends.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin

thp_set enabled madvise
write_policy "$POLICY" 'recheck_interval = 4; fight_threshold = 5; fight_window = 10;
thp = { enabled = "madvise"; };'
daemon_start

# A writer looping flat out for 3 s.
end=$((SECONDS + 3))
while [ $SECONDS -lt $end ]; do echo always >"$THP/enabled"; done
corrections=$(event_count corrected knob=enabled)
echo "corrections during 3 s of fight: $corrections"
# The warning that a fight began carries the policy's value; the later ones of the same fight do not.
wait_event 1 writer_fight level=warn knob=enabled observed=always desired=madvise
[ "$(event_count writer_fight desired=madvise)" = 1 ] || fail "the fight warning was logged more than once"
# Backoff: 5 before the fight, then one at each window's end (1 s, 2 s...).
[ "$corrections" -le 10 ] || fail "no backoff: $corrections corrections in 3 s"

# The writer stopped: the knob comes back at the latest after the current window (<= 4 s cap) and the fight ends.
thp_wait_for enabled madvise 6 || fail "the knob was not corrected after the fight"
wait_event 10 writer_fight level=notice knob=enabled
lines=$(wc -l <"$TMP/daemon.log")
echo "log lines: $lines"
[ "$lines" -le 30 ] || fail "log flood: $lines lines"

# After the fight a single drift is corrected at once again.
thp_set enabled never
thp_wait_for enabled madvise 1 || fail "inotify path not restored after the fight"
daemon_stop
echo PASS
