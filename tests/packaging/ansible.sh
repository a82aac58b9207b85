#!/bin/bash
# The Ansible role (packaging/image/ansible/roles/thpguard) as an image
# builder uses it, then on the booted node:
#
#  1. ansible-playbook site.yml through the community.general.chroot
#     connection (the only chroot-like one Debian 12's ansible 7 ships: no
#     nspawn connection) into a Debian 12 tree, with the .deb built from
#     this tree and the role's own template for the policy;
#  2. the same again: PLAY RECAP changed=0 (idempotent);
#  3. the host's knobs set out of policy, the tree booted under
#     systemd-nspawn with the host's THP directory bound in: the unit active
#     before basic.target, the knobs at the templated policy, the startup
#     corrections in the journal, thpguardd --verify clean;
#  4. the playbook on the running node (the same chroot connection, its
#     chroot run inside the container's namespaces) with a changed policy:
#     the handler's systemctl reload puts it in force (a policy-reloaded
#     record, same MainPID), and a run after that is changed=0 again.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$SRCDIR/tests/lib/real-sysfs.sh"

need ansible-playbook ansible
need systemd-nspawn systemd-container
need debootstrap
need dpkg-buildpackage dpkg-dev
need dh debhelper
need nsenter util-linux
need jq
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, chroot, systemd-nspawn)"
[ -d /sys/fs/cgroup ] || skip "no /sys/fs/cgroup: systemd-nspawn cannot boot a container here"
ansible-doc -t connection community.general.chroot >/dev/null 2>&1 ||
        skip "this ansible has no community.general.chroot connection (Debian's ansible package ships it)"

ANSIBLE_DIR=$SRCDIR/packaging/image/ansible
deb=$(pkg_build deb)
# The role's first play puts python3 and python3-apt in where they are
# missing (apt-get, from the archive); the cached tree has them already, so
# the test needs the archive only to make that tree.
tree_cache=$(pkg_tree "$deb" python3,python3-apt)
echo "deb: $deb"
echo "tree: $tree_cache"
run=$PKG_WORK/ansible-root
results=$PKG_WORK/ansible-results
rm -rf "$results"
mkdir -p "$results"
pkg_tree_copy "$tree_cache" "$run"

# Ansible's own state under $TMP: nothing of the machine's ~/.ansible.
export ANSIBLE_HOME=$TMP/ansible-home ANSIBLE_LOCAL_TEMP=$TMP/ansible-tmp ANSIBLE_NOCOLOR=1
# No ansible.cfg of the machine's or the working directory's applies.
printf '[defaults]\n' >"$TMP/ansible.cfg"
export ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3 ANSIBLE_CONFIG=$TMP/ansible.cfg
# As root: no sudo in the tree, none needed.
inventory=$TMP/inventory.ini
echo "image ansible_connection=community.general.chroot ansible_host=$run ansible_become=false" >"$inventory"

# playbook LOG [EXTRA-VARS...]: ansible-playbook site.yml on the inventory;
# prints the recap's changed= count.
playbook() {
        local log=$1 rc=0
        shift
        timeout 600 ansible-playbook -i "$inventory" "$ANSIBLE_DIR/site.yml" \
                -e thpguard_deb="$deb" -e thpguard_policy_template=thpguard.conf.j2 "$@" \
                </dev/null >"$log" 2>&1 9>&- || rc=$?
        [ "$rc" -eq 0 ] || fail "ansible-playbook exited $rc: $(tail -n 30 "$log")"
        sed -n 's/^image *: .*changed=\([0-9]*\).*/\1/p' "$log" | tail -n 1
}
# The policy the role's template writes: every knob off the kernel's and
# the package's defaults, so that its being in force shows.
policy_a=(-e '{"thpguard_thp": {"enabled": "never", "defrag": "defer+madvise"}, "thpguard_khugepaged": {"defrag": false}}')
policy_b=(-e '{"thpguard_thp": {"enabled": "madvise", "defrag": "defer+madvise"}, "thpguard_khugepaged": {"defrag": false}}')

