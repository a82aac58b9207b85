#!/bin/bash
# packaging/build-rpm builds the .src.rpm and the .rpm on this Debian
# machine, %check (the unit tests) included; the .src.rpm holds the spec
# and the Source0 tarball; the .rpm installs the same files as the .deb plus
# %license LICENSE and %doc README.md, keeps the policy as
# %config(noreplace), and its scriptlets preset/enable the unit on install
# and stop it on removal; rpmlint finds nothing that
# packaging/rpm/thpguard.rpmlintrc or rpmlint-debian.toml does not explain.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need rpmbuild rpm
need dpkg-buildpackage dpkg-dev
need dh debhelper
need python3
pkg-config --exists cmocka || skip "cmocka is not installed (package libcmocka-dev; the spec's %check needs it)"

rpm=$(pkg_build rpm)
srpm=$(pkg_build srpm)
deb=$(pkg_build deb)
echo "rpm: $rpm"
echo "srpm: $srpm"
echo "deb: $deb"
version=$(rpm -qp --qf '%{VERSION}' "$rpm")

# The .src.rpm: the spec and the tarball its Source0 URL names, with the
# sources under thpguard-VERSION/ (what %autosetup unpacks).
srcfiles=$(rpm -qpl "$srpm" | sort)
[ "$srcfiles" = "$(printf '%s\n' "thpguard-$version.tar.gz" thpguard.spec)" ] ||
        fail "the .src.rpm holds, want thpguard-$version.tar.gz and thpguard.spec:
$srcfiles"
srcx=$(mktemp -d "$PKG_WORK/srpm.XXXXXX")
on_exit 'rm -rf "$srcx"'
rpm2archive - <"$srpm" | tar -C "$srcx" -xzf -
parsed=$(rpmspec -P "$srcx/thpguard.spec")
source0=$(sed -n 's/^Source0:[[:space:]]*//p' <<<"$parsed")
url=$(sed -n 's/^URL:[[:space:]]*//p' <<<"$parsed")
case $url in https://*) ;; *) fail "URL is '$url', want an https URL" ;; esac
case $source0 in
"$url"/*/"thpguard-$version.tar.gz") ;;
*) fail "Source0 is '$source0', want a URL under $url ending in thpguard-$version.tar.gz" ;;
esac
cmp "$srcx/thpguard.spec" "$SRCDIR/packaging/rpm/thpguard.spec" || fail "the .src.rpm's spec is not packaging/rpm/thpguard.spec"
for f in CMakeLists.txt LICENSE README.md packaging/rpm/thpguard.spec; do
        tar -xzOf "$srcx/thpguard-$version.tar.gz" "thpguard-$version/$f" | cmp -s - "$SRCDIR/$f" ||
                fail "the tarball's thpguard-$version/$f is not the source tree's"
done
echo "ok: the .src.rpm holds thpguard.spec and thpguard-$version.tar.gz (Source0: $source0)"

# %check ran the unit tests: as many as ctest -L unit lists in this build.
log=$(dirname "$rpm")/rpmbuild.log
[ -f "$log" ] || fail "no rpmbuild.log next to $rpm"
want=$(cd "$BUILDDIR" && ctest -N -L unit | sed -n 's/^Total Tests: //p')
[ "${want:-0}" -gt 0 ] || fail "ctest -L unit lists no test in $BUILDDIR"
grep -qx "100% tests passed, 0 tests failed out of $want" "$log" || fail "%check did not pass $want unit tests; rpmbuild.log says:
$(grep -E 'tests passed|tests failed|^\+ ctest' "$log" || echo '(no ctest run)')"
echo "ok: %check passed the $want unit tests"

# Same files (directories aside; the .deb's /usr/share/doc is Debian's).
if ! d=$(diff <(pkg_deb_files "$deb") <(pkg_rpm_files "$rpm")); then
        fail "the .rpm and the .deb install different files (< deb, > rpm):
$d"
fi
echo "ok: the .rpm installs the same $(pkg_rpm_files "$rpm" | wc -l) files as the .deb:"
pkg_rpm_files "$rpm" | sed 's/^/    /'

flags=$(rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$rpm" | awk '$2 == "/etc/thpguard/thpguard.conf" { print $1 }')
[ "$flags" = cn ] || fail "/etc/thpguard/thpguard.conf has file flags '$flags', want 'cn' (%config(noreplace))"
echo "ok: /etc/thpguard/thpguard.conf is %config(noreplace)"

scripts=$(rpm -qp --scripts "$rpm")
echo "$scripts" | sed -n '/^postinstall/,/^preuninstall/p' | grep -qE 'systemctl.*(preset|enable).*thpguardd\.service|systemd-update-helper install-system-units thpguardd\.service' ||
        fail "%post does not preset or enable thpguardd.service:
$scripts"
echo "$scripts" | sed -n '/^preuninstall/,/^postuninstall/p' | grep -qE 'systemctl.*(disable --now|stop).*thpguardd\.service|systemd-update-helper remove-system-units thpguardd\.service' ||
        fail "%preun does not stop thpguardd.service:
$scripts"
echo "$scripts" | sed -n '/^postuninstall/,$p' | grep -qE 'try-restart.*thpguardd\.service|mark-restart-system-units thpguardd\.service' ||
        fail "%postun does not restart thpguardd.service on upgrade:
$scripts"
echo "ok: scriptlets preset the unit on install, stop it on removal, restart it on upgrade"

# The preset that %systemd_post applies enables the unit.
grep -qx 'enable thpguardd.service' <(rpm2archive - <"$rpm" | tar -xzOf - --wildcards '*/50-thpguard.preset') ||
        fail "the preset file does not enable thpguardd.service"
