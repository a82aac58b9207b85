#!/bin/bash
# Fault: the kernel rejects a write (EINVAL), in the running daemon.
#
# thpguardd bounds max_ptes_* by hpage_pmd_size / page size - 1, so to get a
# value past validation that the kernel rejects we bind-mount a fake
# hpage_pmd_size over the real one in a private mount namespace and run the
# daemon there. max_ptes_none = 1000 then passes validation; the real kernel
# answers the write with EINVAL.
#
# Expected: one error line with errno=22 (THPGUARD_ERRNO in the
# journal) for the failure, not one per recheck (the daemon retries at each
# recheck, silently); enabled, drifted too, is corrected all the same, and
# later drifts on it still are; a different foreign value on the failing knob
# is reported once more; SIGTERM exits 0.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
real_sysfs_begin
fake_pmd_begin

thp_set enabled always
before=$(thp_get khugepaged/max_ptes_none)
[ "$before" != 1000 ] || fail "test bug: max_ptes_none already reads 1000"

# max_ptes_none first: its failure must not stop enabled after it.
write_policy "$POLICY" 'recheck_interval = 1;
thp = {
  khugepaged = { max_ptes_none = 1000; };
  enabled = "madvise";
};'

# The daemon runs in the namespace with the fake hpage_pmd_size: unshare and
# bash exec, so $DAEMON_PID is thpguardd's.
daemon_start_cmd "${FAKE_PMD_NS[@]}" "$THPGUARDD" --config "$POLICY" --log-target=console --metrics-file "$M"

# The knob after the failing one is corrected at startup.
thp_wait_for enabled madvise 5 || fail "enabled was not corrected: the rejected knob stopped the others"
wait_event 5 corrected knob=enabled observed=always desired=madvise trigger=startup
wait_event 5 correction_failed level=error knob=khugepaged/max_ptes_none observed="$before" desired=1000 trigger=startup result=failed errno=22
# The cause has no field: the text says it.
event_says correction_failed 'the kernel rejected the value \(Invalid argument\)' || fail "the error does not say that the kernel rejected the value"

# No retry storm: several rechecks later, still one error line, and the
# number of attempts is bounded by the rechecks (one write per recheck).
r0=$(metric "$M" thpguard_rechecks_total)
wait_metric_ge "$M" thpguard_rechecks_total $((${r0:-0} + 4)) 30
[ "$(event_count correction_failed)" = 1 ] || { cat "$TMP/daemon.log"; fail "the EINVAL was logged $(event_count correction_failed) times, want once"; }
rechecks=$(metric "$M" thpguard_rechecks_total)
failures=$(metric "$M" 'thpguard_correction_failures_total{knob="khugepaged/max_ptes_none"}')
echo "after $rechecks rechecks: $failures failed attempts, $(event_count correction_failed) error line"
[ -n "$failures" ] && [ "$failures" -ge 2 ] || fail "the failing knob is not retried at the recheck (failures=${failures:-absent})"
[ "$failures" -le $((rechecks + 2)) ] || fail "retry storm: $failures attempts for $rechecks rechecks"
[ "$(thp_get khugepaged/max_ptes_none)" = "$before" ] || fail "max_ptes_none changed to $(thp_get khugepaged/max_ptes_none)"
[ "$(log_count '^level=error')" = 1 ] || fail "unexpected error lines"

# The others are still enforced, at once, by inotify.
thp_set enabled never
thp_wait_for enabled madvise 5 || fail "enabled is no longer enforced while max_ptes_none fails"
wait_event 5 corrected knob=enabled observed=never desired=madvise trigger=inotify

# A new foreign value on the failing knob is a new fact: logged once more.
other=$((before > 0 ? before - 1 : 1))
thp_set khugepaged/max_ptes_none "$other"
wait_event 10 correction_failed knob=khugepaged/max_ptes_none observed="$other" desired=1000 errno=22
r0=$(metric "$M" thpguard_rechecks_total)
wait_metric_ge "$M" thpguard_rechecks_total $((${r0:-0} + 3)) 30
[ "$(event_count correction_failed)" = 2 ] || fail "want 2 error lines (one per foreign value), got $(event_count correction_failed)"
thp_set khugepaged/max_ptes_none "$before"

daemon_stop
[ "$(cat "$THP/hpage_pmd_size")" = "$REAL_PMD" ] || fail "the fake hpage_pmd_size leaked out of the private namespace"
grep -q 'AddressSanitizer\|runtime error' "$TMP/daemon.log" && fail "sanitizer report"
echo "PASS: EINVAL logged once with errno=22, retried quietly, the other knobs enforced"
