#!/bin/bash
# Writer attribution on the real sysfs: the records of a drift name the
# process that wrote it (fanotify), with its systemd unit or Kubernetes pod
# from its cgroup; our own writes are never foreign; the daemon keeps no
# capability after startup; without CAP_SYS_ADMIN it says attribution is
# off and corrects as before.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin

WRITERS=${WRITERS:-200}
thp_set enabled madvise
write_policy "$POLICY" "recheck_interval = 30; fight_threshold = 0;
metrics_file = \"$TMP/thpguard.prom\";
thp = { enabled = \"madvise\"; };"

# ---- 1. Every capability is gone once the daemon runs. ----
daemon_start
wait_log 'msg="started' 2
for set in CapEff CapPrm CapInh CapAmb CapBnd; do
        v=$(sed -n "s/^$set:[[:space:]]*//p" "/proc/$DAEMON_PID/status")
        [ -z "$v" ] || [ "$v" = 0000000000000000 ] || fail "$set is $v after startup, want 0"
done
! grep -q 'attribution is off' "$TMP/daemon.log" || fail "attribution is off as root: $(cat "$TMP/daemon.log")"

# ---- 2. One-shot writers: each a new process that writes and exits at once. ----
WRITE=$SRCDIR/tests/daemon/one-shot-writers.py
mapfile -t pids < <("$WRITE" "$THP/enabled" always "$WRITERS" --log "$TMP/daemon.log" 9>&-)
[ "${#pids[@]}" = "$WRITERS" ] || fail "the writers stopped after ${#pids[@]} of $WRITERS"
# The records come after the corrections; wait for the last writer's.
for ((i = 0; i < 200; i++)); do
        [ "$(event_count corrected knob=enabled observed=always)" -ge "$WRITERS" ] && break
        sleep 0.01
done
event_lines corrected knob=enabled observed=always trigger=inotify writer=sh writer_comm=sh >"$TMP/named.log"
writers_named 95 "one-shot writers named with pid and comm" "$TMP/named.log" "${pids[@]}"
named=$(grep -c . "$TMP/named.log")
# An exited writer, where one was seen, says so with its pid.
! grep -E 'written by pid [0-9]+[,)]' "$TMP/daemon.log" | grep -vqE 'written by pid [0-9]+, exited' ||
        fail "a writer without comm was not marked exited"

# Our own corrections are writes too: never foreign.
! grep -q "writer_pid=$DAEMON_PID " "$TMP/daemon.log" || fail "the daemon named itself as a writer"
# The file is rewritten at most once a second: wait for the last writes to reach it.
sh_writes=0
for ((i = 0; i < 300; i++)); do
        sh_writes=$(sed -n 's/^thpguard_foreign_writes_total{knob="enabled",writer="sh"} //p' "$TMP/thpguard.prom" 2>/dev/null)
        [ "${sh_writes:-0}" -ge "$named" ] && break
        sleep 0.01
done
[ "${sh_writes:-0}" -ge $((WRITERS * 95 / 100)) ] || fail "thpguard_foreign_writes_total for sh is $sh_writes, want >= 95% of $WRITERS"
! grep -q 'writer="thpguardd"' "$TMP/thpguard.prom" || fail "the daemon's own writes were counted as foreign"
echo "foreign writes by sh in the metrics: $sh_writes"

# ---- 3. Writers in cgroups named like a systemd service and a pod's container. ----
cg_root=
if [ -f /sys/fs/cgroup/unified/cgroup.procs ]; then
        cg_root=/sys/fs/cgroup/unified # hybrid: cgroup v2 beside the v1 controllers
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
        cg_root=/sys/fs/cgroup
fi
if [ -n "$cg_root" ]; then
        pod=1b2c3d4e-5f60-7a8b-9c0d-e1f2a3b4c5d6
        cid=$(printf '%064x' $((RANDOM * 32768 + RANDOM)))
        svc_dir=$cg_root/thpguard-test.slice/thpguard-writer-$$.service
        pod_dir=$cg_root/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${pod//-/_}.slice/cri-containerd-$cid.scope
        cg_cleanup() {
                local d
                for d in "$svc_dir" "${svc_dir%/*}" "$pod_dir" "${pod_dir%/*}" "${pod_dir%/*/*}" "${pod_dir%/*/*/*}"; do
                        rmdir "$d" 2>/dev/null || true
                done
        }
        on_exit cg_cleanup
        mkdir -p "$svc_dir" "$pod_dir"
        # in_cgroup DIR VALUE: a process that moves itself into DIR, writes and exits.
        in_cgroup() {
                LAST_PID=$("$WRITE" "$THP/enabled" "$2" 1 --log "$TMP/daemon.log" --cgroup "$1" 9>&-)
                [ -n "$LAST_PID" ] || fail "the writer in $1 failed"
        }
        in_cgroup "$svc_dir" always
        wait_event 2 corrected knob=enabled observed=always trigger=inotify writer=thpguard-writer-$$.service \
                writer_pid="$LAST_PID" writer_unit=thpguard-writer-$$.service
        has_event corrected writer_pid="$LAST_PID" writer_cgroup=/thpguard-test.slice/thpguard-writer-$$.service ||
                fail "no writer_cgroup for the service writer: $(grep "pid $LAST_PID" "$TMP/daemon.log")"
        in_cgroup "$pod_dir" never
        wait_event 2 corrected writer_pid="$LAST_PID" writer_unit="cri-containerd-$cid.scope" writer_pod_uid="$pod" \
                writer_container_id="$cid"
        echo "cgroup writers: unit thpguard-writer-$$.service; pod $pod, container ${cid:0:12}"
        cg_cleanup
else
        echo "no cgroup v2 hierarchy here: unit and pod attribution not tried"
fi

# ---- 4. A writer fight names the fighter. ----
daemon_stop
write_policy "$POLICY" 'recheck_interval = 4; fight_threshold = 5; fight_window = 10;
thp = { enabled = "madvise"; };'
daemon_start
bash -c "end=\$((SECONDS + 2)); while [ \$SECONDS -lt \$end ]; do echo always > $THP/enabled; done" 9>&- &
fighter=$!
wait "$fighter"
wait_event 2 writer_fight knob=enabled observed=always desired=madvise writer=bash writer_pid="$fighter"
thp_wait_for enabled madvise 6 || fail "not corrected after the fight"
daemon_stop

# ---- 5. Audit mode names the writer of the drift it reports. ----
write_policy "$POLICY" 'mode = "audit"; recheck_interval = 30; thp = { enabled = "madvise"; };'
daemon_start
auditee=$("$WRITE" "$THP/enabled" never 1 --log "$TMP/daemon.log" 9>&-)
wait_event 2 audit_drift knob=enabled observed=never desired=madvise trigger=inotify writer=sh writer_pid="$auditee"
[ "$(thp_get enabled)" = never ] || fail "audit mode corrected the knob"
daemon_stop
thp_set enabled madvise

# ---- 6. Without CAP_SYS_ADMIN: one info line, and corrections as before. ----
command -v setpriv >/dev/null || skip "no setpriv (util-linux) for the attribution-off part"
write_policy "$POLICY" 'recheck_interval = 30; thp = { enabled = "madvise"; };'
daemon_start_cmd setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin -- "$THPGUARDD" --config "$POLICY" --log-target=console --write-source=fanotify
wait_event 2 write_source write_source=none
thp_set enabled always
thp_wait_for enabled madvise 2 || fail "no correction with attribution off"
wait_event 2 corrected knob=enabled observed=always desired=madvise trigger=inotify
! grep -q 'writer_pid=' "$TMP/daemon.log" || fail "a writer was named with attribution off"
[ "$(grep -c 'attribution is off' "$TMP/daemon.log")" = 1 ] || fail "the attribution-off line was logged more than once"
daemon_stop
echo PASS
