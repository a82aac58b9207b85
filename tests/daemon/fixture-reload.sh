#!/bin/bash
# Reload and audit on a fixture tree (no real sysfs needed): a new policy
# by SIGHUP takes effect, an invalid one is rejected once and the last good
# one stays in force, an edit of the file is picked up without a signal,
# and a policy switched to audit reports drift and writes nothing.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
fixture_on_tmpfs

write_policy "$POLICY" 'recheck_interval = 3600;
thp = { use_zero_page = false; };'
daemon_start --sysfs-root "$ROOT"
tree_wait_for use_zero_page 0 1

# SIGHUP with a valid new policy: it takes effect.
write_policy "$POLICY" 'recheck_interval = 3600;
thp = { use_zero_page = true; shrink_underused = false; };'
kill -HUP "$DAEMON_PID"
tree_wait_for use_zero_page 1 5
tree_wait_for shrink_underused 0 5
wait_event 5 policy_reloaded policy="$POLICY"
wait_event 5 corrected knob=use_zero_page observed=0 desired=1 trigger=reload

# SIGHUP with an invalid policy: rejected once, the last good one still enforced.
write_policy "$POLICY" 'thp = { use_zero_page = "sometimes"; };'
kill -HUP "$DAEMON_PID"
wait_event 5 policy_rejected policy="$POLICY"
event_says policy_rejected 'thpguard\.conf:1: thp\.use_zero_page' || { cat "$TMP/daemon.log"; fail "the rejection does not name the file, line and key"; }
tree_set use_zero_page 0
tree_wait_for use_zero_page 1 5
[ "$(event_count policy_rejected)" = 1 ] || { cat "$TMP/daemon.log"; fail "the rejection was logged $(event_count policy_rejected) times"; }

# The file edited in place, no signal: the directory watch picks it up.
# (The editor's truncation may be seen and rejected first: the end state counts.)
reloads=$(event_count policy_reloaded)
printf 'recheck_interval = 3600;\nthp = { use_zero_page = false; };\n' >"$POLICY"
tree_wait_for use_zero_page 0 5
wait_until 5 event_count_ge $((reloads + 1)) policy_reloaded ||
        { cat "$TMP/daemon.log"; fail "an in-place edit was not reloaded"; }

# Switched to audit: the drift is reported, nothing is written.
write_policy "$POLICY" 'mode = "audit"; recheck_interval = 3600;
thp = { use_zero_page = true; enabled = "madvise"; };'
kill -HUP "$DAEMON_PID"
wait_event 5 audit_drift knob=use_zero_page observed=0 desired=1 trigger=reload result=audit
tree_set enabled always
wait_event 5 audit_drift knob=enabled observed=always desired=madvise trigger=inotify result=audit
sleep 0.3
[ "$(cat "$T/enabled")" = "[always] madvise never" ] || fail "audit mode wrote enabled: $(cat "$T/enabled")"
tree_is use_zero_page 0 || fail "audit mode wrote use_zero_page: $(cat "$T/use_zero_page")"
daemon_stop
echo PASS
