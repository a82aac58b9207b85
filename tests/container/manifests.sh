#!/bin/bash
# The Kubernetes manifests: yamllint --strict, then the structural check of
# manifests.py (hostPath /sys at the --sysfs-root, the ConfigMap mount, the
# args, the probes, the ConfigMap's policy identical to conf/thpguard.conf).
# The check must also catch breakage: a few mutated copies must fail it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need yamllint
python_with yaml python3-yaml

K8S=$SRCDIR/packaging/kubernetes
yamllint --strict -c "$K8S/.yamllint" "$K8S" || fail "yamllint found problems (above)"
echo "yamllint: clean"
"$PY" "$SRCDIR/tests/container/manifests.py" check "$SRCDIR" || fail "the manifests do not hold together (above)"

# mutant NAME FILE SED-EXPRESSION EXPECTED-MESSAGE: a copy with one change must fail the check.
mutant() {
        local name=$1 file=$2 expr=$3 want=$4 tree=$TMP/$1 out
        mkdir -p "$tree/packaging" "$tree/conf"
        cp -a "$K8S" "$tree/packaging/kubernetes"
        cp "$SRCDIR/conf/thpguard.conf" "$tree/conf/"
        cp "$SRCDIR/CMakeLists.txt" "$tree/"
        sed -i -e "$expr" "$tree/$file"
        cmp -s "$tree/$file" "$SRCDIR/$file" && fail "test bug: mutation $name changed nothing"
        if out=$("$PY" "$SRCDIR/tests/container/manifests.py" check "$tree"); then
                fail "mutation $name passed the check"
        fi
        grep -qF -- "$want" <<<"$out" || fail "mutation $name failed for another reason: $out"
        echo "mutation $name: caught"
}
mutant policy-drift conf/thpguard.conf 's/recheck_interval = 30/recheck_interval = 31/' \
        "differs from conf/thpguard.conf"
mutant no-hostpath packaging/kubernetes/daemonset.yaml 's|path: /sys/kernel/mm/transparent_hugepage$|path: /var/thp|' \
        "is not the host's /sys/kernel/mm/transparent_hugepage"
mutant whole-sys packaging/kubernetes/daemonset.yaml 's|path: /sys/kernel/mm/transparent_hugepage$|path: /sys|' \
        "only /sys/kernel/mm/transparent_hugepage is needed"
mutant proc-writable packaging/kubernetes/daemonset.yaml '/mountPath: \/host\/proc/{n;d}' \
        "/host/proc is not mounted read-only"
mutant cpu-limit packaging/kubernetes/daemonset.yaml 's|^            limits:$|&\n              cpu: 100m|' \
        "a CPU limit"
mutant no-node-selector packaging/kubernetes/daemonset.yaml 's|kubernetes.io/os: linux|kubernetes.io/os: windows|' \
        "no nodeSelector kubernetes.io/os: linux"
mutant max-unavailable packaging/kubernetes/daemonset.yaml 's|maxUnavailable: 10%|maxUnavailable: 1|' \
        "maxUnavailable is 1"
mutant token packaging/kubernetes/serviceaccount.yaml 's|^automountServiceAccountToken: false|automountServiceAccountToken: true|' \
        "the ServiceAccount mounts a token"
mutant version-label packaging/kubernetes/configmap.yaml 's|app.kubernetes.io/version: "0.1.0"|app.kubernetes.io/version: "0.0.9"|' \
        "has app.kubernetes.io/version '0.0.9'"
mutant command packaging/kubernetes/daemonset.yaml 's|^          args:$|          command: ["/usr/sbin/thpguardd"]\n&|' \
        "the container sets command"
mutant sys-read-only packaging/kubernetes/daemonset.yaml '/mountPath: \/host\/sys/a\              readOnly: true' \
        "mounted read-only"
mutant subpath packaging/kubernetes/daemonset.yaml '/mountPath: \/etc\/thpguard$/a\              subPath: thpguard.conf' \
        "subPath mount"
mutant ready-once packaging/kubernetes/daemonset.yaml '/readinessProbe/,/--verify/s/--verify/--once/' \
        "readinessProbe is not"
mutant audit-args packaging/kubernetes/daemonset.yaml 's|^            - /run/thpguard/thpguard.prom$|&\n            - --audit|' \
        "are not the daemon's"
mutant no-tolerations packaging/kubernetes/daemonset.yaml 's/- operator: Exists/- operator: Equal\n          key: x/' \
        "no toleration"
echo "PASS"
