# writers and status --journal-dir against real journal files: systemd-journal-remote
# makes them from export format, with timestamps 20 min to 30 h ago, forged entries
# (another uid, another MESSAGE_ID, root from another executable and unit, root
# from thpguardd's executable on another machine) and hostile bytes, and a second
# machine's directory beside this one's, which must not be read. Counts, grouping,
# --since, --json, the selection said, and the one line when there is no journal.
# status's write source: the latest startup record, however old, never a forged one.
. "$(dirname "$0")/lib.sh"
C=$THPGUARDCTL

remote=
for p in /lib/systemd/systemd-journal-remote /usr/lib/systemd/systemd-journal-remote; do
        [ -x "$p" ] && remote=$p && break
done
[ -n "$remote" ] || skip "systemd-journal-remote not found (Debian package systemd-journal-remote)"

now=$(date +%s)
MID=0123456789abcdef0123456789abcdef
OTHER=fedcba9876543210fedcba9876543210
mkdir -p "$TMP/journal/$MID" "$TMP/journal/$OTHER" "$TMP/empty/$MID"
# Export format (systemd's JOURNAL_EXPORT_FORMATS): KEY=value lines, or for a value
# with a newline or other control bytes KEY, a little-endian 64-bit length, the bytes.
# entry() collects, write() puts them out oldest first, as a journal holds them (a
# seek by time bisects).
cat >"$TMP/export.py" <<'PY'
import struct, sys
now = int(sys.argv[1]) * 1000000
MID, OTHER = sys.argv[2].encode(), sys.argv[3].encode()
H, M = 3600 * 1000000, 60 * 1000000
CORRECTED = "5b0a3c7e2f8d4e61a9c4d2b7f1e08a31"
FAILED = "c3e9174a6b2d48f0b5a18e6d9f2c7b04"
AUDIT = "8d41f6b29e0c4a7d93b5e2a1c6f8d057"
FIGHT = "47d9e2c1a8b64f05b3e7d0a9c5f2e196"
RELOADED = "1f7c2e94d5a84b36b0e9c3a7d2f6e418"
WRITE_SOURCE = "b35413fac67548eb8690c045cb4c2b7f"
entries = []
# By default thpguardd under its unit on this machine; exe/unit/machine say otherwise.
def entry(ago, msgid, uid=b"0", exe=b"/usr/sbin/thpguardd", unit=b"thpguardd.service", machine=MID, **f):
    fields = [(b"_BOOT_ID", b"0123456789abcdef0123456789abcdef"), (b"_UID", uid), (b"_COMM", b"thpguardd"),
              (b"_MACHINE_ID", machine), (b"_EXE", exe), (b"MESSAGE_ID", msgid.encode())]
    if unit:
        fields.append((b"_SYSTEMD_UNIT", unit))
    fields += [(b"THPGUARD_" + k.upper().encode(), v if isinstance(v, bytes) else str(v).encode())
               for k, v in f.items()]
    entries.append((now - ago, fields))
def write():
    out = sys.stdout.buffer
    for seq, (t, fields) in enumerate(sorted(entries, key=lambda e: e[0]), 1):
        fields = [(b"__REALTIME_TIMESTAMP", b"%d" % t), (b"__MONOTONIC_TIMESTAMP", b"%d" % seq),
                  (b"MESSAGE", b"test entry %d" % seq)] + fields
        for k, v in fields:
            if any(c < 0x20 or c >= 0x7f for c in v):
                out.write(k + b"\n" + struct.pack("<Q", len(v)) + v + b"\n")
            else:
                out.write(k + b"=" + v + b"\n")
        out.write(b"\n")
PY
PYTHONPATH=$TMP python3 - "$now" "$MID" "$OTHER" >"$TMP/in.export" <<'PY'
from export import *
tuned = dict(writer="tuned.service", writer_comm="tuned", writer_exe="/usr/sbin/tuned",
             writer_unit="tuned.service", writer_uid=0, writer_cgroup="/system.slice/tuned.service")
