# shellcheck shell=bash
# Helpers for the monitoring tests. Source after `set -euo pipefail`.
# Brings tests/container/lib.sh (fleet_init, on_exit, python_with, wait_until,
# policy_file, and real-sysfs.sh's skip, fail, thp_get, thp_set, real_sysfs_begin).
#
#   need_promtool        skips unless Debian's promtool is installed
#   check_monitoring ... runs check-monitoring.py with Debian's python3

# shellcheck source=tests/container/lib.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/container/lib.sh"

MON=$SRCDIR/packaging/monitoring
MT=$SRCDIR/tests/monitoring

need_promtool() {
        command -v promtool >/dev/null || skip "promtool is not installed (apt-get install prometheus)"
}

check_monitoring() {
        "$PY" "$MT/check-monitoring.py" "$@"
}
