#!/bin/bash
# What the daemon keeps, started as the shipped unit starts it (no
# capability at all, an empty bounding set, locked securebits, its fanotify
# groups passed in at fds 3 and 4 as the unit's ExecStartPre= leaves them
# in the fd store) and as it is started by hand or in a pod (CAP_SYS_ADMIN
# to open the groups itself, CAP_SETPCAP to empty its bounding set), not
# only as full root:
#   1. in both, every thread of the running daemon and of its writer gate
#      (a child process with a thread of its own) has every capability set
#      zero, the bounding set included, NoNewPrivs 1 and a seccomp filter
#      (Seccomp: 2); the daemon holds its two fanotify groups and the gate
#      names a one-shot writer; a reload re-reads the policy and rewrites
#      the metrics file while confined;
#   2. under the old unit's set (CAP_SYS_ADMIN alone) the daemon refuses to
#      start, saying the bounding set cannot be emptied;
#   3. a program doing the daemon's drop and then execve() regains nothing;
#   4. the one-shot modes (--check-config, --verify, --once, --alive) drop
#      capabilities (capset) and set no-new-privs before they open the policy,
#      and confine themselves (Landlock) before it too (--alive, which learns
#      its metrics file from the policy, right after);
#   5. a process confined exactly as the daemon confines itself cannot open
#      /proc/sys for writing, signal another root process, set its
#      scheduling, nice value, CPU affinity or I/O priority, or set its
#      resource limits with prlimit64() (its own, yes: pid 0 and its pid), and still
#      writes the metrics directory and reads the policy; unconfined, the
#      same process can (the control);
#   6. on a kernel without Landlock (landlock_create_ruleset() failing with
#      ENOSYS, injected by strace) the daemon says so in one line, keeps its
#      seccomp filter, and enforces.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin
need setpriv util-linux
need strace strace
# By hand or in a pod: what the daemon needs to open its groups and drop the rest.
HAND_SET=-all,+sys_admin,+setpcap
# The unit: nothing, with the securebits it sets (SecureBits=) and no-new-privs.
unit_start=("$UNIT_EXEC" --write-source=fanotify setpriv --bounding-set=-all --inh-caps=-all --ambient-caps=-all --no-new-privs
        --securebits=+noroot,+noroot_locked,+no_setuid_fixup,+no_setuid_fixup_locked,+keep_caps_locked)

# status_of FILE FIELD: a field of a /proc status file.
status_of() { sed -n "s/^$2:[[:space:]]*//p" "$1"; }