entry(30 * H, CORRECTED, knob="enabled", writer="old-agent.service", writer_pid=99)
entry(3 * H, CORRECTED, knob="enabled", writer_pid=812, **tuned)
# A pod's daemon: its unit is the container's scope; its executable and machine say it is ours.
entry(2 * H, CORRECTED, unit=b"cri-containerd-0123abcd.scope", knob="defrag", writer_pid=813, **tuned)
entry(90 * M, FAILED, knob="hugepages-2048kB/enabled")  # writer unknown
entry(60 * M, AUDIT, knob="enabled", writer="cri-containerd-abc123.scope", writer_pid=4000, writer_comm="sh",
      writer_unit="cri-containerd-abc123.scope", writer_pod_uid="0c1d2e3f-aaaa-bbbb-cccc-123456789012",
      writer_container_id="abc123")
entry(50 * M, FIGHT, knob="enabled", writer_pid=812, **tuned)
entry(40 * M, CORRECTED, knob="khugepaged/defrag", writer=b"evil\x1b[31m\n\xff", writer_pid=666,
      writer_comm=b"ev\x01il")
entry(20 * M, CORRECTED, knob="defrag", writer="pid 4242", writer_pid=4242, writer_exited=1)
# Not ours to count: sent by another user, another MESSAGE_ID.
entry(30 * M, CORRECTED, uid=b"1000", knob="enabled", writer="forged.service", writer_pid=1)
entry(30 * M, RELOADED, knob="enabled", writer="reload.service", writer_pid=1)
# Root, from another executable in a container's scope (a log relay, a root container
# with the journal socket): not thpguardd's.
entry(30 * M, CORRECTED, exe=b"/usr/bin/python3", unit=b"cri-containerd-feed.scope", knob="enabled",
      writer="container-root-forged.service", writer_pid=1)
# thpguardd's unit and executable, but another machine's entry (forwarded into this file).
entry(30 * M, CORRECTED, machine=OTHER, knob="enabled", writer="other-machine.service", writer_pid=1)
# The write source, logged at each start: the latest of thpguardd's counts, however old;
# a forged value, and what another user, executable or machine sent, do not, later as they are.
entry(30 * H, WRITE_SOURCE, write_source="fanotify")
entry(2 * H, WRITE_SOURCE, write_source="bpf")
entry(15 * M, WRITE_SOURCE, write_source=b"evil\x1b")
entry(14 * M, WRITE_SOURCE, write_source="auto")
entry(10 * M, WRITE_SOURCE, uid=b"1000", write_source="none")
entry(10 * M, WRITE_SOURCE, exe=b"/usr/bin/python3", unit=b"cri-containerd-feed.scope", write_source="none")
entry(10 * M, WRITE_SOURCE, machine=OTHER, write_source="none")
# The field on another record of ours, or its MESSAGE_ID with the wrong field.
entry(8 * M, RELOADED, write_source="none")
entry(7 * M, WRITE_SOURCE, writer="none")
write()
PY
# A daemon that started more than 24 h ago: its record is before the foreign writes
# status reads (a forged one after it skipped, an older one not reached).
PYTHONPATH=$TMP python3 - "$now" "$MID" "$OTHER" >"$TMP/old-start.export" <<'PY'
from export import *
entry(50 * H, WRITE_SOURCE, write_source="bpf")
entry(30 * H, WRITE_SOURCE, write_source="none")
entry(29 * H, CORRECTED, knob="enabled", writer="old-agent.service", writer_pid=99)
entry(26 * H, WRITE_SOURCE, write_source=b"bpf\n")
entry(25 * H, WRITE_SOURCE, uid=b"1000", write_source="fanotify")
entry(1 * H, CORRECTED, knob="enabled", writer="tuned.service", writer_pid=812)
write()
PY
# Another machine's journal beside this one's: real thpguardd entries, never to be read.
python3 - "$now" "$OTHER" >"$TMP/other.export" <<'PY'
import sys
now = int(sys.argv[1]) * 1000000
print("__REALTIME_TIMESTAMP=%d\n__MONOTONIC_TIMESTAMP=1\n_BOOT_ID=0123456789abcdef0123456789abcdef\n"
      "_UID=0\n_MACHINE_ID=%s\n_SYSTEMD_UNIT=thpguardd.service\n_EXE=/usr/sbin/thpguardd\n"
      "MESSAGE=other machine\nMESSAGE_ID=5b0a3c7e2f8d4e61a9c4d2b7f1e08a31\nTHPGUARD_KNOB=enabled\n"
      "THPGUARD_WRITER=container-journal.service\n" % (now - 600 * 1000000, sys.argv[2]))
PY
"$remote" -o "$TMP/journal/$MID/remote.journal" - <"$TMP/in.export" >"$TMP/remote.log" 2>&1 ||
        fail "systemd-journal-remote failed: $(cat "$TMP/remote.log")"
