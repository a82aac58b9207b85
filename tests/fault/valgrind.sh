#!/bin/bash
# valgrind memcheck of the daemon: startup, 1,000
# corrections, 100 reloads alternating valid and invalid (plus 10 by SIGHUP),
# a switch to audit mode and back, and SIGTERM, on the real sysfs.
#
# valgrind cannot run an ASan binary, so this uses THPGUARDD_PLAIN: the same
# sources built without sanitizers (tests/fault/CMakeLists.txt), or thpguardd
# itself in a build without them.
#
# Expected: "definitely lost: 0 bytes", "indirectly lost: 0 bytes" (or "All
# heap blocks were freed") and "ERROR SUMMARY: 0 errors"; valgrind's exit
# status is the daemon's 0 (99 on any error or definite/indirect leak). The
# figures are printed and recorded in tests/fault/README.md.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
real_sysfs_begin
need valgrind valgrind
: "${THPGUARDD_PLAIN:?THPGUARDD_PLAIN is not set: run this test through ctest}"
if nm "$THPGUARDD_PLAIN" 2>/dev/null | grep -q __asan_init; then
        fail "THPGUARDD_PLAIN=$THPGUARDD_PLAIN is built with ASan"
fi
CORRECTIONS=${VALGRIND_CORRECTIONS:-1000}
RELOADS=${VALGRIND_RELOADS:-100}

policy() { # MODE ENABLED
        write_policy "$POLICY" "mode = \"$1\"; recheck_interval = 2; fight_threshold = 0;
thp = { enabled = \"$2\"; defrag = \"madvise\"; khugepaged = { defrag = true; }; };"
}

thp_set enabled always
thp_set defrag always
policy enforce madvise
DAEMON_START_SECONDS=120 daemon_start_cmd valgrind --tool=memcheck --leak-check=full \
        --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
        --error-exitcode=99 --track-origins=yes --log-file="$TMP/valgrind.log" \
        "$THPGUARDD_PLAIN" --config "$POLICY" --log-target=console --metrics-file "$M"
thp_wait_for enabled madvise 30 || fail "startup did not correct enabled"
thp_wait_for defrag madvise 30 || fail "startup did not correct defrag"
t0=$SECONDS

# 1,000 corrections on two knobs, each waited for.
for ((i = 1; i <= CORRECTIONS; i++)); do
        if ((i % 2)); then
                thp_set enabled "$([ $((i % 4)) = 1 ] && echo always || echo never)"
                thp_wait_for enabled madvise 30 || fail "correction $i (enabled) not made"
        else
                thp_set defrag "$([ $((i % 4)) = 0 ] && echo defer || echo never)"
                thp_wait_for defrag madvise 30 || fail "correction $i (defrag) not made"
        fi
done
# Counted by any trigger: under valgrind the 2 s recheck sometimes reaches a drift first.
n=$(($(event_count corrected knob=enabled desired=madvise) + $(event_count corrected knob=defrag desired=madvise)))
echo "$CORRECTIONS drifts in $((SECONDS - t0)) s: $n corrections"
[ "$n" -ge "$CORRECTIONS" ] || fail "$n corrections for $CORRECTIONS drifts"

# 100 reloads through the file watch, valid and invalid alternating; every
# tenth is followed by a SIGHUP that reloads the same file again.
t0=$SECONDS
done_reloads() { echo $(($(event_count policy_reloaded) + $(event_count policy_rejected))); }
reloads_done_ge() { [ "$(done_reloads)" -ge "$1" ]; }
base=$(done_reloads)
expected=$base
for ((i = 1; i <= RELOADS; i++)); do
        if ((i % 2)); then
                write_policy "$POLICY" 'thp = { enabled = "madvise"; defrag = "sometimes"; };'
        else
                policy enforce madvise
        fi
        expected=$((expected + 1))
        wait_until 30 reloads_done_ge $expected || fail "reload $i was not done"
        if ((i % 10 == 0)); then
                kill -HUP "$DAEMON_PID"
                expected=$((expected + 1))
                wait_until 30 reloads_done_ge $expected || fail "SIGHUP reload after $i was not done"
        fi
done
echo "$((expected - base)) reloads in $((SECONDS - t0)) s: $(event_count policy_rejected) rejected"
[ "$(event_count policy_rejected)" -ge $((RELOADS / 2)) ] || fail "too few rejected reloads"

# Audit mode and back.
# The mode is in the reload's text only.
n=$(event_count policy_reloaded)
policy audit madvise
wait_until 30 event_count_ge $((n + 1)) policy_reloaded || fail "the audit policy was not reloaded"
event_lines policy_reloaded | tail -n 1 | grep ' mode audit' >/dev/null || fail "the reload did not switch to audit"
thp_set enabled never
wait_event 30 audit_drift knob=enabled observed=never desired=madvise
[ "$(thp_get enabled)" = never ] || fail "audit mode wrote"
n=$(event_count policy_reloaded)
policy enforce madvise
wait_until 30 event_count_ge $((n + 1)) policy_reloaded || fail "the enforce policy was not reloaded"
event_lines policy_reloaded | tail -n 1 | grep ' mode enforce, 1 corrected' >/dev/null || fail "the reload back to enforce did not correct"
thp_wait_for enabled madvise 30 || fail "back in enforce mode, the drift was not corrected"

# SIGTERM: valgrind exits with the daemon's status, or 99 on an error or leak.
kill -TERM "$DAEMON_PID"
rc=0
wait_until 120 eval '! kill -0 "$DAEMON_PID" 2>/dev/null' || true
wait "$DAEMON_PID" || rc=$?
DAEMON_PID=
echo "---- valgrind summary"
grep -E 'HEAP SUMMARY|in use at exit|total heap usage|LEAK SUMMARY|definitely lost|indirectly lost|possibly lost|still reachable|suppressed|All heap blocks|ERROR SUMMARY' \
        "$TMP/valgrind.log" | sed 's/^==[0-9]*== *//'
echo "----"
[ $rc -eq 0 ] || { cat "$TMP/valgrind.log" >&2; fail "valgrind/thpguardd exited $rc (99: memcheck found errors or leaks)"; }
grep -q 'ERROR SUMMARY: 0 errors' "$TMP/valgrind.log" || { cat "$TMP/valgrind.log" >&2; fail "memcheck errors"; }
if ! grep -q 'All heap blocks were freed -- no leaks are possible' "$TMP/valgrind.log"; then
        grep -q 'definitely lost: 0 bytes in 0 blocks' "$TMP/valgrind.log" || { cat "$TMP/valgrind.log" >&2; fail "definitely lost > 0"; }
        grep -q 'indirectly lost: 0 bytes in 0 blocks' "$TMP/valgrind.log" || { cat "$TMP/valgrind.log" >&2; fail "indirectly lost > 0"; }
fi
wait_log '^level=info msg="received Terminated; exiting' 1
echo "PASS: memcheck clean after startup, $CORRECTIONS corrections, $((expected - base)) reloads, audit and back, SIGTERM"
