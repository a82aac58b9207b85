# shellcheck shell=bash
# What the fleet tests (metrics file, manifests, container image) share
# beyond tests/lib (which this brings: test.sh, real-sysfs.sh, policy.sh,
# metrics.sh). Source after `set -euo pipefail`.

# shellcheck source=../lib/real-sysfs.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/real-sysfs.sh"
# shellcheck source=../lib/policy.sh
. "$SRCDIR/tests/lib/policy.sh"
# shellcheck source=../lib/metrics.sh
. "$SRCDIR/tests/lib/metrics.sh"

: "${THPGUARDD:?THPGUARDD is not set: run this test through ctest}"
[ -x "$THPGUARDD" ] || fail "THPGUARDD=$THPGUARDD is not an executable"

# metrics_check FILE [--all] [EXPECT...]: check-metrics.py, the real parser's (prometheus_client) check of a metrics file.
metrics_check() {
        "$PY" "$SRCDIR/tests/container/check-metrics.py" "$@" || fail "the metrics file does not hold up (above)"
}