# ---- 1, 2. Applied to the tree, twice ------------------------------------------
t0=$SECONDS
changed=$(playbook "$results/play-1.log" "${policy_a[@]}")
t1=$SECONDS
[ "${changed:-0}" -gt 0 ] || fail "the first run changed nothing: $(tail -n 20 "$results/play-1.log")"
grep -q 'Install thpguard from the .deb' "$results/play-1.log" || fail "the play did not install the .deb"
[ "$(chroot "$run" dpkg-query -W -f='${db:Status-Abbrev}' thpguard)" = "ii " ] || fail "thpguard is not installed in the tree"
[ -L "$run/etc/systemd/system/sysinit.target.wants/thpguardd.service" ] || fail "the role did not enable thpguardd.service"
grep -qx '  enabled = "never";' "$run/etc/thpguard/thpguard.conf" ||
        fail "the templated policy is not in place: $(cat "$run/etc/thpguard/thpguard.conf")"
[ "$(stat -c '%U:%G %a' "$run/etc/thpguard/thpguard.conf")" = "root:root 644" ] ||
        fail "the policy is $(stat -c '%U:%G %a' "$run/etc/thpguard/thpguard.conf"), want root:root 644"
grep -q 'RUNNING HANDLER \[thpguard : reload thpguardd\]' "$results/play-1.log" ||
        fail "the policy change did not notify the reload handler"
grep -A2 'RUNNING HANDLER \[thpguard : reload thpguardd\]' "$results/play-1.log" | grep -q '^skipping' ||
        fail "the reload handler did not skip in a tree with no systemd running: $(grep -A3 'RUNNING HANDLER' "$results/play-1.log")"
echo "ok: first run ($((t1 - t0)) s): $(grep '^image' "$results/play-1.log" | tail -n 1)"
echo "    installed, enabled, policy templated (root:root 0644, validated by thpguardd -n); the reload handler skipped (no systemd running)"

changed=$(playbook "$results/play-2.log" "${policy_a[@]}")
t2=$SECONDS
[ "$changed" = 0 ] || fail "the second run is not idempotent (changed=$changed): $(grep -B1 -E '^changed:' "$results/play-2.log")"
echo "ok: second run ($((t2 - t1)) s), idempotent: $(grep '^image' "$results/play-2.log" | tail -n 1)"

# ---- 3. Boot ----------------------------------------------------------------
real_sysfs_begin
thp_set enabled always
thp_set defrag always
thp_set khugepaged/defrag 1
echo "host knobs set out of policy: enabled=always defrag=always khugepaged/defrag=1"
cleanup() {
        pkg_boot_stop
        [ "$TEST_RC" -ne 0 ] || pkg_tree_remove "$run"
}
on_exit cleanup
pkg_boot "$run" "$results/console.log"

[ "$(pkg_prop thpguardd ActiveState)/$(pkg_prop thpguardd SubState)" = active/running ] ||
        fail "thpguardd is $(pkg_prop thpguardd ActiveState)/$(pkg_prop thpguardd SubState): $(pkg_inside systemctl status thpguardd --no-pager)"
t_unit=$(pkg_prop thpguardd ActiveEnterTimestampMonotonic)
t_basic=$(pkg_prop basic.target ActiveEnterTimestampMonotonic)
[ "$t_unit" -gt 0 ] && [ "$t_unit" -lt "$t_basic" ] ||
        fail "thpguardd became active at $t_unit us, not before basic.target ($t_basic us)"
echo "ok: thpguardd active at $t_unit us < basic.target $t_basic us (monotonic)"
for kv in enabled=never defrag=defer+madvise khugepaged/defrag=0; do
        [ "$(thp_get "${kv%%=*}")" = "${kv#*=}" ] || fail "host ${kv%%=*} is $(thp_get "${kv%%=*}"), want ${kv#*=}"
