# A real process with real huge pages: enabled=madvise, a helper madvises
# and touches 64 MiB; status lists it in the top N and pid shows its mapping.
. "$(dirname "$0")/lib.sh"

C=$THPGUARDCTL

real_sysfs_begin
thp_set enabled madvise
[ -f "$THP/hugepages-2048kB/enabled" ] && thp_set hugepages-2048kB/enabled inherit

start_hog 64 advise
ahp=$(anon_huge_kb "$HOG_PID")
[ "${ahp:-0}" -gt 0 ] || skip "the kernel gave the helper no huge page (AnonHugePages 0 kB with enabled=madvise and MADV_HUGEPAGE)"

run "$C" status --json
expect_rc 0
json_check "$OUT_FILE" \
        "$HOG_PID in top_pids(d)" \
        "next(p for p in d['processes']['top'] if p['pid'] == $HOG_PID)['anon_huge_pages_kb'] > 0" \
        "next(p for p in d['processes']['top'] if p['pid'] == $HOG_PID)['command'] == 'thp-helper'" \
        "next(p for p in d['processes']['top'] if p['pid'] == $HOG_PID)['thp_enabled'] is True" \
        "knob(d, 'enabled')['value'] == 'madvise'"
run "$C" status
expect_rc 0
grep -qE "^ +$HOG_PID thp-helper " "$OUT_FILE" || fail "text status does not list the helper"

run "$C" pid "$HOG_PID" --json
expect_rc 0
json_check "$OUT_FILE" \
        "d['anon_huge_pages_kb'] > 0" \
        "d['smaps']['top'][0]['madv_hugepage'] is True" \
        "d['smaps']['top'][0]['size_kb'] == 65536" \
        "d['smaps']['advised_huge'] >= 1" \
        "d['verdict'].startswith('THP madvise: this process gets huge pages only in the')"
echo "PASS (helper AnonHugePages ${ahp} kB)"
