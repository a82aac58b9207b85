# shellcheck shell=bash
# What the fleet tests (metrics file, manifests, container image) share
# beyond tests/lib (which this brings: test.sh, real-sysfs.sh, policy.sh,
# metrics.sh, events.sh). Source after `set -euo pipefail`.

# shellcheck source=../lib/real-sysfs.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/real-sysfs.sh"
# shellcheck source=../lib/policy.sh
. "$SRCDIR/tests/lib/policy.sh"
# shellcheck source=../lib/metrics.sh
. "$SRCDIR/tests/lib/metrics.sh"
# shellcheck source=../lib/events.sh
. "$SRCDIR/tests/lib/events.sh"

: "${THPGUARDD:?THPGUARDD is not set: run this test through ctest}"
[ -x "$THPGUARDD" ] || fail "THPGUARDD=$THPGUARDD is not an executable"

# metrics_check FILE [--all] [EXPECT...]: check-metrics.py, the real parser's (prometheus_client) check of a metrics file.
metrics_check() {
        "$PY" "$SRCDIR/tests/container/check-metrics.py" "$@" || fail "the metrics file does not hold up (above)"
}

# The runtime shims' tests (runtime-shim-podman.sh, runtime-shim-containerd.sh).
SHIMDIR=${BUILDDIR:?BUILDDIR is not set: run this test through ctest}/src
# What podman needs on this kind of machine (MACHINE-FACTS: crun fails, default rlimits are refused).
PODMAN_OPTS=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --network none)

# shim_image IMAGE: a podman image, made offline, holding only /thp-helper
# (tests/ctl/thp-helper.c built static): probe, probe-child and hog run in it. Removed at exit.
shim_image() {
        need gcc
        mkdir -p "$TMP/rootfs"
        gcc -static -O2 -o "$TMP/rootfs/thp-helper" "$SRCDIR/tests/ctl/thp-helper.c" 2>"$TMP/gcc.err" ||
                skip "no static C library to build the image's helper: $(head -n2 "$TMP/gcc.err")"
        tar -C "$TMP/rootfs" -c . | podman import - "$1" >/dev/null 2>"$TMP/import.err" ||
                fail "podman import: $(cat "$TMP/import.err")"
        on_exit "podman rmi -f '$1' >/dev/null 2>&1"
}

# anon_huge_kb_of PID: AnonHugePages of PID in kB, from the host's /proc (smaps_rollup).
anon_huge_kb_of() {
        awk '/^AnonHugePages:/ { print $2 }' "/proc/$1/smaps_rollup"
}
