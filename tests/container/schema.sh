#!/bin/bash
# The Kubernetes objects as a cluster would get them: `kubectl kustomize` of
# packaging/kubernetes and of the base plus each component in
# packaging/kubernetes/components (node-exporter-textfile, openshift,
# audit-only, and any added later), and packaging/monitoring's PrometheusRule:
#  - every rendered object validates against the schema of its kind
#    (the RuntimeClasses of runtime-classes too;
#    tests/container/schema/validate.mjs: the npm kubernetes-models packages,
#    pinned in package-lock.json, installed once per build tree with npm ci);
#  - manifests.py rendered: each component does what it says and nothing else
#    (the textfile hostPath, --audit, an SCC that admits the pod and is bound
#    to its ServiceAccount), and every object carries the project's version;
#  - invalid objects fail the validator (a wrong type in a DaemonSet, an SCC
#    with a wrong type or an unknown field, a broken PrometheusRule).
# Skips only when kubectl, node or npm is missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || skip "kubectl is not installed"
need node nodejs
need npm
python_with yaml python3-yaml

K8S=$SRCDIR/packaging/kubernetes
SCHEMA=$SRCDIR/tests/container/schema

# 1. Render: an overlay per case, in $TMP, naming the base and the component by relative path.
render() {
        local name=$1 comp=${2:-} dir=$TMP/overlay-$1 rel
        mkdir -p "$dir"
        rel=$(realpath --relative-to="$dir" "$K8S")
        {
                echo "apiVersion: kustomize.config.k8s.io/v1beta1"
                echo "kind: Kustomization"
                echo "resources: [$rel]"
                if [ -n "$comp" ]; then echo "components: [$rel/components/$comp]"; fi
        } >"$dir/kustomization.yaml"
        kubectl kustomize "$dir" >"$TMP/rendered/$name.yaml" 2>"$TMP/kustomize.err" ||
                fail "kubectl kustomize of ${comp:-the base} failed: $(cat "$TMP/kustomize.err")"
        "$PY" "$SRCDIR/tests/container/manifests.py" tojson "$TMP/rendered/$name.yaml" >"$TMP/json/$name.json"
        echo "rendered ${comp:-base}: $(grep -c '^kind:' "$TMP/rendered/$name.yaml") objects"
}
mkdir -p "$TMP/rendered" "$TMP/json"
# The base, as `kubectl apply -k packaging/kubernetes` sends it.
kubectl kustomize "$K8S" >"$TMP/rendered/base.yaml" || fail "kubectl kustomize $K8S failed"
"$PY" "$SRCDIR/tests/container/manifests.py" tojson "$TMP/rendered/base.yaml" >"$TMP/json/base.json"
echo "rendered base: $(grep -c '^kind:' "$TMP/rendered/base.yaml") objects"
comps=()
for d in "$K8S"/components/*/; do
        comps+=("$(basename "$d")")
        render "$(basename "$d")" "$(basename "$d")"
done
[ "${#comps[@]}" -ge 3 ] || fail "only ${#comps[@]} components in $K8S/components"
"$PY" "$SRCDIR/tests/container/manifests.py" tojson "$SRCDIR/packaging/monitoring/prometheusrule.yaml" \
        >"$TMP/json/prometheusrule.json"

# 2. What each component must do.
"$PY" "$SRCDIR/tests/container/manifests.py" rendered "$SRCDIR" "$TMP/rendered" ||
        fail "the rendered manifests do not hold together (above)"

# 3. The validator, installed once per build tree (npm ci of the pinned lock file).
CACHE=${BUILDDIR:-$TMP}/npm-manifest-schema
mkdir -p "$CACHE"
exec 8>"$CACHE.lock"
flock 8
stamp=$(cat "$SCHEMA/package.json" "$SCHEMA/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$CACHE/.stamp" 2>/dev/null || true)" != "$stamp" ]; then
        rm -rf "${CACHE:?}/node_modules" "$CACHE/.stamp"
        cp "$SCHEMA/package.json" "$SCHEMA/package-lock.json" "$CACHE/"
        (cd "$CACHE" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >"$TMP/npm.log" 2>&1 || {
                cat "$TMP/npm.log" >&2
                fail "npm ci of tests/container/schema/package-lock.json failed (above): the npm registry is needed the first time"
        }
        echo "$stamp" >"$CACHE/.stamp"
fi
cp "$SCHEMA/validate.mjs" "$CACHE/validate.mjs"
flock -u 8
validate() { node "$CACHE/validate.mjs" "$@"; }
validate "$TMP"/json/*.json || fail "an object does not validate against its schema (above)"

# 4. The validator must refuse what a cluster would: one mutation per file.
mutate() {
        local name=$1 src=$2 code=$3 want=$4 out
        "$PY" - "$src" "$TMP/bad-$name.json" <<PYEOF
import json, sys
objs = json.load(open(sys.argv[1]))
def first(kind):
    return next(o for o in objs if o["kind"] == kind)
$code
json.dump(objs, open(sys.argv[2], "w"))
PYEOF
        if out=$(validate "$TMP/bad-$name.json"); then
                fail "mutation $name passed the schema validation"
        fi
        grep -qF -- "$want" <<<"$out" || fail "mutation $name failed for another reason: $(grep FAIL <<<"$out")"
        echo "mutation $name: caught"
}
mutate port-type "$TMP/json/base.json" \
        'first("DaemonSet")["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": "metrics"}]' \
        "containerPort must be integer"
mutate no-containers "$TMP/json/base.json" \
        'del first("DaemonSet")["spec"]["template"]["spec"]["containers"]' \
        "must have required property containers"
mutate sa-token-type "$TMP/json/base.json" \
        'first("ServiceAccount")["automountServiceAccountToken"] = "false"' \
        "automountServiceAccountToken must be boolean"
mutate scc-type "$TMP/json/openshift.json" \
        'first("SecurityContextConstraints")["allowPrivilegedContainer"] = "yes"' \
        "allowPrivilegedContainer must be boolean"
mutate scc-unknown-field "$TMP/json/openshift.json" \
        'first("SecurityContextConstraints")["allowPrivileged"] = True' \
        "must NOT have additional properties"
mutate scc-missing "$TMP/json/openshift.json" \
        'del first("SecurityContextConstraints")["volumes"]' \
        "must have required property 'volumes'"
mutate rbac-subjects "$TMP/json/openshift.json" \
        'first("RoleBinding")["subjects"] = "thpguard"' \
        "subjects must be array"
mutate prometheusrule-groups "$TMP/json/prometheusrule.json" \
        'first("PrometheusRule")["spec"]["groups"][0]["rules"][0]["expr"] = ["sum"]' \
        "expr must be"
mutate runtimeclass-no-handler "$TMP/json/runtime-classes.json" \
        'del first("RuntimeClass")["handler"]' \
        "must have required property handler"
mutate runtimeclass-handler-type "$TMP/json/runtime-classes.json" \
        'first("RuntimeClass")["handler"] = 1' \
        "handler must be string"
mutate unknown-kind "$TMP/json/base.json" \
        'first("DaemonSet")["kind"] = "DaemonSett"' \
        "no schema for apps/v1 DaemonSett"
echo "PASS"
