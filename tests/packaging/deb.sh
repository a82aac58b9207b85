#!/bin/bash
# packaging/build-deb builds the .deb from the sources; it holds what issue
# 4 lists, thpguardctl with its page in section 1, the README, the MIT
# license in copyright and a NEWS entry saying installing changes THP at
# once; the policy is a conffile, the maintainer scripts enable and start
# the unit (dh_installsystemd), and lintian reports no error.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need dpkg-buildpackage dpkg-dev
need dh debhelper
need lintian

deb=$(pkg_build deb)
echo "deb: $deb"

files=$(pkg_deb_files "$deb")
for f in /usr/sbin/thpguardd /usr/bin/thpguardctl /etc/thpguard/thpguard.conf /usr/lib/systemd/catalog/thpguard.catalog \
        /usr/share/man/man8/thpguardd.8 /usr/share/man/man5/thpguard.conf.5 /usr/share/man/man1/thpguardctl.1 \
        /usr/sbin/thpguard-containerd-config /usr/share/man/man8/thpguard-containerd-config.8 \
        /usr/share/thpguard/profiles/{go-services,jvm-g1,redis,mongodb8,mixed-node}.conf \
        /usr/libexec/thpguard/{runc,crun}-thp-{disable,advised-only} \
        /usr/share/thpguard/runtime/containerd/thpguard-runtimes.v3.toml \
        /usr/share/thpguard/runtime/crio/50-thpguard-{runc,crun}.conf; do
        echo "$files" | grep -qxF "$f" || fail "the .deb lacks $f"
done
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
echo "$files" | grep -qxF "$unitdir/thpguardd.service" || fail "the .deb lacks $unitdir/thpguardd.service"
# Nothing is installed into the engines' own configuration: that is the administrator's step.
echo "$files" | grep -E '^/etc/(containerd|crio)/' && fail "the .deb installs into the container engines' configuration"
# Not the containerd 1.6/1.7 drop-in: an import replaces config.toml's CRI table there.
echo "$files" | grep -qxF /usr/share/thpguard/runtime/containerd/thpguard-runtimes.v2.toml &&
        fail "the .deb ships thpguard-runtimes.v2.toml, which containerd 1.6/1.7 do not merge"
# The command, generated with the installed shims' directory, and executable.
# Read whole first: a grep -q that stops early would make tar die of SIGPIPE, and pipefail fail the test.
listing=$(dpkg-deb --fsys-tarfile "$deb" | tar -tvf - ./usr/sbin/thpguard-containerd-config)
grep -q '^-rwxr-xr-x' <<<"$listing" || fail "/usr/sbin/thpguard-containerd-config is not mode 0755 in the .deb"
command=$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/sbin/thpguard-containerd-config)
grep -qxF "SHIMDIR_DEFAULT='/usr/libexec/thpguard'" <<<"$command" ||
        fail "/usr/sbin/thpguard-containerd-config does not default to the installed shims in /usr/libexec/thpguard"
echo "ok: contents ($(echo "$files" | wc -l) files)"

# The shipped policy is the conffile, byte for byte.
ctl=$(mktemp -d "$PKG_WORK/debctl.XXXXXX")
on_exit 'rm -rf "$ctl"'
dpkg-deb -e "$deb" "$ctl/DEBIAN"
dpkg-deb -x "$deb" "$ctl/root"
grep -qxF /etc/thpguard/thpguard.conf "$ctl/DEBIAN/conffiles" || fail "/etc/thpguard/thpguard.conf is not a conffile"
cmp "$ctl/root/etc/thpguard/thpguard.conf" "$SRCDIR/conf/thpguard.conf" ||
        fail "the packaged policy is not conf/thpguard.conf"
# Checked as a copy in $TMP: as root thpguardd refuses a policy under a directory
# others may write, and the build tree may be anywhere (/tmp, a home).
cp "$ctl/root/etc/thpguard/thpguard.conf" "$TMP/"
"$THPGUARDD" -n -c "$TMP/thpguard.conf" >/dev/null || fail "the packaged policy is invalid"
echo "ok: /etc/thpguard/thpguard.conf is the conffile"

# dh_installsystemd: enable on install, start (restart on upgrade), stop on removal.
grep -q "deb-systemd-helper enable 'thpguardd.service'" "$ctl/DEBIAN/postinst" || fail "postinst does not enable the unit"
grep -q "deb-systemd-invoke \$_dh_action 'thpguardd.service'" "$ctl/DEBIAN/postinst" || fail "postinst does not start the unit"
grep -q "deb-systemd-invoke stop 'thpguardd.service'" "$ctl/DEBIAN/prerm" || fail "prerm does not stop the unit"
grep -q "deb-systemd-helper purge 'thpguardd.service'" "$ctl/DEBIAN/postrm" || fail "postrm does not purge the unit's state"
echo "ok: maintainer scripts enable, start, stop and purge the unit"

dpkg-deb -f "$deb" Depends | grep -q procps || fail "no dependency on procps (ExecReload= runs /bin/kill)"

# /usr/share/doc/thpguard: the README (debian/docs), the license, NEWS.
doc=$ctl/root/usr/share/doc/thpguard
zcat -f "$doc"/README.md* 2>/dev/null | cmp -s - "$SRCDIR/README.md" ||
        fail "/usr/share/doc/thpguard/README.md(.gz) is missing or is not README.md: $(ls "$doc")"
# copyright: the holder, years and MIT text of LICENSE (debian/copyright's
# layout aside: a leading space, "." for an empty line).
holder=$(sed -n 's/^Copyright (c) //p' "$SRCDIR/LICENSE")
grep -qxF "Copyright: $holder" "$doc/copyright" || fail "copyright does not say 'Copyright: $holder' as LICENSE does"
words() { sed -n '/^ \{0,1\}Permission is hereby granted/,$p' | sed 's/^ //; s/^\.$//' | tr -s '[:space:]' ' '; }
[ "$(words <"$doc/copyright")" = "$(words <"$SRCDIR/LICENSE")" ] || fail "copyright's MIT text is not LICENSE's"
# NEWS.Debian: an entry for this version that says THP changes on install.
[ -f "$doc/NEWS.Debian.gz" ] || fail "no /usr/share/doc/thpguard/NEWS.Debian.gz (debian/NEWS)"
newsver=$(zcat "$doc/NEWS.Debian.gz" | dpkg-parsechangelog -l - -S Version)
[ "$newsver" = "$(dpkg-deb -f "$deb" Version)" ] || fail "NEWS.Debian's entry is for $newsver, not this package's version"
news=$(zcat "$doc/NEWS.Debian.gz" | tr -s '[:space:]' ' ')
for phrase in "at once" thpguardd.service /etc/thpguard/thpguard.conf "kernel's default"; do
        grep -qF "$phrase" <<<"$news" || fail "NEWS.Debian does not say '$phrase':
$news"
done
echo "ok: README.md, copyright (MIT, $holder) and NEWS.Debian ($newsver) in /usr/share/doc/thpguard"

# lintian: no errors (warnings are printed, not fatal).
rc=0
out=$(lintian --fail-on error --display-level '>=warning' "$deb" 2>&1) || rc=$?
out=$(echo "$out" | grep -v 'running with root privileges' || true)
[ "$rc" -eq 0 ] || fail "lintian exited $rc:
$out"
echo "$out" | grep -q '^E:' && fail "lintian reports errors:
$out"
echo "lintian: no errors${out:+; it says:
$out}"
echo PASS
