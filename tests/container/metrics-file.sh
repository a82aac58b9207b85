#!/bin/bash
# The metrics file the daemon keeps, read by a real exposition-format parser
# (prometheus_client, Debian's python3-prometheus-client), on a private copy
# of the 6.18 fixture kernel so the real sysfs is never touched:
#  - every promised family is there with HELP/TYPE, and the values are right:
#    a startup correction, an unsupported knob, the recheck interval; every
#    hugepages-*kB/stats/ file is a sample with its size, read anew at each
#    write, and a file a size lacks has none;
#  - a burst of 40 foreign writes in 2 s makes 40 corrections but at most one
#    file write per second, and the trailing write brings the file up to date;
#  - reloads are counted, ok and failed, and the file states the new interval;
#  - --alive passes while the daemon runs, fails on a file older than two
#    recheck intervals (the daemon frozen with SIGSTOP) and passes again once
#    it runs, as the next recheck rewrites the file;
#  - SIGTERM leaves thpguard_up 0, and --alive then fails;
#  - the policy's metrics_file is used without --metrics-file, the option wins
#    over it, and nothing is written when neither is set.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$SRCDIR/tests/lib/daemon.sh"
python_with prometheus_client python3-prometheus-client
: "${INOTIFY_COUNT:?INOTIFY_COUNT is not set: run this test through ctest}"

ROOT=$TMP/sys
cp -a "$SRCDIR/tests/fixtures/6.18" "$ROOT"
KD=$ROOT/kernel/mm/transparent_hugepage/khugepaged/defrag
echo 1 >"$KD"
# The per-size stats the file exports, with values of their own (the fixture's are all 0).
S2M=$ROOT/kernel/mm/transparent_hugepage/hugepages-2048kB/stats
echo 41 >"$S2M/anon_fault_fallback"
echo 3 >"$S2M/nr_anon"
echo 7 >"$ROOT/kernel/mm/transparent_hugepage/hugepages-8kB/stats/split"
mkdir "$TMP/metrics"
M=$TMP/metrics/thpguard.prom
POLICY=$TMP/policy/thpguard.conf
mkdir "$TMP/policy"

# fight_threshold = 0: every drift of the burst is corrected, none suppressed.
policy_text() {
        cat <<EOF
recheck_interval = $1;
fight_threshold = 0;
$2
thp = {
  khugepaged = { defrag = false; };
  sizes = ( { size = "8kB"; enabled = "never"; } );
};
EOF
}
# No recheck during the burst: only the trailing write can bring the file up to date.
policy_text 3600 "" | write_policy "$POLICY"

started=$(date +%s)
daemon_start --sysfs-root "$ROOT" --metrics-file "$M"
wait_until 2 test -s "$M" || fail "no metrics file at $M after startup"

# 1. The startup state, every family parsed by the real parser.
metrics_check "$M" --all \
        'thpguard_up=1' \
        'thpguard_recheck_interval_seconds=3600' \
        'thpguard_corrections_total{knob="khugepaged/defrag",trigger="startup"}=1' \
        'thpguard_corrections_total{knob="khugepaged/defrag",trigger="inotify"}=0' \
        'thpguard_knob_compliant{knob="khugepaged/defrag"}=1' \
        'thpguard_knob_supported{knob="khugepaged/defrag"}=1' \
        'thpguard_knob_supported{knob="hugepages-8kB/enabled"}=0' \
        'thpguard_knob_compliant{knob="hugepages-8kB/enabled"}=0' \
        'thpguard_correction_failures_total{knob="khugepaged/defrag"}=0' \
        "thpguard_last_correction_timestamp_seconds>=$started" \
        'thpguard_vmstat_total{counter="thp_fault_alloc"}>=0' \
        'thpguard_anon_huge_pages_bytes>=0' \
        'thpguard_thp_size_events_total{size="2048kB",counter="anon_fault_fallback"}=41' \
        'thpguard_thp_size_events_total{size="2048kB",counter="anon_fault_alloc"}=0' \
        'thpguard_thp_size_events_total{size="8kB",counter="split"}=7' \
        'thpguard_thp_size_pages{size="2048kB",kind="anon"}=3' \
        'thpguard_thp_size_pages{size="2048kB",kind="anon_partially_mapped"}=0'
# Every file of every size's stats/, and nothing the kernel does not have (8 kB: no anon_*, no nr_*).
n_stats=$(find "$ROOT/kernel/mm/transparent_hugepage" -path '*/hugepages-*kB/stats/*' -type f | wc -l)
n_samples=$(grep -c '^thpguard_thp_size_' "$M")
[ "$n_samples" = "$n_stats" ] || fail "$n_samples per-size samples for $n_stats stats files"
! grep -E '^thpguard_thp_size_(events_total\{size="8kB",counter="anon|pages\{size="8kB")' "$M" ||
        fail "a series for a file hugepages-8kB/stats/ does not have"
[ "$(stat -c %a "$M")" = 644 ] || fail "the metrics file is mode $(stat -c %a "$M"), expected 644"

# 2. A burst: 40 corrections in about 2 s, at most one write per second.
t0=$(date +%s%N)
"$INOTIFY_COUNT" "$TMP/metrics" -- bash -c "for i in \$(seq 40); do echo 1 >'$KD'; sleep 0.05; done" \
        >"$TMP/writes" || fail "the burst failed"
