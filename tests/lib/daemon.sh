# shellcheck shell=bash
# Helpers for tests that run thpguardd in the background (this brings
# test.sh, real-sysfs.sh, policy.sh, fixture-tree.sh and events.sh). A test
# on the real sysfs calls real_sysfs_begin: the knobs are put back after the
# daemon is stopped; a test on a fixture tree calls fixture_on_tmpfs
# instead. The policy is $POLICY; the daemon's stderr goes to
# $TMP/daemon.log.

# shellcheck source=real-sysfs.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/real-sysfs.sh"
# shellcheck source=policy.sh
. "$SRCDIR/tests/lib/policy.sh"
# shellcheck source=fixture-tree.sh
. "$SRCDIR/tests/lib/fixture-tree.sh"
# shellcheck source=events.sh
. "$SRCDIR/tests/lib/events.sh"

: "${THPGUARDD:?THPGUARDD is not set: run this test through ctest}"
POLICY=$TMP/thpguard.conf
DAEMON_PID=

# daemon_kill: stops a daemon still running (terminate). Under a wrapper
# (strace), the daemon first: a wrapper stopped first may detach and leave
# it running on its own, enforcing its policy on the machine.
daemon_kill() {
        local p
        [ -n "$DAEMON_PID" ] || return 0
        if [ "$(cat "/proc/$DAEMON_PID/comm" 2>/dev/null)" != thpguardd ]; then
                for p in $(child_pids "$DAEMON_PID" thpguardd); do
                        terminate "$p"
                done
        fi
        terminate "$DAEMON_PID"
}
on_exit daemon_kill

# daemon_started: the log has the startup line and the write source's
# (which, where the daemon loads the probe itself, joins after it).
daemon_started() {
        grep -q 'msg="started' "$TMP/daemon.log" 2>/dev/null && grep -q 'msg="write source: ' "$TMP/daemon.log"
}

# daemon_started_or_gone: daemon_started, or the daemon has exited.
daemon_started_or_gone() {
        daemon_started || ! kill -0 "$DAEMON_PID" 2>/dev/null
}

# daemon_start_cmd CMD...: runs CMD, which must exec thpguardd (with
# --log-target=console or journal) in the background, its stderr in
# $TMP/daemon.log, and waits for the startup line, for at most
# $DAEMON_START_SECONDS (default 10), and for its write source's line. A wrapper that execs the daemon
# (unshare, strace, valgrind) has the daemon's PID once it has exec'd.
daemon_start_cmd() {
        # Emptied here, not only by the child's redirection: until the child
        # runs, the previous daemon's "started" line would pass the wait below.
        : >"$TMP/daemon.log"
        "$@" 9>&- 2>"$TMP/daemon.log" &
        DAEMON_PID=$!
        wait_until "${DAEMON_START_SECONDS:-10}" daemon_started_or_gone 2>/dev/null || true
        daemon_started && return 0
        cat "$TMP/daemon.log" >&2
        # Say how it ended: a status, or a signal (128+N) when the log is empty.
        local how="still running, no startup line" rc=0
        if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
                wait "$DAEMON_PID" || rc=$?
                how="exited with status $rc"
                [ "$rc" -gt 128 ] && how="killed by signal $((rc - 128))"
                DAEMON_PID=
        fi
        fail "thpguardd did not start ($how): $*"
}

# daemon_start [ARGS...]: starts thpguardd on $POLICY and waits for its startup line.
daemon_start() {
        daemon_start_cmd "$THPGUARDD" --config "$POLICY" --log-target=console --write-source=fanotify "$@"
}

# daemon_stop [PID]: SIGTERM to PID (default: the daemon), and the exit
# status of $DAEMON_PID (the daemon, or the wrapper that runs it) must be 0,
# probe_daemon_start: enabled, defrag and khugepaged/defrag at a policy's
# values (madvise, madvise, 0), thpguardd enforcing them with no fight
# detection and the BPF write probe in force: on the hook auto gives, else
# on the syscall-exit hook, named ($PROBE_HOOK says which); skips, saying
# why, where the probe cannot be had (the kernel, the build, the privileges).
probe_daemon_start() {
        thp_set enabled madvise
        thp_set defrag madvise
        thp_set khugepaged/defrag 0
        write_policy "$POLICY" 'recheck_interval = 3600; fight_threshold = 0;
thp = { enabled = "madvise"; defrag = "madvise"; khugepaged = { defrag = false; }; };'
        PROBE_HOOK=auto
        daemon_start --write-source=auto
        has_event write_source write_source=bpf && return 0
        # auto takes fexit or a kprobe; a kernel with neither (this project's VMs) has the syscall tracepoints.
        local auto_said
        auto_said=$(grep -m1 'write source' "$TMP/daemon.log")
        daemon_stop
        PROBE_HOOK=syscall-exit
        daemon_start --write-source=bpf --write-probe-hook=syscall-exit
        has_event write_source write_source=bpf ||
                skip "no BPF write probe on this kernel or build: $auto_said; $(grep -m1 'write source' "$TMP/daemon.log")"
}

