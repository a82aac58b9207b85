#!/bin/bash
# A log line nobody reads never stops enforcement: with stderr a pipe whose
# reader has gone (`thpguardd --log-target=console 2>&1 | head -c 10`), a
# write fails with EPIPE instead of killing the daemon with SIGPIPE.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin

thp_set enabled always
write_policy "$POLICY" 'recheck_interval = 3600;
thp = { enabled = "madvise"; };'

mkfifo "$TMP/stderr.pipe"
head -c 10 <"$TMP/stderr.pipe" >"$TMP/head.out" 9>&- &
head_pid=$!
"$THPGUARDD" --config "$POLICY" --log-target=console 9>&- 2>"$TMP/stderr.pipe" &
DAEMON_PID=$!

# head has read its 10 bytes and gone: every later log line meets a closed pipe.
wait "$head_pid" || true
thp_wait_for enabled madvise 2 || fail "startup did not apply the policy (enabled is $(thp_get enabled))"

for round in 1 2 3; do
        thp_set enabled always
        thp_wait_for enabled madvise 2 ||
                fail "drift $round was not corrected; daemon $(kill -0 "$DAEMON_PID" 2>/dev/null && echo alive || echo gone)"
done
kill -0 "$DAEMON_PID" 2>/dev/null || fail "thpguardd died after its log reader went away"
daemon_stop
echo PASS
