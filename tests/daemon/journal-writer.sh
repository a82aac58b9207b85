#!/bin/bash
# Every writer field reaches a real journald, whole: a corrected, an audit
# and a failed record of a one-shot writer in a cgroup named like a
# Kubernetes pod's container, read back with journalctl -o json, each
# THPGUARD_WRITER_* field asserted (the container ID included: a record of
# 17 fields once lost its last one to a 16-field cut). Three writers per
# record kind, and one record of each kind must hold every field: the gate
# waits only 1 ms for a writer's command line, and on a busy machine (CI's
# ctest -j2) one record went without it.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin
source "$SRCDIR/tests/lib/journald.sh"
journald_begin
need python3

cg_root=
if [ -f /sys/fs/cgroup/unified/cgroup.procs ]; then
        cg_root=/sys/fs/cgroup/unified # hybrid: cgroup v2 beside the v1 controllers
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
        cg_root=/sys/fs/cgroup
fi
[ -n "$cg_root" ] || skip "no cgroup v2 hierarchy to make a pod's cgroup in"
pod=1b2c3d4e-5f60-7a8b-9c0d-e1f2a3b4c5d6
cid=$(printf '%08x' $RANDOM $RANDOM $RANDOM $RANDOM $RANDOM $RANDOM $RANDOM $RANDOM)
pod_dir=$cg_root/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${pod//-/_}.slice/cri-containerd-$cid.scope
cg_cleanup() {
        local d
        for d in "$pod_dir" "${pod_dir%/*}" "${pod_dir%/*/*}" "${pod_dir%/*/*/*}"; do
                rmdir "$d" 2>/dev/null || true
        done
}
on_exit cg_cleanup
mkdir -p "$pod_dir"

# pod_writer KNOB VALUE: a one-shot sh in the pod's cgroup writes VALUE and exits; its pid.
pod_writer() {
        sh -c "echo \$\$ > $pod_dir/cgroup.procs && echo $2 > $THP/$1" 9>&- &
        local pid=$!
        wait "$pid" || true
        echo "$pid"
}

# own_gate: this test's daemon (or the one its wrapper runs) has its writer gate (not another tree's daemon's).
own_gate() {
        local d
        for d in "$DAEMON_PID" $(child_pids "$DAEMON_PID" thpguardd); do
                [ -n "$(child_pids "$d" thpguardd-gate)" ] && return 0
        done
        return 1
}

# journal_daemon [WRAPPER...]: the daemon with --log-target=journal, once its gate runs.
journal_daemon() {
        "$@" "$THPGUARDD" --config "$POLICY" --log-target=journal --write-source=fanotify 9>&- 2>"$TMP/daemon.log" &
        DAEMON_PID=$!
        wait_until 5 own_gate || fail "no writer gate: $(cat "$TMP/daemon.log")"
        sleep 0.2
}

pids=()
# ---- corrected ----
thp_set enabled madvise
write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0; thp = { enabled = "madvise"; };'
journal_daemon
corrected_pids=
for i in 1 2 3; do
        corrected_pids+=$(pod_writer enabled always),
        thp_wait_for enabled madvise 2 || fail "writer $i: not corrected"
        sleep 0.2
done
pids+=("$DAEMON_PID")
daemon_stop

# ---- audit ----
write_policy "$POLICY" 'mode = "audit"; recheck_interval = 3600; thp = { enabled = "madvise"; };'
journal_daemon
audit_pids=
for value in never always never; do
        audit_pids+=$(pod_writer enabled $value),
        sleep 0.3
done
pids+=("$DAEMON_PID")
daemon_stop
thp_set enabled madvise

# ---- failed: a max_ptes_none the kernel rejects, in a namespace where it passes the policy check ----
fake_pmd_begin
before=$(thp_get khugepaged/max_ptes_none)
write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0; thp = { khugepaged = { max_ptes_none = 1000; }; };'
journal_daemon "${FAKE_PMD_NS[@]}"
other=$((before == 100 ? 101 : 100))
failed_pids=
for value in "$other" $((other + 2)) "$other"; do
        failed_pids+=$(pod_writer khugepaged/max_ptes_none "$value"),
        sleep 0.3
done
# The wrapper execs the daemon: the journal's _PID is the daemon's.
pids+=("$DAEMON_PID")
daemon_stop
thp_set khugepaged/max_ptes_none "$before"
journalctl --flush 2>/dev/null || true

: >"$TMP/entries.json"
for p in "${pids[@]}"; do
        journalctl -o json --no-pager SYSLOG_IDENTIFIER=thpguardd _PID="$p" >>"$TMP/entries.json"
done
python3 - "$TMP/entries.json" "$pod" "$cid" "corrected:$corrected_pids" "audit:$audit_pids" "failed:$failed_pids" <<'PY'
import json, sys
entries = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
pod, cid = sys.argv[2], sys.argv[3]
unit = f"cri-containerd-{cid}.scope"
want = {"THPGUARD_WRITER": unit, "THPGUARD_WRITER_COMM": "sh", "THPGUARD_WRITER_UID": "0",
        "THPGUARD_WRITER_UNIT": unit, "THPGUARD_WRITER_POD_UID": pod,
        "THPGUARD_WRITER_CONTAINER_ID": cid}


def missing(e):
    """What the record e lacks of a whole writer, or [] if nothing."""
    out = [f"{k}={e.get(k)!r}, want {v!r}" for k, v in want.items() if e.get(k) != v]
    if not e.get("THPGUARD_WRITER_CGROUP", "").endswith(f"/{unit}"):
        out.append(f"THPGUARD_WRITER_CGROUP={e.get('THPGUARD_WRITER_CGROUP')!r}")
    if not e.get("THPGUARD_WRITER_CMDLINE", "").startswith("sh -c echo"):
        out.append(f"THPGUARD_WRITER_CMDLINE={e.get('THPGUARD_WRITER_CMDLINE')!r}")
    if "THPGUARD_WRITER_EXITED" in e:
        out.append("the one-shot writer was recorded as exited")
    return out


for spec in sys.argv[4:]:
    result, pids = spec.split(":")
    pids = [p for p in pids.split(",") if p]
    found = [e for e in entries if e.get("THPGUARD_RESULT") == result and e.get("THPGUARD_WRITER_PID") in pids]
    if not found:
        have = [(e.get("THPGUARD_RESULT"), e.get("THPGUARD_WRITER_PID"), e.get("MESSAGE")) for e in entries]
        sys.exit(f"FAIL: no {result} record naming writer pid {pids}; have {have}")
    whole = [e for e in found if not missing(e)]
    if not whole:
        sys.exit(f"FAIL: {result}: none of {len(found)} records holds every writer field: "
                 + "; ".join(f"pid {e.get('THPGUARD_WRITER_PID')}: {', '.join(missing(e))}" for e in found))
    print(f"{result}: every writer field of pid {whole[0]['THPGUARD_WRITER_PID']} is in the journal "
          f"({len(whole)} of {len(found)} records whole)")
PY
echo PASS