"$remote" -o "$TMP/journal/$OTHER/remote.journal" - <"$TMP/other.export" >"$TMP/remote.log" 2>&1 ||
        fail "systemd-journal-remote failed: $(cat "$TMP/remote.log")"
mkdir -p "$TMP/old-start/$MID"
"$remote" -o "$TMP/old-start/$MID/remote.journal" - <"$TMP/old-start.export" >"$TMP/remote.log" 2>&1 ||
        fail "systemd-journal-remote failed: $(cat "$TMP/remote.log")"
journalctl -D "$TMP/journal" -q -o cat >"$TMP/readback-all.txt" 2>/dev/null || true
grep -q 'other machine' "$TMP/readback-all.txt" || fail "journalctl does not read back the other machine's file"
# Into a file, not a pipe into grep -q: under pipefail, journalctl killed by SIGPIPE would fail it.
journalctl -D "$TMP/journal/$MID" -q -o cat >"$TMP/readback.txt" 2>/dev/null || true
grep -q 'test entry 12' "$TMP/readback.txt" ||
        fail "journalctl does not read back what systemd-journal-remote wrote"

J=(--journal-dir "$TMP/journal" --machine-id "$MID" --daemon-exe /usr/sbin/thpguardd)

# writers, default since (24 h): six foreign writes, one fight warning, five writers.
run timeout 10 "$C" writers "${J[@]}" --json
expect_rc 0
cp "$OUT_FILE" "$TMP/writers.json"
python3 - "$TMP/writers.json" "$now" "$MID" <<'PY' || fail "writers --json"
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
now = int(sys.argv[2]) * 1000000
w = {x["writer"]: x for x in d["writers"]}
def check(cond, what):
    if not cond:
        print("writers --json: " + what, file=sys.stderr)
        print(json.dumps(d, indent=1), file=sys.stderr)
        sys.exit(1)
check(d["count"] == 6 and d["fight_warnings"] == 1 and d["writer_unknown"] == 1, "totals")
check(abs(d["since_usec"] - (now - 24 * 3600 * 1000000)) < 600 * 1000000, "since: 24 h ago")
check(sorted(w, key=str) == sorted(["tuned.service", "cri-containerd-abc123.scope", None,
                                    "evil\\x1b[31m\\x0a\\xff", "pid 4242"], key=str), "writers: %s" % list(w))
check(d["writers"][0]["writer"] == "tuned.service", "the most writes first")
t = w["tuned.service"]
check(t["count"] == 2 and t["fight_warnings"] == 1, "tuned counts")
check(t["knobs"] == ["defrag", "enabled"] and not t["knobs_truncated"], "tuned knobs")
check(t["last_pid"] == 812 and t["unit"] == "tuned.service" and t["exe"] == "/usr/sbin/tuned", "tuned last")
check(now - t["first_usec"] > 3 * 3600 * 1000000 - 1 and t["last_usec"] - t["first_usec"] == (180 - 50) * 60 * 1000000,
      "tuned first/last")
check(t["last"].endswith("Z") and t["pod_uid"] is None, "tuned time and pod")
p = w["cri-containerd-abc123.scope"]
check(p["pod_uid"] == "0c1d2e3f-aaaa-bbbb-cccc-123456789012" and p["container_id"] == "abc123"
      and p["last_pid"] == 4000 and p["knobs"] == ["enabled"], "pod writer")
u = w[None]
check(u["count"] == 1 and u["knobs"] == ["hugepages-2048kB/enabled"] and u["last_pid"] is None, "unknown writer")
e = w["evil\\x1b[31m\\x0a\\xff"]
check(e["comm"] == "ev\\x01il" and e["knobs"] == ["khugepaged/defrag"], "hostile writer")
x = w["pid 4242"]
check(x["last_exited"] is True and x["last_pid"] == 4242, "exited writer")
check(d["other"] is None, "no other")
check("_MACHINE_ID=" + sys.argv[3] in d["source"] and "_EXE=/usr/sbin/thpguardd" in d["source"], "source: %s" % d["source"])
check(not any(k.startswith("write_source") for k in d), "writers says nothing of the write source")
PY

