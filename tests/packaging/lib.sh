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
# made by debootstrap once and cached: pkg_tree DEB [EXTRA,PACKAGES]. Prints
# the cached tree's path: copy it (pkg_tree_copy) before changing anything
# in it.
pkg_tree() {
        local deb=$1 extra=${2:-} includes key cache mirror log
        # The package's Depends, first alternatives, without versions.
        includes=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/[[:space:]]//g' | grep -v '^$' |
                sort -u | tr '\n' ',')
        includes="systemd,systemd-sysv,dbus,${includes%,}${extra:+,$extra}"
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

# ---- Booting a tree under systemd-nspawn (systemd as PID 1) ------------------
# pkg_boot TREE LOG boots TREE with the host's THP directory bound in, waits
# (bounded) for its boot to finish and sets PKG_NS_PID (systemd-nspawn) and
# PKG_LEADER (the container's PID 1, as the host sees it). The caller's
# cleanup calls pkg_boot_stop, then removes the tree. Needs root.
#
# The container keeps CAP_SYS_ADMIN and may call fanotify_init(), as a
# host's systemd may: the unit's ExecStartPre= needs both for writer
# attribution (nspawn's own capability set and seccomp filter refuse it).
# A systemd PID 1 with --keep-unit would put the container in our unit;
# where PID 1 is not systemd, nspawn makes payload/ and supervisor/ below
# our own cgroup, which pkg_boot_stop removes.
PKG_NS_PID=
PKG_LEADER=
pkg_boot() {
        local tree=$1 log=$2 i state
        PKG_BOOT_TREE=$tree
        PKG_BOOT_LOG=$log
        PKG_CG_BEFORE=$(find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null | sort)
        PKG_OWN_CGROUPS=()
        local controllers path hierarchy
        while IFS=: read -r _ controllers path; do
                case $controllers in
                name=systemd) hierarchy=/systemd ;;
                "") hierarchy=$([ -d /sys/fs/cgroup/unified ] && echo /unified) ;;
                *) hierarchy=/$controllers ;;
                esac
                PKG_OWN_CGROUPS+=("/sys/fs/cgroup$hierarchy${path%/}/")
        done </proc/self/cgroup
        PKG_NSPAWN_RUN_EXISTED=no
        [ -d /run/systemd/nspawn ] && PKG_NSPAWN_RUN_EXISTED=yes
        local args=(-D "$tree" --register=no --keep-unit --console=passive -b
                --capability=CAP_SYS_ADMIN --system-call-filter='fanotify_init fanotify_mark'
                --bind=/sys/kernel/mm/transparent_hugepage)
        echo "booting: systemd-nspawn ${args[*]}"
        systemd-nspawn "${args[@]}" >"$log" 2>&1 </dev/null 9>&- &
        PKG_NS_PID=$!
        PKG_LEADER=
        # The container's PID 1 is systemd-nspawn's child.
        for ((i = 0; i < 200; i++)); do
                PKG_LEADER=$(child_pids "$PKG_NS_PID" systemd | head -n 1)
                [ -n "$PKG_LEADER" ] && break
                kill -0 "$PKG_NS_PID" 2>/dev/null || fail "systemd-nspawn exited at once: $(tail -n 20 "$log")"
                sleep 0.05
        done
        [ -n "$PKG_LEADER" ] || fail "no systemd under systemd-nspawn after 10 s: $(tail -n 20 "$log")"
        echo "container PID 1 is host pid $PKG_LEADER"
        # systemctl needs PID 1's private socket, which appears a moment after exec.
        for ((i = 0; i < 600; i++)); do
                pkg_inside test -S /run/systemd/private 2>/dev/null && break
                kill -0 "$PKG_NS_PID" 2>/dev/null || fail "systemd-nspawn exited while booting: $(tail -n 20 "$log")"
                sleep 0.05
        done
        state=$(timeout 120 nsenter -t "$PKG_LEADER" -a -- systemctl is-system-running --wait 2>&1) || true
        echo "system state after boot: $state"
        case $state in
        running | degraded) ;;
        *) fail "the container did not finish booting: $state; $(tail -n 30 "$log")" ;;
        esac
        [ "$state" = degraded ] && pkg_inside systemctl --failed --no-pager || true
}

# pkg_inside CMD...: runs CMD in the booted container's namespaces (with
# --register=no there is no machined, so neither machinectl nor
# systemd-run --machine).
pkg_inside() {
        nsenter -t "$PKG_LEADER" -a -- "$@"
}

# pkg_prop UNIT PROPERTY: a unit's property in the booted container.
pkg_prop() {
        pkg_inside systemctl show -P "$2" "$1"
}

# The cgroups made since pkg_boot below our own.
pkg_boot_new_cgroups() {
        local d o
        comm -13 <(echo "$PKG_CG_BEFORE") <(find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null | sort) |
                while read -r d; do
                        for o in "${PKG_OWN_CGROUPS[@]}"; do
                                [[ $d/ == "$o"* ]] && echo "$d" && break
                        done
                done
}

# pkg_poweroff: a clean power-off within 30 s, and no process left in the tree.
pkg_poweroff() {
        local i p
        pkg_inside systemctl poweroff || fail "systemctl poweroff failed"
        for ((i = 0; i < 300; i++)); do kill -0 "$PKG_NS_PID" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$PKG_NS_PID" 2>/dev/null && fail "the container did not power off within 30 s"
        wait "$PKG_NS_PID" || fail "systemd-nspawn exited $? after poweroff"
        PKG_NS_PID=
        for p in /proc/[0-9]*; do
                [ "$(readlink "$p/root" 2>/dev/null)" = "$PKG_BOOT_TREE" ] && fail "process ${p#/proc/} still runs in the tree"
        done
        return 0
}

# pkg_boot_stop: for the caller's cleanup. Stops a container still running
# (power-off, then nspawn's SIGTERM, then SIGKILL), removes the empty
# cgroups nspawn left below ours; sets TEST_RC=1 if processes or cgroups
# with processes were left.
pkg_boot_stop() {
        local i d
        if [ -n "$PKG_NS_PID" ] && kill -0 "$PKG_NS_PID" 2>/dev/null; then
                [ -n "$PKG_LEADER" ] && pkg_inside systemctl poweroff >/dev/null 2>&1
                for ((i = 0; i < 300; i++)); do kill -0 "$PKG_NS_PID" 2>/dev/null || break; sleep 0.1; done
                kill -TERM "$PKG_NS_PID" 2>/dev/null
                for ((i = 0; i < 100; i++)); do kill -0 "$PKG_NS_PID" 2>/dev/null || break; sleep 0.1; done
                if kill -0 "$PKG_NS_PID" 2>/dev/null; then
                        echo "WARNING: systemd-nspawn did not exit; killing it" >&2
                        kill -KILL "$PKG_NS_PID" 2>/dev/null
                        TEST_RC=1
                fi
                wait "$PKG_NS_PID" 2>/dev/null
        fi
        PKG_NS_PID=
        [ -n "${PKG_CG_BEFORE:-}" ] || return 0
        while read -r d; do
                [ -n "$d" ] || continue
                if ! rmdir "$d" 2>/dev/null; then
                        echo "FAIL: cgroup $d left behind with processes: $(cat "$d/cgroup.procs" 2>/dev/null | tr '\n' ' ')" >&2
                        TEST_RC=1
                fi
        done < <(pkg_boot_new_cgroups | sort -r)
        if [ "$PKG_NSPAWN_RUN_EXISTED" = no ]; then
                rm -rf /run/systemd/nspawn 2>/dev/null
        fi
        return 0
}
