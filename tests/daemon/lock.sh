#!/bin/bash
# Lock mode on the real sysfs, as users meet it: a shell writer's open gets
# EPERM and the refusal names it; readers (root and not) still read; a
# threaded writer, a TuneD-like one rewriting in a loop (a few lines, not
# one per write) and one-shot writers are refused; a writer holding an fd
# opened before the lock writes, and is corrected as in enforce (the lock
# covers opens after it); a reload that changes a value is applied by the
# daemon itself; SIGKILL of the daemon leaves the knobs writable at once;
# without CAP_SYS_PTRACE the lock is none, said so, and writes are corrected.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
source "$SRCDIR/tests/lib/metrics.sh"
real_sysfs_begin
PROM=$TMP/thpguard.prom

thp_set enabled madvise
thp_set defrag madvise
lock_policy() {
        write_policy "$POLICY" "mode = \"lock\"; recheck_interval = 30; fight_threshold = 0; metrics_file = \"$PROM\";
thp = { enabled = \"$1\"; defrag = \"madvise\"; };"
}
lock_policy madvise

# writes_refused KNOB VALUE: a one-shot shell writer, reaped at once; fails unless its open got EPERM.
# Prints its pid.
write_refused() {
        local pid rc=0
        sh -c "echo $2 > $THP/$1" 9>&- 2>"$TMP/sh.err" &
        pid=$!
        wait "$pid" || rc=$?
        [ "$rc" -ne 0 ] || fail "a shell's write of $2 to $1 went through: $(cat "$THP/$1")"
        grep -q "Operation not permitted" "$TMP/sh.err" || fail "the shell's write failed otherwise: $(cat "$TMP/sh.err")"
        echo "$pid"
}

daemon_start
wait_event 5 lock lock=fanotify
log_has 'msg="lock: fanotify: ' || fail "no lock line: $(grep lock "$TMP/daemon.log")"

# ---- 1. A shell writer gets EPERM, is named, and the knob keeps its value. ----
pid=$(write_refused enabled always)
thp_is enabled madvise || fail "enabled reads $(thp_get enabled) after a refused write"
wait_event 2 write_refused knob=enabled writer_pid="$pid" writer_comm=sh reason="opened for writing"
event_says write_refused "refused a write to enabled \(opened for writing by sh, pid $pid" knob=enabled writer_pid="$pid" ||
        fail "the refusal's message does not name the writer: $(event_lines write_refused writer_pid="$pid")"
# The file follows within a second (its rate limit).
wait_until 3 metric_is "$PROM" 'thpguard_lock{mechanism="fanotify"}' 1 2>/dev/null ||
        fail "no thpguard_lock{mechanism=\"fanotify\"} 1: $(grep '^thpguard_lock' "$PROM")"
wait_metric_ge "$PROM" 'thpguard_refused_writes_total{knob="enabled",writer="sh"}' 1 3
echo "1. shell writer $pid: EPERM, named, counted; enabled still madvise"

# ---- 2. Readers are let through: root (cat, python) and nobody. ----
cat "$THP/enabled" >/dev/null || fail "root's cat of enabled was refused"
python3 -c "open('$THP/defrag').read()" || fail "root's read in python was refused"
setpriv --reuid 65534 --regid 65534 --clear-groups cat "$THP/enabled" >/dev/null || fail "nobody's read was refused"
echo "2. reads by root and by nobody go on"

# ---- 3. A writer's second thread (the opener is the thread, not its process). ----
out=$(python3 -c "
import threading
err = []
def w():
    try:
        open('$THP/defrag', 'w').write('always')
    except OSError as e:
        err.append(e.errno)
t = threading.Thread(target=w); t.start(); t.join()
print(err[0] if err else 0)")
[ "$out" = 1 ] || fail "a thread's write to defrag: errno $out, want EPERM (1)"
thp_is defrag madvise || fail "defrag reads $(thp_get defrag) after a thread's refused write"
echo "3. a second thread's write: EPERM"

# ---- 4. A TuneD-like writer rewriting flat out: every write refused, a few lines. ----
before=$(event_count write_refused writer_comm=tuned-like)
python3 -c "
import ctypes, errno, os
ctypes.CDLL(None).prctl(15, b'tuned-like', 0, 0, 0)
refused = 0
for _ in range(500):
    try:
        with open('$THP/enabled', 'w') as f:
            f.write('always')
    except PermissionError:
        refused += 1
print(refused)" >"$TMP/loop.out"
[ "$(cat "$TMP/loop.out")" = 500 ] || fail "the looping writer had $(cat "$TMP/loop.out") of 500 writes refused"
thp_is enabled madvise || fail "enabled reads $(thp_get enabled) after the looping writer"
wait_until 2 event_count_ge $((before + 1)) write_refused writer_comm=tuned-like 2>/dev/null ||
        fail "no refusal line for the looping writer"
lines=$(($(event_count write_refused writer_comm=tuned-like) - before))
[ "$lines" -le 10 ] || fail "the looping writer's 500 refusals made $lines lines (want a few)"
wait_metric_ge "$PROM" 'thpguard_refused_writes_total{knob="enabled",writer="tuned-like"}' 500 3
echo "4. a writer in a loop: 500 of 500 refused and counted, $lines lines logged"

# ---- 5. One-shot writers: each refused. ----
for ((i = 0; i < 20; i++)); do
        write_refused enabled never >/dev/null
done
thp_is enabled madvise || fail "enabled reads $(thp_get enabled) after 20 one-shot writers"
echo "5. 20 one-shot writers refused"

# ---- 6. An fd opened before the lock writes; the daemon corrects it. ----
daemon_stop
exec {early}>"$THP/enabled"
daemon_start
wait_event 5 lock lock=fanotify
echo always >&"$early" || fail "the write through an fd opened before the lock failed"
exec {early}>&-
thp_wait_for enabled madvise 2 || fail "the early fd's write was not corrected: enabled reads $(thp_get enabled)"
wait_event 2 corrected knob=enabled observed=always
echo "6. an fd opened before the lock: written, then corrected"

# ---- 7. A reload that changes a value: the daemon's own write goes through. ----
lock_policy never
kill -HUP "$DAEMON_PID"
thp_wait_for enabled never 3 || fail "the reload's value was not written: enabled reads $(thp_get enabled)"
write_refused enabled madvise >/dev/null
thp_is enabled never || fail "enabled reads $(thp_get enabled) after the reload and a refused write"
echo "7. a reload to never: written by the daemon; others still refused"

# ---- 8. SIGKILL of the daemon: the lock goes with it, at once. ----
kill -KILL "$DAEMON_PID"
wait_exit "$DAEMON_PID" 5 || true
DAEMON_PID=
ok=
for ((i = 0; i < 100; i++)); do
        if sh -c "echo madvise > $THP/enabled" 9>&- 2>/dev/null; then
                ok=$i
                break
        fi
        sleep 0.01
done
[ -n "$ok" ] || fail "1 s after SIGKILL of the daemon, writes to enabled are still refused"
thp_is enabled madvise || fail "the write after SIGKILL did not stick: $(thp_get enabled)"
echo "8. SIGKILL: the knob was writable again after $ok retries of 10 ms"

# ---- 9. No CAP_SYS_PTRACE: no lock, said once, and a write is corrected. ----
lock_policy madvise
daemon_start_cmd setpriv --bounding-set=-sys_ptrace "$THPGUARDD" --config "$POLICY" --log-target=console \
        --write-source=fanotify
wait_event 5 lock lock=none
log_has 'lock: none \(its gate needs CAP_SYS_PTRACE' || fail "the lock line does not say why: $(grep 'lock:' "$TMP/daemon.log")"
sh -c "echo always > $THP/enabled" 9>&- || fail "without a lock, the shell's write failed"
thp_wait_for enabled madvise 2 || fail "without a lock, the write was not corrected: $(thp_get enabled)"
wait_until 3 metric_is "$PROM" 'thpguard_lock{mechanism="none"}' 1 2>/dev/null ||
        fail "no thpguard_lock{mechanism=\"none\"}: $(grep lock "$PROM")"
echo "9. without CAP_SYS_PTRACE: lock none (said, and in the metric), the write corrected"
daemon_stop

# ---- 10. --lock and --audit together: refused with a reason, nothing written. ----
run "$THPGUARDD" --config "$POLICY" --lock --audit --log-target=console
[ "$RC" -ne 0 ] && grep -q "choose one" "$ERR_FILE" || fail "--lock --audit: rc $RC, $(cat "$ERR_FILE")"
echo "10. --lock --audit: refused"
