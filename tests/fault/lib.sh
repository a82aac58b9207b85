# shellcheck shell=bash
# Helpers for the fault-injection tests. Source after `set -euo pipefail`:
#
#   . "$(dirname "$0")/lib.sh"
#   fault_real_sysfs    real_sysfs_begin (skip when read-only; lock; save and
#                       restore every knob) and then tests/lib/daemon.sh
#   fault_no_sysfs      only $WORK and the daemon helpers, for tests that never
#                       touch the real sysfs (fixture trees)
#   daemon_start_cmd CMD...   like daemon_start, for a daemon started through a
#                       wrapper that execs it (unshare, strace, valgrind); the
#                       wrapper's PID is the daemon's once it has exec'd
#   metric NAME [LABELS]      a sample's value in $WORK/m.prom
#   need CMD [PACKAGE]  skip (77) when a tool is missing
#   private_ns_ok       skip when no private mount namespace can be made
#   fixture_on_tmpfs    a private copy of the 6.18 fixture tree on tmpfs as
#                       $ROOT (removed at exit), $T its THP directory; skips
#                       where /dev/shm is not a tmpfs

: "${SRCDIR:?SRCDIR is not set: run this test through ctest}"
: "${THPGUARDD:?THPGUARDD is not set: run this test through ctest}"
# shellcheck source=../lib/real-sysfs.sh
. "$SRCDIR/tests/lib/real-sysfs.sh"

# Cleanups the test adds, run before daemon.sh's (which stops the daemon,
# restores the knobs and removes $WORK). LIFO.
FAULT_CLEANUPS=()
fault_on_exit() { FAULT_CLEANUPS=("$1" "${FAULT_CLEANUPS[@]}"); }
fault_cleanup() {
        local c
        # A daemon stuck (a test that failed on a hang) gets SIGKILL after 10 s,
        # so the cleanup never waits for it.
        if [ -n "${DAEMON_PID:-}" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
                kill -TERM "$DAEMON_PID" 2>/dev/null || true
                for ((i = 0; i < 1000; i++)); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.01; done
                kill -KILL "$DAEMON_PID" 2>/dev/null || true
        fi
        for c in "${FAULT_CLEANUPS[@]}"; do
                eval "$c" || echo "WARNING: cleanup failed: $c" >&2
        done
        daemon_cleanup
}

fault_real_sysfs() {
        real_sysfs_begin
        # shellcheck source=../lib/daemon.sh
        . "$SRCDIR/tests/lib/daemon.sh"
        trap fault_cleanup EXIT
}

fault_no_sysfs() {
        # shellcheck source=../lib/daemon.sh
        . "$SRCDIR/tests/lib/daemon.sh"
        trap fault_cleanup EXIT
}

need() {
        command -v "$1" >/dev/null || skip "$1 is not installed${2:+ (Debian package $2)}"
}

private_ns_ok() {
        need unshare util-linux
        unshare -m --propagation private true 2>/dev/null ||
                skip "cannot make a private mount namespace here (needs CAP_SYS_ADMIN)"
}

# daemon_start_cmd CMD...: CMD must exec thpguardd (with --log-target=console
# or journal); its stderr goes to $WORK/daemon.log.
daemon_start_cmd() {
        local limit=${DAEMON_START_SECONDS:-10}
        "$@" 9>&- 2>"$WORK/daemon.log" &
        DAEMON_PID=$!
        for ((i = 0; i < limit * 100; i++)); do
                grep -q 'msg="started' "$WORK/daemon.log" 2>/dev/null && return 0
                kill -0 "$DAEMON_PID" 2>/dev/null || break
                sleep 0.01
        done
        cat "$WORK/daemon.log" >&2
        fail "thpguardd did not start: $*"
}

# metric NAME [LABELS]: e.g. metric thpguard_rechecks_total, or
# metric thpguard_correction_failures_total 'knob="enabled"'. Empty if absent.
metric() {
        local re
        if [ -n "${2:-}" ]; then re="^$1\\{$2\\} "; else re="^$1 "; fi
        # Empty, never a failure, before the daemon's first write: under set -e
        # a failing $(metric ...) would end the test without a word.
        { grep -E -- "$re" "$WORK/m.prom" 2>/dev/null || true; } | awk '{ print $2 }' | head -1
}

# wait_metric_ge NAME LABELS MIN SECONDS: until the sample is >= MIN.
wait_metric_ge() {
        local v
        for ((i = 0; i < $4 * 10; i++)); do
                v=$(metric "$1" "$2")
                [ -n "$v" ] && [ "${v%.*}" -ge "$3" ] && return 0
                sleep 0.1
        done
        fail "metric $1{$2} never reached $3 (last: ${v:-absent})"
}

fixture_on_tmpfs() {
        [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ] || skip "/dev/shm is not a tmpfs"
        ROOT=$(mktemp -d /dev/shm/thpguard-fault.XXXXXX)
        fault_on_exit 'rm -rf "$ROOT"'
        cp -a "$FIXTURES/6.18/." "$ROOT/"
        T=$ROOT/kernel/mm/transparent_hugepage
}
