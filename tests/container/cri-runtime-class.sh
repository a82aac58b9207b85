#!/bin/bash
# RuntimeClass through the CRI, as the kubelet drives it, on Debian's
# containerd with its CRI plugin, started by hand on a root, state and
# socket of its own, on the real THP sysfs at enabled=always:
#  1. a node's config.toml (its own runc handler, a sandbox image, CNI
#     directories, restrict_oom_score_adj) wired as README.md says:
#     thpguard-containerd-config install (check agrees); the CRI plugin loads;
#  2. the pause and toucher images, built here, imported with
#     `ctr -n k8s.io images import`; the CRI image service has them;
#  3. thpguardd holds enabled=always and keeps the NFD feature file: the
#     README's nodeAffinity example for `always` selects this node by its
#     labels (thpguard.io/enabled, thpguard.io/compliant), the one for
#     madvise does not;
#  4. one host-network pod (RunPodSandbox with runtime_handler, then
#     CreateContainer and StartContainer, tests/container/cri-client.py)
#     on each handler, each running a toucher of 256 MiB with and 256 MiB
#     without MADV_HUGEPAGE: the default handler gets huge pages in both
#     (at least 200 MB each), thp-disable reads THP_enabled 0 with 0 kB,
#     thp-advised-only has huge pages only in its MADV_HUGEPAGE region; a
#     process exec'd into each (ExecSync) has the pod's mode;
#  5. a handler containerd does not have: RunPodSandbox fails with
#     containerd's own error (the one README.md quotes).
# Everything it started is gone at exit: pods, containerd, its shims, their
# cgroups and mounts, and nothing holds the real-sysfs lock.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=../lib/daemon.sh
. "$SRCDIR/tests/lib/daemon.sh"

need containerd
need ctr
need runc
python_with grpc python3-grpcio
python_with grpc_tools python3-grpc-tools
python_with yaml python3-yaml
podman_private

ID=$$-$RANDOM
CTD=$TMP/ctd
SOCK=$CTD/containerd.sock
PODS=$TMP/pods
: >"$PODS"
PAUSE=localhost/thpguard-cri-pause:$ID
TOUCHER=localhost/thpguard-cri-toucher:$ID
# The pods' cgroups (cgroupfs, as the kubelet's cgroup_parent /kubepods/...) are under this, in every hierarchy.
CGROUP_TOP=thpguard-ctest-cri-$ID
mkdir -p "$CTD/cni/bin" "$CTD/cni/net.d" "$CTD/opt" "$TMP/logs"

# The CRI client's stubs, generated from the test's CRI v1 proto.
mkdir -p "$TMP/stubs"
"$PY" -m grpc_tools.protoc -I "$SRCDIR/tests/container" --python_out="$TMP/stubs" --grpc_python_out="$TMP/stubs" \
        "$SRCDIR/tests/container/cri-api.proto" 2>"$TMP/protoc.err" || fail "grpc_tools.protoc: $(cat "$TMP/protoc.err")"
# cri CMD ARGS...: the CRI client on this test's socket (each call bounded: CRI_SECONDS).
cri() {
        timeout -k 5 120 "$PY" "$SRCDIR/tests/container/cri-client.py" "$SOCK" "$TMP/stubs" "$@" 9>&-
}

# 1. The node's config.toml, wired by the command README.md gives.
cat >"$CTD/config.toml" <<EOF
version = 2

[plugins."io.containerd.internal.v1.opt"]
  path = "$CTD/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE"
  # This machine's root may lack CAP_SYS_RESOURCE: no sandbox at -998 (MACHINE-FACTS).
  restrict_oom_score_adj = true
  # Loopback, and a port of the kernel's choosing: no fixed port another run could hold.
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CTD/cni/bin"
    conf_dir = "$CTD/cni/net.d"
EOF
CONTAINERD_CONFIG=$BUILDDIR/packaging/runtime/containerd/thpguard-containerd-config
run "$CONTAINERD_CONFIG" install --config "$CTD/config.toml" --containerd "$(command -v containerd)" --shim-dir "$SHIMDIR"
expect_rc 0 "thpguard-containerd-config install ($(err))"
cat "$OUT_FILE"
run "$CONTAINERD_CONFIG" check --config "$CTD/config.toml" --containerd "$(command -v containerd)" --shim-dir "$SHIMDIR"
expect_rc 0 "thpguard-containerd-config check after install ($(err))"

