# status and pid on fixture proc trees: hostile input is skipped silently,
# the JSON document parses back, and cmdline/runtime/policy disagreements are said.
. "$(dirname "$0")/lib.sh"
C=$THPGUARDCTL
SYS=$FIXTURES/6.18

# A copy, to add what git cannot hold: a FIFO, and a file bigger than any real rollup.
cp -a "$CTL_FIXTURES/proc-hostile" "$TMP/proc"
mkdir -p "$TMP/proc/800" "$TMP/proc/810"
cp "$TMP/proc/900/status" "$TMP/proc/800/status"
mkfifo "$TMP/proc/800/smaps_rollup"
head -c 1048576 /dev/zero | tr '\0' 'A' >"$TMP/proc/810/smaps_rollup"
cp "$CTL_FIXTURES/policy.conf" "$TMP/policy.conf"
chmod 0644 "$TMP/policy.conf"

run() { expect_rc 0 timeout 10 "$C" "$@" --proc-root "$TMP/proc"; }

run status --json --sysfs-root "$SYS" --config "$TMP/policy.conf"
[ -s "$TMP/err" ] && fail "hostile processes were not skipped silently: $(cat "$TMP/err")"
cp "$TMP/out" "$TMP/status.json"
json_check "$TMP/status.json" \
        'd["headline"].startswith("THP madvise + defrag madvise:")' \
        'd["kernel"] == "6.18.0-fixture"' \
        'top_pids(d) == [100, 400, 500, 1]' \
        'd["processes"]["scanned"] == 13' \
        'd["processes"]["measured"] == 5' \
        'd["processes"]["skipped"] == 8' \
        'd["processes"]["top"][0] == {"pid": 100, "command": "java", "rss_kb": 81920, "pss_kb": 80000, "anon_huge_pages_kb": 40960, "anon_huge_share": 0.5, "thp_enabled": True}' \
        'd["processes"]["top"][1]["command"] == "\\x01\\xffevil\\x09\\\\n\x22q"' \
        'd["processes"]["top"][2]["thp_enabled"] is False' \
        'd["khugepaged"] == {"running": True, "pid": 38, "pages_collapsed": 0, "full_scans": 0}' \
        'd["cmdline"]["transparent_hugepage"] == "never"' \
        'd["cmdline"]["transparent_hugepage_shmem"] == "advise"' \
        'd["cmdline"]["thp_anon"] == "16K-64K:always;128K,512K:inherit;2M:never"' \
        'd["cmdline"]["thp_shmem"] == "64K:always;2M:advise"' \
        '"enabled: cmdline sets never, runtime is madvise, policy wants madvise (after a reboot the kernel runs with never until thpguardd applies the policy)" in d["notes"]' \
        'any(n.startswith("hugepages-16kB/enabled: cmdline sets always, runtime is never, policy does not manage it") for n in d["notes"])' \
        'any(n.startswith("hugepages-2048kB/enabled: cmdline sets never, runtime is inherit, policy wants inherit") for n in d["notes"])' \
        'any(n.startswith("hugepages-64kB/shmem_enabled: cmdline sets always") for n in d["notes"])' \
        'any(n.startswith("thp_fault_fallback is 40% of THP faults") for n in d["notes"])' \
        'any(n.startswith("compact_stall 17:") for n in d["notes"])' \
        'd["policy"]["loaded"] and d["policy"]["mode"] == "audit" and d["policy"]["drift"] == 2' \
        'knob(d, "enabled")["state"] == "compliant" and knob(d, "enabled")["offered"] == ["always", "madvise", "never"]' \
        'knob(d, "defrag")["state"] == "drift" and knob(d, "defrag")["desired"] == "never" and knob(d, "defrag")["value"] == "madvise"' \
        'knob(d, "khugepaged/defrag")["state"] == "drift"' \
        'knob(d, "hugepages-8kB/enabled")["state"] == "unsupported" and knob(d, "hugepages-8kB/enabled")["present"] is False' \
        'knob(d, "hugepages-2048kB/enabled")["state"] == "compliant"' \
        'knob(d, "shmem_enabled")["state"] == "unmanaged" and knob(d, "shmem_enabled")["desired"] is None' \
        'knob(d, "khugepaged/max_ptes_none")["value"] == "511"' \
        'not any(k["knob"].endswith(("hpage_pmd_size", "full_scans", "pages_collapsed")) for k in d["knobs"])' \
        'd["meminfo"]["AnonHugePages_kb"] == 51200' \
        'd["vmstat"]["thp_fault_alloc"] == 600 and d["vmstat"]["compact_stall"] == 17' \
        '[s["size_kb"] for s in d["sizes"]] == [8, 16, 32, 64, 128, 256, 512, 1024, 2048]' \
        '"anon_fault_alloc" in d["sizes"][-1]["stats"]'