# within $DAEMON_STOP_SECONDS (default 30).
daemon_stop() {
        local rc=0
        kill -TERM "${1:-$DAEMON_PID}"
        wait_exit "$DAEMON_PID" "${DAEMON_STOP_SECONDS:-30}" || rc=$?
        [ "$rc" -ne 124 ] || fail "thpguardd did not exit within ${DAEMON_STOP_SECONDS:-30} s of SIGTERM"
        DAEMON_PID=
        [ "$rc" -eq 0 ] || fail "thpguardd exited $rc on SIGTERM"
}

# log_has REGEX: a line of the daemon's log matches the extended regex.
log_has() {
        grep -Eq -- "$1" "$TMP/daemon.log"
}

# wait_log REGEX [SECONDS]: waits (default 2 s) until a line of the daemon's log matches the extended regex.
wait_log() {
        wait_until "${2:-2}" log_has "$1" 2>/dev/null && return 0
        cat "$TMP/daemon.log" >&2
        fail "daemon log never matched within ${2:-2} s: $1"
}

# log_count REGEX: how many lines of the daemon's log match the extended regex.
log_count() {
        grep -Ec -- "$1" "$TMP/daemon.log" || true
}

# log_count_ge REGEX N: at least N lines of the daemon's log match the extended regex.
log_count_ge() {
        [ "$(log_count "$1")" -ge "$2" ]
}

# notify_listen_start SOCKET OUT: runs tests/helpers/notify-listen on
# SOCKET in the background, its messages in OUT, stopped at exit; waits
# for the socket.
notify_listen_start() {
        "$NOTIFY_LISTEN" "$1" 9>&- >"$2" &
        NOTIFY_PID=$!
        on_exit 'kill "$NOTIFY_PID" 2>/dev/null || true'
        wait_until 1 test -S "$1" || fail "notify-listen did not make $1"
}

# probe_inject_start [ARGS...]: thpguardd on $POLICY given a BPF write probe
# of the test's own (tests/helpers/probe-inject.c: a real ring, link and
# config map, whose records the test writes with probe_inject), on the real
# sysfs, or on the THP directory $PROBE_THP (a fixture's $T, with
# --sysfs-root in ARGS); skips where the helper has no BPF.
probe_inject_start() {
        local rc=0 dir=${PROBE_THP:-$THP}
        : "${PROBE_INJECT:?PROBE_INJECT is not set: run this test through ctest}"
        mkfifo "$TMP/inject" "$TMP/inject.ack"
        "$PROBE_INJECT" "$dir" "$TMP/inject" true 2>"$TMP/probe.err" || rc=$?
        [ "$rc" -ne 125 ] || skip "no BPF ring or program here: $(cat "$TMP/probe.err")"
        [ "$rc" -eq 0 ] || fail "probe-inject failed ($rc): $(cat "$TMP/probe.err")"
        daemon_start_cmd "$PROBE_INJECT" "$dir" "$TMP/inject" "$THPGUARDD" --config "$POLICY" --log-target=console "$@"
        has_event write_source write_source=bpf ||
                fail "the daemon did not take the passed probe: $(grep -m1 'write source' "$TMP/daemon.log")"
}

# probe_inject_send KEY=VALUE...: one record to the helper (probe-inject.c
# says the keys), without waiting for it to be in: probe_inject_ack does.
probe_inject_send() {
        # Read-write: never blocks in open(), even with the helper gone.
        echo "$*" 1<>"$TMP/inject"
}

# probe_inject_ack [SECONDS]: the helper's answer to the last record (default
# within 5 s), "ok quiet|wake self=N", in INJECTED; fails on anything else.
probe_inject_ack() {
        INJECTED=
        read -r -t "${1:-5}" INJECTED <>"$TMP/inject.ack" ||
                fail "probe-inject did not answer (the daemon is $([ -d "/proc/$DAEMON_PID" ] && echo running || echo gone))"
        [[ $INJECTED == ok\ * ]] ||
                fail "probe-inject did not put the record in ($INJECTED): $(grep probe-inject "$TMP/daemon.log")"
}

# probe_inject KEY=VALUE...: one record into the ring, and its answer.
probe_inject() {
        probe_inject_send "$@"
        probe_inject_ack
}

# corrector_tid: the tid of the daemon's corrector thread (comm thpguardd-corr); 1 if it has none.
corrector_tid() {
        local t
        for t in /proc/"$DAEMON_PID"/task/*; do
                [ "$(cat "$t/comm" 2>/dev/null)" = thpguardd-corr ] && echo "${t##*/}" && return 0
        done
        return 1
}
