# status and pid on this machine's real /proc and /sys: read-only, valid JSON, the live values.
. "$(dirname "$0")/lib.sh"
C=$THPGUARDCTL
[ -d /sys/kernel/mm/transparent_hugepage ] || skip "no THP sysfs on this machine"

run "$C" status --json
expect_rc 0
cp "$OUT_FILE" "$TMP/status.json"
live=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/defrag)
json_check "$TMP/status.json" \
        "d['kernel'] == '$(uname -r)'" \
        "knob(d, 'defrag')['value'] == '$live'" \
        "d['processes']['scanned'] > 0 and d['processes']['measured'] > 0" \
        "d['vmstat']['thp_fault_alloc'] >= 0" \
        "d['meminfo']['MemTotal_kb'] > 0"
run "$C" status
expect_rc 0
run "$C" pid $$ --json
expect_rc 0
json_check "$OUT_FILE" "d['pid'] == $$ and d['command'] == 'bash' and d['rss_kb'] > 0"

# Anyone may diagnose: as nobody, processes it cannot read are skipped, silently.
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
        run setpriv --reuid=65534 --regid=65534 --clear-groups "$C" status --json
        expect_rc 0
        [ -s "$ERR_FILE" ] && fail "status as nobody printed errors: $(cat "$ERR_FILE")"
        json_check "$OUT_FILE" "d['processes']['skipped'] > 0"
fi
echo PASS
