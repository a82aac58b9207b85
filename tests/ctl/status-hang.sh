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
source "$SRCDIR/tests/lib/fuse-hang.sh"
fuse_hang_start ready
# The positive control: a plain read of its smaps_rollup does hang.
fuse_hang_blocks smaps_rollup

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
