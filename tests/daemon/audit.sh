#!/bin/bash
# Audit mode, from the policy or --audit, detects and logs drift and never writes.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin

for how in policy flag; do
        thp_set enabled always
        thp_set khugepaged/defrag 1
        if [ $how = policy ]; then
                write_policy "$POLICY" 'mode = "audit"; recheck_interval = 1;
thp = { enabled = "madvise"; khugepaged = { defrag = false; }; };'
                args=()
        else
                write_policy "$POLICY" 'mode = "enforce"; recheck_interval = 1;
thp = { enabled = "madvise"; khugepaged = { defrag = false; }; };'
                args=(--audit)
        fi
        # Everything the daemon does during startup (however long a busy
        # machine makes it: up to 10 s for its startup line) and 0.3 s more:
        # no write at all.
        out=$("$INOTIFY_COUNT" "$THP" "$THP/khugepaged" -- bash -c "
                \"$THPGUARDD\" --config $POLICY --log-target=console ${args[*]} 2>$TMP/daemon.log &
                pid=\$!
                for ((i = 0; i < 1000; i++)); do
                        grep -q 'msg=\"started' $TMP/daemon.log 2>/dev/null && break
                        kill -0 \$pid 2>/dev/null || break
                        sleep 0.01
                done
                sleep 0.3; kill -TERM \$pid; wait \$pid")
        echo "$out"
        [ "$(thp_get enabled)" = always ] || fail "audit mode ($how) wrote enabled"
        echo "$out" | grep -q '^total 0$' || fail "audit mode ($how) wrote to sysfs"
        has_event audit_drift level=warn knob=enabled observed=always desired=madvise trigger=startup result=audit ||
                { cat "$TMP/daemon.log"; fail "no audit line ($how)"; }
        has_event audit_drift knob=khugepaged/defrag observed=1 desired=0 trigger=startup result=audit ||
                fail "no audit line for khugepaged/defrag ($how)"
done

# A lasting drift is reported once, not at every recheck; a new foreign value is reported again.
write_policy "$POLICY" 'mode = "audit"; recheck_interval = 1;
thp = { enabled = "madvise"; };'
thp_set enabled always
daemon_start
sleep 2.2
[ "$(event_count audit_drift knob=enabled)" = 1 ] || fail "a lasting drift was reported more than once"
thp_set enabled never
wait_event 2 audit_drift knob=enabled observed=never desired=madvise trigger=inotify
[ "$(thp_get enabled)" = never ] || fail "audit mode wrote"
daemon_stop
echo PASS
