#!/bin/bash
# Fault: the daemon cannot watch a knob directory, or loses the events that
# said a file was replaced. When a directory vanishes or a watch fails, the
# daemon logs it, keeps rechecking, and re-adds the watch when it can.
#
# The daemon keeps each knob file open and, while every directory is
# watched, relies on IN_CREATE/IN_DELETE to learn that a file was replaced
# (sysfs itself answers ENODEV instead). Without a watch, or after an
# overflow, only the recheck's look at the open file (unlinked?) can tell.
#
# Both halves run on a copy of the 6.18 fixture tree on tmpfs in audit mode
# (a fixture file is not sysfs: it must not be written):
#  A. the daemon runs as nobody and the top directory is mode 0711, so
#     inotify_add_watch() fails with EACCES while the files stay readable; a
#     file replaced then is seen by the recheck; once the directory is
#     readable the watch is re-added and inotify works again;
#  B. the inotify queue overflows (fs.inotify.max_queued_events lowered
#     while the daemon starts, as in inotify-overflow.sh) while a file is
#     replaced: the full recheck reads the new file.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to switch to nobody and to set a sysctl"
need setpriv util-linux
fixture_on_tmpfs
chmod 0755 "$ROOT"
# Where nobody can read the policy and run the daemon, wherever the checkout lives.
cp "$THPGUARDD" "$ROOT/thpguardd"
NOBODY_POLICY=$ROOT/thpguard.conf # readable by nobody
write_policy "$NOBODY_POLICY" 'recheck_interval = 1; mode = "audit";
thp = { enabled = "madvise"; defrag = "madvise"; };'
grep -q '\[madvise\]' "$T/enabled" && grep -q '\[madvise\]' "$T/defrag" ||
        fail "the 6.18 fixture changed: enabled and defrag must read madvise"

# replace FILE CONTENT: a new inode under the same name, as a rename.
replace() {
        printf '%s\n' "$2" >"$1.new"
        mv "$1.new" "$1"
}

# --- A. a watch that cannot be added ------------------------------------------
chmod 0711 "$T"
on_exit 'chmod 0755 "$T"'
daemon_start_cmd setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$ROOT/thpguardd" --config "$NOBODY_POLICY" --sysfs-root "$ROOT" --log-target=console
wait_log 'level=warn msg="could not watch every knob directory; relying on the 1s recheck"' 5
wait_log 'msg="started: auditing 2 knobs .* 0 drifted at startup"' 5

# The old file stays readable through the daemon's open fd: only its look at
# the handle (unlinked) sends it to the new one.
replace "$T/enabled" 'always [never] madvise'
wait_event 5 audit_drift level=warn knob=enabled observed=never desired=madvise trigger=recheck
sleep 2.5
[ "$(event_count audit_drift knob=enabled)" = 1 ] || fail "a lasting drift was reported more than once"
[ "$(log_count 'could not watch')" = 1 ] || fail "the lost watch was logged more than once"
kill -0 "$DAEMON_PID" || fail "the daemon died without its watch"

chmod 0755 "$T"
wait_log 'level=info msg="re-added 1 lost inotify watch"' 5
printf 'always defer defer+madvise madvise [never]\n' >"$T/defrag"
wait_event 5 audit_drift knob=defrag observed=never desired=madvise trigger=inotify
daemon_stop
[ "$(log_count 'AddressSanitizer|runtime error')" = 0 ] || fail "sanitizer report"

# --- B. the events that named a replaced file are lost ------------------------
SYSCTL=/proc/sys/fs/inotify/max_queued_events
[ -w $SYSCTL ] || skip "part A passed; $SYSCTL is not writable here for part B"
SAVED_QUEUE=$(cat $SYSCTL)
# The sysctl is machine-wide, and another build tree's run may have it
# lowered this very moment: "restoring" that value would leave every new
# inotify instance on the machine with a 16-event queue.
[ "$SAVED_QUEUE" -ge 1024 ] ||
        skip "part A passed; $SYSCTL is $SAVED_QUEUE: another test has it lowered right now"
on_exit '[ "$(cat $SYSCTL)" = "$SAVED_QUEUE" ] || echo "$SAVED_QUEUE" >$SYSCTL'
replace "$T/enabled" 'always [madvise] never'
replace "$T/defrag" 'always defer defer+madvise [madvise] never'
# Run as root now: the policy leaves /dev/shm (mode 1777), which root refuses.
write_policy "$POLICY" 'recheck_interval = 3600; mode = "audit";
thp = { enabled = "madvise"; defrag = "madvise"; };'

echo 16 >$SYSCTL
daemon_start_cmd "$THPGUARDD" --config "$POLICY" --sysfs-root "$ROOT" --log-target=console
echo "$SAVED_QUEUE" >$SYSCTL
[ "$(cat $SYSCTL)" = "$SAVED_QUEUE" ] || fail "could not restore $SYSCTL"

kill -STOP "$DAEMON_PID"
# Distinct names: the kernel merges an event identical to the one queued last.
for i in $(seq 40); do : >"$T/noise.$i"; done
replace "$T/enabled" 'always madvise [never]'
kill -CONT "$DAEMON_PID"
wait_log '^level=warn msg="inotify queue overflowed; rechecking every knob"$' 10
wait_event 5 audit_drift knob=enabled observed=never desired=madvise trigger=recheck
daemon_stop
[ "$(log_count 'AddressSanitizer|runtime error')" = 0 ] || fail "sanitizer report"
echo "PASS: without a watch, and after lost events, the recheck reads a replaced file; the watch comes back"