# Images: /thp-helper (static) alone; the pause image runs `thp-helper pause`.
shim_image "$TOUCHER"
tar -C "$TMP/rootfs" -c . | podman import --change 'CMD ["/thp-helper", "pause"]' - "$PAUSE" >/dev/null 2>"$TMP/import.err" ||
        fail "podman import of the pause image: $(cat "$TMP/import.err")"
# image_tar IMAGE: where IMAGE is saved.
image_tar() { local n=${1##*/}; echo "$TMP/${n%%:*}.tar"; }
for img in "$PAUSE" "$TOUCHER"; do
        podman save "$img" -o "$(image_tar "$img")" 2>"$TMP/save.err" || fail "podman save $img: $(cat "$TMP/save.err")"
done

real_sysfs_begin
thp_set enabled always
[ -f "$THP/hugepages-2048kB/enabled" ] && thp_set hugepages-2048kB/enabled inherit

# Cleanups, in the order they run: the pods while containerd runs, then
# containerd, then whatever of its shims and containers outlived it (a
# failure: they are killed), their cgroups and mounts.
# ours: every process that is this test's containerd's: below its state (a
# shim, in its bundle) or in one of the pods' cgroups (a container's). Only
# these are ever killed: another run's test may be waiting for the lock.
ours() {
        local p cwd
        for p in /proc/[0-9]*; do
                p=${p#/proc/}
                cwd=$(readlink "/proc/$p/cwd" 2>/dev/null) || continue
                if [[ $cwd == "$CTD/"* ]] || grep -qs ":/$CGROUP_TOP/" "/proc/$p/cgroup"; then
                        echo "$p"
                fi
        done
}
# holds_lock PID: PID has the real-sysfs lock file open (inherited fd 9).
holds_lock() {
        find "/proc/$1/fd" -maxdepth 1 -lname "$(readlink -f "$THP_LOCK")" 2>/dev/null | grep -q .
}
# seen_alive: a process ours() listed while the pods ran is still there
# (same pid, same start time): the shims exit on their own once their pod is
# removed, a little after RemovePodSandbox returns.
seen_alive() {
        local p start
        while read -r p start; do
                [ "$(start_time "$p")" != "$start" ] || return 0
        done <"$TMP/seen"
        return 1
}
# start_time PID: its start time (field 22 of /proc/PID/stat), nothing once it is gone (pure bash: polled).
start_time() {
        local line f
        { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 0
        read -ra f <<<"${line##*) }"
        echo "${f[19]}"
}
none_seen_alive() { ! seen_alive; }
: >"$TMP/seen"
cleanup_rest() {
        local p left m
        wait_until 10 none_seen_alive 2>/dev/null || true
        left=$( (ours; while read -r p m; do
                [ "$(start_time "$p")" != "$m" ] || echo "$p"
        done <"$TMP/seen") | sort -u)
        for p in $left; do
                echo "WARNING: left behind: pid $p ($(cat "/proc/$p/comm" 2>/dev/null)), killed" >&2
                kill -KILL "$p" 2>/dev/null || true
        done
        [ -z "$left" ] || TEST_RC=1
        for p in $left; do
                wait_until 5 test ! -e "/proc/$p" 2>/dev/null || echo "WARNING: pid $p is still there after SIGKILL" >&2
        done
        for m in $(awk -v d="$TMP/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
                umount -l "$m" 2>/dev/null || true
        done
        find /sys/fs/cgroup -depth -type d -path "*/$CGROUP_TOP*" -exec rmdir {} + 2>/dev/null || true
        if find /sys/fs/cgroup -type d -name "$CGROUP_TOP" 2>/dev/null | grep -q .; then
                echo "WARNING: cgroups left: $(find /sys/fs/cgroup -type d -name "$CGROUP_TOP" | head -n3)" >&2
                TEST_RC=1
        fi
}
on_exit cleanup_rest
CTD_PID=
on_exit 'terminate "$CTD_PID"'
pods_down() {
        local p
        [ -n "$CTD_PID" ] && kill -0 "$CTD_PID" 2>/dev/null || return 0
        while read -r p; do
                [ -z "$p" ] || cri pod-down "$p" || echo "WARNING: pod $p could not be removed" >&2
        done <"$PODS"
}
on_exit pods_down

# The CRI plugin is up once its RuntimeService answers.
containerd --config "$CTD/config.toml" --root "$CTD/root" --state "$CTD/state" --address "$SOCK" \
        >>"$CTD/log" 2>&1 9>&- &
CTD_PID=$!
if ! cri version 30 >"$TMP/version" 2>"$TMP/version.err"; then
        kill -0 "$CTD_PID" 2>/dev/null || echo "containerd exited" >&2
        fail "containerd's CRI plugin does not answer on $SOCK: $(cat "$TMP/version.err"); containerd says: $(grep -E 'io.containerd.grpc.v1.cri|level=(error|fatal)' "$CTD/log" | tail -n3)"
fi
echo "CRI: $(cat "$TMP/version")"
for img in "$PAUSE" "$TOUCHER"; do
        timeout -k 5 60 ctr --address "$SOCK" --namespace k8s.io images import "$(image_tar "$img")" >/dev/null \
                2>"$TMP/ctr-import.err" 9>&- || fail "ctr -n k8s.io images import $img: $(cat "$TMP/ctr-import.err")"
        cri image-present "$img" 30 || fail "the CRI image service does not have $img 30 s after its import"
done

# 3. thpguardd holds the node at always and labels it; the README's
# nodeAffinity examples, parsed as YAML, against those labels.
FD=$TMP/features.d
mkdir -p "$FD"
chmod 0755 "$FD"
write_policy "$POLICY" 'recheck_interval = 3600;
thp = { enabled = "always"; };'
daemon_start --nfd-features-file "$FD/thpguard"
wait_until 5 grep -qx 'thpguard.io/compliant=true' "$FD/thpguard" 2>/dev/null ||
        fail "the feature file does not say compliant=true: $(cat "$FD/thpguard" 2>&1)"
"$PY" - "$SRCDIR/README.md" "$FD/thpguard" <<'PY' || fail "the README's nodeAffinity examples against the feature file (above)"
import re, sys, yaml
readme, features = open(sys.argv[1]).read(), open(sys.argv[2]).read()
labels = dict(l.split("=", 1) for l in features.splitlines() if l and not l.startswith("#"))
terms = []
for block in re.findall(r"^```yaml\n(.*?)^```", readme, re.S | re.M):
    doc = yaml.safe_load(block)
    na = (doc or {}).get("affinity", {}).get("nodeAffinity") if isinstance(doc, dict) else None
    if na:
        terms += na["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
def selects(term):
    # The scheduler's rule for operator In: the label is there with one of the values.
    return all(e["operator"] == "In" and labels.get(e["key"]) in [str(v) for v in e["values"]]
               for e in term["matchExpressions"])
keys = sorted({e["key"] for t in terms for e in t["matchExpressions"]})
print("feature file labels:", labels)
print("README nodeAffinity terms:", len(terms), "on keys", keys)
want = [t for t in terms if {"key": "thpguard.io/enabled", "operator": "In", "values": ["always"]} in t["matchExpressions"]]
other = [t for t in terms if t not in want]
ok = (keys == ["thpguard.io/compliant", "thpguard.io/enabled"] and len(want) == 1 and other
      and all(k in labels for k in keys) and selects(want[0]) and not any(selects(t) for t in other))
sys.exit(0 if ok else 1)
PY

# 4. One pod on each handler ("" is the default), side by side.
# thp_of PID: its THP_enabled and its AnonHugePages in kB inside and outside MADV_HUGEPAGE mappings (smaps VmFlags hg).
thp_of() {
        "$PY" - "$1" <<'PY'
import sys
pid = sys.argv[1]
enabled = [l.split()[1] for l in open("/proc/%s/status" % pid) if l.startswith("THP_enabled:")]
advised = plain = 0
huge = 0
for line in open("/proc/%s/smaps" % pid):
    f = line.split()
    if f[0] == "AnonHugePages:":
        huge = int(f[1])
    elif f[0] == "VmFlags:":
        if "hg" in f[1:]:
            advised += huge
        else:
            plain += huge
        huge = 0
print(enabled[0] if enabled else "?", advised, plain)
PY
}
declare -A CTR PID
for h in default thp-disable thp-advised-only; do
        handler=$h
        [ "$h" != default ] || handler=
        mkdir -p "$TMP/logs/$h"
        run cri pod-up "$h" "$handler" "$TOUCHER" "$TMP/logs/$h" "/$CGROUP_TOP/pod-$h" "$PODS" -- /thp-helper hog 256 both
        expect_rc 0 "the pod on handler '${handler:-(default)}' ($(err)); containerd says: $(grep -E 'level=(error|fatal)' "$CTD/log" | tail -n2)"
        read -r _ CTR[$h] PID[$h] < <("$PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["pod"], d["container"], d["pid"])' <"$OUT_FILE")
done
# None of containerd, its shims and the pods' processes holds the real-sysfs lock (all started without fd 9).
for p in "$CTD_PID" $(ours); do
        ! holds_lock "$p" || fail "pid $p ($(cat "/proc/$p/comm" 2>/dev/null)) holds the real-sysfs lock: started with fd 9"
        [ "$p" = "$CTD_PID" ] || echo "$p $(start_time "$p")" >>"$TMP/seen"
done
echo "containerd and its $(wc -l <"$TMP/seen") shim and pod processes: none holds the real-sysfs lock"
declare -A ENABLED ADVISED PLAIN
for h in default thp-disable thp-advised-only; do
        read -r ENABLED[$h] ADVISED[$h] PLAIN[$h] < <(thp_of "${PID[$h]}")
        echo "handler $h: pid ${PID[$h]} THP_enabled ${ENABLED[$h]}, AnonHugePages ${ADVISED[$h]} kB in MADV_HUGEPAGE, ${PLAIN[$h]} kB elsewhere (256 MiB each touched)"
done
[ "${ENABLED[default]}" = 1 ] && [ "${ADVISED[default]}" -ge 204800 ] && [ "${PLAIN[default]}" -ge 204800 ] ||
        fail "the default handler's pod at enabled=always: THP_enabled ${ENABLED[default]}, ${ADVISED[default]}/${PLAIN[default]} kB; expected 1 and at least 200 MB in both (the control)"
[ "${ENABLED[thp-disable]}" = 0 ] && [ "${ADVISED[thp-disable]}" -eq 0 ] && [ "${PLAIN[thp-disable]}" -eq 0 ] ||
        fail "thp-disable's pod: THP_enabled ${ENABLED[thp-disable]}, ${ADVISED[thp-disable]}/${PLAIN[thp-disable]} kB; expected 0 and 0 kB"
if run "$SHIMDIR/runc-thp-advised-only" --version && [ "$RC" = 0 ]; then
        [ "${PLAIN[thp-advised-only]}" -eq 0 ] && [ "${ADVISED[thp-advised-only]}" -ge 204800 ] ||
                fail "thp-advised-only's pod: ${ADVISED[thp-advised-only]} kB in MADV_HUGEPAGE, ${PLAIN[thp-advised-only]} kB elsewhere; expected at least 200 MB and 0 kB"
else
        fail "this kernel refuses advised-only ($(err)): the test expects Linux 6.18 or later"
fi
# A process exec'd into the container (kubectl exec) has the pod's mode too.
for h in default thp-disable; do
        run cri exec "${CTR[$h]}" -- /thp-helper probe
        expect_rc 0 "ExecSync in the $h pod ($(err))"
        want=0
        [ "$h" = default ] && want=1
        expect_out "^THP_enabled:"$'\t'"$want\$" "/thp-helper probe exec'd into the $h pod"
done
echo "exec'd into the thp-advised-only pod: $(cri exec "${CTR[thp-advised-only]}" -- /thp-helper probe | tr '\n' ' ')"

# 5. A RuntimeClass whose handler the node does not have: containerd's own refusal.
run cri pod-up wrong thp-no-such-handler "$TOUCHER" "$TMP/logs" "/$CGROUP_TOP/pod-wrong" "$PODS" -- /thp-helper probe
expect_rc 2 "RunPodSandbox with an unknown runtime_handler"
expect_err '^RunPodSandbox: [A-Za-z]+: .*no runtime for "thp-no-such-handler" is configured' "RunPodSandbox's error"
echo "an unknown handler, as containerd answers it: $(err)"
daemon_stop
echo PASS
