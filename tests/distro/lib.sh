# shellcheck shell=bash
# Helpers of the release matrix (tests/distro/run-matrix). Source after
# `set -euo pipefail`.
#
# The cache, on this machine, kept across runs (a new machine rebuilds it):
#   $DISTRO_CACHE/RELEASE/base-KEY/    debootstrap --variant=minbase
#   $DISTRO_CACHE/RELEASE/build-KEY/   base + packaging/install-deps deb
#   $DISTRO_CACHE/RELEASE/boot-KEY/    base + systemd, udev, the release's kernel
#   $DISTRO_CACHE/RELEASE/archives/    apt's downloaded .debs, bind-mounted
#                                      into each tree while apt runs in it
# KEY is a hash of what made the tree (for build-KEY: the whole of
# packaging/install-deps), so a change rebuilds exactly what it touches.
# The cached trees are never changed after they are made: a run copies them.

DISTRO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRCDIR=$(cd "$DISTRO_DIR/../.." && pwd)
DISTRO_CACHE=${THPGUARD_DISTRO_CACHE:-/var/cache/thpguard-distro}
# shellcheck source=../lib/debian.sh
. "$SRCDIR/tests/lib/debian.sh"

# Bump when the way a tree is made changes in a way no key below sees.
DISTRO_RECIPE=1

# What the booted image has besides minbase: systemd as PID 1, udev (for
# the root device unit), an initramfs generator, and then the release's own
# kernel. Two apt-get runs: the kernel's postinst makes the initrd once, and
# no later trigger of initramfs-tools makes it again.
BOOT_PACKAGES=(systemd systemd-sysv udev initramfs-tools)
BOOT_KERNEL=(linux-image-amd64)

# Given to debconf in a build tree before install-deps runs: man-db's index
# serves nothing there and takes minutes to build.
BUILD_DEBCONF='man-db man-db/auto-update boolean false'

distro_number() {
        case $1 in
        bullseye) echo 11 ;;
        bookworm) echo 12 ;;
        trixie) echo 13 ;;
        *) return 1 ;;
        esac
}

distro_hash() {
        sha256sum | cut -c1-12
}

# Unmounts everything mounted below DIR, deepest first.
distro_umount_below() {
        local m
        awk -v t="$1" 'index($2, t "/") == 1 { print $2 }' /proc/self/mounts | sort -r | while read -r m; do
                umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || :
        done
}

# Removes a tree (a copy, a failed attempt); never crosses into a mount.
distro_remove() {
        [ -e "$1" ] || return 0
        distro_umount_below "$1"
        rm -rf --one-file-system "$1"
}

# distro_chroot ROOT ARCHIVES CMD...: runs CMD in ROOT, in a mount namespace
# of its own, with /proc, /sys (read-only: nothing in the tree may write this
# machine's THP knobs), /dev and, when ARCHIVES is not empty, apt's cache
# bind-mounted from ARCHIVES. The mounts go when the namespace does, and the
# trap of chroot-exec unmounts them before that.
distro_chroot() {
        unshare --mount --propagation private -- "$DISTRO_DIR/chroot-exec" "$@"
}

# Says whether a log shows that the archive could not be reached.
distro_unreachable() {
        grep -qiE 'Failed getting release file|Couldn.t download|Temporary failure|unable to fetch|Failed to fetch|Could not resolve|Could not connect|Unable to connect|Connection (failed|refused|timed out)|No route to host|Network is unreachable' "$1"
}

# distro_fail_fetch RELEASE WHAT LOG: the failure line for a tree that could
# not be made, saying so plainly when the archive was out of reach.
distro_fail_fetch() {
        if distro_unreachable "$3"; then
                echo "cannot fetch Debian $(distro_number "$1") ($1) from $(debian_mirror_said): the archive is unreachable ($2; see $3)"
        else
                echo "$2 failed (see $3)"
        fi
}

