# shellcheck shell=bash
# Helpers of the Debian 11 arm64 run (tests/distro/arm64/run). Source after
# `set -euo pipefail`. Built on the release matrix's library
# (tests/distro/lib.sh: distro_chroot, distro_remove, distro_fail_fetch, the
# mirror) and its cache discipline: a tree is made in KIND-KEY.tmp/, moved
# into place, then marked KIND-KEY.complete; a run only copies it.
#
# The cache, its own directory beside the matrix's (so that neither run
# waits for the other's lock):
#   $ARM64_CACHE/bullseye/base-KEY/  the amd64 minbase (lib.sh's distro_tree)
#   $ARM64_CACHE/xbuild-KEY/         that + arm64 as a foreign architecture,
#                                    crossbuild-essential-arm64, the native
#                                    tools and the :arm64 -dev libraries
#   $ARM64_CACHE/base-KEY/           debootstrap --arch=arm64 --variant=minbase
#                                    bullseye (under qemu-user-static)
#   $ARM64_CACHE/boot-KEY/           that + systemd, udev, initramfs-tools,
#                                    then linux-image-arm64
#   $ARM64_CACHE/archives/           apt's .debs of both architectures

ARM64_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/distro/lib.sh
. "$ARM64_DIR/../lib.sh"
ARM64_CACHE=${THPGUARD_ARM64_CACHE:-$DISTRO_CACHE/arm64}
ARM64_RELEASE=bullseye

# Bump when the way a tree is made changes in a way no key below sees.
ARM64_RECIPE=1

# The cross-build tree, on top of the amd64 minbase. Native (amd64): the
# build tools, the cross compiler, and what compiles the BPF object and its
# skeleton (clang, bpftool: the BPF target is the same for every host).
# arm64: what the package links, as packaging/debian/control's
# Build-Depends names it.
XBUILD_NATIVE=(build-essential crossbuild-essential-arm64 dpkg-dev debhelper cmake pkg-config scdoc
        clang bpftool systemd)
XBUILD_ARM64=(libc6-dev:arm64 libsystemd-dev:arm64 libconfig-dev:arm64 libjson-c-dev:arm64
        libncurses-dev:arm64 libbpf-dev:arm64)
# The booted image: as the matrix's (BOOT_PACKAGES in ../lib.sh), the arm64 kernel.
ARM64_BOOT_KERNEL=(linux-image-arm64)

# arm64_binfmt: makes this machine run arm64 binaries (a chroot of the
# arm64 trees) through qemu-user-static: binfmt_misc mounted, the
# qemu-aarch64 handler registered from qemu-user-static's own
# /usr/lib/binfmt.d/qemu-aarch64.conf (flag F: the interpreter is opened
# now, so it works inside a chroot). Nothing runs systemd-binfmt here.
arm64_binfmt() {
        local conf=/usr/lib/binfmt.d/qemu-aarch64.conf
        mountpoint -q /proc/sys/fs/binfmt_misc ||
                mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || return 1
        [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] && return 0
        [ -f "$conf" ] || {
                echo "no $conf: install qemu-user-static" >&2
                return 1
        }
        grep -v '^#' "$conf" | head -n 1 >/proc/sys/fs/binfmt_misc/register
}

# arm64_tree KIND LOG: makes (once) the cached tree KIND (xbuild, base or
# boot) and prints its path; on failure prints the reason on stderr and
# returns 1. The caller holds $ARM64_CACHE/lock.
arm64_tree() {
        local kind=$1 log=$2 dir=$ARM64_CACHE key base_key xbase tmp mirror old base
        mirror=$(debian_mirror)
        base_key=$(printf '%s\n' "$ARM64_RECIPE" "$ARM64_RELEASE" "$mirror" minbase arm64 | distro_hash)
        case $kind in
        base) key=$base_key ;;
        xbuild) key=$(printf '%s\n' "$ARM64_RECIPE" "$mirror" "${XBUILD_NATIVE[@]}" -- "${XBUILD_ARM64[@]}" | distro_hash) ;;
        boot) key=$(printf '%s\n' "$base_key" "${BOOT_PACKAGES[@]}" -- "${ARM64_BOOT_KERNEL[@]}" | distro_hash) ;;
        *) return 2 ;;
        esac
        if [ -f "$dir/$kind-$key.complete" ]; then
                echo "$dir/$kind-$key"
                return 0
        fi
        mkdir -p "$dir/archives"
        tmp=$dir/$kind-$key.tmp
        distro_remove "$tmp"
        case $kind in
        base)
                echo "== $(date +%T) debootstrap --arch=arm64 --variant=minbase $ARM64_RELEASE from $(debian_mirror_said)" >>"$log"
                if ! debootstrap --arch=arm64 --variant=minbase --cache-dir="$dir/archives" "$ARM64_RELEASE" "$tmp" \
                        ${mirror:+"$mirror"} >>"$log" 2>&1 </dev/null; then
                        distro_remove "$tmp"
                        distro_fail_fetch "$ARM64_RELEASE" "debootstrap --arch=arm64 of $ARM64_RELEASE" "$log" >&2
                        return 1
                fi
                rm -f "$tmp"/var/cache/apt/archives/*.deb
                ;;
        xbuild)
                # The amd64 minbase, the matrix's way (lib.sh), in a cache of our own.
                xbase=$(DISTRO_CACHE=$dir distro_tree "$ARM64_RELEASE" base "$log") || return 1
                echo "== $(date +%T) making the cross-build tree from $xbase" >>"$log"
                cp -a "$xbase" "$tmp"
                echo "$BUILD_DEBCONF" | distro_chroot "$tmp" "" debconf-set-selections >>"$log" 2>&1 ||
                        { distro_remove "$tmp"; echo "debconf-set-selections in the cross-build tree failed (see $log)" >&2; return 1; }
                distro_chroot "$tmp" "$dir/archives" sh -c "dpkg --add-architecture arm64 && apt-get update -qq &&
                        apt-get install -y -qq --no-install-recommends ${XBUILD_NATIVE[*]} &&
                        apt-get install -y -qq --no-install-recommends ${XBUILD_ARM64[*]}" >>"$log" 2>&1 </dev/null ||
                        { distro_remove "$tmp"; distro_fail_fetch "$ARM64_RELEASE" "installing the cross-build packages" "$log" >&2; return 1; }
                ;;
        boot)
                base=$(arm64_tree base "$log") || return 1
                echo "== $(date +%T) making the arm64 boot tree from $base" >>"$log"
                cp -a "$base" "$tmp"
                distro_chroot "$tmp" "$dir/archives" sh -c "apt-get update -qq &&
                        apt-get install -y -qq --no-install-recommends ${BOOT_PACKAGES[*]} &&
                        apt-get install -y -qq --no-install-recommends ${ARM64_BOOT_KERNEL[*]}" >>"$log" 2>&1 </dev/null ||
                        { distro_remove "$tmp"; distro_fail_fetch "$ARM64_RELEASE" "installing ${BOOT_PACKAGES[*]} ${ARM64_BOOT_KERNEL[*]} in the arm64 tree" "$log" >&2; return 1; }
                ;;
        esac
        for old in "$dir/$kind"-*; do
                case $old in
                "$tmp" | "$dir/$kind-$key.complete") ;;
                *) distro_remove "$old" ;;
                esac
        done
        mv "$tmp" "$dir/$kind-$key"
        touch "$dir/$kind-$key.complete"
        echo "== $(date +%T) $kind tree made: $dir/$kind-$key" >>"$log"
        echo "$dir/$kind-$key"
}
