#!/bin/bash
# The per-size stats of this machine's real THP sysfs, read by the daemon
# (confined as always: Landlock, seccomp) into the metrics file it really
# writes, parsed by prometheus_client:
#  - every file of hugepages-2048kB/stats/ is a sample with size="2048kB"
#    (nr_* in thpguard_thp_size_pages, the rest in
#    thpguard_thp_size_events_total), each counter between what this test
#    read from sysfs before the daemon started and after the file it checks
#    was written;
#  - with enabled=always (the daemon's policy, hugepages-2048kB inherit) a
#    program that touches 64 MiB of 2 MiB aligned memory without madvise()
#    takes 32 huge page faults of 2 MiB, each counted as anon_fault_alloc or,
#    when no free 2 MiB block was found, anon_fault_fallback: their sum in
#    the file grows by at least 32.
# Lower bounds only: other processes fault too. Every knob is saved and put
# back (real_sysfs_begin).
set -euo pipefail
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/daemon.sh"
. "$SRCDIR/tests/lib/metrics.sh"
: "${THP_HELPER:?THP_HELPER is not set: run this test through ctest}"
python_with prometheus_client python3-prometheus-client
real_sysfs_begin
S=$THP/hugepages-2048kB/stats
[ -d "$S" ] || skip "$S does not exist on this kernel (before 6.10)"
[ -f "$S/anon_fault_alloc" ] && [ -f "$S/anon_fault_fallback" ] || skip "$S has no anon_fault_alloc/anon_fault_fallback"
[ -f "$THP/hugepages-2048kB/enabled" ] || skip "$THP/hugepages-2048kB/enabled does not exist"

mkdir "$TMP/metrics"
M=$TMP/metrics/thpguard.prom
ev() { echo "thpguard_thp_size_events_total{size=\"2048kB\",counter=\"$1\"}"; }
# faults FILE: anon_fault_alloc + anon_fault_fallback of 2 MiB in a metrics file.
faults() {
        local a f
        a=$(metric "$1" "$(ev anon_fault_alloc)") f=$(metric "$1" "$(ev anon_fault_fallback)")
        echo $((${a:-0} + ${f:-0}))
}

declare -A before after
for f in "$S"/*; do
        before[${f##*/}]=$(cat "$f")
done

write_policy "$POLICY" <<'EOF'
recheck_interval = 1;
thp = {
  enabled = "always";
  sizes = ( { size = "2048kB"; enabled = "inherit"; } );
};
EOF
daemon_start --metrics-file "$M"
grep -E 'msg="(confined|Landlock)' "$TMP/daemon.log" || true
wait_until 5 test -n "$(metric "$M" "$(ev anon_fault_alloc)")" || {
        cat "$TMP/daemon.log" >&2
        fail "no 2 MiB anon_fault_alloc in $M: $(grep -c thp_size "$M" 2>/dev/null) per-size lines"
}
thp_is enabled always || fail "the daemon did not set enabled to always: $(cat "$THP/enabled")"

# One version of the file (it is replaced by a rename), then sysfs again.
cp "$M" "$TMP/snap.prom"
for f in "$S"/*; do
        after[${f##*/}]=$(cat "$f")
done
expects=()
for name in "${!before[@]}"; do
        if [[ $name == nr_* ]]; then
                expects+=("thpguard_thp_size_pages{size=\"2048kB\",kind=\"${name#nr_}\"}>=0")
        else
                expects+=("$(ev "$name")>=${before[$name]}" "$(ev "$name")<=${after[$name]}")
        fi
done
echo "2 MiB stats, before / after: $(for n in anon_fault_alloc anon_fault_fallback split_deferred; do
        printf '%s %s/%s  ' "$n" "${before[$n]}" "${after[$n]}"
done)"
"$PY" "$SRCDIR/tests/container/check-metrics.py" "$TMP/snap.prom" "${expects[@]}" ||
        fail "the metrics file does not hold what sysfs said (above)"
n_samples=$(grep -c 'size="2048kB"' "$TMP/snap.prom")
[ "$n_samples" = "${#before[@]}" ] || fail "$n_samples samples with size=\"2048kB\" for ${#before[@]} files in $S"

# A real fault: 64 MiB touched, no madvise().
f0=$(faults "$M")
"$THP_HELPER" hog 64 plain >"$TMP/hog.out" 9>&- &
HOG=$!
on_exit "terminate $HOG"
hog_ready_or_gone() { grep -q '^ready$' "$TMP/hog.out" 2>/dev/null || ! kill -0 "$HOG" 2>/dev/null; }
wait_until 20 hog_ready_or_gone || fail "thp-helper hog did not get ready in 20 s"
grep -q '^ready$' "$TMP/hog.out" || fail "thp-helper hog exited: $(cat "$TMP/hog.out")"
grown() { [ "$(faults "$M")" -ge $((f0 + 32)) ]; }
wait_until 10 grown || fail "2 MiB anon faults in the file: $f0, then $(faults "$M") after 32 real ones (sysfs: $(cat "$S/anon_fault_alloc") alloc, $(cat "$S/anon_fault_fallback") fallback)"
echo "2 MiB anon faults in the file: $f0 -> $(faults "$M"); the toucher has $(awk '/^AnonHugePages:/ { print $2 }' "/proc/$HOG/smaps_rollup") kB AnonHugePages"
terminate "$HOG"
daemon_stop
echo PASS
