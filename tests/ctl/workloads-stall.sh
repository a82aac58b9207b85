#!/bin/bash
# thpguardctl workloads while a process blocks every reader of its own
# /proc/PID/smaps_rollup (tests/helpers/fuse-stall: a FUSE read that is never
# answered, faulted in under the memory lock, and a writer of that lock
# queued behind it): the command still ends, within the per-process bound,
# and names the stalled process instead of hanging on it.
#
# The stalled process lives only for this test's few seconds: anything
# else on the machine that reads its files (ps, pgrep, thpguardctl watch)
# waits until then, so CTest runs it alone (RUN_SERIAL).
. "$(dirname "$0")/lib.sh"
: "${FUSE_STALL:?FUSE_STALL is not set: run this test through ctest}"
[ "$(id -u)" = 0 ] || skip "mounting the FUSE file system needs root"
[ -c /dev/fuse ] || skip "no /dev/fuse"

mnt=$TMP/fuse
mkdir -p "$mnt"
"$FUSE_STALL" "$mnt" >"$TMP/stall.out" 2>"$TMP/stall.err" 9>&- &
helper=$!
# Last added runs first: the stalled process goes, then its mount.
on_exit "umount -l '$mnt' 2>/dev/null || true"
on_exit "kill -KILL $helper 2>/dev/null || true; wait $helper 2>/dev/null || true"
stalled_line() { grep -q '^stalled [0-9]*$' "$TMP/stall.out"; }
if ! wait_until 10 stalled_line 2>/dev/null; then
        kill -0 "$helper" 2>/dev/null || skip "fuse-stall could not set up: $(cat "$TMP/stall.err")"
        fail "fuse-stall did not say it stalled: $(cat "$TMP/stall.out" "$TMP/stall.err")"
fi
pid=$(awk '/^stalled/ { print $2 }' "$TMP/stall.out")
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
