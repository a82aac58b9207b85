#!/bin/bash
# Fault: a knob disappears and reappears while the daemon runs (a module
# unloaded, an mTHP size gone, a container's bind mount swapped). The kernel
# cannot be made to drop a THP file, so this runs on a copy of the 6.18
# fixture tree on tmpfs as --sysfs-root. A fixture file is not sysfs (a write
# would corrupt it, see tests/fixtures/README.md), so the enforce phase uses a
# policy that matches the tree, and the drift phase runs in audit mode.
#
# Expected: the state `unsupported` is logged once, not at every
# recheck, and the daemon does not crash; when the file comes back it logs
# "can be enforced again" and checks it again (metrics say supported and
# compliant; in audit mode a drifted file is reported). The same for a whole
# size directory, whose inotify watch is lost and re-added.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
fixture_on_tmpfs
ORIG_ENABLED=$(cat "$T/enabled")
snapshot() { (cd "$ROOT" && find ./kernel -type f -exec md5sum {} + | sort) >"$TMP/tree.$1"; }

# What the 6.18 fixture reads: nothing to correct, so nothing is written.
write_policy "$POLICY" 'recheck_interval = 1;
thp = {
  enabled = "madvise";
  khugepaged = { defrag = true; };
  sizes = ( { size = "64kB"; enabled = "never"; } );
};'
snapshot before
daemon_start --sysfs-root "$ROOT" --metrics-file "$M"
wait_log 'msg="started: enforcing 3 knobs .* 0 corrected at startup"' 5

# --- a file disappears ------------------------------------------------------
rm "$T/enabled"
wait_log 'level=warn msg="enabled is unsupported: not present on this kernel; skipping it" knob=enabled' 5
r0=$(metric "$M" thpguard_rechecks_total)
wait_metric_ge "$M" thpguard_rechecks_total $((${r0:-0} + 3)) 30
[ "$(log_count 'enabled is unsupported')" = 1 ] || fail "unsupported logged $(log_count 'enabled is unsupported') times over rechecks, want once"
[ "$(metric "$M" 'thpguard_knob_supported{knob="enabled"}')" = 0 ] || fail "metrics: enabled still supported"
kill -0 "$DAEMON_PID" || fail "the daemon died when a knob disappeared"

# --- it reappears (a new inode, by rename) ------------------------------------
printf '%s\n' "$ORIG_ENABLED" >"$ROOT/enabled.new"
mv "$ROOT/enabled.new" "$T/enabled"
wait_log 'level=info msg="enabled can be enforced again" knob=enabled' 5
[ "$(log_count 'enabled can be enforced again')" = 1 ] || fail "want one 'can be enforced again'"
r0=$(metric "$M" thpguard_rechecks_total)
wait_metric_ge "$M" thpguard_rechecks_total $((${r0:-0} + 2)) 30
[ "$(metric "$M" 'thpguard_knob_supported{knob="enabled"}')" = 1 ] || fail "metrics: enabled not supported again"
[ "$(metric "$M" 'thpguard_knob_compliant{knob="enabled"}')" = 1 ] || fail "metrics: enabled not checked again"

# --- a whole size directory disappears and comes back -------------------------
cp -a "$T/hugepages-64kB" "$ROOT/hugepages-64kB.saved"
rm -rf "$T/hugepages-64kB"
wait_log 'level=warn msg="lost the inotify watch on .*/hugepages-64kB; relying on the 1s recheck' 5
wait_log 'msg="hugepages-64kB/enabled is unsupported: not present on this kernel; skipping it"' 5
r0=$(metric "$M" thpguard_rechecks_total)
wait_metric_ge "$M" thpguard_rechecks_total $((${r0:-0} + 3)) 30
[ "$(log_count 'hugepages-64kB/enabled is unsupported')" = 1 ] || fail "size dir: unsupported logged more than once"
cp -a "$ROOT/hugepages-64kB.saved" "$T/hugepages-64kB"
wait_log 'msg="re-added 1 lost inotify watch"' 5
wait_log 'msg="hugepages-64kB/enabled can be enforced again"' 5
daemon_stop
snapshot after
cmp -s "$TMP/tree.before" "$TMP/tree.after" || { diff "$TMP/tree.before" "$TMP/tree.after" >&2; fail "the daemon wrote to the fixture tree"; }

# --- audit mode: a file that comes back drifted is checked and reported ------
daemon_start --sysfs-root "$ROOT" --audit
rm "$T/hugepages-64kB/enabled"
wait_log 'msg="hugepages-64kB/enabled is unsupported' 5
printf '[always] inherit madvise never\n' >"$T/hugepages-64kB/enabled"
wait_log 'msg="hugepages-64kB/enabled can be enforced again"' 5
wait_event 5 audit_drift level=warn knob=hugepages-64kB/enabled observed=always desired=never trigger=inotify
# Gone and back while the daemon is frozen: the kept-open file is stale; the
# events (or the recheck) make it read the new file by path.
kill -STOP "$DAEMON_PID"
rm "$T/enabled"
printf 'always madvise [never]\n' >"$T/enabled"
kill -CONT "$DAEMON_PID"
wait_event 5 audit_drift knob=enabled observed=never desired=madvise
# Garbage content: an error state, logged once, never written.
printf 'garbage\n' >"$T/khugepaged/defrag"
wait_log 'level=warn msg="khugepaged/defrag is error: unexpected content for a numeric knob; skipping it"' 5
sleep 2.5
[ "$(log_count 'khugepaged/defrag is error')" = 1 ] || fail "the error state was logged more than once"
[ "$(cat "$T/khugepaged/defrag")" = garbage ] || fail "a file with unexpected content was written"
daemon_stop
[ "$(log_count 'AddressSanitizer|runtime error')" = 0 ] || fail "sanitizer report"
echo "PASS: a knob or a size directory that comes and goes is unsupported once, then enforced again"
