#!/bin/bash
# Upgrade with no window: the .deb at two versions on a booted Debian 12
# tree (systemd-nspawn, the host's THP directory bound in), while a foreign
# writer sets enabled to always every 50 ms from the host.
#
#  1. build the package as the tree is (OLD) and the same sources with a
#     higher version (NEW: a sed on a copy of CMakeLists.txt and
#     packaging/debian/changelog); dpkg -i OLD into a copy of the tree; the
#     operator edits the policy conffile (its recheck, and fight_threshold =
#     0: no back-off from a writer that fights, which this one does by design);
#  2. boot; then, each with the writer running (tests/packaging/drift-writer.py,
#     which notes every write and every value the knob takes, by inotify):
#     a quiet baseline, systemctl reload, systemctl restart, apt-get
#     install ./NEW.deb, and apt-get install --allow-downgrades ./OLD.deb.
#     For each: every write is followed by a read of the policy's value (no
#     drift left), none stays longer than 1 s, the daemon's correction
#     records are counted against the writes, and the longest window is
#     printed;
#  3. after each restart (restart, upgrade, downgrade): a new daemon, its
#     write source loaded again by the unit's ExecStartPre= (its startup line
#     `write source: ...` logged anew, the fanotify groups held, the fd store
#     empty again); the operator's conffile kept, byte for byte;
#  4. remove and purge: the knobs are left as they are (README.md,
#     NEWS.Debian), remove keeps the conffile, purge removes /etc/thpguard
#     and the unit's enablement.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$SRCDIR/tests/lib/real-sysfs.sh"

need systemd-nspawn systemd-container
need debootstrap
need dpkg-buildpackage dpkg-dev
need dh debhelper
need nsenter util-linux
need jq
need python3
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, systemd-nspawn)"
[ -d /sys/fs/cgroup ] || skip "no /sys/fs/cgroup: systemd-nspawn cannot boot a container here"

# ---- 1. Two versions ------------------------------------------------------------
old_deb=$(pkg_build deb)
old_version=$(dpkg-deb -f "$old_deb" Version)
# NEW: the same sources, one version up. Built once per source state, like
# pkg_build's. The copy is outside any git work tree, so that
# packaging/export-source copies it whole.
IFS=. read -r major minor patch <<<"$old_version"
new_version=$major.$minor.$((patch + 1))
hash=$(pkg_source_hash)
new_dir=$PKG_WORK/out/deb-upgrade
if [ "$(cat "$new_dir/.source-hash" 2>/dev/null)" != "$hash" ]; then
        rm -rf "$new_dir"
        mkdir -p "$new_dir"
        copy=$(mktemp -d /tmp/thpguard-upgrade-src.XXXXXX)
        on_exit "rm -rf '$copy'"
        "$SRCDIR/packaging/export-source" "$copy/src"
        sed -i "s/^project(thpguard VERSION $old_version /project(thpguard VERSION $new_version /" "$copy/src/CMakeLists.txt"
        { printf 'thpguard (%s) unstable; urgency=medium\n\n  * Test build one version up (tests/packaging/upgrade.sh).\n\n' "$new_version"
          printf ' -- thpguard developers <thpguard-dev@lists.example.org>  Tue, 02 Jan 2024 00:00:00 +0000\n\n'
          cat "$copy/src/packaging/debian/changelog"; } >"$copy/changelog"
        mv "$copy/changelog" "$copy/src/packaging/debian/changelog"
        echo "building thpguard $new_version from a copy of the sources..." >&2
        "$copy/src/packaging/build-deb" "$new_dir" >&2 || fail "packaging/build-deb of $new_version failed"
        echo "$hash" >"$new_dir/.source-hash"
fi
new_deb=$(ls "$new_dir"/thpguard_"$new_version"_*.deb)
echo "old: $old_deb ($old_version)"
echo "new: $new_deb ($new_version)"

