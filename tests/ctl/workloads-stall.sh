#!/bin/bash
# thpguardctl workloads while a process blocks every reader of its own
# /proc/PID/smaps_rollup (tests/helpers/fuse-hang: a FUSE page never served,
# read through /proc/self/mem under the memory lock, and a thread queued in
# mmap() behind it): the command still ends, within the per-process bound,
# and names the stalled process instead of hanging on it.
#
# The stalled process lives only for this test's few seconds: anything
# else on the machine that reads its files (ps, pgrep, thpguardctl watch)
# waits until then, so CTest runs it alone (RUN_SERIAL).
. "$SRCDIR/tests/lib/mount-ns.sh"
own_mount_namespace "$0" "$@"
. "$(dirname "$0")/lib.sh"
source "$SRCDIR/tests/lib/fuse-hang.sh"
fuse_hang_start ready
pid=$HANG
# The stall is real: a plain reader of its smaps_rollup waits.
rc=0
timeout 2 cat "/proc/$pid/smaps_rollup" >/dev/null 2>&1 || rc=$?
[ "$rc" = 124 ] || skip "this kernel did not make readers of $pid's smaps_rollup wait (cat exited $rc)"

# 30 s: a correctness bound (the per-process wait is 0.5 s), not a timing.
# LeakSanitizer stays on: the stuck read is a child process's, none of ours is left in the kernel.
run timeout 30 "$THPGUARDCTL" workloads --json
[ "$RC" != 124 ] || fail "thpguardctl workloads hung on the stalled process $pid"
expect_rc 0 "thpguardctl workloads"
json_check "$OUT_FILE" "d['stalled'] >= 1 and $pid in d['stalled_pids'] and d['stalled'] == len(d['stalled_pids'])" \
        "d['scanned'] > d['stalled'] and len(d['workloads']) >= 1"
run timeout 30 "$THPGUARDCTL" workloads
[ "$RC" != 124 ] || fail "thpguardctl workloads (text) hung on the stalled process $pid"
expect_rc 0
expect_out "^  ! [1-4] process\(es\) did not answer within [0-9]+ ms, not counted \(PID( [0-9]+)* $pid( [0-9]+)*\)"
echo PASS
