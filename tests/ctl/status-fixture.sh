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
write_policy "$TMP/policy.conf" <"$CTL_FIXTURES/policy.conf"

status_ok() { run timeout 10 "$C" "$@" --proc-root "$TMP/proc"; expect_rc 0; }

status_ok status --json --sysfs-root "$SYS" --config "$TMP/policy.conf"
[ -s "$ERR_FILE" ] && fail "hostile processes were not skipped silently: $(cat "$ERR_FILE")"
cp "$OUT_FILE" "$TMP/status.json"
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

status_ok status --json --top 2 --sysfs-root "$SYS" --config "$TMP/policy.conf"
json_check "$OUT_FILE" 'top_pids(d) == [100, 400]'
status_ok status --json --top 0 --sysfs-root "$SYS" --config "$TMP/policy.conf"
# With no list to show, no status is read, so 700 (gone after its rollup) still counts.
json_check "$OUT_FILE" 'top_pids(d) == [] and d["processes"]["with_anon_huge_pages"] == 5'

# Text: the same facts; the binary comm is printable there too.
status_ok status --sysfs-root "$SYS" --config "$TMP/policy.conf"
head -1 "$OUT_FILE" | grep -q '^THP madvise + defrag madvise: ' || fail "text headline"
grep -q '! enabled: cmdline sets never, runtime is madvise, policy wants madvise' "$OUT_FILE" || fail "text note"
grep -qE '^ +400 \\x01\\xffevil\\x09\\\\n"q ' "$OUT_FILE" || fail "text binary comm"
LC_ALL=C grep -q $'[\x01\x7f-\xff]' "$OUT_FILE" && fail "text output holds non-printable bytes"
grep -qE '^  defrag +madvise +never +drift ' "$OUT_FILE" || fail "text knob row"

# An absent default policy is a state: every knob unmanaged.
run timeout 10 "$C" status --json --sysfs-root "$SYS" --proc-root "$TMP/proc"
expect_rc 0
json_check "$OUT_FILE" 'all(k["state"] == "unmanaged" for k in d["knobs"]) or d["policy"]["loaded"]'

# The headline the field fears most.
cp -a "$SYS" "$TMP/sys-always"
T=$TMP/sys-always/kernel/mm/transparent_hugepage
echo '[always] madvise never' >"$T/enabled"
echo '[always] defer defer+madvise madvise never' >"$T/defrag"
status_ok status --json --sysfs-root "$TMP/sys-always" --config "$TMP/policy.conf"
json_check "$OUT_FILE" \
        'd["headline"] == "THP always + defrag always: khugepaged fills freed memory back with huge pages (RSS inflation) and faults stall in direct compaction (see /usr/share/thpguard/profiles)"' \
        'knob(d, "enabled")["state"] == "drift"'
echo 'always madvise [never]' >"$T/enabled"
status_ok status --json --sysfs-root "$TMP/sys-always" --config "$TMP/policy.conf"
json_check "$OUT_FILE" 'd["headline"].startswith("THP never:")'
echo 'always [bogus] never' >"$T/enabled"
status_ok status --json --sysfs-root "$TMP/sys-always" --config "$TMP/policy.conf"
json_check "$OUT_FILE" 'knob(d, "enabled")["state"] == "unsupported"' 'd["headline"].startswith("THP bogus")'
printf 'garbage' >"$T/enabled"
status_ok status --json --sysfs-root "$TMP/sys-always" --config "$TMP/policy.conf"
json_check "$OUT_FILE" 'knob(d, "enabled")["state"] == "error" and knob(d, "enabled")["value"] is None' \
        'd["headline"].startswith("THP state unknown")'

# A 3.10 kernel: no shmem_enabled, no sizes, no hpage_pmd_size.
status_ok status --json --sysfs-root "$FIXTURES/el7-3.10" --config "$TMP/policy.conf"
json_check "$OUT_FILE" 'd["sizes"] == []' 'knob(d, "enabled")["value"] == "always"' \
        'knob(d, "hugepages-2048kB/enabled")["state"] == "unsupported"'

# pid: the JVM fixture, the truncated one, the vanished one.
status_ok pid 100 --json --sysfs-root "$SYS"
json_check "$OUT_FILE" 'd["runtime"] == "jvm" and d["command"] == "java"' \
        'd["smaps"]["top"][0]["madv_hugepage"] and d["smaps"]["top"][0]["anon_huge_pages_kb"] == 36864' \
        'd["smaps"]["top"][1]["name"] == "[anon:java heap]"' \
        'd["smaps"]["advised_huge"] == 1 and d["smaps"]["advised_nohuge"] == 1' \
        'd["anon_huge_pages_kb"] == 40960 and d["rss_kb"] == 81920' \
        '"jcmd 100 GC.heap_info" in d["compare_with"]'
status_ok pid 100 --top 1 --sysfs-root "$SYS"
grep -q '^PID 100 (java)' "$OUT_FILE" || fail "pid text header"
[ "$(grep -c ' hg \| - ' "$OUT_FILE")" = 1 ] || fail "pid --top 1 listed more than one mapping"
status_ok pid 200 --json --sysfs-root "$SYS"
json_check "$OUT_FILE" '"rss_kb" not in d and d["command"] == "truncated"'
status_ok pid 400 --json --sysfs-root "$SYS"
json_check "$OUT_FILE" 'd["command"] == "\\x01\\xffevil\\x09\\\\n\x22q"'
run timeout 10 "$C" pid 300 --proc-root "$TMP/proc"
expect_rc 1
grep -q '300/status: no such process' "$ERR_FILE" || fail "vanished pid message"
run timeout 10 "$C" pid 700 --proc-root "$TMP/proc"
expect_rc 1
echo PASS
