#!/bin/bash
# thpguardctl pid on a process that makes its own /proc/PID reads block
# (fuse-hang: a FUSE page never served, read through /proc/self/mem,
# another thread queued in mmap()): a plain read of its smaps_rollup or
# smaps waits for good. pid must still return within a few seconds, print
# what it could read (status, exe, the THP mode), say which files did not
# answer, on stdout and in one line on stderr, and exit 4 (thpguardctl(1),
# EXIT STATUS), text and JSON; an ordinary process still exits 0.
set -euo pipefail
. "$SRCDIR/tests/lib/mount-ns.sh"
own_mount_namespace "$0" "$@"
. "$(dirname "$0")/lib.sh"
source "$SRCDIR/tests/lib/fuse-hang.sh"
fuse_hang_start ready
# The positive control: plain reads of both files do hang.
fuse_hang_blocks smaps_rollup
fuse_hang_blocks smaps

# A hang would be for good; 60 s is only there so that the test ends.
start=$(date +%s%N)
run timeout 60 "$THPGUARDCTL" pid "$HANG"
took=$((($(date +%s%N) - start) / 1000000))
[ "$RC" != 124 ] || fail "thpguardctl pid hung on pid $HANG"
expect_rc 4
# 2 s for smaps_rollup, smaps not waited for (the same lock): 10 s is a correctness bound, not a timing.
[ "$took" -lt 10000 ] || fail "thpguardctl pid took $took ms on the stalled pid $HANG"
expect_out "^PID $HANG \(fuse-hang\)"
expect_out '^  smaps_rollup: cannot read: did not answer within [0-9]+ ms \(the process holds its own memory lock\)$'
expect_out '^  smaps: not read: it waits for the same lock as smaps_rollup$'
expect_out '^  THP_enabled [01]'
expect_err "^thpguardctl: pid $HANG: smaps_rollup did not answer within [0-9]+ ms .*; its Rss, AnonHugePages and mappings were not read\$"

run timeout 60 "$THPGUARDCTL" pid "$HANG" --json
[ "$RC" != 124 ] || fail "thpguardctl pid --json hung on pid $HANG"
expect_rc 4
json_check "$OUT_FILE" "d['pid'] == $HANG and d['stalled'] is True" \
        "d['smaps_rollup_error'].startswith('did not answer within')" \
        "d['smaps_error'].startswith('did not answer within')" \
        "'rss_kb' not in d and 'smaps' not in d and d['command'] == 'fuse-hang'"
expect_err "^thpguardctl: pid $HANG: smaps_rollup did not answer"

# The control: a process that answers is read whole, exit 0.
run timeout 60 "$THPGUARDCTL" pid --json $$
expect_rc 0
json_check "$OUT_FILE" "d['stalled'] is False and 'rss_kb' in d and 'smaps' in d"
echo "PASS: thpguardctl pid on the stalled pid $HANG returned in $took ms, exit 4, saying what it could not read"
