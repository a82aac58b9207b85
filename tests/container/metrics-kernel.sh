#!/bin/bash
# The figures the daemon reads from this machine's real /proc, in the metrics
# file it really writes (parsed by prometheus_client):
#  - thpguard_khugepaged_cpu_seconds_total lies between khugepaged's
#    utime+stime read here (awk on /proc/PID/stat, not our parser) just
#    before the daemon starts and just after the file is written. Without a
#    khugepaged (THP off): no such line.
#  - thpguard_memory_pressure_stalled_seconds_total{kind="some"|"full"} lie
#    between /proc/pressure/memory's totals before and after. Without PSI
#    (a kernel before 4.20, or psi=0): no such line.
#  - in a new PID namespace with its own /proc (no kernel thread in it) a
#    user process named khugepaged whose parent is pid 2 burns a second of
#    CPU: it is not taken for khugepaged (no PF_KTHREAD), and no line is
#    written.
# The real THP sysfs is only read, under its lock (REAL_SYSFS), so that no
# other test turns THP off, and khugepaged away, meanwhile; the daemon
# enforces a private copy of the 6.18 fixture.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/lib/real-sysfs.sh"
python_with prometheus_client python3-prometheus-client
real_sysfs_begin

HZ=$(getconf CLK_TCK)
ROOT=$TMP/sys
cp -a "$SRCDIR/tests/fixtures/6.18" "$ROOT"
mkdir "$TMP/metrics" "$TMP/policy"
M=$TMP/metrics/thpguard.prom
POLICY=$TMP/policy/thpguard.conf
printf 'recheck_interval = 3600;\nthp = { khugepaged = { defrag = true; }; };\n' | write_policy "$POLICY"

# The khugepaged kernel thread: named so, a child of kthreadd (2). Empty if none.
khugepaged_pid() {
        local p
        for p in $(pgrep -x khugepaged || true); do
                [ "$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)" = 2 ] && echo "$p" && return 0
        done
        return 0
}
# utime + stime of a task whose comm holds no space or ')'.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
psi_total() { awk -v k="$1" '$1 == k { sub(/.*total=/, ""); print }' /proc/pressure/memory; }

K=$(khugepaged_pid)
[ -n "$K" ] && k_before=$(ticks "$K")
have_psi=
if cat /proc/pressure/memory >/dev/null 2>&1; then
        have_psi=1
        some_before=$(psi_total some)
        full_before=$(psi_total full)
fi

"$THPGUARDD" --config "$POLICY" --sysfs-root "$ROOT" --log-target=console --metrics-file "$M" 2>"$TMP/log" 9>&- &
PID=$!
on_exit "kill $PID 2>/dev/null; wait $PID 2>/dev/null"
wait_until 10 test -s "$M" || {
        cat "$TMP/log" >&2
        fail "no metrics file at $M"
}

[ -n "$K" ] && k_after=$(ticks "$K")
if [ -n "$have_psi" ]; then
        some_after=$(psi_total some)
        full_after=$(psi_total full)
fi

grep -E '^thpguard_(khugepaged_cpu|memory_pressure)' "$M" || true
if [ -n "$K" ]; then
        # Seconds from ticks, as the kernel counts them: the bounds in the file's own unit.
        lo=$(awk -v t="$k_before" -v hz="$HZ" 'BEGIN { printf "%.6f", t / hz }')
        hi=$(awk -v t="$k_after" -v hz="$HZ" 'BEGIN { printf "%.6f", t / hz }')
        echo "khugepaged (pid $K): $lo s .. $hi s"
        metrics_check "$M" "thpguard_khugepaged_cpu_seconds_total>=$lo" "thpguard_khugepaged_cpu_seconds_total<=$hi"
else
        echo "no khugepaged kernel thread here (THP off?): the metric must be absent"
        ! grep -q khugepaged_cpu "$M" || fail "thpguard_khugepaged_cpu_seconds_total written with no khugepaged"
fi

if [ -n "$have_psi" ]; then
        echo "PSI memory: some $some_before .. $some_after us, full $full_before .. $full_after us"
        us() { awk -v u="$1" 'BEGIN { printf "%.6f", u / 1000000 }'; }
        metrics_check "$M" \
                "thpguard_memory_pressure_stalled_seconds_total{kind=\"some\"}>=$(us "$some_before")" \
                "thpguard_memory_pressure_stalled_seconds_total{kind=\"some\"}<=$(us "$some_after")" \
                "thpguard_memory_pressure_stalled_seconds_total{kind=\"full\"}>=$(us "$full_before")" \
                "thpguard_memory_pressure_stalled_seconds_total{kind=\"full\"}<=$(us "$full_after")"
else
        echo "no readable /proc/pressure/memory here: the metric must be absent"
        ! grep -q memory_pressure "$M" || fail "PSI totals written on a kernel without PSI"
fi
kill "$PID"
wait "$PID" || fail "thpguardd exited $? on SIGTERM"

# An impostor the scan meets first. unshare --mount-proc: pid 1 is the shell
# below, pid 2 its first child, the subshell, whose child is the impostor
# (bash under the name khugepaged), busy until it has used a second of CPU.
command -v unshare >/dev/null || skip "no unshare(1)"
cp /bin/bash "$TMP/khugepaged"
rm -f "$M"
export HZ TMP THPGUARDD POLICY ROOT M
unshare --pid --fork --mount-proc bash -euc '
        ( "$TMP/khugepaged" -c "while :; do :; done" & echo $! >"$TMP/impostor.pid"; wait ) &
        for i in $(seq 600); do
                read -r imp <"$TMP/impostor.pid" 2>/dev/null || imp=
                [ -n "$imp" ] && [ "$(awk "{ print \$14 + \$15 }" "/proc/$imp/stat")" -ge "$HZ" ] && break
                sleep 0.05
        done
        cat "/proc/$imp/stat" >"$TMP/impostor.stat"
        "$THPGUARDD" --config "$POLICY" --sysfs-root "$ROOT" --log-target=console --metrics-file "$M" \
                2>"$TMP/log.ns" &
        for i in $(seq 200); do [ -s "$M" ] && break; sleep 0.05; done
        kill -TERM $! 2>/dev/null
        wait $! || true
        kill -9 "$imp" 2>/dev/null || true
' 9>&- || fail "the PID namespace run failed"
read -r _ comm _ ppid _ _ _ _ flags _ _ _ _ ut st _ <"$TMP/impostor.stat"
echo "the impostor: comm $comm, ppid $ppid, flags $flags, $((ut + st)) ticks"
# 0x00200000 is PF_KTHREAD: the impostor must differ from khugepaged in that alone.
[ "$comm" = "(khugepaged)" ] && [ "$ppid" = 2 ] && [ $((flags & 0x00200000)) = 0 ] && [ $((ut + st)) -ge "$HZ" ] ||
        fail "the impostor is not a khugepaged child of pid 2 with a second of CPU: $(cat "$TMP/impostor.stat")"
[ -s "$M" ] || fail "no metrics file from the daemon in the PID namespace: $(cat "$TMP/log.ns")"
metrics_check "$M" 'thpguard_up>=0'
! grep -q '^thpguard_khugepaged_cpu' "$M" || fail "a user process was taken for khugepaged: $(grep khugepaged_cpu "$M")"
echo "PASS"
