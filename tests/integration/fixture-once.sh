#!/bin/bash
# --once against a private copy of each fixture kernel.
#  - A policy that is compliant where the kernel has the knob and unsupported
#    elsewhere changes nothing: no write at all (inotify), the tree is
#    byte-identical, stdout is empty, exit 0; each unsupported knob is named.
#  - A drifting policy writes the bare word to the right file and nothing else.
#    A fixture is a regular file, so a choice word written at offset 0 without
#    O_TRUNC leaves it unparsable or unchanged: the read-back confirm must
#    catch that and --once exits 1. khugepaged/defrag ("1\n" -> "0") reads back
#    fine even here and is reported as a correction.
#  - mode = "audit" reports the same drift and writes nothing.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# make_policy FILE MODE EN DF KDB(true|false)
make_policy() {
        write_policy "$1" <<CONF
mode = "$2";
thp = {
  enabled = "$3";
  defrag = "$4";
  shmem_enabled = "never";
  use_zero_page = true;
  shrink_underused = true;
  khugepaged = {
    defrag = $5;
    pages_to_scan = 4096;
    max_ptes_none = 511;
    max_ptes_swap = 64;
    max_ptes_shared = 256;
  };
  sizes = (
    { size = "64kB"; enabled = "never"; shmem_enabled = "never"; },
    { size = "2048kB"; enabled = "inherit"; },
    { size = "8kB"; enabled = "never"; shmem_enabled = "never"; }
  );
};
CONF
}
MANAGED=(enabled defrag shmem_enabled use_zero_page shrink_underused khugepaged/defrag
        khugepaged/pages_to_scan khugepaged/max_ptes_none khugepaged/max_ptes_swap khugepaged/max_ptes_shared
        hugepages-64kB/enabled hugepages-64kB/shmem_enabled hugepages-2048kB/enabled
        hugepages-8kB/enabled hugepages-8kB/shmem_enabled)

declare -A EN=([el7-3.10]=always [5.15]=madvise [6.1]=always [6.18]=madvise)
declare -A DF=([el7-3.10]=always [5.15]=madvise [6.1]=madvise [6.18]=madvise)

for fx in "${FIXTURE_NAMES[@]}"; do
        # 1. Compliant or unsupported: not one write.
        root=$(fixture_copy "$fx")
        thp=$root/kernel/mm/transparent_hugepage
        mapfile -t dirs < <(find "$thp" -type d)
        pol=$TMP/compliant-$fx.conf
        make_policy "$pol" enforce "${EN[$fx]}" "${DF[$fx]}" true
        run "$INOTIFY_COUNT" "${dirs[@]}" -- "$THPGUARDD" --once --config "$pol" --sysfs-root "$root"
        expect_rc 0 "$fx: --once of a compliant-or-unsupported policy"
        [ "$(out)" = "total 0" ] || fail "$fx: --once of a compliant policy wrote or printed a correction"
        n=0
        for k in "${MANAGED[@]}"; do
                if [ ! -e "$thp/$k" ]; then
                        n=$((n + 1))
                        expect_err "^thpguardd: $(re "$k"): skipped: not present on this kernel$" "$fx: --once stderr"
                fi
        done
        expect_err_lines "$n" "$fx: --once stderr (one line per unsupported knob)"
        expect_fixture_unchanged "$fx" "$root"

        # 2. enabled and khugepaged/defrag drift; defrag does not.
        pol=$TMP/drift-$fx.conf
        make_policy "$pol" enforce never "${DF[$fx]}" false
        run "$INOTIFY_COUNT" "${dirs[@]}" -- "$THPGUARDD" --once --config "$pol" --sysfs-root "$root"
        expect_rc 1 "$fx: --once where the confirm of enabled must fail"
        expect_err "^thpguardd: enabled: ${EN[$fx]} -> never failed: .+" "$fx: --once reports the failed confirm"
        expect_no_err "^thpguardd: (defrag|khugepaged/defrag):" "$fx: --once stderr"
        expect_out '^khugepaged/defrag: 1 -> 0$' "$fx: --once stdout (the numeric correction that sticks)"
        expect_no_out '^enabled: ' "$fx: --once must not print enabled as corrected"
        [ "$(inotify_total)" -eq 2 ] || fail "$fx: --once made $(inotify_total) writes, expected 2 (enabled, khugepaged/defrag)"
        # The bare word went to enabled, at offset 0, and nothing else changed.
        [ "$(head -c 5 "$thp/enabled")" = never ] || fail "$fx: enabled does not start with the bare word 'never': $(cat "$thp/enabled")"
        [ "$(cat "$thp/khugepaged/defrag")" = 0 ] || fail "$fx: khugepaged/defrag was not written 0"
        changed=$({ diff -rq "$FIXTURES/$fx" "$root" || true; } | sed -e "s|^Files $FIXTURES/$fx/kernel/mm/transparent_hugepage/||" -e 's| and .*||' | sort | tr '\n' ' ')
        [ "$changed" = "enabled khugepaged/defrag " ] || fail "$fx: --once changed [$changed], expected [enabled khugepaged/defrag]"
        [ ! -e "$thp/hugepages-8kB/enabled" ] || fail "$fx: --once created hugepages-8kB/enabled"

        # What it left behind: either "nevers [madvise] never", which parses
        # and still says madvise (the write "did not stick"), or
        # "neverys] madvise never", which is no value the kernel would print:
        # --verify must call that an error (exit 2), not ok or drift.
        if grep -Eq '^[a-z]+\]' "$thp/enabled"; then
                run "$THPGUARDD" --verify --config "$pol" --sysfs-root "$root"
                expect_rc 2 "$fx: --verify of an unparsable enabled"
                expect_out '^enabled +never +- +error \(unexpected content for a choice knob\)$' "$fx: --verify"
        else
                grep -q "^thpguardd: enabled: ${EN[$fx]} -> never failed: the write did not stick: reads back ${EN[$fx]}$" "$ERR_FILE" ||
                        fail "$fx: --once did not report that enabled reads back ${EN[$fx]}: $(err)"
                run "$THPGUARDD" --verify --config "$pol" --sysfs-root "$root"
                expect_rc 1 "$fx: --verify after a write that did not stick"
                expect_out "^enabled +never +${EN[$fx]} +drift$" "$fx: --verify"
        fi

        # 3. Audit mode: reported, never written.
        root=$(fixture_copy "$fx")
        pol=$TMP/audit-$fx.conf
        make_policy "$pol" audit never "${DF[$fx]}" false
        run "$INOTIFY_COUNT" "${dirs[@]}" -- "$THPGUARDD" --once --config "$pol" --sysfs-root "$root"
        expect_rc 1 "$fx: --once in audit mode with drift"
        expect_out "^enabled: ${EN[$fx]} -> never \\(audit: not written\\)$" "$fx: --once (audit)"
        expect_out '^khugepaged/defrag: 1 -> 0 \(audit: not written\)$' "$fx: --once (audit)"
        [ "$(inotify_total)" -eq 0 ] || fail "$fx: --once in audit mode wrote"
        expect_fixture_unchanged "$fx" "$root"
        # --audit on the command line overrides mode = "enforce".
        make_policy "$pol" enforce never "${DF[$fx]}" false
        run "$THPGUARDD" --once --audit --config "$pol" --sysfs-root "$root"
        expect_rc 1 "$fx: --once --audit with drift"
        expect_out "^enabled: ${EN[$fx]} -> never \\(audit: not written\\)$" "$fx: --once --audit"
        expect_fixture_unchanged "$fx" "$root"
done
echo "PASS: --once on ${FIXTURE_NAMES[*]}"
