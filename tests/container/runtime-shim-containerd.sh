#!/bin/bash
# The OCI runtime shims under Debian's containerd, started by hand on paths
# of its own (--root, --state, --address), on the real THP sysfs at
# enabled=always:
#  1. thpguard-containerd-config install, on a config.toml with its own
#     runc handler, is what containerd reads: `containerd config dump` has
#     both handlers with BinaryName on the shims, and the runc handler;
#  2. `ctr run --runc-binary` with that BinaryName's shim (the build tree's
#     copy under the same name): PID 1 and a child read THP_enabled: 0;
#  3. a toucher of 256 MiB that does not madvise: 0 kB AnonHugePages under
#     runc-thp-disable, at least 200 MB under plain runc, in the same run;
#  4. thpguardctl workloads groups both tasks by their cgroup with the
#     right modes;
#  5. advised-only refused by the "kernel" (a seccomp filter on containerd
#     making that prctl EINVAL, as before 6.18): the task never starts.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need containerd
need ctr
need runc
: "${REFUSE_THP_FLAGS:?REFUSE_THP_FLAGS is not set: run this test through ctest}"
: "${THPGUARDCTL:?THPGUARDCTL is not set: run this test through ctest}"
# podman makes the image.
podman_private

# 1. The handlers as thpguard-containerd-config writes them (the build tree's shims).
CTD=$TMP/containerd
mkdir -p "$CTD"
# The CRI plugin's stream server on loopback, on a port of the kernel's choosing (no fixed port another run holds).
printf '%s\n' 'version = 2' '[plugins."io.containerd.grpc.v1.cri"]' '  stream_server_address = "127.0.0.1"' \
        '  stream_server_port = "0"' '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]' \
        '  runtime_type = "io.containerd.runc.v2"' >"$CTD/config.toml"
run "$BUILDDIR/packaging/runtime/containerd/thpguard-containerd-config" install --config "$CTD/config.toml" \
        --containerd "$(command -v containerd)" --shim-dir "$SHIMDIR"
expect_rc 0 "thpguard-containerd-config install"
run containerd --config "$CTD/config.toml" config dump
expect_rc 0 "containerd config dump with the handlers written in ($(err))"
for handler in runc thp-disable thp-advised-only; do
        "$PY" - "$OUT_FILE" "$handler" "$SHIMDIR" <<'PY' ||
import re, sys
dump, handler, shimdir = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
head = '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.%s.options]' % handler
i = dump.find(head)
want = None if handler == "runc" else "%s/runc-%s" % (shimdir, handler)
table = dump[i:i + 2000].split("\n  [")[0] if i >= 0 else ""
sys.exit(0 if i >= 0 and (want is None or re.search(r'BinaryName = "%s"' % re.escape(want), table)) else 1)
PY
                fail "containerd config dump has no handler $handler as thpguard-containerd-config wrote it: $(grep -n 'runtimes\.' "$OUT_FILE")"
done

real_sysfs_begin
thp_set enabled always
[ -f "$THP/hugepages-2048kB/enabled" ] && thp_set hugepages-2048kB/enabled inherit

# containerd_start [WRAPPER...]: containerd on this test's own paths, stopped
# at exit. Without fd 9: its shims outlive it, and would hold the real-sysfs lock.
SOCK=$CTD/containerd.sock
containerd_start() {
        "$@" containerd --config "$CTD/config.toml" --root "$CTD/root" --state "$CTD/state" --address "$SOCK" \
                >>"$CTD/log" 2>&1 9>&- &
        CTD_PID=$!
        on_exit "terminate $CTD_PID"
        wait_until 30 timeout 5 ctr --address "$SOCK" version >/dev/null 2>&1 ||
                fail "containerd did not answer on $SOCK: $(tail -n5 "$CTD/log")"
}
# Each ctr call that should return gives up after a minute (timeout).
CTR=(timeout -k 5 60 ctr --address "$SOCK" --namespace thpguard-ctest)
CTR_BG=(ctr --address "$SOCK" --namespace thpguard-ctest)
containerd_start

ID=$$-$RANDOM
IMAGE=localhost/thpguard-shim-ctest:$ID
shim_image "$IMAGE"
podman save "$IMAGE" -o "$TMP/image.tar" 2>"$TMP/save.err" || fail "podman save: $(cat "$TMP/save.err")"
"${CTR[@]}" images import "$TMP/image.tar" >/dev/null 2>"$TMP/ctr-import.err" ||
        fail "ctr images import: $(cat "$TMP/ctr-import.err")"
