#!/bin/bash
# Every shipped profile is a valid policy (thpguardd -n, also against this
# kernel), begins with a header saying whom it is for and why, and sets
# what thpguard.conf(5) says it sets. The package installs them all.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

dir=$SRCDIR/conf/profiles
# thpguardd -n reads a copy: as root it refuses a policy under a directory
# others may write, and the checkout may be anywhere (/tmp, a home).
copies=$TMP # $TMP is safe_mktemp's
declare -A want=(
        [go-services]='enabled=never defrag=never'
        [jvm-g1]='enabled=madvise khugepaged.defrag=false'
        [redis]='enabled=never defrag=never'
        [mongodb8]='enabled=always defrag=defer+madvise khugepaged.max_ptes_none=0'
        [mixed-node]='enabled=madvise defrag=madvise'
)
for name in "${!want[@]}"; do
        f=$dir/$name.conf
        [ -f "$f" ] || fail "conf/profiles/$name.conf is missing"
        # Validate against the running kernel when there is one; against a
        # fixture tree of 6.18 otherwise.
        root=/sys
        [ -d /sys/kernel/mm/transparent_hugepage ] || root=$FIXTURES/6.18
        cp "$f" "$copies/$name.conf"
        out=$("$THPGUARDD" -n -c "$copies/$name.conf" --sysfs-root "$root" 2>&1) || fail "thpguardd -n rejects $name.conf:
$out"
        echo "$out" | grep -q 'configuration OK' || fail "$name.conf: $out"
        head -n 20 "$f" | grep -q '^# For:' || fail "$name.conf has no '# For:' header line"
        head -n 30 "$f" | grep -q '^# Why:' || fail "$name.conf has no '# Why:' header line"
        # The settings, from `--verify --json` against a fixture would need
        # a fixture; read the file: key = value; with the group for khugepaged.
        flat=$(sed 's/#.*//' "$f" | tr -d ' \t\n' | sed 's/khugepaged={\([^}]*\)}/\n&\n/' | sed 's/^/;/; s/{/;/g')
        for kv in ${want[$name]}; do
                k=${kv%%=*}
                v=${kv#*=}
                case $k in
                khugepaged.*)
                        echo "$flat" | grep '^;khugepaged=' | grep -qF ";${k#khugepaged.}=$v;" ||
                                fail "$name.conf does not set $k = $v"
                        ;;
                *)
                        echo "$flat" | grep -v '^;khugepaged=' | grep -qF ";$k=\"$v\";" ||
                                fail "$name.conf does not set $k = \"$v\""
                        ;;
                esac
        done
        echo "ok: $name.conf (${want[$name]})"
done

# They are installed to .../share/thpguard/profiles.
root=$(mktemp -d "$PKG_WORK/profiles-root.XXXXXX")
on_exit 'rm -rf "$root"'
DESTDIR=$root cmake --install "$BUILDDIR/packaging" >/dev/null
for name in "${!want[@]}"; do
        find "$root" -path "*/share/thpguard/profiles/$name.conf" | grep -q . || fail "$name.conf is not installed"
done
echo "ok: all installed to share/thpguard/profiles"
echo PASS
