#!/bin/bash
# packaging/monitoring/thpguard-rules.yaml:
#  - promtool check rules (syntax, templates);
#  - promtool test rules with tests/monitoring/rules.test.yaml: synthetic
#    series, for every alert a case where it fires and one where it does not
#    (check-monitoring.py makes sure each alert has both), and the recording
#    rules' values;
#  - every alert has summary, description, severity and a runbook_url whose
#    section exists in packaging/monitoring/README.md; the rules read only
#    series that thpguardd (src/daemon/metrics.c) or node-exporter write;
#  - and the tests catch breakage: copies of the rules with one mutation each
#    must fail promtool test rules.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need promtool prometheus
python_with yaml python3-yaml

if command -v yamllint >/dev/null; then
        yamllint --strict -c "$SRCDIR/packaging/kubernetes/.yamllint" "$MON" || fail "yamllint found problems (above)"
        echo "yamllint: clean"
fi
promtool check rules "$MON/thpguard-rules.yaml" || fail "promtool check rules failed (above)"
(cd "$MT" && promtool test rules rules.test.yaml) || fail "promtool test rules failed (above)"
check_monitoring rules "$SRCDIR" || fail "the rules do not hold together (above)"

# mutant NAME SED-EXPRESSION: promtool test rules must fail on the mutated copy.
mutant() {
        local name=$1 expr=$2 dir=$TMP/$1
        mkdir -p "$dir/packaging/monitoring" "$dir/tests/monitoring"
        sed -e "$expr" "$MON/thpguard-rules.yaml" >"$dir/packaging/monitoring/thpguard-rules.yaml"
        cmp -s "$dir/packaging/monitoring/thpguard-rules.yaml" "$MON/thpguard-rules.yaml" &&
                fail "test bug: mutation $name changed nothing"
        cp "$MT/rules.test.yaml" "$dir/tests/monitoring/"
        promtool check rules "$dir/packaging/monitoring/thpguard-rules.yaml" >/dev/null 2>&1 ||
                fail "test bug: mutation $name is not a valid rule file"
        if (cd "$dir/tests/monitoring" && promtool test rules rules.test.yaml) >"$dir/out" 2>&1; then
                fail "mutation $name passed promtool test rules"
        fi
        echo "mutation $name: caught"
}
mutant drift-while-down 's/          and on (instance, job) thpguard_up == 1/          or on (instance, job) thpguard_up == 0/'
mutant drift-unsupported 's/expr: (1 - thpguard_knob_compliant) \* thpguard_knob_supported/expr: 1 - thpguard_knob_compliant/'
mutant drift-no-for '/alert: ThpguardNodeNotCompliant/,/for:/s/for: 10m/for: 1m/'
mutant fight-window '/alert: ThpguardWriterFight/,/for:/s/\[15m\]/[30m]/'
mutant corrections-startup 's/trigger=~"inotify|recheck"/trigger=~".+"/'
mutant corrections-threshold 's/\[1h\])) > 10/[1h])) > 100/'
mutant down-flap '/alert: ThpguardDown/,/for:/s/for: 5m/for: 1m/'
mutant stale-any-file 's/file=~".\*thpguard\\\\.prom"/file=~".*"/'
mutant stale-while-stopped '/unless on (instance, job) thpguard_up == 0/d'
mutant reload-ok 's/result="failed"}\[30m\]/result="ok"}[30m]/'
mutant annotation-text 's/Nothing puts drifted/Nothing puts/'
mutant size-fallback-threshold 's/ratio5m > 0.5$/ratio5m > 0.9/'
mutant size-fallback-no-for '/alert: ThpguardSizeFallbackHigh/,/for:/s/for: 15m/for: 1m/'
mutant size-fallback-trickle 's/\[5m\])) > 0.1$/[5m])) >= 0/'
mutant size-fallback-denominator 's/{counter=~"anon_fault_(alloc|fallback)"}\[5m\])) > 0)/{counter="anon_fault_alloc"}[5m])) > 0)/'
echo "PASS"
