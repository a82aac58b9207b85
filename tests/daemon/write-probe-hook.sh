#!/bin/bash
# Where the BPF write probe runs, on the real kernel, and what the daemon
# does before it is in:
#  1. the default (auto) never holds a raw tracepoint link: on a kernel with
#     fexit or kprobes the probe is on one of them, on one with neither (this
#     project's VMs) the daemon falls back to fanotify and says why for each
#     hook; the daemon's own fds are checked (fdinfo link_type), not its log;
#  2. --write-probe-hook=syscall-exit, or the policy's write_probe_hook, is
#     the one way onto the syscall tracepoints: both links held, and one
#     warning that says what it costs every system call of the node;
#     --write-probe-hook=auto on the command line wins over the policy's;
#  3. a bad value, on the command line or in the policy: refused with one
#     line naming it (file:line for the policy), exit 2 / 1, nothing written;
#     a reload that changes the hook says so, and keeps the one in force;
#  4. the policy is applied and READY=1 sent before the write source joins;
#     with the loader held (SIGSTOP), a write through another sysfs mount
#     (which raises no inotify event here) waits; when the loader goes on
#     and the source joins, every knob is read again: the drift is corrected
#     at once, not at the 3600 s recheck;
#  5. what the fd store passes in is taken only where it is what was asked
#     for: another source or hook refuses the start with one line saying
#     both; --write-source=none closes it.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
: "${NOTIFY_LISTEN:?NOTIFY_LISTEN is not set: run this test through ctest}"
real_sysfs_begin

thp_set enabled madvise
write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0; thp = { enabled = "madvise"; };'

# link_types PID: the link_type of every BPF link PID holds, one a line.
link_types() {
        local f
        for f in /proc/"$1"/fdinfo/*; do
                sed -n 's/^link_type:[[:space:]]*//p' "$f" 2>/dev/null
        done
}
# perf_event_fds PID: how many perf event fds PID holds (a kprobe before Linux 5.15's perf links).
perf_event_fds() {
        local n=0 f
        for f in /proc/"$1"/fd/*; do
                [ "$(readlink "$f" 2>/dev/null)" = "anon_inode:[perf_event]" ] && n=$((n + 1))
        done
        echo "$n"
}

# ---- 1. The default. ----
daemon_start --write-source=auto
types=$(link_types "$DAEMON_PID" | tr '\n' ' ')
case " $types " in
*" raw_tracepoint "*) fail "auto holds a raw tracepoint link (link types: $types): $(grep -m1 'write source' "$TMP/daemon.log")" ;;
esac
if has_event write_source write_source=bpf; then
        hook=$(event_lines write_source | sed -n 's/.*write_probe_hook=\([a-z-]*\).*/\1/p')
        case $hook in
        fexit) [[ " $types " == *" tracing "* ]] || fail "auto: bpf (fexit), but no tracing link: $types" ;;
        kprobe) [[ " $types " == *" perf_event "* ]] || [ "$(perf_event_fds "$DAEMON_PID")" -gt 0 ] ||
                fail "auto: bpf (kprobe), but neither a perf_event link nor a perf event fd: $types" ;;
        *) fail "auto: the probe on hook '$hook'" ;;
        esac
        echo "auto: bpf ($hook), links: $types"
else
        has_event write_source write_source=fanotify ||
                fail "auto: neither bpf nor fanotify: $(grep -m1 'write source' "$TMP/daemon.log")"
        for h in 'fexit on kernfs_fop_write_iter' 'kprobe on kernfs_fop_write_iter'; do
                event_says write_source "$h" write_source=fanotify
        done
        ! event_says write_source 'sys_exit' write_source=fanotify 2>/dev/null ||
                fail "auto tried the syscall tracepoints: $(grep -m1 'write source' "$TMP/daemon.log")"
        [ -z "$types" ] || fail "fanotify in force, but the daemon holds BPF links: $types"
        echo "auto: fexit and kprobe refused here, fanotify in force, no BPF link held, each refusal said"
fi
! log_has 'level=warn.*syscall-exit hook' || fail "auto: the syscall-exit warning"
daemon_stop

