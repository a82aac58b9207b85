#!/bin/bash
# The proof: the .deb installed in a minimal Debian tree that
# boots under systemd-nspawn with systemd as PID 1, enforcing this host's
# real THP knobs through a bind mount of /sys/kernel/mm/transparent_hugepage.
#
#  1. build the .deb; 2. debootstrap a bookworm tree (cached under the build
#  directory); 3. dpkg -i the .deb into a copy of it; 4. set the host's
#  knobs out of policy; 5. boot it with
#     systemd-nspawn -D DIR --register=no --keep-unit --console=passive -b \
#         --bind=/sys/kernel/mm/transparent_hugepage
#  6. assert from inside, with systemctl and journalctl run in the
#  container's namespaces (nsenter -t <its PID 1> -a: with --register=no
#  there is no machined, so neither machinectl nor systemd-run --machine);
#     (and that a service opted out through a thpguardctl exec drop-in runs
#     with THP_enabled: 0 under that systemd; and that the daemon runs with
#     no capability at all, its fanotify groups handed over by the unit's
#     privileged ExecStartPre= through the fd store, and names a one-shot
#     writer);
#  7. power it off, restore the host's knobs, and check that no process and
#  no cgroup is left behind.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$SRCDIR/tests/lib/real-sysfs.sh"

need systemd-nspawn systemd-container
need debootstrap
need dpkg-buildpackage dpkg-dev
need dh debhelper
need nsenter util-linux
need jq
need pgrep procps
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, systemd-nspawn)"
[ -d /sys/fs/cgroup ] || skip "no /sys/fs/cgroup: systemd-nspawn cannot boot a container here"
# A systemd PID 1 with --keep-unit would put the container in our unit;
# here PID 1 is not systemd and nspawn makes payload/ and supervisor/ below
# our own cgroup. Both work; the cgroup check below handles the latter.

deb=$(pkg_build deb)
tree_cache=$(pkg_tree "$deb")
echo "deb: $deb"
echo "tree: $tree_cache"

run=$PKG_WORK/boot-root
results=$PKG_WORK/boot-results
pkg_tree_copy "$tree_cache" "$run"
# A service opted out of THP as README.md ("Per-workload opt-outs") says for a
# systemd without MemoryTHP=: a drop-in that starts it through thpguardctl exec.
mkdir -p "$run/etc/systemd/system/thp-optout-probe.service.d"
printf '[Service]\nType=exec\nExecStart=/bin/sleep infinity\n' >"$run/etc/systemd/system/thp-optout-probe.service"
printf '[Service]\nExecStart=\nExecStart=/usr/bin/thpguardctl exec --thp=disable -- /bin/sleep infinity\n' \
        >"$run/etc/systemd/system/thp-optout-probe.service.d/thp.conf"
rm -rf "$results"
mkdir -p "$results"
cp "$deb" "$run/tmp/thpguard.deb"
chroot "$run" dpkg -i /tmp/thpguard.deb >"$results/dpkg.log" 2>&1 ||
        fail "dpkg -i in the tree failed: $(tail -n 20 "$results/dpkg.log")"
rm "$run/tmp/thpguard.deb"
[ -L "$run/etc/systemd/system/sysinit.target.wants/thpguardd.service" ] ||
        fail "installing the .deb did not enable thpguardd.service (no sysinit.target.wants link)"
echo "ok: dpkg -i enabled the unit: $(readlink "$run/etc/systemd/system/sysinit.target.wants/thpguardd.service")"

# verify on the installed unit, in the installed tree: nothing on stderr.
err=$(systemd-analyze verify --man=no --root="$run" "$run/lib/systemd/system/thpguardd.service" 2>&1 >/dev/null) || true
[ -z "$err" ] || fail "systemd-analyze verify on the installed unit printed: $err"
echo "ok: systemd-analyze verify on the installed unit: clean"

# ---- 4. The host's real knobs, out of policy ---------------------------------
real_sysfs_begin
thp_set enabled always
thp_set defrag always
thp_set khugepaged/defrag 1
echo "host knobs set out of policy: enabled=always defrag=always khugepaged/defrag=1"

