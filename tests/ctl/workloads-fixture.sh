#!/bin/bash
# thpguardctl workloads on a proc tree made here (--proc-root, as from a pod
# with the host's /proc at /host/proc): processes grouped by Kubernetes
# container, podman container, systemd unit and bare cgroup; THP_enabled: 0
# counted; AnonHugePages summed and sorted; kernel threads and unreadable
# processes left out; a hostile cgroup path escaped in the text and valid
# in the JSON.
. "$(dirname "$0")/lib.sh"

P=$TMP/proc
CID=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
UID_=1b2c3d4e-5f60-7a8b-9c0d-e1f2a3b4c5d6
# proc_entry PID NAME THP_ENABLED ANONHUGE_KB CGROUP [KTHREAD]
proc_entry() {
        mkdir -p "$P/$1"
        printf 'Name:\t%s\nPid:\t%s\nPPid:\t1\nKthread:\t%s\nVmRSS:\t1000 kB\nTHP_enabled:\t%s\n' \
                "$2" "$1" "${6:-0}" "$3" >"$P/$1/status"
        printf '00400000-7fff0000 ---p 00000000 00:00 0  [rollup]\nRss: 1000 kB\nPss: 1000 kB\nAnonHugePages: %s kB\n' "$4" >"$P/$1/smaps_rollup"
        printf '1:name=systemd:%s\n0::%s\n' "$5" "$5" >"$P/$1/cgroup"
}
pod=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_//-/_}.slice
proc_entry 10 java 1 4096 "$pod/cri-containerd-$CID.scope"
proc_entry 11 java 1 2048 "$pod/cri-containerd-$CID.scope"
proc_entry 20 redis 0 0 "/machine.slice/libpod-${CID//0/a}.scope"
proc_entry 21 redis-child 0 0 "/machine.slice/libpod-${CID//0/a}.scope"
proc_entry 30 mongod 1 8192 /system.slice/mongod.service
proc_entry 31 helper 0 0 /system.slice/mongod.service
proc_entry 40 weird 1 0 $'/odd\x1b[31m\xff/path'
proc_entry 50 kworker 1 0 / 1
mkdir -p "$P/60" # gone: no files at all

run "$THPGUARDCTL" workloads --proc-root "$P" --json
expect_rc 0
json_check "$OUT_FILE" \
        "d['proc_root'] == '$P' and d['scanned'] == 9 and d['skipped'] == 2 and d['stalled'] == 0 and d['unread'] == 0" \
        "[w['kind'] for w in d['workloads']] == ['unit', 'container', 'container', 'cgroup']" \
        "d['workloads'][0]['unit'] == 'mongod.service' and d['workloads'][0]['processes'] == 2" \
        "d['workloads'][0]['thp_disabled'] == 1 and d['workloads'][0]['mode'] == 'mixed'" \
        "d['workloads'][0]['anon_huge_pages_kb'] == 8192" \
        "d['workloads'][1]['container_id'] == '$CID' and d['workloads'][1]['pod_uid'] == '$UID_'" \
        "d['workloads'][1]['processes'] == 2 and d['workloads'][1]['anon_huge_pages_kb'] == 6144" \
        "d['workloads'][1]['mode'] == 'inherit'" \
        "d['workloads'][2]['container_id'] == '${CID//0/a}' and d['workloads'][2]['mode'] == 'disable'" \
        "d['workloads'][2]['unit'] == 'libpod-${CID//0/a}.scope' and d['workloads'][2]['thp_disabled'] == 2" \
        "d['workloads'][3]['cgroup'].startswith('/odd') and d['workloads'][3]['processes'] == 1"

run "$THPGUARDCTL" workloads --proc-root "$P"
expect_rc 0
expect_out "^ +2 +1 +8192 mixed +mongod.service$"
expect_out "^ +2 +0 +6144 inherit +container $CID pod $UID_ unit cri-containerd-$CID.scope$"
expect_out "^ +2 +2 +0 disable +container ${CID//0/a} unit libpod-${CID//0/a}.scope$"
expect_out '^ +1 +0 +0 inherit +cgroup /odd\\x1b\[31m\\xff/path$'
expect_no_out $'\x1b'

# status carries the same section.
write_policy "$TMP/policy.conf" <"$CTL_FIXTURES/policy.conf"
run "$THPGUARDCTL" status --proc-root "$P" --sysfs-root "$FIXTURES/6.18" --config "$TMP/policy.conf" --json
json_check "$OUT_FILE" "d['workloads']['workloads'][0]['unit'] == 'mongod.service'"
run "$THPGUARDCTL" status --proc-root "$P" --sysfs-root "$FIXTURES/6.18" --config "$TMP/policy.conf"
expect_out "^Workloads by AnonHugePages \($(re "$P"): 7 processes in 4 workloads"

run "$THPGUARDCTL" workloads --proc-root "$TMP/none"
expect_rc 1
expect_err "^thpguardctl workloads: --proc-root $(re "$TMP/none"): cannot list processes: No such file or directory$"
run "$THPGUARDCTL" workloads --top 3
expect_rc 2
echo PASS
