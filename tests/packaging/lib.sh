# shellcheck shell=bash
# What the packaging tests share beyond tests/lib/test.sh (which this
# brings). Source after `set -euo pipefail`.
#
# Environment (from tests/CMakeLists.txt): THPGUARDD, SRCDIR, BUILDDIR.
# Everything these helpers make lives under $BUILDDIR/packaging-tests:
#   out/deb, out/rpm   the packages, rebuilt when the exported sources change
#   bookworm-*/        the debootstrap tree (about 250 MB), made once
#
# THPGUARD_PKG_REV=REV packages a commit instead of the working tree (see
# packaging/export-source).

# shellcheck source=../lib/test.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/test.sh"
# shellcheck source=../lib/debian.sh
. "$SRCDIR/tests/lib/debian.sh"
: "${BUILDDIR:?BUILDDIR is not set: run this test through ctest}"
PKG_WORK=$BUILDDIR/packaging-tests
mkdir -p "$PKG_WORK"

# A hash of the sources that the packages are built from, so a package is
# rebuilt exactly when something it contains could have changed.
pkg_source_hash() {
        local d
        d=$(mktemp -d "$PKG_WORK/src.XXXXXX")
        "$SRCDIR/packaging/export-source" "$d"
        tar -C "$d" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - . | sha256sum | cut -c1-16
        rm -rf "$d"
}

# Builds (or reuses) a package: pkg_build deb|rpm|srpm; prints its path.
pkg_build() {
        local kind=$1 format hash dir f
        # packaging/build-rpm makes the .rpm and the .src.rpm together.
        format=${kind#s}
        exec 8>"$PKG_WORK/build-$format.lock"
        flock 8
        hash=$(pkg_source_hash)
        dir=$PKG_WORK/out/$format
        if [ "$(cat "$dir/.source-hash" 2>/dev/null)" != "$hash" ]; then
                rm -rf "$dir"
                mkdir -p "$dir"
                echo "building the $format packages (sources $hash)..." >&2
                "$SRCDIR/packaging/build-$format" "$dir" >&2 || fail "packaging/build-$format failed"
                echo "$hash" >"$dir/.source-hash"
        else
                echo "reusing the $format packages built from the same sources ($hash)" >&2
        fi
        exec 8>&-
        case $kind in
        deb) f=$(ls "$dir"/thpguard_*.deb 2>/dev/null || :) ;;
        rpm) f=$(find "$dir" -maxdepth 1 -name 'thpguard-[0-9]*.rpm' ! -name '*.src.rpm') ;;
        srpm) f=$(ls "$dir"/thpguard-[0-9]*.src.rpm 2>/dev/null || :) ;;
        esac
        [ -f "$f" ] || fail "no $kind package in $dir"
        echo "$f"
}

# A minimal bookworm tree with systemd and everything DEB depends on,
# made by debootstrap once and cached. Prints the cached tree's path: copy
# it (pkg_tree_copy) before changing anything in it.
pkg_tree() {
        local deb=$1 includes key cache mirror log
        # The package's Depends, first alternatives, without versions.
        includes=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/[[:space:]]//g' | grep -v '^$' |
                sort -u | tr '\n' ',')
        includes="systemd,systemd-sysv,dbus,${includes%,}"
        key=$(echo "$includes" | sha256sum | cut -c1-12)
        cache=$PKG_WORK/bookworm-$key
        exec 7>"$PKG_WORK/debootstrap.lock"
        flock 7
        if [ ! -x "$cache/lib/systemd/systemd" ]; then
                mirror=$(debian_mirror)
                log=$PKG_WORK/debootstrap-$key.log
                echo "debootstrap --variant=minbase --include=$includes bookworm ($(debian_mirror_said)); about a minute, once" >&2
                pkg_tree_remove "$cache.tmp"
                if ! debootstrap --variant=minbase --include="$includes" bookworm "$cache.tmp" ${mirror:+"$mirror"} \
                        >"$log" 2>&1 </dev/null 9>&-; then
                        tail -n 5 "$log" >&2
                        pkg_tree_remove "$cache.tmp"
                        if grep -qiE 'Failed getting release file|Couldn.t download|Temporary failure|unable to fetch|Could not resolve' "$log"; then
                                skip "debootstrap cannot reach the Debian archive at $(debian_mirror_said) (see $log)"
                        fi
                        fail "debootstrap failed (see $log)"
                fi
                # Its own packages are not needed in the cache.
                rm -rf "$cache.tmp"/var/cache/apt/archives/*.deb
                mv "$cache.tmp" "$cache"
        fi
        exec 7>&-
        echo "$cache"
}

# Removes a tree that debootstrap or a container may have mounted things in.
pkg_tree_remove() {
        local t=$1 m
        [ -e "$t" ] || return 0
        # Deepest first.
        for m in $(awk -v t="$t" 'index($2, t "/") == 1 { print $2 }' /proc/self/mounts | sort -r); do
                umount -l "$m" 2>/dev/null || :
        done
        rm -rf --one-file-system "$t"
}

# A private copy of the cached tree, for one test run.
pkg_tree_copy() {
        local cache=$1 dest=$2
        pkg_tree_remove "$dest"
        cp -a "$cache" "$dest"
}

# The files (not directories) a .deb installs, one path a line, without
# /usr/share/doc (each format has its own docs and license layout: checked
# apart) and with man pages' .gz removed.
pkg_deb_files() {
        dpkg-deb --fsys-tarfile "$1" | tar -tvf - | awk '$1 !~ /^d/ { print $6 }' | sed 's|^\./|/|' |
                grep -v '^/usr/share/doc/' | sed 's/\.gz$//' | sort
}

# The same for an .rpm (without /usr/share/doc and /usr/share/licenses).
pkg_rpm_files() {
        rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$1" | awk '$1 !~ /^d/ { print $2 }' |
                grep -vE '^/usr/lib/\.build-id|^/usr/share/(doc|licenses)/' | sed 's/\.gz$//' | sort
}
