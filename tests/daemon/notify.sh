#!/bin/bash
# The sd_notify sequence: READY=1 with STATUS after the startup apply,
# RELOADING=1 with MONOTONIC_USEC then READY=1 on reload, STOPPING=1 on exit.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin

thp_set enabled always
thp_set khugepaged/defrag 1
notify_listen_start "$TMP/notify.sock" "$TMP/notify.out"
write_policy "$POLICY" 'thp = { enabled = "madvise"; khugepaged = { defrag = false; }; };'
NOTIFY_SOCKET=$TMP/notify.sock daemon_start
wait_until 1 grep -q READY "$TMP/notify.out" || true
kill -HUP "$DAEMON_PID"
wait_until 2 eval '[ "$(grep -c READY "$TMP/notify.out")" -ge 2 ]' || true
daemon_stop
wait "$NOTIFY_PID" || true
cat "$TMP/notify.out"

mapfile -t msgs <"$TMP/notify.out"
[ "${#msgs[@]}" -eq 4 ] || fail "expected 4 notify messages, got ${#msgs[@]}"
[[ ${msgs[0]} =~ ^READY=1\|STATUS=enforcing\ 2\ knobs,\ 2\ corrected\ at\ startup$ ]] || fail "bad first message: ${msgs[0]}"
[[ ${msgs[1]} =~ ^RELOADING=1\|MONOTONIC_USEC=[0-9]+\|STATUS=reloading ]] || fail "bad reload message: ${msgs[1]}"
[[ ${msgs[2]} =~ ^READY=1\|STATUS=enforcing\ 2\ knobs ]] || fail "bad post-reload message: ${msgs[2]}"
[[ ${msgs[3]} = STOPPING=1 ]] || fail "bad last message: ${msgs[3]}"
# MONOTONIC_USEC is CLOCK_MONOTONIC now, as systemd checks it.
usec=${msgs[1]#*MONOTONIC_USEC=}; usec=${usec%%|*}
now=$(( $(cut -d. -f1 /proc/uptime) * 1000000 ))
[ $((now - usec)) -lt 60000000 ] && [ $((now - usec)) -gt -60000000 ] || fail "MONOTONIC_USEC $usec is not near now ($now)"
echo PASS
