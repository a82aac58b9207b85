#!/bin/bash
# Real sysfs: a bad policy never leads to a write. enabled is drifted first so
# that a valid policy would write it; then every kind of bad policy is run
# through -n, --verify and --once under inotify on the real THP directories:
# exit 1 / 2 / 2, the error on stderr with file:line, and not one IN_MODIFY
# (every user-space write raises one, even of an unchanged value).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
real_sysfs_begin
mapfile -t dirs < <(thp_watch_dirs)
thp_set enabled always
[ "$(thp_get enabled)" = always ] || fail "could not set enabled=always on the real sysfs"

# no_write NAME FILE REGEX: every mode fails as it should and writes nothing.
no_write() {
        local name=$1 file=$2 regex=$3 mode
        declare -A rc=([-n]=1 [--verify]=2 [--once]=2)
        for mode in -n --verify --once; do
                run "$INOTIFY_COUNT" "${dirs[@]}" -- "$THPGUARDD" "$mode" --config "$file"
                expect_rc "${rc[$mode]}" "$name: $mode"
                [ "$(inotify_total)" -eq 0 ] || fail "$name: $mode wrote to the real sysfs: $(grep '^modified' "$OUT_FILE" | tr '\n' ' ')"
                [ "$(out)" = "total 0" ] || fail "$name: $mode printed a result for an invalid policy"
                expect_err "$regex" "$name: $mode"
        done
        [ "$(thp_get enabled)" = always ] || fail "$name: enabled was changed to $(thp_get enabled)"
}

# A control: the same policy, valid, does write (else "no write" proves nothing).
P=$TMP/valid.conf
write_policy "$P" <<<'thp = { enabled = "madvise"; };'
run "$THPGUARDD" --verify --config "$P"
expect_rc 1 "control: --verify with a valid policy sees the drift"

P=$TMP/unknown-key.conf
printf 'thp = {\n  enabled = "madvise";\n  enabeld = "never";\n};\n' | write_policy "$P"
no_write "unknown key" "$P" "^$(re "$P"):3: thp: unknown key \"enabeld\""

P=$TMP/bad-value.conf
printf 'thp = {\n  enabled = "madvise";\n  khugepaged = { pages_to_scan = 0; };\n};\n' | write_policy "$P"
no_write "out of range" "$P" "^$(re "$P"):3: thp\.khugepaged\.pages_to_scan: 0 is out of range"

P=$TMP/syntax.conf
printf 'thp = {\n  enabled = "madvise"\n  defrag = ;\n};\n' | write_policy "$P"
no_write "syntax error" "$P" "^$(re "$P"):3: syntax error$"

P=$TMP/bad-size.conf
printf 'thp = {\n  enabled = "madvise";\n  sizes = ( { size = "64k"; enabled = "never"; } );\n};\n' | write_policy "$P"
no_write "malformed size" "$P" "^$(re "$P"):3: thp\.sizes\[0\]\.size: malformed size \"64k\""

P=$TMP/world-writable.conf
write_policy "$P" <<<'thp = { enabled = "madvise"; };'
chmod 0666 "$P"
if [ "$(id -u)" -eq 0 ]; then
        no_write "world-writable policy" "$P" "^$(re "$P"): mode 0666 lets group or others write it; refusing it"
fi

no_write "missing policy" "$TMP/missing.conf" "^$(re "$TMP/missing.conf"): cannot open: No such file or directory$"

echo "PASS: no bad policy led to a write on the real sysfs"