# ---- 2. The syscall tracepoints, by name only. ----
syscall_exit_check() { # syscall_exit_check WHAT
        types=$(link_types "$DAEMON_PID" | tr '\n' ' ')
        [ "$(link_types "$DAEMON_PID" | grep -c '^raw_tracepoint$')" -eq 2 ] ||
                fail "$1: not the two raw tracepoint links (sys_enter, sys_exit): $types"
        wait_log 'level=warn msg="the BPF write probe is on the syscall-exit hook, which runs on every system call of every process of this node: measured, a getppid\(\) [0-9.-]+x, a 1-byte write\(\) [0-9.-]+x as long'
        [ "$(log_count 'syscall-exit hook, which runs on every system call')" -eq 1 ] || fail "$1: the warning more than once"
}
daemon_start --write-source=auto --write-probe-hook=syscall-exit
if has_event write_source write_source=bpf write_probe_hook=syscall-exit; then
        syscall_exit_check "--write-probe-hook=syscall-exit"
        daemon_stop
        write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0; write_probe_hook = "syscall-exit";
thp = { enabled = "madvise"; };'
        daemon_start --write-source=auto
        has_event write_source write_source=bpf write_probe_hook=syscall-exit ||
                fail "write_probe_hook = \"syscall-exit\" in the policy: $(grep -m1 'write source' "$TMP/daemon.log")"
        syscall_exit_check 'write_probe_hook = "syscall-exit"'
        daemon_stop
        daemon_start --write-source=auto --write-probe-hook=auto
        ! has_event write_source write_probe_hook=syscall-exit || fail "--write-probe-hook=auto did not win over the policy's"
        [ "$(link_types "$DAEMON_PID" | grep -c '^raw_tracepoint$')" -eq 0 ] || fail "--write-probe-hook=auto holds raw tracepoint links"
        daemon_stop
        echo "syscall-exit: only by name (option or policy), two raw tracepoint links, one warning with the cost; the option wins"
else
        echo "no syscall-exit hook here: $(grep -m1 'write source' "$TMP/daemon.log")"
        daemon_stop
fi
write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0; thp = { enabled = "madvise"; };'

# ---- 3. Bad values. ----
thp_set enabled always
run "$THPGUARDD" --config "$POLICY" --log-target=console --write-probe-hook=tracepoint
expect_rc 2 "--write-probe-hook=tracepoint"
expect_err "--write-probe-hook: invalid value 'tracepoint' \(expected auto, fexit, kprobe or syscall-exit\)"
write_policy "$TMP/bad.conf" 'thp = { enabled = "madvise"; };
write_probe_hook = "kprobes";'
run "$THPGUARDD" --config "$TMP/bad.conf" --log-target=console
expect_rc 1 "write_probe_hook = \"kprobes\""
expect_err "bad.conf:2: write_probe_hook: invalid value \\\\\"kprobes\\\\\" \(expected auto, fexit, kprobe or syscall-exit\)"
[ "$(thp_get enabled)" = always ] || fail "a refused policy changed enabled to $(thp_get enabled)"
thp_set enabled madvise
echo "bad hooks: refused with one line each, nothing written"

