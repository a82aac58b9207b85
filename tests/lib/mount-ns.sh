# shellcheck shell=bash
# own_mount_namespace "$0" "$@": the rest of the test runs in a private
# mount namespace of its own (the script is executed again there, once), so
# what it mounts (a journald's tmpfs, a FUSE file system) no other test or
# process sees and nothing is left mounted. Exits 77 where no mount
# namespace can be made. Source it and call it first, before test.sh or a
# lib.sh (they make $TMP, which the first run would leave behind).
own_mount_namespace() {
        [ -n "${THPGUARD_OWN_MOUNT_NS:-}" ] && return 0
        unshare -m --propagation private true 2>/dev/null || {
                echo "SKIP: cannot create a mount namespace here" >&2
                exit 77
        }
        exec unshare -m --propagation private env THPGUARD_OWN_MOUNT_NS=1 bash "$@"
}