tree_cache=$(pkg_tree "$old_deb")
run=$PKG_WORK/upgrade-root
results=$PKG_WORK/upgrade-results
rm -rf "$results"
mkdir -p "$results"
pkg_tree_copy "$tree_cache" "$run"
# In /root: the booted container has a tmpfs of its own on /tmp.
cp "$old_deb" "$run/root/old.deb"
cp "$new_deb" "$run/root/new.deb"
chroot "$run" dpkg -i /root/old.deb >"$results/dpkg-old.log" 2>&1 ||
        fail "dpkg -i $old_version in the tree failed: $(tail -n 20 "$results/dpkg-old.log")"
# The operator's change: a recheck of its own, and no writer-fight back-off
# (fight_threshold = 0), without which the daemon would, by design, back off
# from a writer that writes 20 times a second and leave the drift for a while
# (thpguard.conf(5)). The knobs stay the package's (enabled = madvise, which
# the writer fights).
sed -i 's/^recheck_interval = .*/recheck_interval = 20;\nfight_threshold = 0;/' "$run/etc/thpguard/thpguard.conf"
echo '# changed by the operator (tests/packaging/upgrade.sh)' >>"$run/etc/thpguard/thpguard.conf"
grep -q '^fight_threshold = 0;' "$run/etc/thpguard/thpguard.conf" || fail "the policy has no recheck_interval line to change"
grep -q '^  enabled = "madvise";' "$run/etc/thpguard/thpguard.conf" || fail "the shipped policy no longer sets enabled = madvise"
cp -p "$run/etc/thpguard/thpguard.conf" "$results/operator.conf"

# ---- 2. Boot ----------------------------------------------------------------------
real_sysfs_begin
thp_set enabled always
writer_pid=
cleanup() {
        [ -z "$writer_pid" ] || { kill -TERM "$writer_pid" 2>/dev/null; wait_exit "$writer_pid" 10 || kill -KILL "$writer_pid"; }
        pkg_boot_stop
        [ "$TEST_RC" -ne 0 ] || pkg_tree_remove "$run"
}
on_exit cleanup
pkg_boot "$run" "$results/console.log"
[ "$(pkg_prop thpguardd ActiveState)" = active ] || fail "thpguardd is not active: $(pkg_inside systemctl status thpguardd --no-pager)"
[ "$(thp_get enabled)" = madvise ] || fail "after boot enabled is $(thp_get enabled), want madvise"

CORRECTED=$(sed -n 's/^#define THPGUARD_MESSAGE_CORRECTED *"\(.*\)"/\1/p' "$SRCDIR/include/thpguard/message-ids.h")
WRITE_SOURCE=$(sed -n 's/^#define THPGUARD_MESSAGE_WRITE_SOURCE *"\(.*\)"/\1/p' "$SRCDIR/include/thpguard/message-ids.h")
corrections() { # the daemon's corrections of the writer's drift, as JSON lines
        pkg_inside journalctl --no-pager -o json MESSAGE_ID="$CORRECTED" _SYSTEMD_UNIT=thpguardd.service \
                THPGUARD_KNOB=enabled THPGUARD_OBSERVED=always THPGUARD_DESIRED=madvise
}
write_sources() { # the startup lines that name the write source
        pkg_inside journalctl --no-pager -o cat MESSAGE_ID="$WRITE_SOURCE" _SYSTEMD_UNIT=thpguardd.service
}

