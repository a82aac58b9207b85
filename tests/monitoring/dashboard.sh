#!/bin/bash
# packaging/monitoring/thpguard-dashboard.json: it parses as JSON, shows what
# the issue asks for, and every metric name in its expressions is one that
# thpguardd writes (read from src/daemon/metrics.c) or node-exporter's
# node_textfile_mtime_seconds; every expression parses (promtool check rules
# on them as recording rules, Grafana's variables replaced). A copy reading a
# series nobody writes must fail the check.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need promtool prometheus
python_with yaml python3-yaml

check_monitoring dashboard "$SRCDIR" "$TMP/out" || fail "the dashboard does not hold up (above)"
promtool check rules "$TMP/out/dashboard-rules.yaml" || fail "a dashboard expression does not parse (above)"

# A mutated copy: one expression reads a series thpguardd does not write.
sed 's/thpguard_anon_huge_pages_bytes{/thpguard_anon_hugepages_bytes{/' \
        "$MON/thpguard-dashboard.json" >"$TMP/bad.json"
cmp -s "$TMP/bad.json" "$MON/thpguard-dashboard.json" && fail "test bug: the mutation changed nothing"
if out=$(check_monitoring dashboard "$SRCDIR" "$TMP/out-bad" "$TMP/bad.json"); then
        fail "a dashboard reading thpguard_anon_hugepages_bytes passed the check"
fi
grep -q 'reads thpguard_anon_hugepages_bytes' <<<"$out" || fail "the mutated dashboard failed for another reason: $out"
echo "mutation unknown-series: caught"
# And one that is not JSON.
sed '0,/{/s/{/{,/' "$MON/thpguard-dashboard.json" >"$TMP/broken.json"
check_monitoring dashboard "$SRCDIR" "$TMP/out-broken" "$TMP/broken.json" >/dev/null 2>&1 &&
        fail "a dashboard that is not JSON passed the check"
echo "mutation not-json: caught"
echo "PASS"