# Text: the same groups, printable only.
run timeout 10 "$C" writers "${J[@]}"
expect_rc 0
grep -q '^Foreign writes since .*: 6 by 5 writer(s), 1 writer-fight warning(s)$' "$OUT_FILE" || fail "text summary: $(cat "$OUT_FILE")"
grep -q '^tuned.service: 2 write(s), 1 fight warning(s); knobs defrag, enabled$' "$OUT_FILE" || fail "text tuned: $(cat "$OUT_FILE")"
grep -q '^  pod 0c1d2e3f-aaaa-bbbb-cccc-123456789012, container abc123$' "$OUT_FILE" || fail "text pod: $(cat "$OUT_FILE")"
grep -q 'by pid 4242 (exited)' "$OUT_FILE" || fail "text exited: $(cat "$OUT_FILE")"
grep -qF 'evil\x1b[31m\x0a\xff: 1 write(s); knobs khugepaged/defrag' "$OUT_FILE" || fail "text hostile: $(cat "$OUT_FILE")"
LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f-\xff]' "$OUT_FILE" && fail "text output holds non-printable bytes"
grep -qE 'forged|reload|old-agent|other-machine|container-journal' "$OUT_FILE" && fail "counted what it should not: $(cat "$OUT_FILE")"
grep -qi 'write source' "$OUT_FILE" && fail "writers says the write source: $(cat "$OUT_FILE")"
grep -q "^Read: thpguardd's records only: _SYSTEMD_UNIT=thpguardd.service or _EXE=/usr/sbin/thpguardd, with _UID=0 and _MACHINE_ID=$MID (from --machine-id), in $(re "$TMP/journal/$MID")\$" "$OUT_FILE" ||
        fail "text: how the records were chosen: $(cat "$OUT_FILE")"
# The machine ID from a file (a pod: the host's /etc/machine-id mounted), and the
# machine's own directory named directly.
echo "$MID" >"$TMP/machine-id"
run timeout 10 "$C" writers --journal-dir "$TMP/journal/$MID" --machine-id "$TMP/machine-id" --daemon-exe /usr/sbin/thpguardd --json
expect_rc 0
json_check "$OUT_FILE" 'd["count"] == 6'
# Another machine's ID: only its directory, and only its entries.
run timeout 10 "$C" writers --journal-dir "$TMP/journal" --machine-id "$OTHER" --daemon-exe /usr/sbin/thpguardd --json
expect_rc 0
json_check "$OUT_FILE" 'd["count"] == 1' 'd["writers"][0]["writer"] == "container-journal.service"'
# No directory for this machine: said, nothing read.
run timeout 10 "$C" writers --journal-dir "$TMP/journal" --machine-id 00000000000000000000000000000000
expect_rc 3
grep -q 'has no directory for this machine (00000000000000000000000000000000).*other machines. journals are not read' "$ERR_FILE" ||
        fail "writers, no directory for this machine: $(cat "$ERR_FILE")"
run timeout 10 "$C" writers --journal-dir "$TMP/journal" --machine-id nonsense
expect_rc 1
grep -q -- '--machine-id nonsense: neither 32 hex digits nor an absolute file name' "$ERR_FILE" || fail "bad --machine-id: $(cat "$ERR_FILE")"

# --since: relative and absolute (local time, as date prints it) reach the entry of 30 h ago.
run timeout 10 "$C" writers "${J[@]}" --since -2d --json
expect_rc 0
json_check "$OUT_FILE" 'd["count"] == 7' 'any(w["writer"] == "old-agent.service" for w in d["writers"])'
run timeout 10 "$C" writers "${J[@]}" --since "$(date -d "@$((now - 31 * 3600))" '+%Y-%m-%d %H:%M')" --json
expect_rc 0
json_check "$OUT_FILE" 'd["count"] == 7'
run timeout 10 "$C" writers "${J[@]}" --since "$(date -d "@$((now - 29 * 3600))" '+%Y-%m-%d %H:%M:%S')" --json
expect_rc 0
json_check "$OUT_FILE" 'd["count"] == 6'
run timeout 10 "$C" writers "${J[@]}" --since -45min --json
expect_rc 0
json_check "$OUT_FILE" 'd["count"] == 2 and d["fight_warnings"] == 0' \
        'sorted(w["writer"] for w in d["writers"]) == ["evil\\x1b[31m\\x0a\\xff", "pid 4242"]'