# phase NAME SECONDS-BEFORE CMD... : the writer runs from SECONDS-BEFORE
# before CMD until 2 s after it; then the summary is checked and printed.
phase() {
        local name=$1 lead=$2 out=$results/drift-$1.json n0 n1 t0 s
        shift 2
        n0=$(corrections | wc -l)
        python3 "$SRCDIR/tests/packaging/drift-writer.py" "$THP/enabled" always madvise 0.05 "$out" 9>&- &
        writer_pid=$!
        sleep "$lead"
        t0=$SECONDS
        if [ $# -gt 0 ]; then
                pkg_inside env DEBIAN_FRONTEND=noninteractive "$@" </dev/null >"$results/$name.log" 2>&1 || fail "$name: '$*' failed: $(tail -n 20 "$results/$name.log")"
        fi
        s=$((SECONDS - t0))
        sleep 2
        kill -TERM "$writer_pid"
        wait_exit "$writer_pid" 10 || fail "$name: the writer did not stop"
        writer_pid=
        [ -s "$out" ] || fail "$name: the writer wrote no summary"
        n1=$(corrections | wc -l)
        jq -e '.writes > 0 and .write_errors == [] and .uncorrected == 0 and .windows_over_1s == 0
                and .final == "madvise"' "$out" >/dev/null ||
                fail "$name: a drift was left or lasted over 1 s: $(jq -c 'del(.started_usec)' "$out")"
        [ "$((n1 - n0))" -gt 0 ] || fail "$name: no correction record while the writer ran"
        echo "ok: $name${*:+ ('$*', ${s} s)}: $(jq -r '"\(.writes) writes of always, \(.corrected) corrected, \(.uncorrected) left; window median \(.median_window_ms) ms, longest \(.longest_window_ms) ms"' "$out"); $((n1 - n0)) correction records"
        echo "$name $(jq -c '{writes, corrected, uncorrected, median_window_ms, longest_window_ms, records: '"$((n1 - n0))"'}' "$out")" >>"$results/summary.txt"
}

# restarted NAME OLD-PID: a new daemon; its write source loaded again and said.
restarted() {
        local name=$1 old_pid=$2 pid groups ws
        pid=$(pkg_prop thpguardd MainPID)
        [ "$pid" != 0 ] && [ "$pid" != "$old_pid" ] || fail "$name: MainPID is $pid (was $old_pid): no new daemon"
        [ "$(pkg_prop thpguardd ActiveState)/$(pkg_prop thpguardd SubState)" = active/running ] ||
                fail "$name: thpguardd is $(pkg_prop thpguardd ActiveState)/$(pkg_prop thpguardd SubState)"
        groups=$(pkg_inside find "/proc/$pid/fd" -lname 'anon_inode:\[fanotify\]' | wc -l)
        [ "$(pkg_prop thpguardd NFileDescriptorStore)" = 0 ] ||
                fail "$name: the fd store holds $(pkg_prop thpguardd NFileDescriptorStore) fds the daemon did not take"
        ws=$(write_sources | wc -l)
        [ "$ws" -gt "$n_ws" ] || fail "$name: the new daemon logged no 'write source:' line"
        n_ws=$ws
        # The daemon empties the store at once, so nothing in it outlives the
        # old daemon: the unit's ExecStartPre= loads the source again, and says so.
        loads=$(loader_lines | wc -l)
        [ "$loads" -gt "$n_loads" ] || fail "$name: thpguard-write-source (ExecStartPre=) did not run again"
        n_loads=$loads
        echo "    $name: MainPID $old_pid -> $pid, $(pkg_inside readlink "/proc/$pid/exe"); it holds $groups fanotify" \
                "groups, the store is empty again; ExecStartPre= loaded them again ($(loader_lines | tail -n 1 | cut -c1-60)...);" \
                "the daemon says: $(write_sources | tail -n 1 | cut -c1-60)..."
        # Unguarded at most from the old daemon's stop to the new one's READY
        # (its startup corrections come before READY=1).
        echo "    $name: the unit stopped at $(pkg_prop thpguardd ActiveExitTimestampMonotonic) us and was active again at" \
                "$(pkg_prop thpguardd ActiveEnterTimestampMonotonic) us: $((($(pkg_prop thpguardd ActiveEnterTimestampMonotonic) -
                $(pkg_prop thpguardd ActiveExitTimestampMonotonic)) / 1000)) ms; the longest window's write was at" \
                "$(jq -r '.longest[0].write_usec' "$results/drift-$name.json") us"
}
loader_lines() { # what the unit's ExecStartPre= said, a line each start
        pkg_inside journalctl --no-pager -o cat _SYSTEMD_UNIT=thpguardd.service SYSLOG_IDENTIFIER=thpguard-write-source
}

