#!/bin/bash
# packaging/build-deb builds the .deb from the sources; it holds what issue
# 4 lists, the policy is a conffile, the maintainer scripts enable and start
# the unit (dh_installsystemd), and lintian reports no error.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
pkg_need dpkg-buildpackage:dpkg-dev dh:debhelper lintian:lintian

deb=$(pkg_build deb)
echo "deb: $deb"

files=$(pkg_deb_files "$deb")
for f in /usr/sbin/thpguardd /etc/thpguard/thpguard.conf /usr/lib/systemd/catalog/thpguard.catalog \
        /usr/share/man/man8/thpguardd.8 /usr/share/man/man5/thpguard.conf.5 \
        /usr/share/thpguard/profiles/{go-services,jvm-g1,redis,mongodb8,mixed-node}.conf; do
        echo "$files" | grep -qxF "$f" || pkg_fail "the .deb lacks $f"
done
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
echo "$files" | grep -qxF "$unitdir/thpguardd.service" || pkg_fail "the .deb lacks $unitdir/thpguardd.service"
echo "ok: contents ($(echo "$files" | wc -l) files)"

# The shipped policy is the conffile, byte for byte.
ctl=$(mktemp -d "$PKG_WORK/debctl.XXXXXX")
trap 'rm -rf "$ctl"' EXIT
dpkg-deb -e "$deb" "$ctl/DEBIAN"
dpkg-deb -x "$deb" "$ctl/root"
grep -qxF /etc/thpguard/thpguard.conf "$ctl/DEBIAN/conffiles" || pkg_fail "/etc/thpguard/thpguard.conf is not a conffile"
cmp "$ctl/root/etc/thpguard/thpguard.conf" "$SRCDIR/conf/thpguard.conf" ||
        pkg_fail "the packaged policy is not conf/thpguard.conf"
"$THPGUARDD" -n -c "$ctl/root/etc/thpguard/thpguard.conf" >/dev/null || pkg_fail "the packaged policy is invalid"
echo "ok: /etc/thpguard/thpguard.conf is the conffile"

# dh_installsystemd: enable on install, start (restart on upgrade), stop on removal.
grep -q "deb-systemd-helper enable 'thpguardd.service'" "$ctl/DEBIAN/postinst" || pkg_fail "postinst does not enable the unit"
grep -q "deb-systemd-invoke \$_dh_action 'thpguardd.service'" "$ctl/DEBIAN/postinst" || pkg_fail "postinst does not start the unit"
grep -q "deb-systemd-invoke stop 'thpguardd.service'" "$ctl/DEBIAN/prerm" || pkg_fail "prerm does not stop the unit"
grep -q "deb-systemd-helper purge 'thpguardd.service'" "$ctl/DEBIAN/postrm" || pkg_fail "postrm does not purge the unit's state"
echo "ok: maintainer scripts enable, start, stop and purge the unit"

dpkg-deb -f "$deb" Depends | grep -q procps || pkg_fail "no dependency on procps (ExecReload= runs /bin/kill)"

# lintian: no errors (warnings are printed, not fatal).
rc=0
out=$(lintian --fail-on error --display-level '>=warning' "$deb" 2>&1) || rc=$?
out=$(echo "$out" | grep -v 'running with root privileges' || true)
[ "$rc" -eq 0 ] || pkg_fail "lintian exited $rc:
$out"
echo "$out" | grep -q '^E:' && pkg_fail "lintian reports errors:
$out"
echo "lintian: no errors${out:+; it says:
$out}"
echo PASS
