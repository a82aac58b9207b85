#!/bin/bash
# The ConfigMap ships the default policy: its thpguard.conf is byte-identical
# to conf/thpguard.conf, and thpguardd accepts it (-n, on the 6.18 fixture).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
python_with yaml python3-yaml

"$PY" "$SRCDIR/tests/container/manifests.py" configmap "$SRCDIR" thpguard.conf >"$TMP/from-configmap.conf"
if ! diff -u "$SRCDIR/conf/thpguard.conf" "$TMP/from-configmap.conf"; then
        fail "packaging/kubernetes/configmap.yaml's thpguard.conf differs from conf/thpguard.conf (diff above):" \
                "copy the file into its data, indented by four spaces"
fi
write_policy "$TMP/thpguard.conf" <"$TMP/from-configmap.conf"
out=$("$THPGUARDD" -n --config "$TMP/thpguard.conf" --sysfs-root "$SRCDIR/tests/fixtures/6.18" 2>&1) ||
        fail "thpguardd -n rejects the ConfigMap's policy: $out"
echo "the ConfigMap's policy is conf/thpguard.conf, and $out"