# ---- 5. Boot -----------------------------------------------------------------
cleanup() {
        pkg_boot_stop
        # The host's knobs are put back after this (real_sysfs_restore runs
        # last), once the container's daemon is gone (it would correct them
        # again). The booted copy (250 MB) is kept only to debug a failure.
        [ "$TEST_RC" -ne 0 ] || pkg_tree_remove "$run"
}
on_exit cleanup
inside() {
        pkg_inside "$@"
}
pkg_boot "$run" "$results/console.log"

# ---- 6. Assertions -------------------------------------------------------------
prop() { # prop UNIT PROPERTY
        pkg_prop "$@"
}

# The unit is active (running), with its READY status.
inside systemctl status thpguardd --no-pager >"$results/status.txt" 2>&1 || true
cat "$results/status.txt"
[ "$(prop thpguardd ActiveState)/$(prop thpguardd SubState)" = active/running ] ||
        fail "thpguardd is $(prop thpguardd ActiveState)/$(prop thpguardd SubState), not active/running"
grep -q 'Active: active (running)' "$results/status.txt" || fail "systemctl status does not say active (running)"
status=$(prop thpguardd StatusText)
[[ $status == enforcing\ * ]] || fail "StatusText is '$status', expected the READY status 'enforcing ...'"
main_pid=$(prop thpguardd MainPID)
echo "ok: thpguardd active (running), MainPID $main_pid, status '$status'"

# No capability at any time, and the fanotify groups from the fd store.
# daemon_privileges PID: the daemon's sets are empty, no-new-privs and
# seccomp are on, it holds both groups, and none is left in the store.
daemon_privileges() {
        local st groups
        st=$(inside cat "/proc/$1/status")
        # Here-strings, not `echo | grep -q`: under pipefail, grep -q leaving
        # early can fail the pipeline with echo's SIGPIPE (a Seccomp: 2 line
        # that was there failed its check once here).
        for f in CapInh CapPrm CapEff CapBnd CapAmb; do
                grep -qx "$f:[[:space:]]*0000000000000000" <<<"$st" ||
                        fail "thpguardd (pid $1) has $(grep "^$f:" <<<"$st")"
        done
        grep -qx $'NoNewPrivs:\t1' <<<"$st" || fail "thpguardd (pid $1): $(grep NoNewPrivs <<<"$st")"
        grep -qx $'Seccomp:\t2' <<<"$st" || fail "thpguardd (pid $1): $(grep '^Seccomp:' <<<"$st")"
        groups=$(inside find "/proc/$1/fd" -lname 'anon_inode:\[fanotify\]' | wc -l)
        [ "$groups" -eq 2 ] || fail "thpguardd (pid $1) holds $groups fanotify groups, want 2 (from ExecStartPre=)"
        [ "$(prop thpguardd NFileDescriptorStore)" = 0 ] ||
                fail "the fd store still holds $(prop thpguardd NFileDescriptorStore) fds: the daemon did not take its groups out"
}
daemon_privileges "$main_pid"
inside journalctl --no-pager -u thpguardd -o cat | grep -q 'writer attribution is off' &&
        fail "thpguardd says writer attribution is off: $(inside journalctl --no-pager -u thpguardd -o cat | grep 'attribution')"
echo "ok: thpguardd runs with every capability set 0 (bounding set too), NoNewPrivs 1, seccomp; its 2 fanotify groups came from ExecStartPre= and left the fd store"

# The opted-out service: thpguardctl exec became the service's own program
# (same PID, so MainPID and Type= hold), and it runs with THP disabled.
inside systemctl start thp-optout-probe || fail "thp-optout-probe did not start: $(inside systemctl status thp-optout-probe --no-pager)"
probe_pid=$(prop thp-optout-probe MainPID)
[ "$(inside cat "/proc/$probe_pid/comm")" = sleep ] ||
        fail "thp-optout-probe's MainPID $probe_pid is $(inside cat "/proc/$probe_pid/comm"), not the service's sleep"
inside grep -qx $'THP_enabled:\t0' "/proc/$probe_pid/status" ||
        fail "thp-optout-probe runs with $(inside grep THP_enabled "/proc/$probe_pid/status")"
