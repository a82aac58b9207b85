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
