#!/bin/bash
# Per-size (mTHP) knobs on the 6.18 fixture, copied from this machine:
# hugepages-8kB/ exists but has no enabled file, so managing it is
# "unsupported (not present on this kernel)", while hugepages-8kB/shmem_enabled
# and hugepages-64kB/enabled are ordinary knobs. A size the kernel does not
# have at all (4096kB) is unsupported the same way. No mode creates a file.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

root=$(fixture_copy 6.18)
thp=$root/kernel/mm/transparent_hugepage
mapfile -t dirs < <(find "$thp" -type d)
if [ ! -d "$thp/hugepages-8kB" ] || [ -e "$thp/hugepages-8kB/enabled" ]; then
        fail "the 6.18 fixture must have hugepages-8kB/ without enabled"
fi

P=$TMP/sizes.conf
write_policy "$P" <<'CONF'
thp = {
  sizes = (
    { size = "8kB";
      enabled = "never";
      shmem_enabled = "never"; },
    { size = "64kB"; enabled = "never"; },
    { size = "4096kB"; enabled = "never"; }
  );
};
CONF
L8=$(line_of "$P" ' enabled = "never";$')
L4M=$(line_of "$P" 4096kB)

run "$THPGUARDD" -n --config "$P" --sysfs-root "$root"
expect_rc 0 "-n with hugepages-8kB/enabled"
expect_out '^configuration OK$' "-n"
expect_err "^$(re "$P"):$L8: warning: hugepages-8kB/enabled: not present on this kernel; this knob is skipped$" "-n"
expect_err "^$(re "$P"):$L4M: warning: hugepages-4096kB/enabled: not present on this kernel; this knob is skipped$" "-n"
expect_err_lines 2 "-n (no warning for 8kB/shmem_enabled or 64kB/enabled)"

run "$THPGUARDD" --verify --config "$P" --sysfs-root "$root"
expect_rc 0 "--verify (unsupported is not drift)"
expect_out '^hugepages-8kB/enabled +never +- +unsupported \(not present on this kernel\)$' "--verify"
expect_out '^hugepages-8kB/shmem_enabled +never +never +ok$' "--verify"
expect_out '^hugepages-64kB/enabled +never +never +ok$' "--verify"
expect_out '^hugepages-4096kB/enabled +never +- +unsupported \(not present on this kernel\)$' "--verify"
expect_out_lines 5 "--verify (header and four rows)"

run "$INOTIFY_COUNT" "${dirs[@]}" -- "$THPGUARDD" --once --config "$P" --sysfs-root "$root"
expect_rc 0 "--once with hugepages-8kB/enabled unsupported"
[ "$(out)" = "total 0" ] || fail "--once wrote or corrected something"
expect_err '^thpguardd: hugepages-8kB/enabled: skipped: not present on this kernel$' "--once"
expect_err '^thpguardd: hugepages-4096kB/enabled: skipped: not present on this kernel$' "--once"
expect_err_lines 2 "--once stderr"
expect_fixture_unchanged 6.18 "$root"
[ ! -e "$thp/hugepages-4096kB" ] || fail "--once created hugepages-4096kB/"

# hugepages-64kB/enabled drifting: the write goes to that file and no other.
P2=$TMP/sizes-drift.conf
write_policy "$P2" <<'CONF'
thp = {
  sizes = (
    { size = "8kB"; enabled = "madvise"; },
    { size = "64kB"; enabled = "madvise"; }
  );
};
CONF
run "$THPGUARDD" --verify --config "$P2" --sysfs-root "$root"
expect_rc 1 "--verify with hugepages-64kB/enabled drifting"
expect_out '^hugepages-64kB/enabled +madvise +never +drift$' "--verify"
expect_out '^hugepages-8kB/enabled +madvise +- +unsupported \(not present on this kernel\)$' "--verify"
run "$INOTIFY_COUNT" "${dirs[@]}" -- "$THPGUARDD" --once --config "$P2" --sysfs-root "$root"
# A fixture is not sysfs: "madvise" over "always" gives "madviseinherit
# madvise [never]", which still says never: the confirm must see it.
expect_rc 1 "--once with hugepages-64kB/enabled drifting (fixture: the write cannot stick)"
expect_err '^thpguardd: hugepages-64kB/enabled: never -> madvise failed: the write did not stick: reads back never$' "--once"
expect_out '^modified enabled$' "--once (inotify)"
[ "$(inotify_total)" -eq 1 ] || fail "--once made $(inotify_total) writes, expected 1"
changed=$({ diff -rq "$FIXTURES/6.18" "$root" || true; } | wc -l)
[ "$changed" -eq 1 ] || fail "--once changed $changed files, expected 1"
[ "$(head -c 7 "$thp/hugepages-64kB/enabled")" = madvise ] || fail "hugepages-64kB/enabled does not start with the bare word: $(cat "$thp/hugepages-64kB/enabled")"
[ ! -e "$thp/hugepages-8kB/enabled" ] || fail "--once created hugepages-8kB/enabled"

echo "PASS: mTHP sizes on 6.18"
