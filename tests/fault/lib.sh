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


# The metrics tests on a fixture tree (fixture_on_tmpfs) run a policy that
# enforces use_zero_page = false with recheck_interval = 1: each recheck
# rewrites (or retries) the metrics file.

# drift_corrected N: a foreign write of use_zero_page is corrected: N
# corrections since startup, by inotify or, should the queue overflow on a
# busy machine, by the recheck.
drifts_corrected_ge() {
        [ $(($(event_count corrected knob=use_zero_page observed=1 trigger=inotify) +
                $(event_count corrected knob=use_zero_page observed=1 trigger=recheck))) -ge "$1" ]
}
drift_corrected() {
        tree_set use_zero_page 1
        wait_until 5 drifts_corrected_ge "$1" && return 0
        cat "$TMP/daemon.log" >&2
        fail "drift $1 of use_zero_page was not corrected"
}

# log_lines: how many lines the daemon has logged so far, a mark for metrics_refused_once.
log_lines() {
        wc -l <"$TMP/daemon.log"
}

# metrics_refused_once MARK FILE WHY [DIR]: after line MARK of the daemon's
# log, "cannot write the metrics file FILE: WHY; retrying later" is logged,
# and only once over three rechecks; DIR, if given, is left empty.
metrics_refused_once() {
        local line="level=warn msg=\"cannot write the metrics file $2: $3; retrying later\""
        local from=$(($1 + 1))
        for ((i = 0; i < 500; i++)); do
                tail -n +"$from" "$TMP/daemon.log" | grep -qF -- "$line" && break
                sleep 0.01
        done
        sleep 3.2
        [ "$(tail -n +"$from" "$TMP/daemon.log" | grep -cF -- "$line")" = 1 ] || {
                cat "$TMP/daemon.log" >&2
                fail "the refusal was not logged exactly once: $3"
        }
        [ -z "${4:-}" ] || [ -z "$(ls -A "$4")" ] || fail "the daemon wrote into $4: $(ls -A "$4")"
}
