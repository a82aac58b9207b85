#!/bin/bash
# The BPF write probe against real container engines, on the real sysfs:
# a privileged container with a network namespace of its own mounts a sysfs
# of its own, the same kernfs nodes through another superblock (what a
# tuning DaemonSet without hostNetwork writes through). Under podman
# (runc) and under containerd (ctr run --privileged), a write of each
# managed knob from inside must be corrected within 1 s, not at the
# recheck, and its record must name the container: its ID (under
# containerd in a Kubernetes pod's cgroup, as the kubelet's cgroupfs driver
# lays it out, with the pod's UID too), and the writer's network namespace,
# which is not the host's.
# podman and containerd run on storage, state and sockets of this test's
# own, so no other container work on the machine can hold them up.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=../lib/daemon.sh
. "$SRCDIR/tests/lib/daemon.sh"

need runc
need gcc
real_sysfs_begin

podman_private
POD=(podman --runtime runc)
mkdir -p "$TMP/rootfs/proc" "$TMP/rootfs/sys"
gcc -static -O2 -o "$TMP/rootfs/write-knob" "$SRCDIR/tests/container/write-knob.c" 2>"$TMP/gcc.err" ||
        skip "no static C library to build the image's writer: $(head -n2 "$TMP/gcc.err")"
IMAGE=localhost/thpguard-write-knob:test
tar -C "$TMP/rootfs" -c . | "${POD[@]}" import - "$IMAGE" >/dev/null 2>"$TMP/import.err" ||
        fail "podman import: $(cat "$TMP/import.err")"

probe_daemon_start
host_netns=$(stat -Lc %i /proc/self/ns/net)

# check_write ENGINE ID KNOB VALUE DESIRED OUT: the write ENGINE's container ID made, whose
# writer printed "PID NETNS" to OUT, was corrected at once and its record names the container.
check_write() {
        local engine=$1 id=$2 knob=$3 value=$4 desired=$5 netns pod=()
        read -r _ netns <"$6" || fail "$engine: the writer printed nothing: $(cat "$6" "$TMP/err" 2>/dev/null)"
        [ "$netns" != "$host_netns" ] || fail "$engine: the container shares the host's network namespace"
        thp_wait_for "$knob" "$desired" 1 || fail "$engine: $knob=$value from container $id not corrected within 1 s"
        [ -z "${POD_UID:-}" ] || pod=(writer_pod_uid="$POD_UID")
        wait_event 2 corrected knob="$knob" observed="$value" trigger=bpf writer_container_id="$id" \
                writer_netns="$netns" writer_comm=write-knob "${pod[@]}"
}

# ---- podman ----
for kv in enabled:always:madvise defrag:never:madvise khugepaged/defrag:1:0; do
        IFS=: read -r knob value desired <<<"$kv"
        "${POD[@]}" run --rm --privileged --network none "${PODMAN_OPTS[@]:0:4}" \
                --cidfile "$TMP/cid" "$IMAGE" /write-knob "/sys/kernel/mm/transparent_hugepage/$knob" "$value" \
                >"$TMP/out" 2>"$TMP/err" || fail "podman run: $(cat "$TMP/err")"
        check_write podman "$(cat "$TMP/cid")" "$knob" "$value" "$desired" "$TMP/out"
        rm -f "$TMP/cid"
done
echo "podman --privileged, own network namespace: every knob corrected at once, the container named"

# ---- containerd ----
if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null; then
        echo "containerd or ctr missing: the containerd half is not run" >&2
        exit 0
fi
CTD=$TMP/containerd
SOCK=$CTD/containerd.sock
mkdir -p "$CTD"
printf 'version = 2\n' >"$CTD/config.toml"
# Without fd 9: it would hold the real-sysfs lock for as long as it runs.
containerd --config "$CTD/config.toml" --root "$CTD/root" --state "$CTD/state" --address "$SOCK" >"$CTD/log" 2>&1 9>&- &
CTD_PID=$!
on_exit "terminate $CTD_PID"
CTR=(timeout -k 10 120 ctr --address "$SOCK" --namespace thpguard-test)
wait_until 30 "${CTR[@]}" version >/dev/null 2>&1 ||
        fail "containerd did not answer on $SOCK within 30 s: $(tail -n5 "$CTD/log")"
"${POD[@]}" save "$IMAGE" -o "$TMP/image.tar" >/dev/null 2>"$TMP/err" || fail "podman save: $(cat "$TMP/err")"
"${CTR[@]}" images import "$TMP/image.tar" >/dev/null 2>"$TMP/err" || fail "ctr images import: $(cat "$TMP/err")"
POD_UID=$(cat /proc/sys/kernel/random/uuid)
for kv in enabled:always:madvise defrag:never:madvise khugepaged/defrag:1:0; do
        IFS=: read -r knob value desired <<<"$kv"
        id=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
        # Without --net-host, ctr gives the task a network namespace of its own.
        "${CTR[@]}" run --rm --privileged --runc-binary "$(command -v runc)" \
                --cgroup "/kubepods/besteffort/pod$POD_UID/$id" "$IMAGE" "$id" \
                /write-knob "/sys/kernel/mm/transparent_hugepage/$knob" "$value" >"$TMP/out" 2>"$TMP/err" 9>&- ||
                fail "ctr run: $(cat "$TMP/err")"
        check_write containerd "$id" "$knob" "$value" "$desired" "$TMP/out"
done
echo "ctr run --privileged, own network namespace: every knob corrected at once, the pod and container named"
