# shellcheck shell=bash
# What the monitoring tests share beyond tests/lib (which this brings:
# test.sh, real-sysfs.sh, policy.sh, metrics.sh, daemon.sh). Source after
# `set -euo pipefail`.

# shellcheck source=../lib/daemon.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/daemon.sh"
# shellcheck source=../lib/metrics.sh
. "$SRCDIR/tests/lib/metrics.sh"

MON=$SRCDIR/packaging/monitoring
MT=$SRCDIR/tests/monitoring

# check_monitoring ARGS...: check-monitoring.py with Debian's python3.
check_monitoring() {
        "$PY" "$MT/check-monitoring.py" "$@"
}

# listen_start LOG READY CMD...: starts CMD in the background (with fd 9
# closed), each @PORT@ in it replaced by a port on 127.0.0.1, its output in
# LOG, and waits at most 30 s for `READY PORT` to succeed while CMD still
# runs: a CMD that has exited did not get the port, and whatever answers
# there is not ours. The port is picked at random below the kernel's
# ephemeral range (an outgoing connection of anything on the machine can
# hold one in it) and not listened on a moment before; when CMD exits
# saying the address is in use, another is tried, five in all. Sets
# LISTEN_PID and LISTEN_PORT; fails, with the end of LOG, otherwise.
listen_start() {
        local log=$1 ready=$2 low try i port
        shift 2
        low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range)
        [ "$low" -gt 20100 ] || low=32768
        for ((try = 1; try <= 5; try++)); do
                port=$((20000 + RANDOM % (low - 20000)))
                if (: </dev/tcp/127.0.0.1/"$port") 2>/dev/null; then continue; fi
                "${@//@PORT@/$port}" >"$log" 2>&1 9>&- &
                LISTEN_PID=$! LISTEN_PORT=$port
                for ((i = 0; i < 150; i++)); do
                        kill -0 "$LISTEN_PID" 2>/dev/null || break
                        "$ready" "$port" && return 0
                        sleep 0.2
                done
                if kill -0 "$LISTEN_PID" 2>/dev/null; then
                        tail -n 20 "$log" >&2
                        fail "$1 on 127.0.0.1:$port did not get ready within 30 s"
                fi
                wait "$LISTEN_PID" 2>/dev/null || true
                LISTEN_PID=
                grep -qi 'address already in use' "$log" || { tail -n 20 "$log" >&2; fail "$1 exited at startup (above)"; }
                echo "$1: 127.0.0.1:$port was taken meanwhile; another port"
        done
        fail "$1: five ports were taken before it could listen on them"
}