done
pkg_inside thpguardd --verify >"$results/verify.txt" 2>&1 || fail "thpguardd --verify: $(cat "$results/verify.txt")"
echo "ok: host knobs at the templated policy: enabled=never defrag=defer+madvise khugepaged/defrag=0; thpguardd --verify exits 0"
CORRECTED=$(sed -n 's/^#define THPGUARD_MESSAGE_CORRECTED *"\(.*\)"/\1/p' "$SRCDIR/include/thpguard/message-ids.h")
RELOADED=$(sed -n 's/^#define THPGUARD_MESSAGE_POLICY_RELOADED *"\(.*\)"/\1/p' "$SRCDIR/include/thpguard/message-ids.h")
for kv in enabled:always:never defrag:always:defer+madvise khugepaged/defrag:1:0; do
        IFS=: read -r k o w <<<"$kv"
        entry=$(pkg_inside journalctl --no-pager -o json MESSAGE_ID="$CORRECTED" THPGUARD_TRIGGER=startup \
                THPGUARD_KNOB="$k" THPGUARD_OBSERVED="$o" THPGUARD_DESIRED="$w" _SYSTEMD_UNIT=thpguardd.service | tail -n 1)
        [ -n "$entry" ] || fail "no startup correction of $k ($o -> $w) in the journal: $(pkg_inside journalctl --no-pager -u thpguardd -o cat)"
done
echo "ok: journal: $(jq -r '"\(.MESSAGE) [MESSAGE_ID=\(.MESSAGE_ID) THPGUARD_TRIGGER=\(.THPGUARD_TRIGGER)]"' <<<"$entry") (and enabled, defrag)"

# ---- 4. On the running node: a policy change reloads -----------------------------
# The chroot connection's chroot, run in the container's namespaces: the
# play sees the container's /run, so the role finds systemd running.
cat >"$TMP/chroot-in-container" <<EOF
#!/bin/sh
# community.general.chroot runs: chroot_exe DIR CMD...
shift
exec nsenter -t $PKG_LEADER -a -- chroot / "\$@"
EOF
chmod +x "$TMP/chroot-in-container"
echo "node ansible_connection=community.general.chroot ansible_host=$run ansible_become=false ansible_chroot_exe=$TMP/chroot-in-container" >"$inventory"
n_reloads() {
        pkg_inside journalctl --no-pager -o json MESSAGE_ID="$RELOADED" _SYSTEMD_UNIT=thpguardd.service | wc -l
}
main_pid=$(pkg_prop thpguardd MainPID)
before=$(n_reloads)
playbook_node() {
        local log=$1 rc=0
        shift
        timeout 600 ansible-playbook -i "$inventory" "$ANSIBLE_DIR/site.yml" \
                -e thpguard_deb="$deb" -e thpguard_policy_template=thpguard.conf.j2 "$@" \
                </dev/null >"$log" 2>&1 9>&- || rc=$?
        [ "$rc" -eq 0 ] || fail "ansible-playbook on the running node exited $rc: $(tail -n 30 "$log")"
        sed -n 's/^node *: .*changed=\([0-9]*\).*/\1/p' "$log" | tail -n 1
}
t3=$SECONDS
changed=$(playbook_node "$results/play-3.log" "${policy_b[@]}")
[ "$changed" -ge 2 ] || fail "the policy change on the running node changed $changed (want the policy and the handler): $(tail -n 20 "$results/play-3.log")"
grep -A2 'RUNNING HANDLER \[thpguard : reload thpguardd\]' "$results/play-3.log" | grep -q '^changed' ||
        fail "the reload handler did not run on the running node: $(grep -A3 'RUNNING HANDLER' "$results/play-3.log")"
thp_wait_for enabled madvise 5 || fail "after the role's reload enabled is $(thp_get enabled), want madvise"
for ((i = 0; i < 100; i++)); do
        [ "$(n_reloads)" -gt "$before" ] && break
        sleep 0.05
done
[ "$(n_reloads)" -gt "$before" ] || fail "no policy-reloaded record after the role's reload"
[ "$(pkg_prop thpguardd MainPID)" = "$main_pid" ] || fail "the handler restarted thpguardd instead of reloading it"
echo "ok: on the running node ($((SECONDS - t3)) s): the changed policy notified the handler, systemctl reload put enabled=madvise in force, same MainPID: $(grep '^node' "$results/play-3.log" | tail -n 1)"
changed=$(playbook_node "$results/play-4.log" "${policy_b[@]}")
[ "$changed" = 0 ] || fail "a second run on the running node changed $changed: $(grep -B1 -E '^changed:' "$results/play-4.log")"
echo "ok: and again, idempotent: $(grep '^node' "$results/play-4.log" | tail -n 1)"

pkg_inside journalctl --no-pager -u thpguardd -o short-monotonic >"$results/journal.txt" 2>&1 || true
pkg_poweroff
echo "ok: powered off cleanly; logs in $results"
echo PASS
