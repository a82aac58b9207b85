#!/bin/bash
# The OCI runtime shims (/usr/libexec/thpguard/<runtime>-thp-<mode>) under
# Debian's podman and runc, on the real THP sysfs at enabled=always:
#  1. runc-thp-disable: the container's PID 1 and a child it forks read
#     THP_enabled: 0 (and PR_GET_THP_DISABLE 1); plain runc gives 1;
#  2. a toucher of 256 MiB that does not madvise holds 0 kB AnonHugePages
#     under the shim and at least 200 MB under plain runc, in the same run;
#  3. runc-thp-advised-only (kernel 6.18): the MADV_HUGEPAGE region gets huge
#     pages, the plain one none;
#  4. a kernel that refuses advised-only (every kernel before 6.18, played by
#     a seccomp filter on podman that makes that prctl EINVAL): podman fails
#     with the shim's one line and the container's process never runs;
#  5. thpguardctl workloads lists both hog containers by their libpod scope,
#     with the right modes and the shim's 0 kB.
# crun is not run: crun 1.8 refuses this machine's hybrid cgroups.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need runc
: "${REFUSE_THP_FLAGS:?REFUSE_THP_FLAGS is not set: run this test through ctest}"
: "${THPGUARDCTL:?THPGUARDCTL is not set: run this test through ctest}"
podman_private
real_sysfs_begin
thp_set enabled always
[ -f "$THP/hugepages-2048kB/enabled" ] && thp_set hugepages-2048kB/enabled inherit

ID=$$-$RANDOM
IMAGE=localhost/thpguard-shim-ctest:$ID
shim_image "$IMAGE"
PLAIN=thpguard-shim-plain-$ID
SHIMMED=thpguard-shim-disable-$ID
ADVISED=thpguard-shim-advised-$ID
REFUSED=thpguard-shim-refused-$ID
on_exit 'podman rm -f -t 0 "$PLAIN" "$SHIMMED" "$ADVISED" "$REFUSED" >/dev/null 2>&1'

# podman_with RUNTIME ARGS...: podman run with that runtime (a path to a shim, or runc).
podman_with() {
        local runtime=$1
        shift
        podman --runtime "$runtime" run "${PODMAN_OPTS[@]}" "$@"
}

# 1. PID 1 and its child.
run podman_with "$SHIMDIR/runc-thp-disable" --rm "$IMAGE" /thp-helper probe-child
expect_rc 0 "probe-child under runc-thp-disable ($(err))"
for who in "" "child: "; do
        expect_out "^${who}prctl_thp_disable=1\$" "runc-thp-disable, ${who:-PID 1}"
        expect_out "^${who}THP_enabled:"$'\t'"0\$" "runc-thp-disable, ${who:-PID 1}"
done
run podman_with runc --rm "$IMAGE" /thp-helper probe-child
expect_rc 0 "probe-child under runc ($(err))"
expect_out "^child: THP_enabled:"$'\t'"1\$" "plain runc, the child"

# 2. The same toucher under both, side by side.
# hog_pid NAME: the host PID of the container's hog once it says ready.
hog_ready() { podman logs "$1" 2>/dev/null | grep -q '^ready$'; }
hog_pid() {
        wait_until 30 hog_ready "$1" || fail "$1 did not get ready: $(podman logs "$1" 2>&1 | tail -n3)"
        podman inspect -f '{{.State.Pid}}' "$1"
}
podman_with runc -d --name "$PLAIN" "$IMAGE" /thp-helper hog 256 plain >/dev/null
podman_with "$SHIMDIR/runc-thp-disable" -d --name "$SHIMMED" "$IMAGE" /thp-helper hog 256 plain >/dev/null 2>"$TMP/shimmed.err" ||
        fail "the shim's container did not start: $(cat "$TMP/shimmed.err")"
plain_pid=$(hog_pid "$PLAIN")
shimmed_pid=$(hog_pid "$SHIMMED")
plain_kb=$(anon_huge_kb_of "$plain_pid")
shimmed_kb=$(anon_huge_kb_of "$shimmed_pid")
echo "256 MiB touched without madvise: plain runc $plain_kb kB AnonHugePages, runc-thp-disable $shimmed_kb kB"
[ "$plain_kb" -ge 204800 ] ||
        fail "plain runc at enabled=always got $plain_kb kB AnonHugePages, expected at least 200 MB (the control)"