on_exit '"${CTR[@]}" tasks kill -s KILL plain-$ID >/dev/null 2>&1; "${CTR[@]}" tasks kill -s KILL shimmed-$ID >/dev/null 2>&1; sleep 0.5; for c in plain shimmed refused; do "${CTR[@]}" containers rm $c-$ID >/dev/null 2>&1 || true; done'

# 2. PID 1 and a child.
run "${CTR[@]}" run --rm --runc-binary "$SHIMDIR/runc-thp-disable" "$IMAGE" "probe-$ID" /thp-helper probe-child
expect_rc 0 "ctr run with runc-thp-disable ($(err))"
for who in "" "child: "; do
        expect_out "^${who}prctl_thp_disable=1\$" "runc-thp-disable under containerd, ${who:-PID 1}"
        expect_out "^${who}THP_enabled:"$'\t'"0\$" "runc-thp-disable under containerd, ${who:-PID 1}"
done

# 3. The toucher under both, side by side.
task_pid() {
        wait_until 30 grep -q '^ready$' "$TMP/$1.out" || fail "$1 did not get ready: $(cat "$TMP/$1.out")"
        "${CTR[@]}" tasks ls | awk -v id="$1-$ID" '$1 == id { print $2 }'
}
"${CTR_BG[@]}" run "$IMAGE" "plain-$ID" /thp-helper hog 256 plain >"$TMP/plain.out" 2>&1 9>&- &
plain_ctr=$!
"${CTR_BG[@]}" run --runc-binary "$SHIMDIR/runc-thp-disable" "$IMAGE" "shimmed-$ID" /thp-helper hog 256 plain \
        >"$TMP/shimmed.out" 2>&1 9>&- &
shimmed_ctr=$!
plain_pid=$(task_pid plain)
shimmed_pid=$(task_pid shimmed)
plain_kb=$(anon_huge_kb_of "$plain_pid")
shimmed_kb=$(anon_huge_kb_of "$shimmed_pid")
echo "containerd, 256 MiB touched without madvise: plain runc $plain_kb kB AnonHugePages, runc-thp-disable $shimmed_kb kB"
[ "$plain_kb" -ge 204800 ] || fail "plain runc at enabled=always got $plain_kb kB, expected at least 200 MB (the control)"
[ "$shimmed_kb" -eq 0 ] || fail "runc-thp-disable's task got $shimmed_kb kB AnonHugePages, expected 0"

# 4. ctr's tasks sit in /thpguard-ctest/<id> (no unit, no container ID it could parse): grouped by cgroup.
run "$THPGUARDCTL" workloads --json
expect_rc 0 "thpguardctl workloads ($(err))"
python3 - "$OUT_FILE" "/thpguard-ctest/plain-$ID" "/thpguard-ctest/shimmed-$ID" <<'PY' || fail "thpguardctl workloads (above)"
import json, sys
d = json.load(open(sys.argv[1]))
by = {w["cgroup"]: w for w in d["workloads"]}
plain, shimmed = by.get(sys.argv[2]), by.get(sys.argv[3])
ok = (plain and shimmed and plain["mode"] == "inherit" and shimmed["mode"] == "disable"
      and plain["anon_huge_pages_kb"] >= 204800 and shimmed["anon_huge_pages_kb"] == 0)
if not ok:
    print(json.dumps({"plain": plain, "shimmed": shimmed, "cgroups": sorted(by)[:50]}, indent=1), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
"${CTR[@]}" tasks kill -s KILL "plain-$ID" >/dev/null
"${CTR[@]}" tasks kill -s KILL "shimmed-$ID" >/dev/null
for p in "$plain_ctr" "$shimmed_ctr"; do
        rc=0
        wait_exit "$p" 30 || rc=$?
        [ "$rc" -ne 124 ] || fail "ctr run did not return within 30 s of its task's SIGKILL: $(tail -n5 "$CTD/log")"
done

# 5. A containerd whose kernel refuses advised-only: the task is never started.
terminate "$CTD_PID"
containerd_start "$REFUSE_THP_FLAGS"
run "${CTR[@]}" run --rm --runc-binary "$SHIMDIR/runc-thp-advised-only" "$IMAGE" "refused-$ID" /thp-helper probe
[ "$RC" -ne 0 ] || fail "ctr ran the task although the shim's mode was refused: $(out)"
expect_no_out "prctl_thp_disable" "the refused task's output"
grep -q "runc-thp-advised-only: THP mode advised-only needs PR_THP_DISABLE_EXCEPT_ADVISED" "$ERR_FILE" "$CTD/log" ||
        fail "neither ctr nor containerd shows the shim's line: $(err) $(tail -n5 "$CTD/log")"
echo "the refusal, as ctr shows it: $(head -c 400 "$ERR_FILE")"
echo PASS