run status --json --top 2 --sysfs-root "$SYS" --config "$TMP/policy.conf"
json_check "$TMP/out" 'top_pids(d) == [100, 400]'
run status --json --top 0 --sysfs-root "$SYS" --config "$TMP/policy.conf"
# With no list to show, no status is read, so 700 (gone after its rollup) still counts.
json_check "$TMP/out" 'top_pids(d) == [] and d["processes"]["with_anon_huge_pages"] == 5'

# Text: the same facts; the binary comm is printable there too.
run status --sysfs-root "$SYS" --config "$TMP/policy.conf"
head -1 "$TMP/out" | grep -q '^THP madvise + defrag madvise: ' || fail "text headline"
grep -q '! enabled: cmdline sets never, runtime is madvise, policy wants madvise' "$TMP/out" || fail "text note"
grep -qE '^ +400 \\x01\\xffevil\\x09\\\\n"q ' "$TMP/out" || fail "text binary comm"
LC_ALL=C grep -q $'[\x01\x7f-\xff]' "$TMP/out" && fail "text output holds non-printable bytes"
grep -qE '^  defrag +madvise +never +drift ' "$TMP/out" || fail "text knob row"

# An absent default policy is a state: every knob unmanaged.
expect_rc 0 timeout 10 "$C" status --json --sysfs-root "$SYS" --proc-root "$TMP/proc"
json_check "$TMP/out" 'all(k["state"] == "unmanaged" for k in d["knobs"]) or d["policy"]["loaded"]'

# The headline the field fears most.
cp -a "$SYS" "$TMP/sys-always"
T=$TMP/sys-always/kernel/mm/transparent_hugepage
echo '[always] madvise never' >"$T/enabled"
echo '[always] defer defer+madvise madvise never' >"$T/defrag"
run status --json --sysfs-root "$TMP/sys-always" --config "$TMP/policy.conf"
json_check "$TMP/out" \
        'd["headline"] == "THP always + defrag always: khugepaged fills freed memory back with huge pages (RSS inflation) and faults stall in direct compaction (see /usr/share/thpguard/profiles)"' \
        'knob(d, "enabled")["state"] == "drift"'
echo 'always madvise [never]' >"$T/enabled"
run status --json --sysfs-root "$TMP/sys-always" --config "$TMP/policy.conf"
json_check "$TMP/out" 'd["headline"].startswith("THP never:")'
echo 'always [bogus] never' >"$T/enabled"
run status --json --sysfs-root "$TMP/sys-always" --config "$TMP/policy.conf"
json_check "$TMP/out" 'knob(d, "enabled")["state"] == "unsupported"' 'd["headline"].startswith("THP bogus")'
printf 'garbage' >"$T/enabled"
run status --json --sysfs-root "$TMP/sys-always" --config "$TMP/policy.conf"
json_check "$TMP/out" 'knob(d, "enabled")["state"] == "error" and knob(d, "enabled")["value"] is None' \
        'd["headline"].startswith("THP state unknown")'

# A 3.10 kernel: no shmem_enabled, no sizes, no hpage_pmd_size.
run status --json --sysfs-root "$FIXTURES/el7-3.10" --config "$TMP/policy.conf"
json_check "$TMP/out" 'd["sizes"] == []' 'knob(d, "enabled")["value"] == "always"' \
        'knob(d, "hugepages-2048kB/enabled")["state"] == "unsupported"'

# pid: the JVM fixture, the truncated one, the vanished one.
run pid 100 --json --sysfs-root "$SYS"
json_check "$TMP/out" 'd["runtime"] == "jvm" and d["command"] == "java"' \
        'd["smaps"]["top"][0]["madv_hugepage"] and d["smaps"]["top"][0]["anon_huge_pages_kb"] == 36864' \
        'd["smaps"]["top"][1]["name"] == "[anon:java heap]"' \
        'd["smaps"]["advised_huge"] == 1 and d["smaps"]["advised_nohuge"] == 1' \
        'd["anon_huge_pages_kb"] == 40960 and d["rss_kb"] == 81920' \
        '"jcmd 100 GC.heap_info" in d["compare_with"]'
run pid 100 --top 1 --sysfs-root "$SYS"
grep -q '^PID 100 (java)' "$TMP/out" || fail "pid text header"
[ "$(grep -c ' hg \| - ' "$TMP/out")" = 1 ] || fail "pid --top 1 listed more than one mapping"
run pid 200 --json --sysfs-root "$SYS"
json_check "$TMP/out" '"rss_kb" not in d and d["command"] == "truncated"'
run pid 400 --json --sysfs-root "$SYS"
json_check "$TMP/out" 'd["command"] == "\\x01\\xffevil\\x09\\\\n\x22q"'
expect_rc 1 timeout 10 "$C" pid 300 --proc-root "$TMP/proc"
grep -q '300/status: no such process' "$TMP/err" || fail "vanished pid message"
expect_rc 1 timeout 10 "$C" pid 700 --proc-root "$TMP/proc"
echo PASS
