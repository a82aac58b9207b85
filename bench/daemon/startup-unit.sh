#!/bin/bash
# SPDX-License-Identifier: MIT
#
#   bench/daemon/startup-unit.sh BUILDDIR [STARTS]
#
# exec -> READY=1 (the policy applied) of thpguardd under its own unit: the
# .deb (tests/packaging/lib.sh builds it, and the Debian 12 tree it boots,
# under BUILDDIR/packaging-tests) installed in a tree booted by
# systemd-nspawn with systemd as PID 1 and the host's THP directory bound
# in, then `systemctl restart thpguardd` STARTS times (default 20). From
# the unit's own timestamps, which systemd takes in microseconds on
# CLOCK_MONOTONIC, and exec-stamp's (a drop-in makes it the unit's
# ExecStart=, which execs thpguardd in its own place, same pid, same
# sandbox):
#   exec-stamp -> ActiveEnterTimestamp: thpguardd's exec to its READY=1
#     (Type=notify), the by-hand row's and the pod's measure;
#   ExecMainStartTimestamp -> ActiveEnterTimestamp: from systemd's fork of
#     the main process, so with the unit's sandbox (namespaces, mounts,
#     PrivateUsers=, IPAddressDeny='s cgroup program) that systemd sets up
#     in the child before the exec;
#   InactiveExitTimestamp -> ActiveEnterTimestamp: the whole start, the
#     privileged ExecStartPre= that loads the write source into the fd
#     store included.
# Under the unit the write source comes from the fd store, so the daemon
# loads nothing itself; the startup line says which source it got.
# Prints the figures and the machine. Needs root, systemd-nspawn,
# debootstrap and dpkg-dev (tests/packaging/boot.sh needs the same), and a
# quiet machine. Restores every THP knob it finds (tests/lib/real-sysfs.sh).
set -euo pipefail
BUILD=$(realpath "${1:?usage: startup-unit.sh BUILDDIR [STARTS]}")
STARTS=${2:-20}
case $STARTS in '' | *[!0-9]*) echo "startup-unit.sh: STARTS must be a number, not '$STARTS'" >&2; exit 2 ;; esac
export SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
export BUILDDIR=$BUILD
. "$SRCDIR/tests/packaging/lib.sh"
. "$SRCDIR/tests/lib/real-sysfs.sh"
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, systemd-nspawn)"
need systemd-nspawn systemd-container
need debootstrap
need dpkg-buildpackage dpkg-dev
need dh debhelper
need nsenter util-linux
need cc gcc

deb=$(pkg_build deb)
tree_cache=$(pkg_tree "$deb")
run=$PKG_WORK/bench-startup-root
pkg_tree_copy "$tree_cache" "$run"
cp "$deb" "$run/tmp/thpguard.deb"
chroot "$run" dpkg -i /tmp/thpguard.deb >"$TMP/dpkg.log" 2>&1 || fail "dpkg -i failed: $(tail -n 20 "$TMP/dpkg.log")"
rm "$run/tmp/thpguard.deb"
mkdir -p "$run/usr/local/libexec"
cc -static -O2 -o "$run/usr/local/libexec/exec-stamp" "$SRCDIR/bench/daemon/exec-stamp.c"
exec_start=$(sed -n 's/^ExecStart=//p' "$run/lib/systemd/system/thpguardd.service")
mkdir -p "$run/etc/systemd/system/thpguardd.service.d"
printf '[Service]\nExecStart=\nExecStart=/usr/local/libexec/exec-stamp %s\n' "$exec_start" \
        >"$run/etc/systemd/system/thpguardd.service.d/bench-exec-stamp.conf"

real_sysfs_begin
thp_set enabled always
on_exit 'pkg_boot_stop; pkg_tree_remove "'"$run"'"'
pkg_boot "$run" "$TMP/boot.log" >/dev/null
[ "$(pkg_prop thpguardd.service ActiveState)" = active ] || fail "thpguardd.service is not active after boot"

usec() { pkg_prop thpguardd.service "$1"; }
: >"$TMP/times"
for ((i = 0; i < STARTS; i++)); do
        # Not the unit's StartLimitBurst (5 in 10 s) that is measured: its counter reset.
        pkg_inside systemctl reset-failed thpguardd.service
        pkg_inside systemctl restart thpguardd.service || fail "systemctl restart failed"
        [ "$(usec ActiveState)" = active ] || fail "thpguardd.service is not active after a restart"
        # The stamp of this start: the newest line of the unit's invocation.
        stamp=$(pkg_inside journalctl -u thpguardd.service _SYSTEMD_INVOCATION_ID="$(usec InvocationID)" -o cat --no-pager |
                sed -n 's/^exec-stamp: X_THPGUARD_BENCH_EXEC_NS=//p' | tail -n 1)
        [ -n "$stamp" ] || fail "start $((i + 1)): no exec-stamp line in the unit's journal"
        echo "$(usec InactiveExitTimestampMonotonic) $(usec ExecMainStartTimestampMonotonic) $(usec ActiveEnterTimestampMonotonic) $((stamp / 1000))" >>"$TMP/times"
        sleep 0.2
done
pkg_inside journalctl -b -u thpguardd.service -o cat --no-pager | grep 'write source:' | tail -n 1 >"$TMP/source" || :

summary() { # summary LABEL: the sorted column on stdin as min, median, max in ms
        sort -n | awk -v label="$1" -v n="$STARTS" '
                { v[NR] = $1 }
                END { printf "%s over %d starts: min %.2f ms, median %.2f ms, max %.2f ms\n", label, n,
                        v[1] / 1000, (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2) / 1000, v[n] / 1000 }'
}
echo "machine: $(uname -srm), $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "unit: $(basename "$deb") in Debian 12 under systemd-nspawn, systemd $(pkg_inside systemctl --version | awk 'NR == 1 {print $2}')"
awk '{ print $3 - $4 }' "$TMP/times" | summary "unit: exec -> READY=1 (exec-stamp -> ActiveEnter)"
awk '{ print $3 - $2 }' "$TMP/times" | summary "unit: fork, sandbox and exec -> READY=1 (ExecMainStart -> ActiveEnter)"
awk '{ print $3 - $1 }' "$TMP/times" | summary "unit: whole start, ExecStartPre= included (InactiveExit -> ActiveEnter)"
echo "write source at the last start: $(cat "$TMP/source")"