mkdir -p "$TMP/metrics"
M=$TMP/metrics/thpguard.prom
write_policy "$POLICY" "recheck_interval = 30; fight_threshold = 0;
metrics_file = \"$M\";
thp = { enabled = \"madvise\"; };"
thp_set enabled madvise

# ---- 1. The running daemon, every thread ----
# running_daemon_check HOW CMD...: the daemon started through CMD on the
# madvise policy, checked; it leaves the policy at never.
running_daemon_check() {
        local how=$1 gate tasks t f v groups
        shift
        write_policy "$POLICY" "recheck_interval = 30; fight_threshold = 0;
metrics_file = \"$M\";
thp = { enabled = \"madvise\"; };"
        thp_set enabled madvise
        rm -f "$M"
        daemon_start_cmd "$@"
        set -- "$how"
        wait_until 5 test -f "$M" || fail "$1: no metrics file"
        gate=$(child_pids "$DAEMON_PID" thpguardd-gate)
        [ -n "$gate" ] || fail "$1: no writer gate: $(cat "$TMP/daemon.log")"
        tasks=(/proc/$DAEMON_PID/task/* /proc/$gate/task/*)
        [ "${#tasks[@]}" -ge 3 ] || fail "$1: ${#tasks[@]} thread(s) in the daemon and its gate, want the loop, the gate and its reader"
        for t in "${tasks[@]}"; do
                for f in CapInh CapPrm CapEff CapBnd CapAmb; do
                        v=$(status_of "$t/status" $f)
                        [ "$v" = 0000000000000000 ] || fail "$1: thread ${t##*/}: $f is $v, want 0"
                done
                [ "$(status_of "$t/status" NoNewPrivs)" = 1 ] || fail "$1: thread ${t##*/}: NoNewPrivs is not 1"
                [ "$(status_of "$t/status" Seccomp)" = 2 ] || fail "$1: thread ${t##*/}: Seccomp is $(status_of "$t/status" Seccomp), want 2"
        done
        groups=$(find "/proc/$DAEMON_PID/fd" -lname 'anon_inode:\[fanotify\]' | wc -l)
        [ "$groups" = 2 ] || fail "$1: the daemon holds $groups fanotify groups, want 2: $(cat "$TMP/daemon.log")"
        echo "$1: threads ${#tasks[@]} (daemon and gate): every capability set 0, NoNewPrivs 1, Seccomp 2; 2 fanotify groups"
        grep -q 'msg="confined: Landlock ABI [0-9]*, seccomp filter"' "$TMP/daemon.log" ||
                grep -q 'Landlock is not available' "$TMP/daemon.log" || fail "$1: no confinement line: $(cat "$TMP/daemon.log")"
        # A one-shot writer, reaped at once, is named: the groups work without any capability.
        sh -c "echo always > '$THP/enabled'"
        thp_wait_for enabled madvise 5 || fail "$1: the one-shot writer's drift was not corrected"
        wait_until 5 grep -q 'writer_comm=sh' "$TMP/daemon.log" ||
                fail "$1: the one-shot writer is not named: $(cat "$TMP/daemon.log")"
        # Reload while confined: the policy is re-read, the metrics file renamed into place again.
        before=$(stat -c %i "$M")
        write_policy "$POLICY" "recheck_interval = 30; fight_threshold = 0;
metrics_file = \"$M\";
thp = { enabled = \"never\"; };"
        kill -HUP "$DAEMON_PID"
        thp_wait_for enabled never 10 || fail "$1: the reload was not applied while confined: $(cat "$TMP/daemon.log")"
        wait_until 5 sh -c '[ "$(stat -c %i "$1")" != "$2" ]' _ "$M" "$before" || fail "$1: the metrics file was not rewritten after the reload"
        daemon_stop
}
running_daemon_check "as the unit starts it" "${unit_start[@]}" -- "$THPGUARDD" --config "$POLICY" --log-target=console --write-source=fanotify
running_daemon_check "by hand" setpriv --bounding-set=$HAND_SET "$THPGUARDD" --config "$POLICY" --log-target=console --write-source=fanotify
thp_set enabled madvise

# ---- 2. The old unit's set: refused, in one line ----
run setpriv --bounding-set=-all,+sys_admin "$THPGUARDD" --config "$POLICY" --log-target=console --write-source=fanotify
expect_rc 1
expect_err 'bounding set keeps 0x200000: emptying it takes CAP_SETPCAP'

# ---- 3. The drop, then execve(): nothing comes back ----
run setpriv --bounding-set=$HAND_SET "$CONFINE" drop /bin/cat /proc/self/status
expect_rc 0
for f in CapInh CapPrm CapEff CapBnd CapAmb; do
        v=$(out | sed -n "s/^$f:[[:space:]]*//p")
        [ "$v" = 0000000000000000 ] || fail "after execve(), $f is $v, want 0"
done
[ "$(out | sed -n 's/^NoNewPrivs:[[:space:]]*//p')" = 1 ] || fail "after execve(), NoNewPrivs is not 1"
run setpriv --bounding-set=-all,+sys_admin "$CONFINE" drop /bin/true
expect_rc 3
expect_err 'bounding set keeps 0x200000'

# ---- 4. One-shot modes: the drop comes before the policy is opened ----
for mode in --check-config --verify --once --alive; do
        rc=0
        strace -f -qq -o "$TMP/oneshot.trace" -e trace=capset,prctl,openat,open,landlock_restrict_self \
                setpriv --bounding-set=$HAND_SET "$THPGUARDD" $mode --config "$POLICY" >/dev/null 2>&1 || rc=$?
        first_open=$(grep -n "thpguard.conf\"" "$TMP/oneshot.trace" | head -1 | cut -d: -f1)
        capset=$(grep -n 'capset(' "$TMP/oneshot.trace" | tail -1 | cut -d: -f1)
        nnp=$(grep -n 'prctl(PR_SET_NO_NEW_PRIVS, 1' "$TMP/oneshot.trace" | tail -1 | cut -d: -f1)
        [ -n "$first_open" ] || fail "$mode: the trace shows no open of the policy (rc $rc): $(tail -5 "$TMP/oneshot.trace")"
        [ -n "$capset" ] && [ "$capset" -lt "$first_open" ] || fail "$mode: no capset() before the policy was opened"
        [ -n "$nnp" ] && [ "$nnp" -lt "$first_open" ] || fail "$mode: no-new-privs not set before the policy was opened"
        grep -q 'PR_CAPBSET_DROP' "$TMP/oneshot.trace" || fail "$mode: the bounding set was not emptied"
        confined=$(grep -n 'landlock_restrict_self(' "$TMP/oneshot.trace" | tail -1 | cut -d: -f1)
        # (A kernel without Landlock: section 6 covers the daemon's fallback.)
        grep -qw landlock /sys/kernel/security/lsm 2>/dev/null || continue
        [ -n "$confined" ] || fail "$mode: not confined (no landlock_restrict_self)"
        [ "$mode" = --alive ] || [ "$confined" -lt "$first_open" ] || fail "$mode: confined only after the policy was opened"
done
echo "one-shot modes: capset, PR_CAPBSET_DROP, no-new-privs and Landlock before the policy is opened"

# ---- 5. Confined as the daemon: no /proc/sys, no signal to others ----
sleep 300 &
victim=$!
on_exit "kill $victim 2>/dev/null || true"
run "$CONFINE" try $victim "$M"
expect_out '^write /proc/sys/kernel/hostname: ok$'
expect_out "^kill $victim: ok\$"
expect_out "^sched_setattr $victim: ok\$"
for try in prlimit setpriority sched_setaffinity ioprio_set; do
        expect_out "^$try $victim: ok\$"
done
wait $victim 2>/dev/null || true
sleep 300 &
victim=$!
on_exit "kill $victim 2>/dev/null || true"
run "$CONFINE" sandbox "$POLICY" /sys "$M" $victim
expect_rc 0
if out | grep -q '^confined: no Landlock'; then
        skip "this kernel has no Landlock: $(out | head -1)"
fi
expect_out '^confined: Landlock ABI [0-9]+, seccomp filter$'
expect_out '^write /proc/sys/kernel/hostname: EACCES$'
expect_out "^kill $victim: EPERM\$"
expect_out '^write metrics dir: ok$'
expect_out '^read policy: ok$'
expect_out '^write policy dir: EACCES$'
expect_out '^kill self 0: ok$'
expect_out "^sched_setattr $victim: EPERM\$"
expect_out '^sched_setattr self: ok$'
# Another root process's limits (RLIMIT_NOFILE set to what it is): refused; our own, by 0 or by pid, not.
expect_out "^prlimit $victim: EPERM\$"
expect_out '^prlimit self 0: ok$'
expect_out '^prlimit self [0-9]+: ok$'
for try in setpriority sched_setaffinity ioprio_set; do
        expect_out "^$try $victim: EPERM\$"
done
kill -0 $victim || fail "the confined process killed the victim"

# ---- 6. No Landlock: one line, the rest as before ----
thp_set enabled always
# LeakSanitizer cannot run under ptrace; the rest of ASan can.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 daemon_start_cmd \
        strace -f -qq -o /dev/null -e trace=landlock_create_ruleset -e inject=landlock_create_ruleset:error=ENOSYS \
        "$THPGUARDD" --config "$POLICY" --log-target=console --write-source=fanotify
STRACE_PID=$DAEMON_PID
thp_wait_for enabled never 10 || fail "without Landlock, the startup did not correct"
[ "$(log_count 'Landlock is not available')" = 1 ] || fail "not one line about Landlock: $(cat "$TMP/daemon.log")"
expect_log() { grep -q "$1" "$TMP/daemon.log" || fail "no line /$1/: $(cat "$TMP/daemon.log")"; }
expect_log 'msg="Landlock is not available (Function not implemented): '
expect_log 'msg="confined: no Landlock (Function not implemented), seccomp filter"'
pid=$(child_pids "$STRACE_PID" thpguardd)
[ -n "$pid" ] || fail "no daemon under strace"
kill -TERM "$pid"
rc=0
wait "$STRACE_PID" || rc=$?
DAEMON_PID=
[ "$rc" = 0 ] || fail "without Landlock, the daemon exited $rc: $(cat "$TMP/daemon.log")"
echo "PASS: nothing of root is left, in every thread and every mode; confined, no /proc/sys and no signal to others"
