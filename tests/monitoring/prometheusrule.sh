#!/bin/bash
# packaging/monitoring/prometheusrule.yaml is generated from the one source,
# thpguard-rules.yaml, by generate-prometheusrule: the committed file must be
# exactly what the script makes now, and must hold the same groups, parsed.
# (The Kubernetes schema check of the object is in tests/container/schema.sh.)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
python_with yaml python3-yaml

"$MON/generate-prometheusrule" "$MON/thpguard-rules.yaml" "$TMP/prometheusrule.yaml" ||
        fail "generate-prometheusrule failed"
if ! diff -u "$MON/prometheusrule.yaml" "$TMP/prometheusrule.yaml"; then
        fail "packaging/monitoring/prometheusrule.yaml is not what generate-prometheusrule makes" \
                "from thpguard-rules.yaml (diff above): run packaging/monitoring/generate-prometheusrule"
fi
"$PY" - "$MON/thpguard-rules.yaml" "$MON/prometheusrule.yaml" <<'PYEOF' || fail "the PrometheusRule does not hold the rules (above)"
import sys, yaml
rules = yaml.safe_load(open(sys.argv[1]))
objs = [d for d in yaml.safe_load_all(open(sys.argv[2])) if d is not None]
assert len(objs) == 1, f"{len(objs)} documents"
o = objs[0]
assert o["apiVersion"] == "monitoring.coreos.com/v1" and o["kind"] == "PrometheusRule", (o["apiVersion"], o["kind"])
assert o["spec"] == rules, "spec differs from the rules file"
labels = o["metadata"]["labels"]
assert labels.get("prometheus") == "k8s" and labels.get("role") == "alert-rules", labels
print(f"PrometheusRule {o['metadata']['namespace']}/{o['metadata']['name']}: "
      f"{sum(len(g['rules']) for g in o['spec']['groups'])} rules, as in thpguard-rules.yaml")
PYEOF

# The check catches a stale copy: an edited source makes a different file.
sed 's/for: 10m/for: 11m/' "$MON/thpguard-rules.yaml" >"$TMP/edited-rules.yaml"
"$MON/generate-prometheusrule" "$TMP/edited-rules.yaml" "$TMP/edited.yaml"
cmp -s "$TMP/edited.yaml" "$MON/prometheusrule.yaml" && fail "an edited rules file made the same PrometheusRule"
# A rules file with a key the generator would lose is refused.
{ cat "$MON/thpguard-rules.yaml"; echo "extra: 1"; } >"$TMP/extra.yaml"
"$MON/generate-prometheusrule" "$TMP/extra.yaml" - >/dev/null 2>&1 && fail "a rules file with an extra key was accepted"
echo "PASS"
