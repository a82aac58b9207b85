#!/bin/bash
# Startup failures: an invalid policy exits 1 with file:line errors and
# writes nothing; a bad --sysfs-root exits 1 with one clear line.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin

thp_set enabled always
write_policy "$POLICY" 'thp = {
  enabled = "madvise";
  defrag = "sometimes";
};
bogus = 1;'
rc=0
# Every run here pins its log target: with the default (auto) the lines go
# to the journal wherever journald runs, and this test reads stderr.
out=$("$INOTIFY_COUNT" "$THP" "$THP/khugepaged" -- "$THPGUARDD" --config "$POLICY" --log-target=console 2>"$TMP/daemon.log") || rc=$?
cat "$TMP/daemon.log"
[ $rc -eq 1 ] || fail "invalid policy: exit $rc, want 1"
# Each error is its own entry at priority err, naming the policy, so
# `journalctl -p err` shows exactly what made the boot fail. The diagnostics
# have no message id: file:line and key are what they must name.
for what in ':3: thp\.defrag: ' ':5: policy: unknown key \\"bogus\\"'; do
        log_has "^level=error msg=\"$(re "$TMP")/thpguard\.conf$what.* policy=$(re "$POLICY")( |\$)" ||
                fail "no error at level error naming /$what/ and the policy"
done
[ "$(event_count policy_rejected level=error policy="$POLICY")" = 1 ] ||
        fail "no single closing policy_rejected event (message_id=${MESSAGE_ID[policy_rejected]}) at level error"
echo "$out" | grep -q '^total 0$' || fail "an invalid policy led to a write: $out"
[ "$(thp_get enabled)" = always ] || fail "enabled was changed"

write_policy "$POLICY" 'thp = { enabled = "madvise"; };'
for root in "$TMP/empty" "$POLICY" "$TMP/missing"; do
        mkdir -p "$TMP/empty"
        rc=0
        "$THPGUARDD" --config "$POLICY" --sysfs-root "$root" --log-target=console 2>"$TMP/err" || rc=$?
        cat "$TMP/err"
        [ $rc -eq 1 ] || fail "--sysfs-root $root: exit $rc, want 1"
        [ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "--sysfs-root $root: want one line"
        grep -q -- "--sysfs-root $root: " "$TMP/err" || fail "--sysfs-root $root: message does not name it"
done

# SIGTERM as soon as it starts (during the startup apply at the latest): a clean exit 0.
# (Only once it has exec'd: a signal to the forked shell before exec would hit bash, not us.)
"$THPGUARDD" --config "$POLICY" --log-target=console 9>&- 2>"$TMP/daemon.log" &
pid=$!
for _ in $(seq 1000); do [ "$(cat /proc/$pid/comm 2>/dev/null)" = thpguardd ] && break; done
kill -TERM $pid
rc=0; wait $pid || rc=$?
# Killed before the handler was installed is the default action (143); after, 0.
[ $rc -eq 0 ] || [ $rc -eq 143 ] || fail "SIGTERM during startup: exit $rc"
# Emptied before the start: the wait below must not see the first run's "corrected".
: >"$TMP/daemon.log"
"$THPGUARDD" --config "$POLICY" --log-target=console 9>&- 2>"$TMP/daemon.log" &
pid=$!
for _ in $(seq 500); do has_event corrected && break; sleep 0.001; done
kill -TERM $pid
rc=0; wait $pid || rc=$?
[ $rc -eq 0 ] || fail "SIGTERM right after the startup apply: exit $rc"
echo PASS
