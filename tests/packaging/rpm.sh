#!/bin/bash
# packaging/build-rpm builds the .rpm on this Debian machine; it installs
# the same files as the .deb, keeps the policy as %config(noreplace), and
# its scriptlets preset/enable the unit on install and stop it on removal.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
pkg_need rpmbuild:rpm dpkg-buildpackage:dpkg-dev dh:debhelper

rpm=$(pkg_build rpm)
deb=$(pkg_build deb)
echo "rpm: $rpm"
echo "deb: $deb"

# Same files (directories aside; the .deb's /usr/share/doc is Debian's).
if ! d=$(diff <(pkg_deb_files "$deb") <(pkg_rpm_files "$rpm")); then
        pkg_fail "the .rpm and the .deb install different files (< deb, > rpm):
$d"
fi
echo "ok: the .rpm installs the same $(pkg_rpm_files "$rpm" | wc -l) files as the .deb:"
pkg_rpm_files "$rpm" | sed 's/^/    /'

flags=$(rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$rpm" | awk '$2 == "/etc/thpguard/thpguard.conf" { print $1 }')
[ "$flags" = cn ] || pkg_fail "/etc/thpguard/thpguard.conf has file flags '$flags', want 'cn' (%config(noreplace))"
echo "ok: /etc/thpguard/thpguard.conf is %config(noreplace)"

scripts=$(rpm -qp --scripts "$rpm")
echo "$scripts" | sed -n '/^postinstall/,/^preuninstall/p' | grep -qE 'systemctl.*(preset|enable).*thpguardd\.service|systemd-update-helper install-system-units thpguardd\.service' ||
        pkg_fail "%post does not preset or enable thpguardd.service:
$scripts"
echo "$scripts" | sed -n '/^preuninstall/,/^postuninstall/p' | grep -qE 'systemctl.*(disable --now|stop).*thpguardd\.service|systemd-update-helper remove-system-units thpguardd\.service' ||
        pkg_fail "%preun does not stop thpguardd.service:
$scripts"
echo "$scripts" | sed -n '/^postuninstall/,$p' | grep -qE 'try-restart.*thpguardd\.service|mark-restart-system-units thpguardd\.service' ||
        pkg_fail "%postun does not restart thpguardd.service on upgrade:
$scripts"
echo "ok: scriptlets preset the unit on install, stop it on removal, restart it on upgrade"

# The preset that %systemd_post applies enables the unit.
grep -qx 'enable thpguardd.service' <(rpm2archive - <"$rpm" | tar -xzOf - --wildcards '*/50-thpguard.preset') ||
        pkg_fail "the preset file does not enable thpguardd.service"
echo "ok: the preset enables thpguardd.service"
echo PASS
