#!/bin/bash
# Reload by SIGHUP (valid and invalid policy), by editing the file in place,
# and by a Kubernetes ConfigMap-style ..data symlink swap.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin

thp_set enabled madvise
write_policy "$POLICY" 'recheck_interval = 3600;
thp = { enabled = "madvise"; };'
daemon_start

# SIGHUP with a valid new policy: it takes effect.
write_policy "$POLICY" 'recheck_interval = 3600;
thp = { enabled = "never"; };'
kill -HUP "$DAEMON_PID"
thp_wait_for enabled never 2 || fail "the new policy did not take effect"
wait_event 2 corrected knob=enabled observed=madvise desired=never trigger=reload
wait_event 2 policy_reloaded policy="$POLICY"

# SIGHUP with an invalid policy: the old one is kept and still enforced, one error logged.
write_policy "$POLICY" 'thp = { enabled = "sometimes"; };'
kill -HUP "$DAEMON_PID"
wait_event 2 policy_rejected level=error policy="$POLICY"
# What was wrong has no field: the rejection names the file, line and key in its text.
event_says policy_rejected 'thpguard\.conf:1: thp\.enabled: invalid value' ||
        fail "the rejection does not say what was wrong"
[ "$(event_count policy_rejected)" = 1 ] || fail "expected exactly one rejection line"
thp_set enabled always
thp_wait_for enabled never 1 || fail "the last good policy is not enforced after a rejected reload"

# Editing the file in place (no signal): picked up by the directory watch.
printf 'recheck_interval = 3600;\nthp = { enabled = "madvise"; };\n' >"$POLICY"
thp_wait_for enabled madvise 2 || fail "an in-place edit was not picked up"

# A ConfigMap mount: thpguard.conf -> ..data/thpguard.conf, ..data -> ..<timestamp>/.
# The kubelet writes a new timestamped dir and renames a new ..data symlink over the old one.
cm=$TMP/configmap
mkdir -p "$cm/..2026_11_30_01"
write_policy "$cm/..2026_11_30_01/thpguard.conf" 'recheck_interval = 3600;
thp = { enabled = "madvise"; };'
ln -s ..2026_11_30_01 "$cm/..data"
ln -s ..data/thpguard.conf "$cm/thpguard.conf"
daemon_stop
daemon_start_cmd "$THPGUARDD" --config "$cm/thpguard.conf" --log-target=console
mkdir "$cm/..2026_11_30_02"
write_policy "$cm/..2026_11_30_02/thpguard.conf" 'recheck_interval = 3600;
thp = { enabled = "never"; };'
ln -s ..2026_11_30_02 "$cm/..data_tmp"
mv -T "$cm/..data_tmp" "$cm/..data"
rm -rf "$cm/..2026_11_30_01"
thp_wait_for enabled never 2 || fail "a ConfigMap ..data swap was not picked up"
wait_event 2 policy_reloaded policy="$cm/thpguard.conf"
sleep 0.5
# One swap, one reload: the kubelet's other steps (the new and the removed timestamp dirs) are not changes.
[ "$(event_count policy_reloaded)" = 1 ] || fail "a ConfigMap swap reloaded $(event_count policy_reloaded) times"

# A burst of SIGHUPs coalesces: far fewer reloads than signals, and the daemon still works.
before=$(event_count policy_reloaded)
for _ in $(seq 200); do kill -HUP "$DAEMON_PID"; done
sleep 0.5
after=$(event_count policy_reloaded)
echo "200 SIGHUPs -> $((after - before)) reloads"
[ $((after - before)) -ge 1 ] || fail "a SIGHUP burst caused no reload"
[ $((after - before)) -lt 100 ] || fail "a SIGHUP burst was not coalesced ($((after - before)) reloads)"
thp_set enabled always
thp_wait_for enabled never 1 || fail "not enforcing after a SIGHUP burst"
daemon_stop
echo PASS
