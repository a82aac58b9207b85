# shellcheck shell=bash
# Source this from a test that writes the machine's real THP sysfs.
#
#   real_sysfs_begin   skips (exit 77) when the sysfs is absent or read-only,
#                      takes an exclusive lock, saves every writable knob and
#                      restores them on exit, whatever happens.
#
# CTest's RESOURCE_LOCK serializes tests within one ctest run; the flock
# also serializes against any other run on the machine (a second build
# tree, a developer's shell). Start background processes with 9>&- so they
# do not inherit the lock.

THP=/sys/kernel/mm/transparent_hugepage
THP_LOCK=${THP_LOCK:-/tmp/thpguard-real-sysfs.lock}

# Under set -e a failing command ends a test; say which one, so that no
# test ever fails without a word (a busy machine makes such failures rare
# and worth reading).
trap 'echo "FAIL: ${BASH_SOURCE[0]##*/}:$LINENO: \"$BASH_COMMAND\" failed with exit $?" >&2' ERR

skip() {
        echo "SKIP: $*"
        exit 77
}

# The writable knobs this kernel has, as paths relative to $THP.
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

# The active value of a knob: the bracketed word, or the number.
thp_get() {
        local v
        v=$(cat "$THP/$1") || return 1
        if [[ $v =~ \[([^]]+)\] ]]; then
                echo "${BASH_REMATCH[1]}"
        else
                echo "$v"
        fi
}

thp_set() {
        echo "$2" >"$THP/$1"
}

declare -A THP_SAVED

real_sysfs_restore() {
        local k
        for k in "${!THP_SAVED[@]}"; do
                if [ "$(thp_get "$k")" != "${THP_SAVED[$k]}" ]; then
                        thp_set "$k" "${THP_SAVED[$k]}" || echo "WARNING: could not restore $k" >&2
                fi
        done
}

real_sysfs_begin() {
        local k
        [ -d "$THP" ] || skip "$THP does not exist on this machine"
        if ! (: >>"$THP/enabled") 2>/dev/null; then
                skip "$THP is read-only here"
        fi
        exec 9>"$THP_LOCK"
        flock 9
        for k in $(thp_writable_knobs); do
                THP_SAVED[$k]=$(thp_get "$k")
        done
        trap 'real_sysfs_restore' EXIT
}

# Polls until knob reads want, for at most $3 seconds (default 1). This is
# a correctness bound, not a benchmark.
thp_wait_for() {
        local knob=$1 want=$2 limit=${3:-1} i
        for ((i = 0; i < limit * 100; i++)); do
                [ "$(thp_get "$knob")" = "$want" ] && return 0
                sleep 0.01
        done
        echo "timeout: $knob reads '$(thp_get "$knob")', wanted '$want'" >&2
        return 1
}

fail() {
        echo "FAIL: $*" >&2
        exit 1
}
