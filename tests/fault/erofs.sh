#!/bin/bash
# Fault: EROFS on write. A read-only bind mount of the THP directory in a
# private mount namespace (what an unprivileged container sees) gives a real
# EROFS; the daemon runs inside it while the knobs drift outside.
#
# Expected: a clear error that says the sysfs is read-only, with
# errno=30, once per foreign value (not at every recheck); the daemon keeps
# running and keeps reporting new drifts; in audit mode it works normally
# (drift lines, no error). Nothing is written; SIGTERM exits 0.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_mount_ns
real_sysfs_begin

# in_ro_ns CMD...: CMD sees $THP read-only. It execs, so that $! is the
# daemon's PID: call it only in a subshell (background, $(...)).
in_ro_ns() {
        # shellcheck disable=SC2016 # expanded by the inner bash
        exec unshare -m --propagation private bash -c '
                mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 99
                if (: >>"$1/enabled") 2>/dev/null; then echo "the bind mount is not read-only" >&2; exit 99; fi
                shift
                exec "$@"' _ "$THP" "$@"
}

# Premise: in the namespace a write fails with EROFS, outside it works.
rc=0
err=$(in_ro_ns sh -c "echo madvise >$THP/enabled" 2>&1) || rc=$?
[ $rc -ne 99 ] || fail "cannot make a read-only bind mount: $err"
echo "$err" | grep -q 'Read-only file system' || fail "a write in the namespace did not fail with EROFS: rc=$rc $err"

thp_set enabled always
write_policy "$POLICY" 'recheck_interval = 1;
thp = { enabled = "madvise"; };'

# --- enforce mode: an error saying read-only, once per foreign value ---------
daemon_start_cmd in_ro_ns "$THPGUARDD" --config "$POLICY" --log-target=console --metrics-file "$M"
wait_event 5 correction_failed level=error knob=enabled observed=always desired=madvise trigger=startup result=failed errno=30
# The cause has no field: the text says it, and what to look for.
event_says correction_failed 'sysfs is read-only here \(Read-only file system\): a read-only mount or an unprivileged container' ||
        fail "the error does not say that sysfs is read-only here"
r0=$(metric "$M" thpguard_rechecks_total)
wait_metric_ge "$M" thpguard_rechecks_total $((${r0:-0} + 3)) 30
[ "$(event_count correction_failed)" = 1 ] || fail "the EROFS was logged $(event_count correction_failed) times over rechecks, want once"
[ "$(thp_get enabled)" = always ] || fail "enabled changed through a read-only mount"
kill -0 "$DAEMON_PID" || fail "the daemon died on EROFS"

# It keeps reporting: a new drift (made outside, seen by inotify through the bind mount) is a new error.
thp_set enabled never
wait_event 5 correction_failed knob=enabled observed=never trigger=inotify errno=30
[ "$(event_count correction_failed)" = 2 ] || fail "want 2 error lines, got $(event_count correction_failed)"
# Back to compliance: no error; the next drift is reported again.
thp_set enabled madvise
sleep 1.5
thp_set enabled always
wait_event 5 correction_failed knob=enabled observed=always trigger=inotify errno=30
[ "$(event_count correction_failed)" = 3 ] || fail "want 3 error lines, got $(event_count correction_failed)"
daemon_stop
[ "$(thp_get enabled)" = always ] || fail "enabled changed through a read-only mount"

# --- audit mode (--audit and mode = "audit"): works normally ---------------
for how in flag policy; do
        args=()
        if [ $how = flag ]; then
                args=(--audit)
        else
                write_policy "$POLICY" 'mode = "audit"; recheck_interval = 1;
thp = { enabled = "madvise"; };'
        fi
        thp_set enabled always
        daemon_start_cmd in_ro_ns "$THPGUARDD" --config "$POLICY" --log-target=console "${args[@]}"
        wait_event 5 audit_drift level=warn knob=enabled observed=always desired=madvise trigger=startup result=audit
        wait_log 'msg="started: auditing 1 knobs' 5
        thp_set enabled never
        wait_event 5 audit_drift knob=enabled observed=never desired=madvise trigger=inotify
        sleep 1.5
        [ "$(event_count audit_drift knob=enabled)" = 2 ] || fail "audit ($how): want 2 drift lines, got $(event_count audit_drift knob=enabled)"
        [ "$(log_count '^level=error')" = 0 ] || { cat "$TMP/daemon.log"; fail "audit mode ($how) on a read-only sysfs logged an error"; }
        daemon_stop
        [ "$(thp_get enabled)" = never ] || fail "audit mode wrote"
done
echo "PASS: EROFS reported as read-only once per value, the daemon kept running; audit works"
