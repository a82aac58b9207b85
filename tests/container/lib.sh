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

# podman_private: from here on `podman` (and packaging/container/build-image,
# through the environment) is this test's own, under $TMP/podman: images,
# containers, their database, per-boot state, events, logs and locks (file
# locks there, not the machine's /dev/shm/libpod_lock). Nothing another
# podman on the machine does can hold it up: with the default storage, a
# long import elsewhere held overlay-layers/layers.lock and this test's
# first `podman info` waited in fcntl(F_SETLKW) for as long as it lasted.
# Each call gives up after $PODMAN_SECONDS (default 120), saying so, and
# runs with fd 9 (the real-sysfs lock) closed: a container's conmon
# outlives the call and would hold the lock for as long as it runs. What
# is left at exit is removed, in this store only. Skips without podman.
podman_private() {
        need podman
        PODMAN_BIN=$(type -P podman)
        local d=$TMP/podman root
        mkdir -p "$d/tmp" "$d/networks"
        cat >"$d/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$d/root"
runroot = "$d/run"
EOF
        cat >"$d/containers.conf" <<EOF
[containers]
log_driver = "k8s-file"

[network]
network_config_dir = "$d/networks"

[engine]
runtime = "runc"
tmp_dir = "$d/tmp"
static_dir = "$d/root/libpod"
volume_path = "$d/root/volumes"
image_copy_tmp_dir = "$d/tmp"
lock_type = "file"
events_logger = "file"
events_logfile_path = "$d/events.log"
# conmon runs 'podman container cleanup' when a container exits: the same store.
conmon_env_vars = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "CONTAINERS_CONF=$d/containers.conf", "CONTAINERS_STORAGE_CONF=$d/storage.conf"]
EOF
        export CONTAINERS_CONF=$d/containers.conf CONTAINERS_STORAGE_CONF=$d/storage.conf
        PODMAN_ROOT=$d/root
        on_exit podman_private_end
        root=$(podman info --format '{{.Store.GraphRoot}}' 2>"$TMP/podman-info.err") ||
                skip "podman cannot run here: $(head -n3 "$TMP/podman-info.err" | tr '\n' ' ')"
        [ "$root" = "$PODMAN_ROOT" ] || fail "test bug: podman's store is $root, not this test's $PODMAN_ROOT"
}

# podman ARGS...: the podman of podman_private, bounded, without fd 9.
podman() {
        local rc=0
        timeout -k 10 "${PODMAN_SECONDS:-120}" "${PODMAN_BIN:?test bug: podman_private was not called}" "$@" 9>&- || rc=$?
        [ "$rc" -ne 124 ] || echo "podman $* did not finish within ${PODMAN_SECONDS:-120} s" >&2
        return "$rc"
}

# podman_private_end: removes every container and image of this test's store
# (after checking that it is that store), and unmounts what is left below it.
podman_private_end() {
        local root m
        root=$(podman info --format '{{.Store.GraphRoot}}' 2>/dev/null) || root=
        if [ "$root" = "$PODMAN_ROOT" ]; then
                podman rm -a -f -t 0 >/dev/null 2>&1 || true
                podman rmi -a -f >/dev/null 2>&1 || true
        fi
        for m in $(awk -v d="$TMP/podman/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
                umount -l "$m" 2>/dev/null || true
        done
}

# The runtime shims' tests (runtime-shim-podman.sh, runtime-shim-containerd.sh).
SHIMDIR=${BUILDDIR:?BUILDDIR is not set: run this test through ctest}/src
# What podman needs on this kind of machine (MACHINE-FACTS: crun fails, default rlimits are refused).
PODMAN_OPTS=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --network none)

# shim_image IMAGE: a podman image (podman_private's), made offline, holding
# only /thp-helper (tests/ctl/thp-helper.c built static): probe, probe-child
# and hog run in it.
shim_image() {
        need gcc
        mkdir -p "$TMP/rootfs"
        gcc -static -O2 -o "$TMP/rootfs/thp-helper" "$SRCDIR/tests/ctl/thp-helper.c" 2>"$TMP/gcc.err" ||
                skip "no static C library to build the image's helper: $(head -n2 "$TMP/gcc.err")"
        tar -C "$TMP/rootfs" -c . | podman import - "$1" >/dev/null 2>"$TMP/import.err" ||
                fail "podman import: $(cat "$TMP/import.err")"
}

# anon_huge_kb_of PID: AnonHugePages of PID in kB, from the host's /proc (smaps_rollup).
anon_huge_kb_of() {
        awk '/^AnonHugePages:/ { print $2 }' "/proc/$1/smaps_rollup"
}