n_ws=$(write_sources | wc -l)
n_loads=$(loader_lines | wc -l)
[ "$n_loads" -gt 0 ] || fail "thpguard-write-source (ExecStartPre=) logged nothing at boot"
echo "startup: $(write_sources | tail -n 1)"
phase baseline 0 sleep 3
pid=$(pkg_prop thpguardd MainPID)
phase reload 1 systemctl reload thpguardd
[ "$(pkg_prop thpguardd MainPID)" = "$pid" ] || fail "reload: the daemon was restarted"
phase restart 1 systemctl restart thpguardd
restarted restart "$pid"

pid=$(pkg_prop thpguardd MainPID)
phase upgrade 1 apt-get install -y /root/new.deb
[ "$(pkg_inside dpkg-query -W -f='${Version}' thpguard)" = "$new_version" ] || fail "upgrade: thpguard is not at $new_version"
grep -q "Unpacking thpguard ($new_version) over ($old_version)" "$results/upgrade.log" || fail "upgrade: apt did not upgrade: $(cat "$results/upgrade.log")"
restarted upgrade "$pid"
pkg_inside thpguardd --version | grep -qF "$new_version" || fail "upgrade: thpguardd --version says $(pkg_inside thpguardd --version)"
cmp -s "$results/operator.conf" "$run/etc/thpguard/thpguard.conf" || fail "upgrade: the operator's conffile was changed: $(diff "$results/operator.conf" "$run/etc/thpguard/thpguard.conf")"
echo "    upgrade: $old_version -> $new_version; the operator's /etc/thpguard/thpguard.conf kept byte for byte"

pid=$(pkg_prop thpguardd MainPID)
phase downgrade 1 apt-get install -y --allow-downgrades /root/old.deb
[ "$(pkg_inside dpkg-query -W -f='${Version}' thpguard)" = "$old_version" ] || fail "downgrade: thpguard is not at $old_version"
restarted downgrade "$pid"
cmp -s "$results/operator.conf" "$run/etc/thpguard/thpguard.conf" || fail "downgrade: the operator's conffile was changed"
echo "    downgrade: $new_version -> $old_version; the operator's conffile kept"

# ---- 4. Remove, purge: the knobs as they are --------------------------------------
pkg_inside env DEBIAN_FRONTEND=noninteractive apt-get remove -y thpguard </dev/null >"$results/remove.log" 2>&1 || fail "apt-get remove failed: $(tail -n 20 "$results/remove.log")"
[ "$(pkg_prop thpguardd ActiveState)" = inactive ] || fail "remove: thpguardd is $(pkg_prop thpguardd ActiveState)"
[ "$(thp_get enabled)" = madvise ] || fail "remove changed enabled to $(thp_get enabled)"
[ ! -e "$run/usr/sbin/thpguardd" ] || fail "remove left /usr/sbin/thpguardd"
cmp -s "$results/operator.conf" "$run/etc/thpguard/thpguard.conf" || fail "remove: the conffile is gone or changed"
thp_set enabled always
sleep 1
[ "$(thp_get enabled)" = always ] || fail "after remove something still corrects enabled"
echo "ok: remove: unit stopped, knobs left as they were (enabled=madvise; a later write of always stays), conffile kept, program removed"
pkg_inside dpkg --purge thpguard </dev/null >"$results/purge.log" 2>&1 || fail "dpkg --purge failed: $(tail -n 20 "$results/purge.log")"
[ ! -e "$run/etc/thpguard" ] || fail "purge left /etc/thpguard: $(ls -la "$run/etc/thpguard")"
[ ! -e "$run/etc/systemd/system/sysinit.target.wants/thpguardd.service" ] || fail "purge left the unit's enablement"
[ "$(thp_get enabled)" = always ] || fail "purge changed enabled to $(thp_get enabled)"
echo "ok: purge: /etc/thpguard and the enablement removed, knobs left as they were"

pkg_inside journalctl --no-pager -u thpguardd -o short-monotonic >"$results/journal.txt" 2>&1 || true
pkg_poweroff
echo "summary ($results/summary.txt):"
cat "$results/summary.txt"
echo PASS
