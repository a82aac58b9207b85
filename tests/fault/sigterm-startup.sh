#!/bin/bash
# Fault: SIGTERM while the daemon applies the policy at startup. To land the
# signal inside the apply for sure, strace holds the first pwrite() to a knob
# for 3 s (inject=pwrite64:delay_enter); SIGTERM is sent while the daemon is
# in there: its signal handlers are set up (SigBlk has SIGTERM), nothing is
# written yet and it has not logged "started".
#
# Expected: a clean exit: status 0, the "received Terminated" line,
# no knob left half-written (each knob reads a valid value: the apply of the
# knob in flight completes; the daemon stops at its loop).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
real_sysfs_begin
need strace strace

thp_set enabled always
thp_set defrag always
write_policy "$POLICY" 'recheck_interval = 3600;
thp = { enabled = "madvise"; defrag = "madvise"; };'

# LeakSanitizer cannot run under ptrace: it would fail the exit.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
        strace -f -qq -o "$TMP/strace.log" -e trace=pwrite64 -e inject=pwrite64:delay_enter=3000000:when=1 \
        "$THPGUARDD" --config "$POLICY" --log-target=console 9>&- 2>"$TMP/daemon.log" &
STRACE_PID=$!
on_exit 'kill -KILL $STRACE_PID 2>/dev/null || true'
pid=
# Before strace (cleanups run last added first): a killed strace would
# leave the daemon running on its own.
on_exit '[ -z "$pid" ] || terminate "$pid"'
for _ in $(seq 1000); do
        pid=$(child_pids $STRACE_PID thpguardd)
        [ -n "$pid" ] && break
        sleep 0.01
done
[ -n "$pid" ] || fail "thpguardd did not start under strace"
# Wait until it is inside the apply: SIGTERM blocked (its signalfd is set up) and the first write held.
in_apply=
for _ in $(seq 1000); do
        blk=$(awk '/^SigBlk:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
        if [ $((0x$blk & (1 << 14))) -ne 0 ] && grep -q 'pwrite64' "$TMP/strace.log" 2>/dev/null; then
                in_apply=1
                break
        fi
        sleep 0.01
done
[ -n "$in_apply" ] || { cat "$TMP/strace.log" "$TMP/daemon.log" >&2; fail "never saw the daemon inside the startup apply"; }
grep -q 'msg="started' "$TMP/daemon.log" && fail "test bug: the daemon had already finished its startup"
[ "$(thp_get enabled)" = always ] && [ "$(thp_get defrag)" = always ] || fail "test bug: a knob was written before the signal"
kill -TERM "$pid"
rc=0
# Bounded: strace waits for the 3 s delay, then for the daemon to exit.
wait_exit $STRACE_PID 30 || rc=$?
cat "$TMP/daemon.log"
[ $rc -ne 124 ] || fail "thpguardd under strace did not exit within 30 s of SIGTERM during the startup apply"
[ $rc -eq 0 ] || fail "SIGTERM during the startup apply: exit $rc, want 0"
wait_log '^level=info msg="received Terminated; exiting, knobs left as they are"$' 1
# Each knob reads a whole, valid value: the apply finished the knob in flight.
for k in enabled defrag; do
        v=$(thp_get "$k")
        [ "$v" = madvise ] || [ "$v" = always ] || fail "$k reads '$v' after SIGTERM during the apply"
done
[ "$(log_count 'AddressSanitizer|runtime error')" = 0 ] || fail "sanitizer report"
echo "PASS: SIGTERM during the startup apply: exit 0, $(thp_get enabled)/$(thp_get defrag)"