# ---- 3b. A reload that changes the hook: said, the hook in force kept. ----
daemon_start --write-source=auto
before=$(grep -m1 'msg="write source: ' "$TMP/daemon.log")
write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0;
write_probe_hook = "syscall-exit"; thp = { enabled = "madvise"; };'
kill -HUP "$DAEMON_PID"
wait_log "thpguard.conf:2: write_probe_hook is now .\"?syscall-exit.\"?: it takes effect at the next start" 5
[ "$(link_types "$DAEMON_PID" | grep -c '^raw_tracepoint$')" -eq 0 ] || fail "a reload attached the syscall tracepoints"
[ "$(grep -c 'msg="write source: ' "$TMP/daemon.log")" -eq 1 ] || fail "a reload changed the write source"
daemon_stop
write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0; thp = { enabled = "madvise"; };'
echo "a reload naming another hook: said where in the file, the source in force kept ($before)"

# ---- 4. Enforced before the source joins; read again when it does. ----
need_mount_ns
notify_listen_start "$TMP/notify.sock" "$TMP/notify.out"
held=
for attempt in 1 2 3 4 5 6 7 8 9 10; do
        thp_set enabled always
        : >"$TMP/daemon.log"
        NOTIFY_SOCKET="$TMP/notify.sock" "$THPGUARDD" --config "$POLICY" --log-target=console 9>&- 2>"$TMP/daemon.log" &
        DAEMON_PID=$!
        loader=
        for _ in $(seq 2000); do
                loader=$(child_pids "$DAEMON_PID")
                [ -n "$loader" ] && break
        done
        [ -n "$loader" ] && kill -STOP "$loader" 2>/dev/null || true
        wait_log 'msg="started' 5
        if [ -n "$loader" ] && ! log_has 'msg="write source: '; then
                held=$loader
                break
        fi
        # The loader had answered already: again.
        [ -n "$loader" ] && kill -CONT "$loader" 2>/dev/null || true
        daemon_stop
done
[ -n "$held" ] || fail "could not hold the loader before it answered in 10 tries"
on_exit "kill -CONT $held 2>/dev/null || true"
[ "$(thp_get enabled)" = madvise ] || fail "the policy was not applied while the loader was held"
wait_until 2 grep -q '^READY=1' "$TMP/notify.out" || fail "no READY=1 while the loader was held: $(cat "$TMP/notify.out")"
# A write through another sysfs mount: no inotify event, no probe yet.
unshare -m -n --propagation private sh -c 'mount -t sysfs sysfs /sys && echo always > /sys/kernel/mm/transparent_hugepage/enabled'
sleep 0.3
[ "$(thp_get enabled)" = always ] || fail "test bug: the write through another mount was corrected before the source joined"
kill -CONT "$held"
wait_log 'msg="write source: .*joined [0-9.]+ ms after startup' 5
thp_wait_for enabled madvise 1 ||
        fail "the source joined, and a drift through another mount meanwhile was not corrected within 1 s: $(thp_get enabled)"
wait_event 1 corrected knob=enabled observed=always trigger=recheck
daemon_stop
echo "the policy applied and READY=1 before the source joined; the drift it could not see meanwhile corrected when it did"

# ---- 5. What the fd store passes in against what the daemon is asked for. ----
: "${UNIT_EXEC:?UNIT_EXEC is not set: run this test through ctest}"
# The store's fanotify groups, the daemon asked for bpf: refused, both said.
run "$UNIT_EXEC" --write-source=fanotify "$THPGUARDD" --config "$POLICY" --log-target=console --write-source=bpf
expect_rc 1 "fanotify passed in, --write-source=bpf asked for"
expect_err 'not starting: the service.s file descriptor store holds the fanotify groups, but --write-source=bpf asks for another'
# --write-source=none: what was passed in is closed, and the daemon runs without.
daemon_start_cmd "$UNIT_EXEC" --write-source=fanotify "$THPGUARDD" --config "$POLICY" --log-target=console --write-source=none
has_event write_source write_source=none || fail "--write-source=none with groups passed in: $(grep -m1 'write source' "$TMP/daemon.log")"
daemon_stop
if "$UNIT_EXEC" --write-source=bpf --write-probe-hook=syscall-exit true 2>/dev/null; then
        run "$UNIT_EXEC" --write-source=bpf --write-probe-hook=syscall-exit "$THPGUARDD" --config "$POLICY" \
                --log-target=console --write-probe-hook=kprobe
        expect_rc 1 "the syscall-exit hook passed in, --write-probe-hook=kprobe asked for"
        expect_err 'not starting: the service.s file descriptor store holds the BPF write probe on the syscall-exit hook, but --write-source=auto and write_probe_hook kprobe ask for another'
        daemon_start_cmd "$UNIT_EXEC" --write-source=bpf --write-probe-hook=syscall-exit "$THPGUARDD" --config "$POLICY" \
                --log-target=console --write-probe-hook=syscall-exit
        has_event write_source write_source=bpf write_probe_hook=syscall-exit || fail "the matching hook passed in was not taken"
        daemon_stop
fi
echo "the store's source against the one asked for: taken when it is, refused with both said when not, closed for none"
