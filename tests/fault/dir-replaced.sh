#!/bin/bash
# A whole knob directory (khugepaged/) renamed away and
# replaced by a new one with other values, on a fake root (real sysfs
# directories cannot be renamed). The old directory is kept, so its files
# keep their links: "unlinked?" cannot tell the daemon's open handles are
# stale, only the device and inode of the path, resolved again, can.
#
# On a private copy of the 6.18 fixture tree on tmpfs, in audit mode (a
# fixture file is not sysfs: it is not written):
#  A. khugepaged/ cannot be watched (the daemon runs as nobody, the
#     directory is mode 0711): the recheck must compare each open knob
#     with its path and read the new directory's value;
#  B. khugepaged/ is watched: its watch would follow the directory renamed
#     away (IN_MOVE_SELF), so the daemon drops it, says so, and the recheck
#     watches the new directory; a later in-place write there is then seen
#     by inotify, not only by the next recheck.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to switch to nobody"
need setpriv util-linux
fixture_on_tmpfs
chmod 0755 "$ROOT"
K=$T/khugepaged
cp "$THPGUARDD" "$ROOT/thpguardd"
NOBODY_POLICY=$ROOT/thpguard.conf # readable by nobody
[ "$(cat "$K/pages_to_scan")" = 4096 ] || fail "the 6.18 fixture changed: khugepaged/pages_to_scan must read 4096"

# replace_dir VALUE MODE: a new khugepaged/ (mode MODE) with pages_to_scan VALUE
# takes the old one's place; the old one lives on as khugepaged.old.
replace_dir() {
        rm -rf "$K.new" "$K.old"
        cp -a "$K" "$K.new"
        echo "$1" >"$K.new/pages_to_scan"
        chmod "$2" "$K.new"
        mv "$K" "$K.old"
        mv "$K.new" "$K"
}

# --- A. an unwatched directory ------------------------------------------------
write_policy "$NOBODY_POLICY" 'recheck_interval = 1; mode = "audit"; thp = { khugepaged = { pages_to_scan = 4096; }; };'
chmod 0711 "$K"
daemon_start_cmd setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$ROOT/thpguardd" --config "$NOBODY_POLICY" --sysfs-root "$ROOT" --log-target=console
wait_log 'level=warn msg="could not watch every knob directory; relying on the 1s recheck"' 5
wait_log 'msg="started: auditing 1 knobs .* 0 drifted at startup"' 5
# A recheck or two with the knob open, then the swap.
sleep 1.5
replace_dir 100 0711
wait_event 5 audit_drift level=warn knob=khugepaged/pages_to_scan observed=100 desired=4096 trigger=recheck
# And again: the handle now open on the new directory is not stale.
replace_dir 200 0711
wait_event 5 audit_drift knob=khugepaged/pages_to_scan observed=200 desired=4096
daemon_stop
[ "$(log_count 'AddressSanitizer|runtime error')" = 0 ] || fail "sanitizer report"

# --- B. a watched directory ---------------------------------------------------
rm -rf "$K.old"
chmod 0755 "$K"
echo 4096 >"$K/pages_to_scan"
# Run as root now: the policy leaves /dev/shm (mode 1777), which root refuses.
write_policy "$POLICY" 'recheck_interval = 3; mode = "audit"; thp = { khugepaged = { pages_to_scan = 4096; }; };'
daemon_start_cmd "$THPGUARDD" --config "$POLICY" --sysfs-root "$ROOT" --log-target=console
wait_log 'msg="started: auditing 1 knobs .* 0 drifted at startup"' 5
[ "$(log_count 'could not watch|lost the inotify watch')" = 0 ] || fail "test bug: the watch is missing from the start"
replace_dir 100 0755
wait_log "level=warn msg=\"lost the inotify watch on $T/khugepaged; relying on the 3s recheck" 5
wait_event 8 audit_drift knob=khugepaged/pages_to_scan observed=100 desired=4096
wait_log 'level=info msg="re-added 1 lost inotify watch"' 8
# The new directory is watched now: a write in place is seen at once, not at the next recheck.
echo 200 >"$K/pages_to_scan"
wait_event 2 audit_drift knob=khugepaged/pages_to_scan observed=200 desired=4096 trigger=inotify
kill -0 "$DAEMON_PID" || fail "the daemon died"
daemon_stop
[ "$(log_count 'AddressSanitizer|runtime error')" = 0 ] || fail "sanitizer report"
echo "PASS: a replaced knob directory is read and watched again, with or without its watch"