inside systemctl stop thp-optout-probe
echo "ok: a unit started through thpguardctl exec --thp=disable: MainPID $probe_pid is sleep, THP_enabled: 0"

# The host's knobs are compliant.
[ "$(thp_get enabled)" = madvise ] || fail "host enabled is $(thp_get enabled), want madvise"
[ "$(thp_get defrag)" = madvise ] || fail "host defrag is $(thp_get defrag), want madvise"
[ "$(thp_get khugepaged/defrag)" = 0 ] || fail "host khugepaged/defrag is $(thp_get khugepaged/defrag), want 0"
inside thpguardd --verify >"$results/verify.txt" 2>&1 || fail "thpguardd --verify inside: $(cat "$results/verify.txt")"
echo "ok: host knobs compliant: enabled=madvise defrag=madvise khugepaged/defrag=0"

# The structured startup correction in the journal.
journal() { # journal MATCHES... -> JSON lines
        inside journalctl --no-pager -o json "$@"
}
CORRECTED=$(sed -n 's/^#define THPGUARD_MESSAGE_CORRECTED *"\(.*\)"/\1/p' "$SRCDIR/include/thpguard/message-ids.h")
RELOADED=$(sed -n 's/^#define THPGUARD_MESSAGE_POLICY_RELOADED *"\(.*\)"/\1/p' "$SRCDIR/include/thpguard/message-ids.h")
entry=$(journal MESSAGE_ID="$CORRECTED" THPGUARD_TRIGGER=startup THPGUARD_KNOB=enabled | tail -n 1)
[ -n "$entry" ] || fail "no startup correction of 'enabled' in the journal: $(journal -u thpguardd | jq -r .MESSAGE)"
echo "$entry" | jq -e '._SYSTEMD_UNIT == "thpguardd.service" and .PRIORITY == "5" and .THPGUARD_OBSERVED == "always"
        and .THPGUARD_DESIRED == "madvise" and .THPGUARD_RESULT == "corrected" and (.MESSAGE | length > 0)' >/dev/null ||
        fail "the startup entry lacks a field: $entry"
for k in defrag khugepaged/defrag; do
        [ -n "$(journal MESSAGE_ID="$CORRECTED" THPGUARD_TRIGGER=startup THPGUARD_KNOB="$k")" ] ||
                fail "no startup correction of $k in the journal"
done
echo "ok: journal: $(echo "$entry" | jq -r '"\(.MESSAGE) [MESSAGE_ID=\(.MESSAGE_ID) PRIORITY=\(.PRIORITY) THPGUARD_KNOB=\(.THPGUARD_KNOB) OBSERVED=\(.THPGUARD_OBSERVED) DESIRED=\(.THPGUARD_DESIRED) TRIGGER=\(.THPGUARD_TRIGGER) RESULT=\(.THPGUARD_RESULT)]"')"
# journalctl -x explains it from the installed catalog.
inside journalctl --no-pager -x MESSAGE_ID="$CORRECTED" THPGUARD_KNOB=enabled -n 1 >"$results/journal-x.txt"
grep -q 'Subject: THP knob enabled corrected' "$results/journal-x.txt" ||
        fail "journalctl -x shows no catalog text: $(cat "$results/journal-x.txt")"
echo "ok: journalctl -x explains the entry from the catalog"

# Started before basic.target (and sysinit.target): READY=1 came first.
t_unit=$(prop thpguardd ActiveEnterTimestampMonotonic)
t_sysinit=$(prop sysinit.target ActiveEnterTimestampMonotonic)
t_basic=$(prop basic.target ActiveEnterTimestampMonotonic)
[ "$t_unit" -gt 0 ] && [ "$t_unit" -lt "$t_basic" ] ||
        fail "thpguardd became active at ${t_unit} us, not before basic.target (${t_basic} us)"
[ "$t_unit" -lt "$t_sysinit" ] || fail "thpguardd became active at ${t_unit} us, after sysinit.target (${t_sysinit} us)"
echo "ok: ordering: thpguardd active at ${t_unit} us < sysinit.target ${t_sysinit} us < basic.target ${t_basic} us (monotonic)"

