#!/bin/bash
# Fault: 1,000 SIGHUPs in a burst. Standard signals do not queue and the
# daemon schedules a reload "now unless one is already due", so a burst
# costs a handful of reloads.
#
# Expected: bounded reload work (far fewer reloads than signals,
# and little CPU), the daemon still correct afterwards: the policy in force
# is the last one written, drift is corrected, SIGTERM exits 0.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
real_sysfs_begin
SIGNALS=1000

thp_set enabled always
write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0;
thp = { enabled = "madvise"; };'
daemon_start
thp_wait_for enabled madvise 5 || fail "startup did not correct"
# Let the daemon settle; the policy file's own reload is not part of the count.
sleep 0.5
before=$(event_count policy_reloaded)
ticks0=$(awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat")

for ((i = 0; i < SIGNALS / 2; i++)); do kill -HUP "$DAEMON_PID"; done
# Halfway, a new policy: whatever the burst coalesces, this one must end up in force.
write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0;
thp = { enabled = "never"; };'
for ((i = 0; i < SIGNALS / 2; i++)); do kill -HUP "$DAEMON_PID"; done

thp_wait_for enabled never 10 || fail "the policy written during the burst is not in force"
sleep 1
reloads=$(($(event_count policy_reloaded) - before))
ticks=$(($(awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat") - ticks0))
echo "$SIGNALS SIGHUPs -> $reloads reloads, $ticks CPU ticks ($(getconf CLK_TCK)/s)"
[ "$reloads" -ge 1 ] || fail "the burst caused no reload"
[ "$reloads" -le $((SIGNALS / 10)) ] || fail "unbounded reload work: $reloads reloads for $SIGNALS signals"
[ "$(event_count policy_rejected)" = 0 ] || fail "a reload during the burst was rejected"
kill -0 "$DAEMON_PID" || fail "the daemon died in the burst"

# Still correct: drift is corrected against the new policy, at once.
thp_set enabled madvise
thp_wait_for enabled never 5 || fail "not enforcing after the burst"
wait_event 5 corrected knob=enabled observed=madvise desired=never trigger=inotify
# And a single SIGHUP still reloads.
write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0;
thp = { enabled = "madvise"; };'
kill -HUP "$DAEMON_PID"
thp_wait_for enabled madvise 5 || fail "a SIGHUP after the burst did not reload"
daemon_stop
echo "PASS: $SIGNALS SIGHUPs cost $reloads reloads and the daemon stayed correct"
