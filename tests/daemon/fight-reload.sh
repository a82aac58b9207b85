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
        grep -q 'msg="writer fight on enabled: another' "$TMP/daemon.log" && break
done
wait_log 'msg="writer fight on enabled: another writer keeps setting always' 2
thp_set enabled always # left drifted: the daemon is in its backoff

kill -HUP "$DAEMON_PID"
wait_log 'msg="policy reloaded from' 3
reload_corrections=$(log_count 'corrected enabled: always -> madvise \(reload(; written by [^)]*)?\)')
[ "$reload_corrections" = 0 ] ||
        fail "the reload corrected the knob in a fight's backoff ($reload_corrections times): the fight was reset"

# The writer has stopped: the fight ends with its summary, and the knob is back.
wait_log 'writer fight on enabled ended; [0-9]+ corrections were suppressed' 12
thp_wait_for enabled madvise 2 || fail "enabled is $(thp_get enabled) after the fight ended"
[ "$(log_count 'msg="writer fight on enabled: another')" = 1 ] ||
        fail "the fight was declared $(log_count 'msg="writer fight on enabled: another') times, want once"
daemon_stop
echo PASS
