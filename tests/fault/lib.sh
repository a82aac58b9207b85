# shellcheck shell=bash
# What the fault-injection tests share beyond tests/lib (which this brings:
# test.sh, real-sysfs.sh, daemon.sh, metrics.sh). Source after
# `set -euo pipefail`; a test on the real sysfs then calls real_sysfs_begin.

# shellcheck source=../lib/daemon.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/daemon.sh"
# shellcheck source=../lib/metrics.sh
. "$SRCDIR/tests/lib/metrics.sh"

# The metrics file the tests give thpguardd (--metrics-file "$M").
M=$TMP/m.prom

# fixture_on_tmpfs: a private copy of the 6.18 fixture tree on tmpfs as
# $ROOT (removed at exit), $T its THP directory; skips where /dev/shm is not
# a tmpfs.
fixture_on_tmpfs() {
        [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ] || skip "/dev/shm is not a tmpfs"
        ROOT=$(mktemp -d /dev/shm/thpguard-fault.XXXXXX)
        on_exit 'rm -rf "$ROOT"'
        cp -a "$FIXTURES/6.18/." "$ROOT/"
        T=$ROOT/kernel/mm/transparent_hugepage
}