run timeout 10 "$C" writers "${J[@]}" --since -1s
expect_rc 0
grep -q ': none$' "$OUT_FILE" || fail "nothing in the last second: $(cat "$OUT_FILE")"
for bad in yesterday -24 24h 2025-02-30 '2025-01-01 25:00'; do
        run timeout 10 "$C" writers "${J[@]}" --since "$bad"
        expect_rc 2
        grep -qF -- "--since '$bad': expected" "$ERR_FILE" || fail "--since $bad: $(cat "$ERR_FILE")"
done
run timeout 10 "$C" writers --top 3
expect_rc 2
run timeout 10 "$C" status --since -1h
expect_rc 2
run timeout 10 "$C" pid 1 --journal-dir /tmp
expect_rc 2

# status: per managed knob, from the same journal. The policy is copied out of
# the tree, which may sit under a mode-1777 directory that thpguardctl refuses.
write_policy "$TMP/policy.conf" <"$CTL_FIXTURES/policy.conf"
S=(--sysfs-root "$FIXTURES/6.18" --proc-root "$CTL_FIXTURES/proc-wrap" --config "$TMP/policy.conf")
run timeout 10 "$C" status "${S[@]}" "${J[@]}" --json
expect_rc 0
cp "$OUT_FILE" "$TMP/status.json"
json_check "$OUT_FILE" \
        'd["foreign_writes"]["available"] and d["foreign_writes"]["count"] == 6 and d["foreign_writes"]["hours"] == 24' \
        'knob(d, "enabled")["foreign_writes"]["count"] == 2 and knob(d, "enabled")["foreign_writes"]["fight_warnings"] == 1' \
        'knob(d, "enabled")["foreign_writes"]["last_writer"] == "cri-containerd-abc123.scope"' \
        'knob(d, "enabled")["foreign_writes"]["last_writer_pid"] == 4000' \
        'knob(d, "defrag")["foreign_writes"]["count"] == 2 and knob(d, "defrag")["foreign_writes"]["last_writer"] == "pid 4242"' \
        'knob(d, "defrag")["foreign_writes"]["last_writer_exited"] is True' \
        'knob(d, "hugepages-2048kB/enabled")["foreign_writes"]["count"] == 1' \
        'knob(d, "hugepages-2048kB/enabled")["foreign_writes"]["last_writer"] is None' \
        'knob(d, "shmem_enabled")["foreign_writes"]["count"] == 0' \
        'knob(d, "enabled")["state"] == "compliant"'
run timeout 10 "$C" status "${S[@]}" "${J[@]}"
expect_rc 0
sed -n '/^Foreign writes in the last 24 h/,/^$/p' "$OUT_FILE" >"$TMP/section"
grep -qE '^  enabled +2 +1  [0-9-]+ [0-9:]+  cri-containerd-abc123.scope \(pid 4000\)$' "$TMP/section" ||
        fail "status text, enabled: $(cat "$OUT_FILE")"
grep -qE '^  defrag +2 +0  [0-9-]+ [0-9:]+  pid 4242 \(exited\)$' "$TMP/section" ||
        fail "status text, defrag: $(cat "$TMP/section")"
grep -qE '^  hugepages-2048kB/enabled +1 +0  [0-9-]+ [0-9:]+  unknown$' "$TMP/section" ||
        fail "status text, unknown: $(cat "$TMP/section")"
# Managed and not written: a row of zeros. Unmanaged and not written: no row.
grep -qE '^  hugepages-8kB/enabled +0 +0  -  +-$' "$TMP/section" || fail "status text, zeros: $(cat "$TMP/section")"
grep -qE '^  shmem_enabled ' "$TMP/section" && fail "status lists an unmanaged knob nobody wrote"
grep -q '^  1 of 6 writes without a writer' "$TMP/section" || fail "status text, unknown count: $(cat "$TMP/section")"

# The write source: thpguardd's latest startup record (2 h ago), not the forged value
# after it, nor what another user, executable or machine sent later still.
json_check "$TMP/status.json" 'd["write_source"] == "bpf"' \
        "d[\"write_source_since_usec\"] == $(((now - 2 * 3600) * 1000000))" \
        "d[\"write_source_since\"] == \"$(date -u -d "@$((now - 2 * 3600))" '+%Y-%m-%dT%H:%M:%SZ')\""
[ "$(grep -c 'write source' "$OUT_FILE")" = 1 ] || fail "status text, write source: $(cat "$OUT_FILE")"
grep -q "^  write source: bpf (since $(date -d "@$((now - 2 * 3600))" '+%Y-%m-%d %H:%M:%S'))\$" "$TMP/section" ||
        fail "status text, write source: $(cat "$TMP/section")"