# distro_tree RELEASE KIND LOG: makes (once) the cached tree KIND (base,
# build or boot) of RELEASE and prints its path. On failure prints the
# reason on stderr and returns 1. The caller holds the release's lock.
distro_tree() {
        local rel=$1 kind=$2 log=$3 dir key base_key base tmp mirror old
        dir=$DISTRO_CACHE/$rel
        mirror=$(debian_mirror)
        base_key=$(printf '%s\n' "$DISTRO_RECIPE" "$rel" "$mirror" minbase | distro_hash)
        case $kind in
        base) key=$base_key ;;
        build) key=$(cat <(printf '%s\n' "$base_key" "$BUILD_DEBCONF") "$SRCDIR/packaging/install-deps" | distro_hash) ;;
        boot) key=$(printf '%s\n' "$base_key" "${BOOT_PACKAGES[@]}" -- "${BOOT_KERNEL[@]}" | distro_hash) ;;
        esac
        # The marker is written after the tree is in place: a tree without it
        # is what an interrupted run left, and is made again.
        if [ -f "$dir/$kind-$key.complete" ]; then
                echo "$dir/$kind-$key"
                return 0
        fi
        mkdir -p "$dir/archives"
        tmp=$dir/$kind-$key.tmp
        distro_remove "$tmp"
        case $kind in
        base)
                echo "== $(date +%T) debootstrap --variant=minbase $rel from $(debian_mirror_said)" >>"$log"
                if ! debootstrap --variant=minbase --cache-dir="$dir/archives" "$rel" "$tmp" ${mirror:+"$mirror"} \
                        >>"$log" 2>&1 </dev/null; then
                        distro_remove "$tmp"
                        distro_fail_fetch "$rel" "debootstrap of $rel" "$log" >&2
                        return 1
                fi
                # apt must not keep what debootstrap downloaded: the cache is $dir/archives.
                rm -f "$tmp"/var/cache/apt/archives/*.deb
                ;;
        build | boot)
                base=$(distro_tree "$rel" base "$log") || return 1
                echo "== $(date +%T) making the $kind tree from $base" >>"$log"
                cp -a "$base" "$tmp"
                if [ "$kind" = build ]; then
                        # packaging/install-deps itself, on a fresh tree of this release.
                        mkdir -p "$tmp/tmp/install-deps"
                        cp "$SRCDIR/packaging/install-deps" "$tmp/tmp/install-deps/"
                        echo "$BUILD_DEBCONF" | distro_chroot "$tmp" "" debconf-set-selections >>"$log" 2>&1 ||
                                { distro_remove "$tmp"; echo "debconf-set-selections in the $rel tree failed (see $log)" >&2; return 1; }
                        distro_chroot "$tmp" "$dir/archives" /tmp/install-deps/install-deps deb >>"$log" 2>&1 </dev/null ||
                                { distro_remove "$tmp"; distro_fail_fetch "$rel" "packaging/install-deps deb in the $rel tree" "$log" >&2; return 1; }
                        # The full test set is not installed here, but each of its names
                        # must be one this release can install.
                        # shellcheck disable=SC2016 # $(...) runs in the tree
                        distro_chroot "$tmp" "" sh -c 'apt-get install -s $(/tmp/install-deps/install-deps --list test)' \
                                >>"$log" 2>&1 </dev/null ||
                                { distro_remove "$tmp"; echo "packaging/install-deps test names a package that Debian" \
                                        "$(distro_number "$rel") ($rel) cannot install (apt-get install -s; see $log)" >&2; return 1; }
                        rm -rf "$tmp/tmp/install-deps"
                else
                        distro_chroot "$tmp" "$dir/archives" sh -c "apt-get update -qq &&
                                apt-get install -y -qq --no-install-recommends ${BOOT_PACKAGES[*]} &&
                                apt-get install -y -qq --no-install-recommends ${BOOT_KERNEL[*]}" >>"$log" 2>&1 </dev/null ||
                                { distro_remove "$tmp"; distro_fail_fetch "$rel" "installing ${BOOT_PACKAGES[*]} ${BOOT_KERNEL[*]} in the $rel tree" "$log" >&2; return 1; }
                fi
                ;;
        esac
        # Trees of this kind made for another key are of no more use.
        for old in "$dir/$kind"-*; do
                [ "$old" = "$tmp" ] || distro_remove "$old"
        done
        mv "$tmp" "$dir/$kind-$key"
        touch "$dir/$kind-$key.complete"
        echo "== $(date +%T) $kind tree made: $dir/$kind-$key" >>"$log"
        echo "$dir/$kind-$key"
}
