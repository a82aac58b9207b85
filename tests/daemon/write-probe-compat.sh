#!/bin/bash
# The BPF write probe against ia32 system calls (int $0x80 from a 64-bit
# process, IA32 emulation), on the real kernel and whichever hook it gives
# (on this project's VMs the syscall tracepoints, where the third review
# found both):
#  1. forging: an unprivileged process opens a knob read-only and makes
#     ia32 calls whose numbers are 64-bit write calls (ia32 eventfd2 is
#     pwritev2, getpid is writev), fd and buffer where a 64-bit call has
#     them, as comm kubelet: no write happened, so the next drift (a
#     one-shot sh) is named after sh, never kubelet;
#  2. hiding: a real ia32 write(2) (number 4, x86-64's stat) through another
#     sysfs mount (no inotify event) is corrected within 1 s with
#     trigger=bpf and its writer named, not left to the recheck.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
: "${IA32_WRITE:?IA32_WRITE is not set: run this test through ctest}"
real_sysfs_begin
need setpriv util-linux
rc=0
"$IA32_WRITE" write /dev/null x || rc=$?
[ "$rc" -ne 77 ] || skip "no IA32 emulation here (or not x86-64)"
[ "$rc" -eq 0 ] || fail "ia32-write write /dev/null failed ($rc)"
probe_daemon_start
echo "the probe on hook $PROBE_HOOK: $(grep -m1 'write source' "$TMP/daemon.log" | cut -c1-80)"

# ---- 1. Forged calls name nobody. ----
# The drift after each forger goes through sendfile(2), which the syscall
# tracepoints do not look at: its own record does not come there, and a
# forged record would be all the daemon had to name it by. (On fexit and
# kprobes the sendfile's write is recorded and names its writer.)
sendfile_drift() {
        "$PY" - "$THP/enabled" <<'PY'
import os, sys, tempfile
src = tempfile.TemporaryFile()
src.write(b"always\n"); src.flush()
dst = os.open(sys.argv[1], os.O_WRONLY)  # no O_TRUNC: no event, no read, before the write
os.sendfile(dst, src.fileno(), 0, 7)
PY
}
for round in 1 2 3 4 5; do
        n=$(event_count corrected knob=enabled)
        setpriv --reuid=65534 --regid=65534 --clear-groups "$IA32_WRITE" forge "$THP/enabled" always ||
                fail "the forger failed"
        [ "$(thp_get enabled)" = madvise ] || fail "test bug: the forger wrote the knob"
        sendfile_drift || fail "the sendfile writer failed"
        thp_wait_for enabled madvise 1 || fail "round $round: the drift was not corrected"
        wait_until 3 event_count_ge $((n + 1)) corrected knob=enabled || fail "round $round: no record of the drift"
done
! grep -E 'writer_comm=kubelet( |$)' "$TMP/daemon.log" >&2 ||
        fail "a forged ia32 call (comm kubelet, read-only fd) was named as a drift's writer (above)"
echo "forged ia32 calls on a read-only fd: no record; the drift after each never named after them, 5 of 5"

# ---- 2. A real ia32 write through another sysfs mount. ----
need_mount_ns
for knob in enabled defrag; do
        unshare -m -n --propagation private sh -c 'mount -t sysfs sysfs /sys && exec "$1" write "/sys/kernel/mm/transparent_hugepage/$2" always' \
                sh "$IA32_WRITE" "$knob" || fail "the ia32 writer through another mount failed"
        thp_wait_for "$knob" madvise 1 ||
                fail "an ia32 write(2) of always to $knob through another sysfs mount was not corrected within 1 s: the probe missed it"
        wait_event 2 corrected knob="$knob" observed=always trigger=bpf writer_comm=ia32-write
done
echo "ia32 write(2) through another sysfs mount: corrected at once, trigger=bpf, its writer named"
daemon_stop
