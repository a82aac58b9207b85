# shellcheck shell=bash
# Helpers for tests that run thpguardd in the background. Source after
# real-sysfs.sh. Each test gets a scratch dir $WORK with the policy at
# $WORK/thpguard.conf; the daemon's stderr goes to $WORK/daemon.log.

# shellcheck source=safe-tmp.sh
. "$(dirname "${BASH_SOURCE[0]}")/safe-tmp.sh"
WORK=$(safe_mktemp thpguard-test)
DAEMON_PID=
NOTIFY_PID=

daemon_cleanup() {
        if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
                kill -TERM "$DAEMON_PID" 2>/dev/null
                wait "$DAEMON_PID" 2>/dev/null
        fi
        [ -n "$NOTIFY_PID" ] && kill "$NOTIFY_PID" 2>/dev/null
        real_sysfs_restore
        rm -rf "$WORK"
}
trap daemon_cleanup EXIT

# write_policy TEXT: the policy file, root-owned 0644 as the daemon requires.
write_policy() {
        printf '%s\n' "$1" >"$WORK/thpguard.conf.tmp"
        chmod 0644 "$WORK/thpguard.conf.tmp"
        mv "$WORK/thpguard.conf.tmp" "${2:-$WORK/thpguard.conf}"
}

# daemon_start [ARGS...]: starts thpguardd on $WORK/thpguard.conf and waits for its startup line.
daemon_start() {
        "$THPGUARDD" --config "$WORK/thpguard.conf" --log-target=console "$@" 9>&- 2>"$WORK/daemon.log" &
        DAEMON_PID=$!
        for _ in $(seq 200); do
                grep -q 'msg="started' "$WORK/daemon.log" 2>/dev/null && return 0
                kill -0 "$DAEMON_PID" 2>/dev/null || break
                sleep 0.01
        done
        cat "$WORK/daemon.log" >&2
        fail "thpguardd did not start"
}

# daemon_stop: SIGTERM, and the exit status must be 0.
daemon_stop() {
        local rc=0
        kill -TERM "$DAEMON_PID"
        wait "$DAEMON_PID" || rc=$?
        DAEMON_PID=
        [ "$rc" -eq 0 ] || fail "thpguardd exited $rc on SIGTERM"
}

# wait_log PATTERN [SECONDS]: waits until the daemon's log matches an extended regex.
wait_log() {
        local limit=${2:-2}
        for ((i = 0; i < limit * 100; i++)); do
                grep -Eq -- "$1" "$WORK/daemon.log" && return 0
                sleep 0.01
        done
        cat "$WORK/daemon.log" >&2
        fail "daemon log never matched: $1"
}

log_count() {
        grep -Ec -- "$1" "$WORK/daemon.log" || true
}
