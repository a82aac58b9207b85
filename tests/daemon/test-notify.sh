#!/bin/bash
# The sd_notify sequence: READY=1 with STATUS after the startup apply,
# RELOADING=1 with MONOTONIC_USEC then READY=1 on reload, STOPPING=1 on exit.
set -euo pipefail
source "$SRCDIR/tests/lib/real-sysfs.sh"
real_sysfs_begin
source "$SRCDIR/tests/lib/daemon.sh"

thp_set enabled always
thp_set khugepaged/defrag 1
"$NOTIFY_LISTEN" "$WORK/notify.sock" 9>&- >"$WORK/notify.out" &
NOTIFY_PID=$!
for _ in $(seq 100); do [ -S "$WORK/notify.sock" ] && break; sleep 0.01; done
write_policy 'thp = { enabled = "madvise"; khugepaged = { defrag = false; }; };'
NOTIFY_SOCKET=$WORK/notify.sock daemon_start
for _ in $(seq 100); do grep -q READY "$WORK/notify.out" && break; sleep 0.01; done
kill -HUP "$DAEMON_PID"
for _ in $(seq 200); do [ "$(grep -c READY "$WORK/notify.out")" -ge 2 ] && break; sleep 0.01; done
daemon_stop
wait "$NOTIFY_PID" || true
NOTIFY_PID=
cat "$WORK/notify.out"

mapfile -t msgs <"$WORK/notify.out"
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