# systemctl reload: a new policy takes effect, through SIGHUP, without a restart.
n_reloads() {
        journal MESSAGE_ID="$RELOADED" _SYSTEMD_UNIT=thpguardd.service | wc -l
}
cat >"$run/etc/thpguard/thpguard.conf.new" <<'POLICY'
# written by tests/packaging/boot.sh
mode = "enforce";
recheck_interval = 30;
thp = {
  enabled = "never";
  defrag = "madvise";
  khugepaged = { defrag = false; };
};
POLICY
chmod 0644 "$run/etc/thpguard/thpguard.conf.new"
mv "$run/etc/thpguard/thpguard.conf.new" "$run/etc/thpguard/thpguard.conf"
# The daemon may reload by itself on the file change: let that settle, so
# the count below measures systemctl reload alone.
thp_wait_for enabled never 5 || fail "the new policy (enabled = never) did not take effect"
sleep 0.5
before=$(n_reloads)
inside systemctl reload thpguardd || fail "systemctl reload thpguardd failed"
for ((i = 0; i < 100; i++)); do
        [ "$(n_reloads)" -gt "$before" ] && break
        sleep 0.05
done
[ "$(n_reloads)" -gt "$before" ] || fail "systemctl reload logged no 'policy reloaded' entry"
[ "$(prop thpguardd ActiveState)/$(prop thpguardd SubState)" = active/running ] ||
        fail "after reload thpguardd is $(prop thpguardd ActiveState)/$(prop thpguardd SubState)"
[ "$(prop thpguardd MainPID)" = "$main_pid" ] || fail "reload restarted the daemon (MainPID $main_pid -> $(prop thpguardd MainPID))"
[ "$(thp_get enabled)" = never ] || fail "after reload enabled is $(thp_get enabled), want never"
echo "ok: systemctl reload: 'policy reloaded' logged, same MainPID, enabled=never in force, status '$(prop thpguardd StatusText)'"

# systemctl reload with an invalid policy fails, shows why, and changes
# nothing: ExecReload= runs --check-config before the SIGHUP.
cp -p "$run/etc/thpguard/thpguard.conf" "$results/good.conf"
printf 'thp = { enabled = "sometimes"; };\n' >"$run/etc/thpguard/thpguard.conf.new"
chmod 0644 "$run/etc/thpguard/thpguard.conf.new"
mv "$run/etc/thpguard/thpguard.conf.new" "$run/etc/thpguard/thpguard.conf"
if inside systemctl reload thpguardd 2>"$results/reload-bad.txt"; then
        fail "systemctl reload succeeded with an invalid policy"
fi
inside systemctl status thpguardd --no-pager -n 20 >"$results/status-bad.txt" 2>&1 || true
grep -q 'thpguard.conf:1: .*sometimes' "$results/status-bad.txt" ||
        fail "systemctl status does not show the policy error: $(cat "$results/status-bad.txt")"
[ "$(prop thpguardd ActiveState)/$(prop thpguardd SubState)" = active/running ] ||
        fail "after a refused reload thpguardd is $(prop thpguardd ActiveState)/$(prop thpguardd SubState)"
[ "$(prop thpguardd MainPID)" = "$main_pid" ] || fail "a refused reload restarted the daemon"
[ "$(thp_get enabled)" = never ] || fail "after a refused reload enabled is $(thp_get enabled), want never"
echo "ok: systemctl reload with an invalid policy failed ($(tr '\n' ' ' <"$results/reload-bad.txt")), status shows: $(grep -o 'thpguard.conf:1: .*' "$results/status-bad.txt" | head -n 1)"
cp -p "$results/good.conf" "$run/etc/thpguard/thpguard.conf"

# Restart=always: a stray SIGTERM does not leave the node unguarded.
inside kill -TERM "$main_pid"
for ((i = 0; i < 100; i++)); do
        new_pid=$(prop thpguardd MainPID)
        [ "$new_pid" != 0 ] && [ "$new_pid" != "$main_pid" ] &&
                [ "$(prop thpguardd ActiveState)/$(prop thpguardd SubState)" = active/running ] && break
        sleep 0.1
