#!/bin/bash
# A writer fight on a fixture tree (no real sysfs needed): another writer
# rewrites a knob flat out; the daemon warns once, naming the knob and the
# other value, backs off instead of spinning, says when the fight has ended,
# and corrects a single drift at once again afterwards.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
fixture_on_tmpfs

write_policy "$POLICY" 'recheck_interval = 4; fight_threshold = 5; fight_window = 10;
thp = { use_zero_page = false; };'
daemon_start --sysfs-root "$ROOT"
tree_wait_for use_zero_page 0 1

# The other writer, flat out for 3 s.
end=$((SECONDS + 3))
while [ $SECONDS -lt $end ]; do printf 1 1<>"$T/use_zero_page"; done
corrections=$(event_count corrected knob=use_zero_page trigger=inotify)
echo "corrections during 3 s of fight: $corrections"
# The warning that it began carries the policy's value; the later ones of the same fight do not.
wait_event 5 writer_fight level=warn knob=use_zero_page observed=1 desired=0
[ "$(event_count writer_fight knob=use_zero_page desired=0)" = 1 ] ||
        { cat "$TMP/daemon.log"; fail "the fight warning was logged $(event_count writer_fight knob=use_zero_page desired=0) times"; }
# Backoff: at most the threshold, then one at each window's end (1 s, 2 s, ...).
[ "$corrections" -le 10 ] || { cat "$TMP/daemon.log"; fail "no backoff: $corrections corrections in 3 s"; }

# The writer has stopped: the knob comes back after the current window (<= 4 s), and the fight ends.
tree_wait_for use_zero_page 0 10
wait_event 15 writer_fight level=notice knob=use_zero_page
lines=$(wc -l <"$TMP/daemon.log")
[ "$lines" -le 30 ] || { cat "$TMP/daemon.log"; fail "log flood: $lines lines"; }

# After the fight a single drift is corrected at once again.
tree_set use_zero_page 1
tree_wait_for use_zero_page 0 5
daemon_stop
echo PASS