echo "ok: the preset enables thpguardd.service"

# %license LICENSE and %doc README.md, as the sources have them; the man
# pages in their sections (thpguardctl, a user command, in 1).
lic=$(rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$rpm" | awk '$1 ~ /l/ && $2 ~ /\/LICENSE$/ { print $2 }')
[ -n "$lic" ] || fail "the .rpm has no %license LICENSE"
rpm2archive - <"$rpm" | tar -xzOf - ".$lic" | cmp -s - "$SRCDIR/LICENSE" || fail "$lic is not LICENSE"
readme=$(rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$rpm" | awk '$1 ~ /d/ && $2 ~ /\/doc\/.*\/README\.md$/ { print $2 }')
[ -n "$readme" ] || fail "the .rpm has no %doc README.md"
rpm2archive - <"$rpm" | tar -xzOf - ".$readme" | cmp -s - "$SRCDIR/README.md" || fail "$readme is not README.md"
rpmfiles=$(rpm -qpl "$rpm")
for m in man1/thpguardctl.1 man5/thpguard.conf.5 man8/thpguardd.8 man8/thpguard-containerd-config.8; do
        grep -qE "/man/$m(\.gz)?$" <<<"$rpmfiles" || fail "the .rpm lacks $m"
done
echo "ok: $lic (%license), $readme (%doc), thpguardctl.1 in man1"

# rpmlint: nothing left but what the filter files explain, and each filter
# still matches a finding (else it is stale and must go).
command -v rpmlint >/dev/null ||
        skip "everything above passed, but rpmlint is not installed (package rpmlint): the lint was not run"
rcfile=$SRCDIR/packaging/rpm/thpguard.rpmlintrc
debconf=$SRCDIR/packaging/rpm/rpmlint-debian.toml
rc=0
out=$(cd "$PKG_WORK" && rpmlint -c "$debconf" -r "$rcfile" "$srpm" "$rpm" 2>&1) || rc=$?
findings=$(grep -E '^[^ ]+: [EW]: ' <<<"$out" || :)
if [ "$rc" -ne 0 ] || [ -n "$findings" ]; then
        fail "rpmlint exited $rc; findings no filter explains:
$out"
fi
# Only the gzip setting, no filters: every finding rpmlint has.
gzonly=$(mktemp "$PKG_WORK/rpmlint-gz.XXXXXX.toml")
grep -E '^CompressExtension' "$debconf" >"$gzonly"
raw=$(cd "$PKG_WORK" && { rpmlint -c "$gzonly" "$srpm" "$rpm" 2>&1 || :; } | grep -E '^[^ ]+: [EW]: ' || :)
rm -f "$gzonly"
stale=$(RAW=$raw python3 - "$rcfile" "$debconf" <<'PY'
import os, re, sys
pats = re.findall(r'addFilter\("(.*)"\)', open(sys.argv[1]).read())
pats += re.findall(r"^\s*'(.*)',\s*$", open(sys.argv[2]).read(), re.M)
lines = os.environ["RAW"].splitlines()
for p in pats:
    if not any(re.search(p, l) for l in lines):
        print(p)
PY
)
[ -z "$stale" ] || fail "rpmlint filters that match no finding (remove them):
$stale
rpmlint's findings without filters:
$raw"
echo "ok: rpmlint is clean; the findings filtered, each explained in the filter files:"
sed 's/^/    /' <<<"$raw"
echo PASS
