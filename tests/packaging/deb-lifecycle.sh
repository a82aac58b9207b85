#!/bin/bash
# The .deb's life in a Debian tree (chroot, no boot needed): install
# enables the unit (and does not try to start it where systemd is not
# running), an upgrade keeps a locally changed conffile, remove keeps the
# conffile, and purge leaves the tree exactly as it was before the install.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need debootstrap
need dpkg-buildpackage dpkg-dev
need dh debhelper
[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, chroot)"

deb=$(pkg_build deb)
tree_cache=$(pkg_tree "$deb")
t=$PKG_WORK/lifecycle-root
work=$(mktemp -d "$PKG_WORK/lifecycle.XXXXXX")
on_exit 'pkg_tree_remove "$t"; rm -rf "$work"'
pkg_tree_copy "$tree_cache" "$t"

# The tree's paths, without dpkg's own bookkeeping and logs.
snapshot() {
        (cd "$t" && find . -xdev \( -path ./var/lib/dpkg -o -path ./var/log -o -path ./var/cache -o -path ./tmp \
                -o -path ./proc -o -path ./sys -o -path ./dev -o -path ./run \) -prune -o -print) | sort
}
in_tree() {
        chroot "$t" "$@"
}
before=$(snapshot)

# An "upgrade": the same package with a higher version.
dpkg-deb -R "$deb" "$work/v2"
sed -i 's/^Version: .*/&+lifecycle2/' "$work/v2/DEBIAN/control"
dpkg-deb --root-owner-group -b "$work/v2" "$work/thpguard-v2.deb" >/dev/null
cp "$deb" "$t/tmp/v1.deb"
cp "$work/thpguard-v2.deb" "$t/tmp/v2.deb"

# Install.
in_tree dpkg -i /tmp/v1.deb >"$work/install.log" 2>&1 || fail "dpkg -i failed: $(cat "$work/install.log")"
link=$t/etc/systemd/system/sysinit.target.wants/thpguardd.service
[ -L "$link" ] || fail "install did not enable thpguardd.service"
grep -q 'Created symlink /etc/systemd/system/sysinit.target.wants/thpguardd.service' "$work/install.log" ||
        fail "dpkg -i did not report enabling the unit"
[ "$(in_tree dpkg-query -W -f='${db:Status-Abbrev}' thpguard)" = "ii " ] || fail "thpguard is not installed after dpkg -i"
echo "ok: install enabled the unit ($(readlink "$link"))"

# A local change of the policy survives an upgrade.
echo '# local change, tests/packaging/deb-lifecycle.sh' >>"$t/etc/thpguard/thpguard.conf"
sed -i 's/enabled = "madvise";/enabled = "never";/' "$t/etc/thpguard/thpguard.conf"
cp "$t/etc/thpguard/thpguard.conf" "$work/changed.conf"
in_tree dpkg -i /tmp/v2.deb </dev/null >"$work/upgrade.log" 2>&1 || fail "the upgrade failed: $(cat "$work/upgrade.log")"
[ "$(in_tree dpkg-query -W -f='${Version}' thpguard)" = "$(dpkg-deb -f "$work/thpguard-v2.deb" Version)" ] ||
        fail "the upgrade did not install the new version"
cmp -s "$work/changed.conf" "$t/etc/thpguard/thpguard.conf" || fail "the upgrade overwrote the changed conffile"
[ -L "$link" ] || fail "the upgrade lost the unit's enablement"
echo "ok: upgrade to $(in_tree dpkg-query -W -f='${Version}' thpguard) kept the changed /etc/thpguard/thpguard.conf and the enablement"

# Remove keeps the conffile; purge removes everything install added.
in_tree dpkg --remove thpguard >"$work/remove.log" 2>&1 || fail "dpkg --remove failed: $(cat "$work/remove.log")"
[ -f "$t/etc/thpguard/thpguard.conf" ] || fail "dpkg --remove deleted the conffile"
[ ! -e "$t/usr/sbin/thpguardd" ] || fail "dpkg --remove left /usr/sbin/thpguardd"
echo "ok: remove kept the conffile, removed the program"
in_tree dpkg --purge thpguard >"$work/purge.log" 2>&1 || fail "dpkg --purge failed: $(cat "$work/purge.log")"
rm -f "$t/tmp/v1.deb" "$t/tmp/v2.deb"
after=$(snapshot)
if ! d=$(diff <(echo "$before") <(echo "$after")); then
        fail "purge left the tree different from before the install (< before, > after):
$d"
fi
echo "ok: purge removed everything install added ($(echo "$before" | wc -l) paths compared)"
echo PASS
