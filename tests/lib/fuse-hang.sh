# shellcheck shell=bash
# A process that holds its own memory lock (tests/helpers/fuse-hang.c, $FUSE_HANG):
# every reader of its /proc/PID/cmdline, smaps_rollup or mem waits for good.
# Call it in a private mount namespace (mount-ns.sh), after test.sh.

# fuse_hang_start WAIT_FOR [FILE VALUE]: starts it on a FUSE mount below $TMP
# and waits for its line WAIT_FOR ("ready", or "wrote" once it wrote VALUE to
# FILE); sets HANG to its pid; skips where FUSE cannot be mounted. It is
# released (the connection aborted, the process killed) at exit.
fuse_hang_start() {
        local wait_for=$1 rc=0
        shift
        [ -c /dev/fuse ] || skip "no /dev/fuse (the fuse module) on this machine"
        : "${FUSE_HANG:?FUSE_HANG is not set: run this test through ctest}"
        # The connection can only be aborted through fusectl: the helper cannot be killed while its READ waits.
        mountpoint -q /sys/fs/fuse/connections || mount -t fusectl none /sys/fs/fuse/connections
        FUSE_HANG_MNT=$TMP/fuse
        mkdir "$FUSE_HANG_MNT"
        "$FUSE_HANG" "$FUSE_HANG_MNT" "$@" >"$TMP/hang.out" 2>&1 9>&- &
        HANG=$!
        on_exit fuse_hang_release
        wait_until 10 grep -q "^$wait_for" "$TMP/hang.out" 2>/dev/null && return 0
        kill -0 "$HANG" 2>/dev/null || wait "$HANG" || rc=$?
        [ "$rc" = 77 ] && skip "cannot mount FUSE here: $(cat "$TMP/hang.out")"
        fail "fuse-hang did not say '$wait_for': $(cat "$TMP/hang.out")"
}

# fuse_hang_release: aborts its FUSE connection, kills it, unmounts.
fuse_hang_release() {
        local dev
        dev=$(mountpoint -d "$FUSE_HANG_MNT" 2>/dev/null) && echo 1 >"/sys/fs/fuse/connections/${dev#*:}/abort" || true
        kill -KILL "$HANG" 2>/dev/null || true
        umount -l "$FUSE_HANG_MNT" 2>/dev/null || true
}

# fuse_hang_blocks FILE: test bug unless a plain read of its /proc/PID/FILE waits.
fuse_hang_blocks() {
        local rc=0
        timeout 2 cat "/proc/$HANG/$1" >/dev/null 2>&1 || rc=$?
        [ "$rc" = 124 ] || fail "test bug: a plain read of /proc/$HANG/$1 did not block (rc $rc)"
}
