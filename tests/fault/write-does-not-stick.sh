#!/bin/bash
# Fault: a write that is accepted but does not stick (the kernel, or whatever
# is mounted there, keeps another value). The daemon confirms each write by
# reading back, so it logs "the write did not stick". But its own write
# raises IN_MODIFY on the directory it watches, which leads to another check,
# another write, another event... This runs on a copy of the 6.18 fixture
# on tmpfs: a regular file, where a bare-word pwrite at offset 0 leaves the
# bracketed word as it was, so every write "does not stick".
#
# Expected (no retry storm, never a spin): one error line, and no
# loop on its own events: every write that went through counts towards the
# writer-fight detector, so after fight_threshold (5) attempts the knob is
# left alone and tried once per backoff window (capped at the 1 s recheck
# interval). Attempts stay bounded by threshold + 1 + the seconds elapsed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
fixture_on_tmpfs

# The fixture reads "always [madvise] never": policy never.
write_policy "$POLICY" 'recheck_interval = 1;
thp = { enabled = "never"; };'
daemon_start --sysfs-root "$ROOT" --metrics-file "$M"
wait_event 5 correction_failed level=error knob=enabled observed=madvise desired=never trigger=startup errno=5
# The cause has no field: the text says it.
event_says correction_failed 'the write did not stick: reads back madvise' || fail "the error does not say that the write did not stick"
ticks0=$(awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat")
r0=$(metric "$M" thpguard_rechecks_total)
wait_metric_ge "$M" thpguard_rechecks_total $((${r0:-0} + 3)) 30
rechecks=$(metric "$M" thpguard_rechecks_total)
failures=$(metric "$M" 'thpguard_correction_failures_total{knob="enabled"}')
ticks=$(($(awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat") - ticks0))
echo "after $rechecks rechecks: $failures failed attempts, $ticks CPU ticks ($(getconf CLK_TCK)/s), $(event_count correction_failed) error lines"
[ "$(event_count correction_failed)" = 1 ] || fail "logged $(event_count correction_failed) times, want once"
wait_event 5 writer_fight knob=enabled desired=never
[ "$failures" -le $((rechecks + 10)) ] || fail "retry storm: $failures write attempts for $rechecks rechecks (the daemon reacts to its own write's IN_MODIFY)"
daemon_stop
echo "PASS: a write that does not stick is retried once per backoff window only"
