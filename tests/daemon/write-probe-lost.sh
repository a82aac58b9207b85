#!/bin/bash
# Records the BPF write probe's ring had no room for (the kernel's program
# counts them in the next record that fits, `lost`), fed by a probe of the
# test's own (tests/helpers/probe-inject.c) on a fixture tree (no real
# sysfs: the daemon enforces khugepaged/defrag there):
#  1. the counter thpguard_write_probe_lost_records_total is in the metrics
#     file from the start, 0, and follows every loss;
#  2. the first loss is said at once, in one warning with how many and in
#     all (probe_lost=, probe_lost_total=);
#  3. more within the minute are counted, and not said again at once;
#  4. once the minute is over, one more line says what came since and in
#     all, with nothing else happening meanwhile.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
source "$SRCDIR/tests/lib/metrics.sh"
fixture_on_tmpfs
M=$TMP/thpguard.prom
LOST=thpguard_write_probe_lost_records_total

# The fixture has khugepaged/defrag 1: the startup puts it to 0.
write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0; thp = { khugepaged = { defrag = false; }; };'
PROBE_THP=$T probe_inject_start --sysfs-root "$ROOT" --metrics-file "$M"
tree_wait_for khugepaged/defrag 0 2
ino=$(stat -c %i "$T/khugepaged/defrag")

# drift_with_lost LOST PID: a foreign write of 1, corrected through inotify;
# then its record, late, saying that LOST before it did not fit.
drift_with_lost() {
        tree_set khugepaged/defrag 1
        tree_wait_for khugepaged/defrag 0 2
        probe_inject ino="$ino" pid="$2" comm=flooder lost="$1" value=1
        wait_event 2 corrected knob=khugepaged/defrag observed=1 writer_pid="$2" writer_comm=flooder
}
lost_lines() { grep -c ' probe_lost_total=' "$TMP/daemon.log" || true; }

# ---- 1. The counter, from the start. ----
wait_until 3 metric_is "$M" "$LOST" 0 ||
        fail "no $LOST 0 in the metrics file at startup (it has: $(metric "$M" "$LOST" | grep . || echo absent))"

# ---- 2. The first loss: counted, and said at once. ----
drift_with_lost 3 4001
wait_until 3 metric_is "$M" "$LOST" 3 || fail "$LOST is $(metric "$M" "$LOST"), want 3"
wait_log ' probe_lost=3 probe_lost_total=3( |$)' 2
first=$SECONDS
echo "the first 3 lost records: counted, and one warning"

# ---- 3. More within the minute: counted, not said yet. ----
drift_with_lost 5 4002
drift_with_lost 7 4003
wait_until 3 metric_is "$M" "$LOST" 15 || fail "$LOST is $(metric "$M" "$LOST"), want 15"
[ "$(lost_lines)" = 1 ] || fail "more than one line about lost records within a minute: $(grep probe_lost "$TMP/daemon.log")"
echo "12 more within the minute: counted ($LOST 15), no second line yet"

# ---- 4. The minute over: the line held back comes, by itself. ----
wait_until 75 log_has ' probe_lost=12 probe_lost_total=15( |$)' ||
        fail "no line about the 12 lost records since the first within 75 s: $(grep probe_lost "$TMP/daemon.log")"
waited=$((SECONDS - first))
[ "$waited" -ge 55 ] || fail "the second line about lost records came $waited s after the first, within the minute"
[ "$(lost_lines)" = 2 ] || fail "not two lines about lost records: $(grep probe_lost "$TMP/daemon.log")"
echo "the next line came $waited s after the first, saying 12 since and 15 in all"
daemon_stop
