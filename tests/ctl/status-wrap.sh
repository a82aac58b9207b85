# Figures from forged counters (--proc-root fixtures/proc-wrap): sums,
# products and shares saturate, never wrap. Before: "thp_fault_fallback is
# 101% of THP faults (200 of 198)" from alloc 2^64-2 plus fallback 200, "0%"
# for AnonHugePages that is all of AnonPages at 2^62 kB (2^62 * 100 wraps to
# 0), and 300% for a process with more AnonHugePages than Rss.
. "$(dirname "$0")/lib.sh"
C=$THPGUARDCTL
SYS=$FIXTURES/6.18
cp -a "$CTL_FIXTURES/proc-wrap" "$TMP/proc"
B=4611686018427387904 # 2^62

status_ok() { run timeout 10 "$C" "$@" --sysfs-root "$SYS" --proc-root "$TMP/proc"; expect_rc 0; }

status_ok status
cp "$OUT_FILE" "$TMP/status.txt"
show() { echo "--- thpguardctl status:"; cat "$TMP/status.txt"; }
# No share above 100% anywhere, and no fault note: 200 of 2^64 faults fell back.
if grep -E '(^|[^0-9])([0-9]{4,}|[2-9][0-9][0-9]|1[1-9][0-9]|10[1-9])%' "$TMP/status.txt"; then
        show
        fail "a share above 100% (the line above)"
fi
grep -q 'thp_fault_fallback is' "$TMP/status.txt" && { show; fail "a fault note for 200 fallbacks in 2^64 faults"; }
grep -qE "^  AnonHugePages +$B kB  \(100% of AnonPages $B kB\)$" "$TMP/status.txt" ||
        { show; fail "meminfo: AnonHugePages equal to AnonPages is not 100%"; }
grep -qE "^ +1 whole +$B $B $B +100% 1$" "$TMP/status.txt" || { show; fail "process 1: a true 100% share"; }
grep -qE '^ +2 over +1000 +2000 +3000 +100% 1$' "$TMP/status.txt" ||
        { show; fail "process 2: AnonHugePages above Rss must show as 100%, not more"; }

status_ok status --json
json_check "$OUT_FILE" \
        'not any(n.startswith("thp_fault_fallback") for n in d["notes"])' \
        'd["processes"]["top"][0]["anon_huge_share"] == 1.0' \
        'd["processes"]["top"][1]["anon_huge_share"] == 1.0'

status_ok pid 1
grep -q "AnonHugePages $B kB, 100% of Rss" "$OUT_FILE" || fail "pid 1: $(cat "$OUT_FILE")"
status_ok pid 2
grep -q "AnonHugePages 3000 kB, 100% of Rss" "$OUT_FILE" || fail "pid 2: $(cat "$OUT_FILE")"

# A true 100% of fallbacks, at a size where fallback * 100 wraps: 100%, not 0%.
sed -i -e 's/^thp_fault_alloc .*/thp_fault_alloc 0/' -e "s/^thp_fault_fallback .*/thp_fault_fallback $B/" "$TMP/proc/vmstat"
status_ok status
grep -q "thp_fault_fallback is 100% of THP faults ($B of $B)" "$OUT_FILE" || { cat "$OUT_FILE"; fail "fallback: a true 100%"; }
# And an ordinary share still reads right: 40 of 100.
sed -i -e 's/^thp_fault_alloc .*/thp_fault_alloc 60/' -e 's/^thp_fault_fallback .*/thp_fault_fallback 40/' "$TMP/proc/vmstat"
status_ok status
grep -q 'thp_fault_fallback is 40% of THP faults (40 of 100)' "$OUT_FILE" || { cat "$OUT_FILE"; fail "fallback: 40 of 100"; }
echo PASS
