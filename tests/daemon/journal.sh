#!/bin/bash
# The audit trail in a real journald: a real drift on the real sysfs, read
# back with journalctl -o json, every field of the contract asserted.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin
source "$SRCDIR/tests/lib/journald.sh"
journald_begin
need python3

run_id=$RANDOM$RANDOM
thp_set enabled always
write_policy "$POLICY" "recheck_interval = 3600;
thp = { enabled = \"madvise\"; };"
"$THPGUARDD" --config "$POLICY" --log-target=journal 9>&- 2>"$TMP/daemon.log" &
DAEMON_PID=$!
thp_wait_for enabled madvise 2 || fail "startup did not correct"
# The drift below is to name its writer: the write source joins after startup.
source_in_journal() {
        journalctl -o json --no-pager MESSAGE_ID="${MESSAGE_ID[write_source]}" _PID="$DAEMON_PID" 2>/dev/null |
                grep -q .
}
wait_until 10 source_in_journal || fail "no write source entry in the journal within 10 s"
thp_set enabled never
thp_wait_for enabled madvise 1 || fail "inotify did not correct"
# This run's entries only: the journal keeps every earlier run's.
daemon_pid=$DAEMON_PID
daemon_stop
journalctl --flush 2>/dev/null || true

# Nothing went to stderr: everything went to the journal.
[ ! -s "$TMP/daemon.log" ] || { cat "$TMP/daemon.log"; fail "events went to stderr with --log-target=journal"; }

journalctl -o json --no-pager SYSLOG_IDENTIFIER=thpguardd THPGUARD_KNOB=enabled _PID="$daemon_pid" >"$TMP/entries.json"
# The inotify drift was this shell's own write (thp_set): the writer named is us.
python3 - "$TMP/entries.json" "$$" <<'PY'
import json, sys
entries = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
shell_pid = sys.argv[2]
def find(trigger, observed):
    for e in reversed(entries):
        if e.get("THPGUARD_TRIGGER") == trigger and e.get("THPGUARD_OBSERVED") == observed:
            return e
    sys.exit(f"FAIL: no journal entry for trigger={trigger} observed={observed}; have {len(entries)} entries")
for trigger, observed in (("startup", "always"), ("inotify", "never")):
    e = find(trigger, observed)
    message = f"corrected enabled: {observed} -> madvise ({trigger})"
    if trigger == "inotify":
        message = f"corrected enabled: {observed} -> madvise (inotify; written by bash, pid {shell_pid}, "
        if not e.get("MESSAGE", "").startswith(message):
            sys.exit(f"FAIL: MESSAGE={e.get('MESSAGE')!r}, want it to start {message!r}")
        for k, v in (("THPGUARD_WRITER", "bash"), ("THPGUARD_WRITER_PID", shell_pid),
                     ("THPGUARD_WRITER_COMM", "bash"), ("THPGUARD_WRITER_UID", "0")):
            if e.get(k) != v:
                sys.exit(f"FAIL: {k}={e.get(k)!r}, want {v!r}")
        if not e.get("THPGUARD_WRITER_CGROUP", "").startswith("/"):
            sys.exit(f"FAIL: THPGUARD_WRITER_CGROUP={e.get('THPGUARD_WRITER_CGROUP')!r}")
        message = e["MESSAGE"]
    want = {
        "MESSAGE": message,
        "MESSAGE_ID": "5b0a3c7e2f8d4e61a9c4d2b7f1e08a31",
        "PRIORITY": "5",
        "THPGUARD_KNOB": "enabled",
        "THPGUARD_OBSERVED": observed,
        "THPGUARD_DESIRED": "madvise",
        "THPGUARD_TRIGGER": trigger,
        "THPGUARD_RESULT": "corrected",
        "SYSLOG_IDENTIFIER": "thpguardd",
    }
    for k, v in want.items():
        if e.get(k) != v:
            sys.exit(f"FAIL: {k}={e.get(k)!r}, want {v!r}")
    if "THPGUARD_ERRNO" in e:
        sys.exit("FAIL: THPGUARD_ERRNO on a success")
print("journal entries OK")
PY

# Matching by field works as operators will use it. Into a file, not a pipe
# into grep -q: under pipefail, journalctl killed by SIGPIPE would fail it.
journalctl --no-pager -q MESSAGE_ID=5b0a3c7e2f8d4e61a9c4d2b7f1e08a31 THPGUARD_TRIGGER=inotify _PID="$daemon_pid" \
        >"$TMP/matched.txt"
grep -q 'corrected enabled: never -> madvise' "$TMP/matched.txt" ||
        fail "journalctl FIELD=value match found no correction of this run: $(cat "$TMP/matched.txt")"
echo PASS
