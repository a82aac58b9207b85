#!/bin/bash
# --check-config against each fixture kernel: a policy valid everywhere is
# "configuration OK" with no warning; a policy using newer knobs and values is
# still OK (exit 0) with exactly one warning per knob this kernel lacks,
# naming policy:line and the knob. -n must never write (inotify proves it).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

POL_PORTABLE=$TMP/portable.conf
write_policy "$POL_PORTABLE" <<'CONF'
mode = "enforce";
recheck_interval = 30;
thp = {
  enabled = "madvise";
  defrag = "madvise";
  use_zero_page = true;
  khugepaged = {
    defrag = false;
    pages_to_scan = 4096;
    scan_sleep_millisecs = 10000;
    alloc_sleep_millisecs = 60000;
    max_ptes_none = 511;
  };
};
CONF

POL_MODERN=$TMP/modern.conf
write_policy "$POL_MODERN" <<'CONF'
thp = {
  enabled = "madvise";
  defrag = "defer+madvise";
  shmem_enabled = "advise";
  shrink_underused = true;
  khugepaged = {
    defrag = false;
    max_ptes_swap = 64;
    max_ptes_shared = 256;
  };
  sizes = (
    { size = "64kB"; enabled = "never"; },
    { size = "2048kB";
      enabled = "inherit";
      shmem_enabled = "inherit"; },
    { size = "8kB"; enabled = "never"; }
  );
};
CONF

# knob|line regex|reason regex, for every knob each kernel lacks.
L_DEFRAG=$(line_of "$POL_MODERN" 'defrag = "defer\+madvise"')
L_SHMEM=$(line_of "$POL_MODERN" '^  shmem_enabled')
L_SHRINK=$(line_of "$POL_MODERN" 'shrink_underused')
L_SWAP=$(line_of "$POL_MODERN" 'max_ptes_swap')
L_SHARED=$(line_of "$POL_MODERN" 'max_ptes_shared')
L_64=$(line_of "$POL_MODERN" '"64kB"')
L_2M_EN=$(line_of "$POL_MODERN" ' enabled = "inherit"')
L_2M_SH=$(line_of "$POL_MODERN" 'shmem_enabled = "inherit"')
L_8=$(line_of "$POL_MODERN" '"8kB"')
NP='not present on this kernel'
SIZES_ABSENT=(
        "hugepages-64kB/enabled|$L_64|$NP"
        "hugepages-2048kB/enabled|$L_2M_EN|$NP"
        "hugepages-2048kB/shmem_enabled|$L_2M_SH|$NP"
        "hugepages-8kB/enabled|$L_8|$NP"
)
declare -A EXPECT
EXPECT[el7-3.10]=$(printf '%s\n' \
        "defrag|$L_DEFRAG|\"defer\\+madvise\" is not offered by this kernel \\(offers: always madvise never\\)" \
        "shmem_enabled|$L_SHMEM|$NP" \
        "shrink_underused|$L_SHRINK|$NP" \
        "khugepaged/max_ptes_swap|$L_SWAP|$NP" \
        "khugepaged/max_ptes_shared|$L_SHARED|$NP" \
        "${SIZES_ABSENT[@]}")
EXPECT[5.15]=$(printf '%s\n' "shrink_underused|$L_SHRINK|$NP" "${SIZES_ABSENT[@]}")
EXPECT[6.1]=${EXPECT[5.15]}
# 6.18 has every knob but hugepages-8kB/enabled: that directory has no enabled file.
EXPECT[6.18]="hugepages-8kB/enabled|$L_8|$NP"

for fx in "${FIXTURE_NAMES[@]}"; do
        root=$(fixture_copy "$fx")
        mapfile -t dirs < <(find "$root/kernel/mm/transparent_hugepage" -type d)

        # A policy valid everywhere: OK, not one warning, not one write.
        run "$INOTIFY_COUNT" "${dirs[@]}" -- "$THPGUARDD" -n --config "$POL_PORTABLE" --sysfs-root "$root"
        expect_rc 0 "$fx: -n with the portable policy"
        expect_out '^configuration OK$' "$fx: -n stdout"
        [ "$(inotify_total)" -eq 0 ] || fail "$fx: -n wrote to the sysfs tree"
        expect_err_empty "$fx: -n with the portable policy prints no warning; stderr"

        # Newer knobs: still OK, one warning per knob this kernel lacks.
        run "$INOTIFY_COUNT" "${dirs[@]}" -- "$THPGUARDD" --check-config --config "$POL_MODERN" --sysfs-root "$root"
        expect_rc 0 "$fx: -n with the modern policy (unsupported knobs are warnings, not errors)"
        expect_out '^configuration OK$' "$fx: -n stdout"
        [ "$(inotify_total)" -eq 0 ] || fail "$fx: -n wrote to the sysfs tree"
        n=0
        while IFS='|' read -r knob line reason; do
                [ -n "$knob" ] || continue
                n=$((n + 1))
                expect_err "^$(re "$POL_MODERN"):$line: warning: $(re "$knob"): $reason; this knob is skipped$" \
                        "$fx: warning for $knob at line $line; stderr"
        done <<<"${EXPECT[$fx]}"
        expect_err_lines "$n" "$fx: -n stderr (one warning per unsupported knob, nothing else)"
        expect_no_err 'error' "$fx: -n stderr"

        expect_fixture_unchanged "$fx" "$root"
done
echo "PASS: -n on ${FIXTURE_NAMES[*]}"