done
[ "$new_pid" != 0 ] && [ "$new_pid" != "$main_pid" ] ||
        fail "after a stray SIGTERM thpguardd is $(prop thpguardd ActiveState)/$(prop thpguardd SubState), MainPID $new_pid"
main_pid=$new_pid
echo "ok: a stray SIGTERM: systemd restarted thpguardd (MainPID now $main_pid)"

# A drift written from the host is corrected (through inotify: a bind mount
# is the same superblock).
thp_set enabled always
thp_wait_for enabled never 2 || fail "a drift written from the host was not corrected"
for ((i = 0; i < 100; i++)); do
        entry=$(journal MESSAGE_ID="$CORRECTED" THPGUARD_KNOB=enabled THPGUARD_OBSERVED=always THPGUARD_DESIRED=never | tail -n 1)
        [ -n "$entry" ] && break
        sleep 0.05
done
[ -n "$entry" ] || fail "the host drift's correction is not in the journal"
echo "ok: host drift corrected: $(echo "$entry" | jq -r .MESSAGE)"

# After the restart too: a one-shot writer inside the container, reaped at
# once, is named (the writer gate holds its open while it is looked up).
daemon_privileges "$main_pid"
inside sh -c 'echo always > /sys/kernel/mm/transparent_hugepage/enabled'
thp_wait_for enabled never 2 || fail "the one-shot writer's drift was not corrected"
for ((i = 0; i < 100; i++)); do
        entry=$(journal MESSAGE_ID="$CORRECTED" THPGUARD_KNOB=enabled THPGUARD_WRITER_COMM=sh | tail -n 1)
        [ -n "$entry" ] && break
        sleep 0.05
done
[ -n "$entry" ] || fail "the one-shot writer is not named in the journal: $(journal MESSAGE_ID="$CORRECTED" THPGUARD_KNOB=enabled | tail -n 1)"
echo "$entry" | jq -e '(.THPGUARD_WRITER_PID | tonumber > 0) and (.THPGUARD_WRITER_EXITED // "0") == "0"' >/dev/null ||
        fail "the one-shot writer's record lacks its pid or says exited: $entry"
echo "ok: a one-shot writer named under the unit: $(echo "$entry" | jq -r '"\(.MESSAGE) [pid \(.THPGUARD_WRITER_PID), unit \(.THPGUARD_WRITER_UNIT // "-")]"')"

# systemctl stop is clean: exit 0, Result=success, and the knobs stay.
inside systemctl stop thpguardd || fail "systemctl stop thpguardd failed"
res="$(prop thpguardd ActiveState) $(prop thpguardd Result) $(prop thpguardd ExecMainCode) $(prop thpguardd ExecMainStatus)"
# ExecMainCode 1 is CLD_EXITED.
[ "$res" = "inactive success 1 0" ] ||
        fail "after stop: ActiveState Result ExecMainCode ExecMainStatus = $res, want 'inactive success 1 0'"
[ "$(thp_get enabled)" = never ] || fail "stopping rolled enabled back to $(thp_get enabled)"
inside test -e "/proc/$main_pid" && fail "the daemon (pid $main_pid in the container) is still there after stop" || true
# The refused reload above logged its errors on purpose; nothing else may.
errs=$(inside journalctl --no-pager -u thpguardd -p err -o cat |
        grep -v -e 'invalid value "sometimes"' -e '^Reload failed for thpguardd' || true)
[ -z "$errs" ] || fail "thpguardd logged errors: $errs"
echo "ok: systemctl stop: exited 0, Result=success, knobs left as they were, no errors logged"

inside journalctl --no-pager -u thpguardd -o short-monotonic >"$results/journal.txt" 2>&1 || true

# ---- 7. Power off, restore, no leftovers (cleanup() does the rest) -------------
pkg_poweroff
echo "ok: powered off cleanly"
real_sysfs_restore
echo "ok: no process left in the tree; host knobs restored"
echo "journal of the unit: $results/journal.txt"
echo PASS
