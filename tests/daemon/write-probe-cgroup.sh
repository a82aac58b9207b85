#!/bin/bash
# The BPF write probe on the real kernel: a writer nested deeper than the
# probe keeps cgroup levels (WRITE_PROBE_CGROUP_DEPTH, 10) borrows no
# identity. Its own pod's levels are outside; inside its container it made
# levels of its own named like another pod's
# (kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<B>.slice/
# cri-containerd-<B>.scope), which are all the probe keeps of a 14-level
# path. The record of its write names no pod, container or unit, says the
# path was cut (writer_cgroup_truncated=1, "/..." in front), and still
# names the writer by its pid and comm. The control: the same levels whole,
# 7 deep, name pod B and its container.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin
CG_ROOT=$(findmnt -t cgroup2 -n -o TARGET | head -1)
[ -n "$CG_ROOT" ] || skip "no cgroup v2 hierarchy mounted"
[ -w "$CG_ROOT" ] || skip "cannot create cgroups in $CG_ROOT"

POD_B=99999999-8888-7777-6666-555555555555
CID_B=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
# The other pod's levels, as the systemd driver names them.
B_LEVELS=(kubepods.slice kubepods-burstable.slice "kubepods-burstable-pod${POD_B//-/_}.slice"
        "cri-containerd-$CID_B.scope")
# The test's own top levels, so that nothing of the machine's is touched.
TOP=$CG_ROOT/thpguard-test-$$-$RANDOM
# make_cgroup NAME LEVEL...: nested cgroups below $TOP-NAME, removed at exit;
# the leaf in CGROUP (not printed: what a subshell makes, it cannot remove).
made=()
on_exit remove_cgroups
make_cgroup() {
        local dir=$TOP-$1 level
        shift
        mkdir "$dir" || fail "cannot mkdir $dir"
        made+=("$dir")
        for level in "$@"; do
                dir=$dir/$level
                mkdir "$dir" || fail "cannot mkdir $dir"
                made+=("$dir")
        done
        CGROUP=$dir
}
# remove_cgroups: deepest first, once their writers are gone.
remove_cgroups() {
        local i
        for ((i = ${#made[@]} - 1; i >= 0; i--)); do
                rmdir "${made[i]}" 2>/dev/null || true
        done
}

# The deep writer's path: its "real" pod (A), 3 levels of its own, pod B's 4, 2 more, the leaf: 14.
make_cgroup deep kubepods.slice "kubepods-pod11111111_2222_3333_4444_aaaaaaaaaaaa.slice" \
        "cri-containerd-$(printf 'a%.0s' {1..64}).scope" nest2 nest3 nest4 "${B_LEVELS[@]}" n1 n2 leaf
deep=$CGROUP
depth=$(($(tr -cd / <<<"${deep#"$CG_ROOT"}" | wc -c)))
[ "$depth" = 14 ] || fail "test bug: the deep writer's cgroup is $depth levels deep, want 14"
# The control's: pod B's levels whole (the test's top level, then 4, then 2): 7.
make_cgroup shallow "${B_LEVELS[@]}" n1 w
shallow=$CGROUP

# The probe on the hook auto gives, else on the syscall tracepoints (this project's VMs).
probe_daemon_start

# cgroup_write CGROUP: a one-shot sh that moves itself into CGROUP and
# drifts enabled; prints its pid once the daemon has corrected it.
cgroup_write() {
        local pid
        pid=$(sh -c 'echo $$ >"$1/cgroup.procs" && echo $$ && echo always >"$2"' sh "$1" "$THP/enabled")
        [ -n "$pid" ] || fail "the writer could not enter $1"
        thp_wait_for enabled madvise 1 || fail "the drift by pid $pid was not corrected within 1 s"
        echo "$pid"
}

# ---- The control: 7 levels, kept whole, name pod B. ----
pid=$(cgroup_write "$shallow")
wait_event 2 corrected knob=enabled observed=always writer_pid="$pid" writer_comm=sh writer_pod_uid="$POD_B" \
        writer_container_id="$CID_B"
line=$(event_lines corrected knob=enabled writer_pid="$pid")
! grep -q 'writer_cgroup_truncated=' <<<"$line" || fail "a whole cgroup path was marked cut: $line"
echo "a writer 7 levels deep: its pod and container named"
# Again from the same cgroup, within the program's announcement window: the
# record carries only the cgroup's key, and the path the daemon kept of the
# first names the pod all the same (and a deep one's stays cut, below).
for _ in 1 2 3; do
        pid=$(cgroup_write "$shallow")
        wait_event 2 corrected knob=enabled observed=always writer_pid="$pid" writer_comm=sh \
                writer_pod_uid="$POD_B" writer_container_id="$CID_B"
done
echo "the same cgroup again, its path announced once: its pod and container named each time"

# ---- 14 levels: the 10 innermost look like pod B; nothing is named from them. ----
pid=$(cgroup_write "$deep")
wait_event 2 corrected knob=enabled observed=always writer_pid="$pid" writer_comm=sh
line=$(event_lines corrected knob=enabled writer_pid="$pid")
for f in writer_pod_uid writer_container_id writer_unit; do
        ! grep -q " $f=" <<<" $line" || fail "a cut cgroup path named $f: $line"
done
grep -q ' writer_cgroup_truncated=1 ' <<<" $line " || fail "the record does not say its cgroup path was cut: $line"
grep -q " writer_cgroup=\"\?/\.\.\./nest2/nest3/nest4/kubepods.slice/" <<<" $line" ||
        fail "the cut path is not shown with its innermost levels after /...: $line"
# The label is the comm, not a unit taken from the cut path.
grep -q ' writer=sh ' <<<" $line " || fail "the writer is not labelled by its comm: $line"
pid=$(cgroup_write "$deep")
wait_event 2 corrected knob=enabled observed=always writer_pid="$pid" writer_comm=sh writer_cgroup_truncated=1
line=$(event_lines corrected knob=enabled writer_pid="$pid")
! grep -q ' writer_pod_uid=' <<<" $line" || fail "a cut cgroup path, announced before, named a pod: $line"
echo "a writer 14 levels deep whose inner levels mimic pod B: no pod, container or unit named, the path shown cut"
daemon_stop