t1=$(date +%s%N)
writes=$(grep -c '^modified \.thpguard\.prom\.' "$TMP/writes" || true)
elapsed_ms=$(((t1 - t0) / 1000000))
max_writes=$((elapsed_ms / 1000 + 2))
echo "burst: $writes metrics writes in $elapsed_ms ms (bound $max_writes)"
[ "$writes" -ge 1 ] || fail "no metrics write during a burst of corrections"
[ "$writes" -le "$max_writes" ] || fail "$writes metrics writes in $elapsed_ms ms: more than one a second"
ls -A "$TMP/metrics" | grep -v '^thpguard\.prom$' && fail "a temporary file was left next to the metrics file"

# The trailing write: within a second the file counts every correction the log shows.
logged() { event_count corrected knob=khugepaged/defrag observed=1 desired=0 trigger=inotify; }
in_file() { metric "$M" 'thpguard_corrections_total{knob="khugepaged/defrag",trigger="inotify"}'; }
[ "$(logged)" -ge 30 ] || fail "only $(logged) inotify corrections logged for 40 foreign writes"
counts_agree() { [ "$(in_file)" = "$(logged)" ]; }
wait_until 3 counts_agree ||
        fail "the file says $(in_file) inotify corrections, the log $(logged)"

# 3. Reloads, both results, picked up from the policy directory by themselves.
echo 'recheck_interval = "often";' | write_policy "$POLICY"
wait_until 3 metric_is "$M" 'thpguard_policy_reloads_total{result="failed"}' 1 ||
        fail "a rejected policy is not counted"
policy_text 2 "" | write_policy "$POLICY"
wait_until 3 metric_is "$M" 'thpguard_policy_reloads_total{result="ok"}' 1 ||
        fail "a good reload is not counted"
wait_until 3 metric_is "$M" thpguard_recheck_interval_seconds 2 ||
        fail "the file does not state the new recheck interval"

# 4. Liveness: fresh passes; frozen and old fails; running again passes.
"$THPGUARDD" --alive --metrics-file "$M" >/dev/null || fail "--alive failed on a running daemon"
kill -STOP "$DAEMON_PID"
touch -d '-60 seconds' "$M"
rc=0
"$THPGUARDD" --alive --metrics-file "$M" 2>"$TMP/alive.err" || rc=$?
kill -CONT "$DAEMON_PID"
[ "$rc" -eq 1 ] || fail "--alive exited $rc on a file 60 s old with a 2 s recheck, expected 1"
grep -q 'stuck' "$TMP/alive.err" || fail "--alive did not say why: $(cat "$TMP/alive.err")"
wait_until 3 "$THPGUARDD" --alive --metrics-file "$M" >/dev/null 2>&1 ||
        fail "--alive still fails after the daemon runs again"
metrics_check "$M" --all 'thpguard_rechecks_total>=1'
# Read anew at every write: a counter that moved is in the file after the next recheck.
echo 45 >"$S2M/anon_fault_fallback"
wait_until 5 metric_is "$M" 'thpguard_thp_size_events_total{size="2048kB",counter="anon_fault_fallback"}' 45 ||
        fail "the 2 MiB anon_fault_fallback moved to 45, yet the file still says $(grep 'size="2048kB",counter="anon_fault_fallback"' "$M")"

# 5. A clean stop: exit 0, thpguard_up 0, and --alive says the daemon stopped.
kill -TERM "$DAEMON_PID"
rc=0
wait "$DAEMON_PID" || rc=$?
DAEMON_PID=
[ "$rc" -eq 0 ] || fail "thpguardd exited $rc on SIGTERM"
metrics_check "$M" --all 'thpguard_up=0' "thpguard_corrections_total{knob=\"khugepaged/defrag\",trigger=\"inotify\"}=$(logged)"
rc=0
"$THPGUARDD" --alive --metrics-file "$M" 2>"$TMP/alive.err" || rc=$?
[ "$rc" -eq 1 ] && grep -q 'stopped' "$TMP/alive.err" || fail "--alive after a stop: exit $rc, $(cat "$TMP/alive.err")"

# 6. Where the file goes: the policy's metrics_file, unless --metrics-file.
rm -f "$TMP"/metrics/*
policy_text 1 "metrics_file = \"$TMP/metrics/policy.prom\";" | write_policy "$POLICY"
daemon_start --sysfs-root "$ROOT"
wait_until 2 test -s "$TMP/metrics/policy.prom" || fail "the policy's metrics_file was not written"
metrics_check "$TMP/metrics/policy.prom" --all 'thpguard_up=1'
"$THPGUARDD" --alive --config "$POLICY" >/dev/null || fail "--alive does not find the policy's metrics_file"
daemon_kill
rm -f "$TMP"/metrics/*
daemon_start --sysfs-root "$ROOT" --metrics-file "$TMP/metrics/flag.prom"
wait_until 2 test -s "$TMP/metrics/flag.prom" || fail "--metrics-file was not written"
sleep 1.2 # a recheck, which writes
daemon_kill
[ ! -e "$TMP/metrics/policy.prom" ] || fail "the policy's metrics_file was written although --metrics-file overrides it"

# With neither, nothing is written anywhere, rechecks included.
rm -f "$TMP"/metrics/*
policy_text 1 "" | write_policy "$POLICY"
# Everything but the fixture and the daemon's log (grep -v finds no line: status 1, hence || true).
new_files() { find "$TMP" -newer "$POLICY" -type f | grep -v -e "^$TMP/sys/" -e "^$TMP/daemon.log\$" | sort || true; }
before=$(new_files)
cd "$TMP/metrics" # a relative name would land here
daemon_start --sysfs-root "$ROOT"
cd /
sleep 1.2
daemon_kill
after=$(new_files)
[ "$before" = "$after" ] || fail "files appeared with no metrics file configured: $after"
echo "PASS"
