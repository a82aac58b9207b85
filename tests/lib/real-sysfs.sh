# shellcheck shell=bash
# Source this from a test that writes the machine's real THP sysfs (it
# brings test.sh).
#
#   real_sysfs_begin   skips (exit 77) when the sysfs is absent or read-only,
#                      takes an exclusive lock, saves every writable knob and
#                      restores them on exit, whatever happens.
#
# CTest's RESOURCE_LOCK serializes tests within one ctest run; the flock
# also serializes against any other run on the machine (a second build
# tree, a developer's shell). Start background processes with 9>&- so they
# do not inherit the lock.

[ -z "${THPGUARD_REAL_SYSFS_SH:-}" ] || return 0
THPGUARD_REAL_SYSFS_SH=1

# shellcheck source=test.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/test.sh"

THP=/sys/kernel/mm/transparent_hugepage
THP_LOCK=${THP_LOCK:-/tmp/thpguard-real-sysfs.lock}
# How long real_sysfs_begin waits for another run to release the lock
# (tests/CMakeLists.txt sets it, and adds it to each REAL_SYSFS test's TIMEOUT).
THP_LOCK_WAIT=${THP_LOCK_WAIT:-120}

# thp_writable_knobs: the writable knobs this kernel has, as paths relative to $THP.
thp_writable_knobs() {
        local f
        for f in enabled defrag shmem_enabled use_zero_page shrink_underused \
                khugepaged/defrag khugepaged/pages_to_scan khugepaged/scan_sleep_millisecs \
                khugepaged/alloc_sleep_millisecs khugepaged/max_ptes_none khugepaged/max_ptes_swap \
                khugepaged/max_ptes_shared "$THP"/hugepages-*kB/enabled "$THP"/hugepages-*kB/shmem_enabled; do
                f=${f#"$THP"/}
                [ -f "$THP/$f" ] && echo "$f"
        done
}

# thp_get KNOB: the active value of a knob: the bracketed word, or the number.
thp_get() {
        local v
        v=$(cat "$THP/$1") || return 1
        if [[ $v =~ \[([^]]+)\] ]]; then
                echo "${BASH_REMATCH[1]}"
        else
                echo "$v"
        fi
}

# thp_is KNOB VALUE: the knob's active value is VALUE.
thp_is() {
        [ "$(thp_get "$1")" = "$2" ]
}

# thp_set KNOB VALUE: writes VALUE to the knob (fails as the kernel refuses it).
thp_set() {
        echo "$2" >"$THP/$1"
}

declare -A THP_SAVED

# real_sysfs_restore: puts back every knob that real_sysfs_begin saved.
real_sysfs_restore() {
        local k
        for k in "${!THP_SAVED[@]}"; do
                if [ "$(thp_get "$k")" != "${THP_SAVED[$k]}" ]; then
                        thp_set "$k" "${THP_SAVED[$k]}" || echo "WARNING: could not restore $k" >&2
                fi
        done
}

# real_sysfs_begin: skips where the sysfs is absent or read-only; takes the
# lock, saying how long that took, and fails after $THP_LOCK_WAIT seconds
# naming every process that still holds it: another run's test, or
# something a test left behind that inherited the lock's descriptor (a
# container's conmon, a containerd shim; hence 9>&-). An unbounded wait
# spent the whole CTest TIMEOUT with nothing said, and looked like a hang
# of thpguardd. Saves every knob and restores it at exit, after every other
# cleanup (the daemons and helpers a test started are gone by then).
real_sysfs_begin() {
        local k t0=$SECONDS holders
        [ -d "$THP" ] || skip "$THP does not exist on this machine"
        echo "waiting for the real-sysfs lock ($THP_LOCK), at most $THP_LOCK_WAIT s"
        exec 9>"$THP_LOCK"
        if ! flock -w "$THP_LOCK_WAIT" 9; then
                exec 9>&-
                holders=$(lock_holders "$THP_LOCK")
                fail "the real-sysfs lock $THP_LOCK is still held after $THP_LOCK_WAIT s, by:
${holders:-(no process has it open any more: it was released just now)}"
        fi
        echo "got the real-sysfs lock after $((SECONDS - t0)) s"
        # Only with the lock: another run's test (a daemon in lock mode,
        # say) may refuse writes for a while, which is not a read-only sysfs.
        if ! (: >>"$THP/enabled") 2>/dev/null; then
                skip "$THP is read-only here"
        fi
        for k in $(thp_writable_knobs); do
                THP_SAVED[$k]=$(thp_get "$k")
        done
        on_exit_last real_sysfs_restore
}

# thp_wait_for KNOB VALUE [SECONDS]: polls until the knob reads VALUE, for at
# most SECONDS (default 1); else says what it read and returns 1.
thp_wait_for() {
        wait_until "${3:-1}" thp_is "$1" "$2" 2>/dev/null && return 0
        echo "timeout: $1 reads '$(thp_get "$1")', wanted '$2' (after ${3:-1} s)" >&2
        return 1
}

# fake_pmd_begin: for a khugepaged/max_ptes_none of 1000 that thpguardd's
# validation passes and the kernel rejects (EINVAL). thpguardd bounds
# max_ptes_* by hpage_pmd_size / page size - 1; a fake hpage_pmd_size,
# bind-mounted in a private mount namespace, lifts that bound. Skips where
# that cannot be done or the kernel would accept 1000. Sets REAL_PMD,
# PMD_BOUND (the real bound), FAKE_PMD and FAKE_PMD_NS, a command prefix
# that execs its command in that namespace (exit 99 if the mount fails).
fake_pmd_begin() {
        local k page
        need_mount_ns
        for k in enabled hpage_pmd_size khugepaged/max_ptes_none; do
                [ -f "$THP/$k" ] || skip "this kernel has no $k"
        done
        REAL_PMD=$(cat "$THP/hpage_pmd_size")
        page=$(getconf PAGESIZE)
        PMD_BOUND=$((REAL_PMD / page - 1))
        [ "$PMD_BOUND" -lt 1000 ] || skip "this kernel accepts max_ptes_none up to $PMD_BOUND; 1000 would not be rejected"
        FAKE_PMD=$((REAL_PMD * 2))
        [ $((FAKE_PMD / page - 1)) -ge 1000 ] || FAKE_PMD=$(((1000 + 1) * page))
        echo "$FAKE_PMD" >"$TMP/hpage_pmd_size"
        # shellcheck disable=SC2016 # expanded by the inner bash
        FAKE_PMD_NS=(unshare -m --propagation private bash -c '
                mount --bind "$1" "$2/hpage_pmd_size" || exit 99
                [ "$(cat "$2/hpage_pmd_size")" = "$3" ] || { echo "fake hpage_pmd_size not in place" >&2; exit 99; }
                shift 3
                exec "$@" 9>&-' _ "$TMP/hpage_pmd_size" "$THP" "$FAKE_PMD")
}