[ "$shimmed_kb" -eq 0 ] || fail "runc-thp-disable's container got $shimmed_kb kB AnonHugePages, expected 0"

# 5. (while both run) The per-workload view names both containers and their modes.
run "$THPGUARDCTL" workloads --json
expect_rc 0 "thpguardctl workloads ($(err))"
plain_id=$(podman inspect -f '{{.Id}}' "$PLAIN")
shimmed_id=$(podman inspect -f '{{.Id}}' "$SHIMMED")
python3 - "$OUT_FILE" "$plain_id" "$shimmed_id" <<'PY' || fail "thpguardctl workloads (above)"
import json, sys
d = json.load(open(sys.argv[1]))
by_id = {w.get("container_id"): w for w in d["workloads"]}
plain, shimmed = by_id.get(sys.argv[2]), by_id.get(sys.argv[3])
ok = (plain is not None and shimmed is not None
      and plain["processes"] >= 1 and plain["thp_disabled"] == 0 and plain["anon_huge_pages_kb"] >= 204800
      and shimmed["processes"] >= 1 and shimmed["thp_disabled"] == shimmed["processes"]
      and shimmed["anon_huge_pages_kb"] == 0 and shimmed["mode"] == "disable" and plain["mode"] == "inherit")
if not ok:
    print(json.dumps({"plain": plain, "shimmed": shimmed}, indent=1), file=sys.stderr)
    sys.exit(1)
order = [w.get("container_id") for w in d["workloads"]]
if order.index(sys.argv[2]) > order.index(sys.argv[3]):
    print("not sorted by AnonHugePages: %s" % order, file=sys.stderr)
    sys.exit(1)
PY
run "$THPGUARDCTL" workloads
expect_rc 0
expect_out "^ +1 +1 +0 disable +container ${shimmed_id}( |\$)" "thpguardctl workloads (text)"
podman rm -f -t 0 "$PLAIN" "$SHIMMED" >/dev/null

# 3. advised-only, where the kernel has it.
if run "$SHIMDIR/runc-thp-advised-only" --version && [ "$RC" = 0 ]; then
        podman_with "$SHIMDIR/runc-thp-advised-only" -d --name "$ADVISED" "$IMAGE" /thp-helper hog 64 both >/dev/null
        advised_pid=$(hog_pid "$ADVISED")
        "$THPGUARDCTL" pid "$advised_pid" --json --top 16 >"$TMP/advised.json" || fail "thpguardctl pid $advised_pid"
        python3 - "$TMP/advised.json" <<'PY' || fail "runc-thp-advised-only (above)"
import json, sys
d = json.load(open(sys.argv[1]))
top = d["smaps"]["top"]
ok = any(m["madv_hugepage"] and m["anon_huge_pages_kb"] > 0 for m in top) and all(m["madv_hugepage"] for m in top)
if not ok:
    print(json.dumps(d["smaps"], indent=1), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
        podman rm -f -t 0 "$ADVISED" >/dev/null
else
        expect_rc 125 "runc-thp-advised-only --version on a kernel that refuses the mode"
        expect_err "needs PR_THP_DISABLE_EXCEPT_ADVISED"
        echo "this kernel refuses advised-only: part 3 not run ($(err))"
fi

# 4. A kernel that refuses the mode: the shim fails, the container never runs.
run timeout -k 10 120 "$REFUSE_THP_FLAGS" "$PODMAN_BIN" --runtime "$SHIMDIR/runc-thp-advised-only" run "${PODMAN_OPTS[@]}" \
        --name "$REFUSED" "$IMAGE" /thp-helper probe 9>&-
[ "$RC" -ne 0 ] || fail "podman ran the container although the shim's mode was refused: $(out)"
expect_out_empty "the refused container's output"
expect_err "runc-thp-advised-only: THP mode advised-only needs PR_THP_DISABLE_EXCEPT_ADVISED \(Linux 6.18 or later\); kernel .* refused it \(EINVAL\)\. Not falling back to another mode; not starting the container" \
        "podman's error"
state=$(podman inspect -f '{{.State.Status}} {{.State.StartedAt}}' "$REFUSED" 2>/dev/null || echo gone)
case $state in
gone | created\ 0001-01-01*) ;;
*) fail "the refused container's state is '$state', expected created and never started (or removed)" ;;
esac
echo PASS
