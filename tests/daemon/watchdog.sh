#!/bin/bash
# The watchdog (sd_event_set_watchdog(..., true), so that WatchdogSec=
# works). Under WatchdogSec= systemd passes WATCHDOG_USEC; the daemon must
# then send WATCHDOG=1 from its event loop well within that period, and not
# far more often than the loop needs (no busy loop). Without WATCHDOG_USEC it
# sends none: notify.sh counts every message of that run.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin

PERIOD_USEC=400000
RUN_SECONDS=4
thp_set enabled madvise
notify_listen_start "$TMP/notify.sock" "$TMP/notify.out"
write_policy "$POLICY" 'recheck_interval = 3600; thp = { enabled = "madvise"; };'
WATCHDOG_USEC=$PERIOD_USEC NOTIFY_SOCKET=$TMP/notify.sock daemon_start
wait_until 1 grep -q READY "$TMP/notify.out" || true
sleep $RUN_SECONDS
# Frozen, as a hung loop would be: no ping may come from anywhere else.
before=$(grep -c '^WATCHDOG=1$' "$TMP/notify.out" || true)
kill -STOP "$DAEMON_PID"
sleep 1
frozen=$(( $(grep -c '^WATCHDOG=1$' "$TMP/notify.out" || true) - before ))
kill -CONT "$DAEMON_PID"
daemon_stop
wait "$NOTIFY_PID" || true

pings=$before
echo "WATCHDOG=1 $pings times in about ${RUN_SECONDS}s at WATCHDOG_USEC=$PERIOD_USEC; $frozen while frozen"
# sd-event pings between a quarter and a half of the period after the last
# one: 10 to 20 in 4 s. The bounds leave room for a loaded sanitizer run.
min=$((RUN_SECONDS * 1000000 / PERIOD_USEC))
max=$((RUN_SECONDS * 1000000 * 4 / PERIOD_USEC + 4))
[ "$pings" -ge "$min" ] || fail "only $pings watchdog pings in ${RUN_SECONDS}s, want at least $min (one per period)"
[ "$pings" -le "$max" ] || fail "$pings watchdog pings in ${RUN_SECONDS}s, more than $max: a busy loop?"
[ "$frozen" = 0 ] || fail "$frozen pings while the daemon was stopped"
# Every ping is its own message: nothing else rides on it.
[ "$(grep -c WATCHDOG "$TMP/notify.out")" = "$(grep -c '^WATCHDOG=1$' "$TMP/notify.out")" ] ||
        fail "a WATCHDOG message is not exactly WATCHDOG=1"
grep -q '^READY=1|STATUS=enforcing 1 knob, 0 corrected at startup$' "$TMP/notify.out" || fail "no READY=1 with STATUS"
tail -n 1 "$TMP/notify.out" | grep -qx STOPPING=1 || fail "STOPPING=1 is not the last message"
echo PASS
