#!/bin/bash
# Real sysfs: a value the kernel rejects. thpguardd bounds max_ptes_* by
# hpage_pmd_size / page size - 1 (511 here), so to get 1000 past validation on
# purpose we bind-mount a fake hpage_pmd_size (4194304: bound 1023) over the
# real one in a private mount namespace. The real kernel still allows 511 at
# most and answers the write with EINVAL. --once must say the kernel rejected
# the value, exit 1, leave max_ptes_none as it was, and still correct the
# knobs after it in the policy (enabled).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
real_sysfs_begin
fake_pmd_begin

thp_set enabled always
before=$(thp_get khugepaged/max_ptes_none)
[ "$before" != 1000 ] || fail "test bug: max_ptes_none already reads 1000"

# max_ptes_none first, so a failure there must not stop enabled after it.
P=$TMP/policy.conf
write_policy "$P" <<'CONF'
thp = {
  khugepaged = {
    max_ptes_none = 1000;
  };
  enabled = "madvise";
};
CONF
L=$(line_of "$P" max_ptes_none)

# Outside the namespace, validation refuses 1000 as above the bound (today a
# warning and the knob is skipped; an error would do as well), and --verify
# does not offer it as a drift to correct.
run "$THPGUARDD" -n --config "$P"
[ "$RC" -eq 0 ] || [ "$RC" -eq 1 ] || fail "-n with max_ptes_none = 1000: exit $RC"
expect_err "^$(re "$P"):$L: .*max_ptes_none: 1000 is above this kernel's maximum $PMD_BOUND" "-n"
run "$THPGUARDD" --verify --config "$P"
[ "$RC" -eq 1 ] || [ "$RC" -eq 2 ] || fail "--verify with max_ptes_none = 1000 and enabled drifting: exit $RC"
expect_no_out "max_ptes_none +1000 +[0-9]+ +drift" "--verify outside the namespace"

# In the namespace, 1000 is within the (fake) bound: plain drift.
run "${FAKE_PMD_NS[@]}" "$THPGUARDD" --verify --config "$P"
[ "$RC" -ne 99 ] || fail "could not bind-mount a fake hpage_pmd_size: $(err)"
expect_rc 1 "--verify with the fake hpage_pmd_size"
expect_out "^khugepaged/max_ptes_none +1000 +$before +drift$" "--verify with the fake hpage_pmd_size"

run "${FAKE_PMD_NS[@]}" "$THPGUARDD" --once --config "$P"
expect_rc 1 "--once where the kernel rejects max_ptes_none = 1000"
expect_err "^thpguardd: khugepaged/max_ptes_none: $before -> 1000 failed: the kernel rejected the value \\(Invalid argument\\)$" "--once"
expect_out '^enabled: always -> madvise$' "--once (the knob after the rejected one is still enforced)"
expect_no_out 'max_ptes_none' "--once must not report max_ptes_none as corrected"
[ "$(thp_get enabled)" = madvise ] || fail "enabled reads $(thp_get enabled): the rejected knob stopped the others"
[ "$(thp_get khugepaged/max_ptes_none)" = "$before" ] || fail "max_ptes_none changed to $(thp_get khugepaged/max_ptes_none), expected $before"
[ "$(cat "$THP/hpage_pmd_size")" = "$REAL_PMD" ] || fail "the fake hpage_pmd_size leaked out of the private namespace"

echo "PASS: the kernel's EINVAL is reported, the value kept, the other knobs enforced"