# Started 30 h ago: found before the 24 h of foreign writes, past a forged record and another user's.
run timeout 10 "$C" status "${S[@]}" --journal-dir "$TMP/old-start" --machine-id "$MID" --daemon-exe /usr/sbin/thpguardd --json
expect_rc 0
json_check "$OUT_FILE" 'd["write_source"] == "none"' "d[\"write_source_since_usec\"] == $(((now - 30 * 3600) * 1000000))" \
        'd["foreign_writes"]["count"] == 1'
run timeout 10 "$C" status "${S[@]}" --journal-dir "$TMP/old-start" --machine-id "$MID" --daemon-exe /usr/sbin/thpguardd
expect_rc 0
grep -q "^  write source: none (since $(date -d "@$((now - 30 * 3600))" '+%Y-%m-%d %H:%M:%S'))\$" "$OUT_FILE" ||
        fail "status text, write source of an old start: $(cat "$OUT_FILE")"
# A journal of thpguardd's without one (the other machine's: its own records only).
run timeout 10 "$C" status "${S[@]}" --journal-dir "$TMP/journal" --machine-id "$OTHER" --daemon-exe /usr/sbin/thpguardd --json
expect_rc 0
json_check "$OUT_FILE" 'd["write_source"] is None and d["write_source_since"] is None' 'd["foreign_writes"]["count"] == 1'
run timeout 10 "$C" status "${S[@]}" --journal-dir "$TMP/journal" --machine-id "$OTHER" --daemon-exe /usr/sbin/thpguardd
expect_rc 0
grep -q '^  write source: unknown (no startup record in the journal)$' "$OUT_FILE" ||
        fail "status text, no write-source record: $(cat "$OUT_FILE")"

# No journal: status says so in one line and goes on; writers exits 3.
run timeout 10 "$C" status "${S[@]}" --journal-dir "$TMP/empty" --machine-id "$MID"
expect_rc 0
[ "$(grep -c 'no systemd journal' "$OUT_FILE")" = 1 ] || fail "status without a journal: $(cat "$OUT_FILE")"
grep -q "^Foreign writes: no systemd journal on this node: no journal file in $TMP/empty/$MID (in a pod, mount the host's /var/log/journal and pass --journal-dir)$" "$OUT_FILE" ||
        fail "status without a journal: $(cat "$OUT_FILE")"
grep -q '^Top processes by AnonHugePages' "$OUT_FILE" || fail "status stopped at the journal"
grep -q '^  write source: unknown (no journal to read it from)$' "$OUT_FILE" || fail "status without a journal, write source: $(cat "$OUT_FILE")"
run timeout 10 "$C" status "${S[@]}" --journal-dir "$TMP/empty" --machine-id "$MID" --json
expect_rc 0
json_check "$OUT_FILE" 'd["foreign_writes"]["available"] is False' 'd["foreign_writes"]["error"].startswith("no systemd journal on this node")' \
        'all(k["foreign_writes"] is None for k in d["knobs"])' 'd["write_source"] is None'
run timeout 10 "$C" writers --journal-dir "$TMP/empty" --machine-id "$MID"
expect_rc 3
[ "$(wc -l <"$ERR_FILE")" = 1 ] && grep -q '^thpguardctl writers: no systemd journal on this node: ' "$ERR_FILE" ||
        fail "writers without a journal: $(cat "$ERR_FILE")"
run timeout 10 "$C" writers --journal-dir "$TMP/missing"
expect_rc 1
grep -q "missing: No such file or directory" "$ERR_FILE" || fail "writers --journal-dir missing: $(cat "$ERR_FILE")"

# A node without /run/log/journal and /var/log/journal: hidden in a mount namespace of our own.
if unshare -m true 2>/dev/null; then
        run timeout 10 unshare -m sh -c \
                'mount -t tmpfs none /run && mount -t tmpfs none /var/log && exec "$0" writers' "$C"
        expect_rc 3
        grep -q 'no systemd journal on this node: neither /run/log/journal nor /var/log/journal exists (in a pod' "$ERR_FILE" ||
                fail "writers on a node without a journal: $(cat "$ERR_FILE")"
else
        echo "note: unshare -m not permitted; the node without a journal directory is not covered"
fi
echo ok
