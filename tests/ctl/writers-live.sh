#!/bin/bash
# thpguardctl writers against a real journald, started by hand in a mount
# namespace of this test's own (its socket and journal directories on
# tmpfs there, so no other test sees it): a real thpguardd, logging to
# that journal, corrects a drift by a shell and names it; a forged entry
# with thpguardd's MESSAGE_ID and fields, sent as root from another
# executable (python3) through the same socket, is not counted. writers
# says which records it read.
set -euo pipefail
. "$SRCDIR/tests/lib/mount-ns.sh"
own_mount_namespace "$0" "$@"
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/lib/daemon.sh"
journald=
for p in /lib/systemd/systemd-journald /usr/lib/systemd/systemd-journald; do
        [ -x "$p" ] && journald=$p && break
done
[ -n "$journald" ] || skip "no systemd-journald on this machine"
real_sysfs_begin

mkdir -p /run/systemd/journal /run/log/journal /var/log/journal
mount -t tmpfs none /run/systemd/journal
mount -t tmpfs none /run/log/journal
mount -t tmpfs none /var/log/journal
"$journald" >"$TMP/journald.log" 2>&1 &
JOURNALD=$!
on_exit "kill $JOURNALD 2>/dev/null || true"
wait_until 10 test -S /run/systemd/journal/socket || fail "journald did not start: $(cat "$TMP/journald.log")"

thp_set enabled madvise
write_policy "$POLICY" 'recheck_interval = 30; fight_threshold = 0;
thp = { enabled = "madvise"; };'
# --log-target=journal: the records go to this journald; the startup line is waited for there.
"$THPGUARDD" --config "$POLICY" --log-target=journal 9>&- 2>"$TMP/daemon.log" &
DAEMON_PID=$!
on_exit "kill $DAEMON_PID 2>/dev/null || true"
# The write source's line too: it joins after startup, and the drift below is to be named.
wait_until 10 sh -c 'journalctl -q -o cat _PID=$1 >"$2" 2>/dev/null; grep -q "^started" "$2" && grep -q "^write source: " "$2"' \
        _ "$DAEMON_PID" "$TMP/j.txt" ||
        fail "thpguardd did not start: $(cat "$TMP/daemon.log" "$TMP/j.txt")"
# A writer that stays until it has been looked up: echo is the shell's own write.
sh -c "echo always >$THP/enabled; sleep 2"
thp_wait_for enabled madvise 10 || fail "the drift was not corrected"
# The record, by its id and fields (journalctl FIELD=VALUE matches exactly).
wait_until 10 sh -c 'journalctl -q -o cat _PID=$1 MESSAGE_ID=$2 THPGUARD_KNOB=enabled THPGUARD_OBSERVED=always \
        THPGUARD_WRITER=sh >"$3" 2>/dev/null; [ -s "$3" ]' _ "$DAEMON_PID" "${MESSAGE_ID[corrected]}" "$TMP/j.txt" ||
        fail "no correction record naming sh: $(journalctl -q -o cat _PID="$DAEMON_PID")"

# The forgery: root, thpguardd's MESSAGE_ID and fields, from python3.
/usr/bin/python3 - <<'PY'
import socket
msg = b"".join(b"%s=%s\n" % kv for kv in [
    (b"MESSAGE", b"corrected enabled: always -> madvise (inotify; written by forged-live.service)"),
    (b"MESSAGE_ID", b"5b0a3c7e2f8d4e61a9c4d2b7f1e08a31"), (b"PRIORITY", b"5"),
    (b"THPGUARD_KNOB", b"enabled"), (b"THPGUARD_WRITER", b"forged-live.service"),
    (b"THPGUARD_WRITER_PID", b"1"), (b"SYSLOG_IDENTIFIER", b"thpguardd")])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(msg, "/run/systemd/journal/socket")
PY
wait_until 10 sh -c 'journalctl -q -o cat THPGUARD_WRITER=forged-live.service >"$1" 2>/dev/null; [ -s "$1" ]' _ "$TMP/forged.txt" ||
        fail "the forged entry did not reach the journal"
kill "$DAEMON_PID"
wait "$DAEMON_PID" || true

run timeout 10 "$THPGUARDCTL" writers --daemon-exe "$THPGUARDD" --json
expect_rc 0
json_check "$OUT_FILE" 'any(w["writer"] == "sh" for w in d["writers"])' \
        'not any(w["writer"] == "forged-live.service" for w in d["writers"])' \
        '"_EXE=" in d["source"] and "_MACHINE_ID=" in d["source"]'
run timeout 10 "$THPGUARDCTL" writers --daemon-exe "$THPGUARDD"
expect_rc 0
expect_out '^sh: [0-9]+ write\(s\)'
expect_out "^Read: thpguardd's records only: _SYSTEMD_UNIT=thpguardd.service or _EXE=$(re "$THPGUARDD"), with _UID=0 and _MACHINE_ID=[0-9a-f]{32} \(from /etc/machine-id\)"
out | grep -q forged && fail "the forged entry was counted: $(out)"
echo "PASS: thpguardd's own record counted, the forged one not"
