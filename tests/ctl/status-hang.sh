#!/bin/bash
# thpguardctl status against a process that makes its own /proc/PID reads
# block (fuse-hang: a FUSE page never served, read through /proc/self/mem,
# another thread queued in mmap()): a plain read of its smaps_rollup waits
# for good. status must still finish, well within its per-process bound,
# report the rest of the node, and name the pid it skipped (text and JSON).
set -euo pipefail
. "$SRCDIR/tests/lib/mount-ns.sh"
own_mount_namespace "$0" "$@"
. "$(dirname "$0")/lib.sh"
[ -c /dev/fuse ] || skip "no /dev/fuse (the fuse module) on this machine"
: "${FUSE_HANG:?}"

# The connection can only be aborted through fusectl: the helper cannot be killed while its READ waits.
mountpoint -q /sys/fs/fuse/connections || mount -t fusectl none /sys/fs/fuse/connections
MNT=$TMP/fuse
mkdir "$MNT"
"$FUSE_HANG" "$MNT" >"$TMP/hang.out" 2>&1 &
HANG=$!
release() {
        local dev
        dev=$(mountpoint -d "$MNT" 2>/dev/null) && echo 1 >"/sys/fs/fuse/connections/${dev#*:}/abort" || true
        kill -KILL "$HANG" 2>/dev/null || true
        umount -l "$MNT" 2>/dev/null || true
}
on_exit release
wait_until 10 grep -q '^ready ' "$TMP/hang.out" || {
        rc=0
        kill -0 "$HANG" 2>/dev/null || wait "$HANG" || rc=$?
        [ "$rc" = 77 ] && skip "cannot mount FUSE here: $(cat "$TMP/hang.out")"
        fail "fuse-hang did not get ready: $(cat "$TMP/hang.out")"
}
# The positive control: a plain read of its smaps_rollup does hang.
rc=0
timeout 2 cat "/proc/$HANG/smaps_rollup" >/dev/null 2>&1 || rc=$?
[ "$rc" = 124 ] || fail "test bug: a plain read of /proc/$HANG/smaps_rollup did not block (rc $rc)"

# A hang would be for good; 60 s is only there so that the test ends.
run timeout 60 "$THPGUARDCTL" status
[ "$RC" != 124 ] || fail "status hung on pid $HANG"
expect_rc 0
# Other stuck processes of the machine may be named too.
expect_out "^  skipped [0-9]+ process\(es\) whose /proc files did not answer within [0-9]+ ms .*: pid (.*, )?$HANG(,|\$)"
expect_out '^Top processes by AnonHugePages'
run timeout 60 "$THPGUARDCTL" status --json
expect_rc 0
json_check "$OUT_FILE" "d['processes']['timed_out'] >= 1" "$HANG in d['processes']['timed_out_pids']" \
        "d['processes']['measured'] > 0"
echo "PASS: status skipped the stuck process $HANG and named it"
