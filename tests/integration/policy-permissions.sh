#!/bin/bash
# The StrictModes rule for the policy file (symlinks followed, the target is
# what counts):
#  - as root, a group- or world-writable file, or one not owned by root, is
#    refused: -n exits 1, --verify and --once exit 2 and write nothing;
#  - a root-owned 0644 file behind a Kubernetes ConfigMap symlink chain
#    (thpguard.conf -> ..data/thpguard.conf, ..data -> ..<timestamp>/) passes;
#  - as non-root, the same bad file only draws warnings: -n passes.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root: the refusal applies to root, and the files are chowned"

root=$(fixture_copy 6.18)
mapfile -t dirs < <(find "$root/kernel/mm/transparent_hugepage" -type d)
# Compliant on the 6.18 fixture, except enabled, which drifts: a refused
# policy must not lead to that write.
BODY='thp = {
  enabled = "never";
  defrag = "madvise";
};'

# refused FILE TARGET REGEX...: refused in every mode, no write, REGEX on stderr.
refused() {
        local file=$1 target=$2 mode r
        shift 2
        declare -A rc=([-n]=1 [--verify]=2 [--once]=2)
        for mode in -n --verify --once; do
                run "$INOTIFY_COUNT" "${dirs[@]}" -- "$THPGUARDD" "$mode" --config "$file" --sysfs-root "$root"
                expect_rc "${rc[$mode]}" "$mode with policy $target ($(stat -c '%a %U' "$target"))"
                [ "$(out)" = "total 0" ] || fail "$mode with a refused policy wrote or printed a result"
                for r in "$@"; do
                        expect_err "$r" "$mode with policy $target"
                done
                expect_err_lines $# "$mode with policy $target (exactly the refusal)"
        done
        expect_fixture_unchanged 6.18 "$root"
}

WW='lets group or others write it; refusing it \(chmod go-w\)$'
P=$TMP/world.conf
write_policy "$P" <<<"$BODY"
chmod 0666 "$P"
refused "$P" "$P" "^$(re "$P"): mode 0666 $WW"

chmod 0664 "$P"
refused "$P" "$P" "^$(re "$P"): mode 0664 $WW"

chmod 0620 "$P"
refused "$P" "$P" "^$(re "$P"): mode 0620 $WW"

P=$TMP/nobody.conf
write_policy "$P" <<<"$BODY"
chown 65534:0 "$P"
refused "$P" "$P" "^$(re "$P"): owned by uid 65534, not root; refusing it$"

chmod 0666 "$P"
refused "$P" "$P" "^$(re "$P"): owned by uid 65534, not root; refusing it$" "^$(re "$P"): mode 0666 $WW"

# A root-owned 0644 file of another group passes: only the owner and the
# write bits count.
P=$TMP/group.conf
write_policy "$P" <<<"$BODY"
chown 0:65534 "$P"
run "$THPGUARDD" -n --config "$P" --sysfs-root "$root"
expect_rc 0 "-n with a 0644 root-owned file of another group (only writability and owner count)"

# A ConfigMap volume, as the kubelet lays it out.
CM=$TMP/configmap
TS=..2026_11_30_08_00_00.123456789
mkdir -p "$CM/$TS"
write_policy "$CM/$TS/thpguard.conf" <<<"$BODY"
ln -s "$TS" "$CM/..data"
ln -s ..data/thpguard.conf "$CM/thpguard.conf"
chmod 0755 "$CM" "$CM/$TS"
[ "$(readlink -f "$CM/thpguard.conf")" = "$CM/$TS/thpguard.conf" ] || fail "test bug: ConfigMap chain does not resolve"
run "$THPGUARDD" -n --config "$CM/thpguard.conf" --sysfs-root "$root"
expect_rc 0 "-n through a ConfigMap symlink chain (root-owned 0644 target)"
expect_out '^configuration OK$' "-n through a ConfigMap symlink chain"
expect_err_empty "-n through a ConfigMap symlink chain: stderr"
run "$THPGUARDD" --verify --config "$CM/thpguard.conf" --sysfs-root "$root"
expect_rc 1 "--verify through a ConfigMap symlink chain (enabled drifts)"
expect_out '^enabled +never +madvise +drift$' "--verify through a ConfigMap symlink chain"
expect_out '^defrag +madvise +madvise +ok$' "--verify through a ConfigMap symlink chain"
expect_err_empty "--verify through a ConfigMap symlink chain: stderr"

# The kubelet swaps ..data atomically on an update; a target that became
# world-writable is refused through the same chain (the link's 0777 is not it).
TS2=..2026_11_30_09_00_00.987654321
mkdir -p "$CM/$TS2"
write_policy "$CM/$TS2/thpguard.conf" <<<"$BODY"
chmod 0666 "$CM/$TS2/thpguard.conf"
ln -sfn "$TS2" "$CM/..data"
refused "$CM/thpguard.conf" "$CM/$TS2/thpguard.conf" "^$(re "$CM/thpguard.conf"): mode 0666 $WW"

# A dangling chain is a missing file.
rm -rf "${CM:?}/$TS2"
run "$THPGUARDD" -n --config "$CM/thpguard.conf" --sysfs-root "$root"
expect_rc 1 "-n through a dangling ConfigMap chain"
expect_err "^$(re "$CM/thpguard.conf"): cannot open: No such file or directory$" "-n through a dangling chain"

# As nobody: the same file is only a warning (a user may check a draft policy).
if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$THPGUARDD" 2>/dev/null; then
        skip "user nobody cannot run $THPGUARDD (a build tree in a private directory); the root cases passed"
fi
P=$TMP/draft.conf
write_policy "$P" <<<"$BODY"
chown 65534:65534 "$P"
chmod 0666 "$P"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
run "${NOBODY[@]}" "$THPGUARDD" -n --config "$P" --sysfs-root "$root"
expect_rc 0 "-n as nobody on a nobody-owned 0666 policy"
expect_out '^configuration OK$' "-n as nobody"
expect_err "^$(re "$P"): warning: owned by uid 65534, not root; thpguardd running as root would refuse it$" "-n as nobody"
expect_err "^$(re "$P"): warning: mode 0666 lets group or others write it; thpguardd running as root would refuse it \(chmod go-w\)$" "-n as nobody"
expect_err_lines 2 "-n as nobody (the two warnings)"
run "${NOBODY[@]}" "$THPGUARDD" --verify --config "$P" --sysfs-root "$root"
expect_rc 1 "--verify as nobody (enabled drifts)"
expect_out '^enabled +never +madvise +drift$' "--verify as nobody"
# And root still refuses that very file.
run "$THPGUARDD" -n --config "$P" --sysfs-root "$root"
expect_rc 1 "-n as root on the nobody-owned 0666 policy"

echo "PASS: policy permissions"
