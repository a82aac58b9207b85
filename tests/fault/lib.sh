# shellcheck shell=bash
# What the fault-injection tests share beyond tests/lib (which this brings:
# test.sh, real-sysfs.sh, daemon.sh with fixture-tree.sh and events.sh,
# metrics.sh). Source after `set -euo pipefail`; a test on the real sysfs
# then calls real_sysfs_begin, one on a fixture tree fixture_on_tmpfs.

# shellcheck source=../lib/daemon.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/daemon.sh"
# shellcheck source=../lib/metrics.sh
. "$SRCDIR/tests/lib/metrics.sh"

# The metrics file the tests give thpguardd (--metrics-file "$M").
M=$TMP/m.prom

