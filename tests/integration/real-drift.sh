#!/bin/bash
# Real sysfs: drive drift and correct it.
#   1. Write foreign values (enabled=always, khugepaged/defrag=1, and
#      hugepages-64kB/enabled=always where the kernel has it).
#   2. --verify exits 1 and names each drifting knob; it writes nothing.
#   3. --once prints "knob: observed -> desired" for each, exits 0, the
#      values read back, and it wrote exactly the drifting knobs (not defrag,
#      which the policy manages but which already holds its value).
#   4. A second --once writes nothing at all (inotify total 0), prints
#      nothing, exits 0; --verify then exits 0.
# real_sysfs_begin saves every knob and restores it on exit.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
real_sysfs_begin
mapfile -t dirs < <(thp_watch_dirs)

for k in enabled defrag khugepaged/defrag; do
        [ -f "$THP/$k" ] || skip "this kernel has no $k"
done
SIZES=""
have64=0
if [ -f "$THP/hugepages-64kB/enabled" ]; then
        have64=1
        SIZES='sizes = ( { size = "64kB"; enabled = "never"; } );'
fi
P=$TMP/policy.conf
write_policy "$P" <<CONF
mode = "enforce";
thp = {
  enabled = "madvise";
  defrag = "madvise";
  khugepaged = {
    defrag = false;
  };
  $SIZES
};
CONF

# 1. Foreign values; defrag already as the policy wants it.
thp_set defrag madvise
thp_set enabled always
thp_set khugepaged/defrag 1
[ $have64 = 0 ] || thp_set hugepages-64kB/enabled always
[ "$(thp_get enabled)" = always ] || fail "could not set enabled=always on the real sysfs"
ndrift=$((2 + have64))

# 2. --verify names the drift and writes nothing.
run "$INOTIFY_COUNT" "${dirs[@]}" -- "$THPGUARDD" --verify --config "$P"
expect_rc 1 "--verify with drift on the real sysfs"
[ "$(inotify_total)" -eq 0 ] || fail "--verify wrote to the real sysfs"
expect_out '^enabled +madvise +always +drift$' "--verify"
expect_out '^khugepaged/defrag +0 +1 +drift$' "--verify"
expect_out '^defrag +madvise +madvise +ok$' "--verify"
[ $have64 = 0 ] || expect_out '^hugepages-64kB/enabled +never +always +drift$' "--verify"
expect_err_empty "--verify stderr"

run "$THPGUARDD" --verify --json --config "$P"
expect_rc 1 "--verify --json with drift"
PY=$(command -v /usr/bin/python3 python3 | head -n1) || true
if [ -n "$PY" ]; then
        "$PY" - "$OUT_FILE" "$ndrift" <<'PYEOF' || fail "--verify --json does not report the drift: $(out)"
import json, sys
doc = json.load(open(sys.argv[1]))
states = {k["knob"]: (k["desired"], k["actual"], k["state"]) for k in doc["knobs"]}
assert doc["compliant"] is False and doc["sysfs_root"] == "/sys", doc
assert states["enabled"] == ("madvise", "always", "drift"), states
assert states["khugepaged/defrag"] == ("0", "1", "drift"), states
assert states["defrag"] == ("madvise", "madvise", "ok"), states
assert sum(s[2] == "drift" for s in states.values()) == int(sys.argv[2]), states
PYEOF
fi

# 3. --once corrects exactly the drifting knobs.
run "$INOTIFY_COUNT" "${dirs[@]}" -- "$THPGUARDD" --once --config "$P"
expect_rc 0 "--once on the real sysfs"
expect_err_empty "--once stderr"
want="enabled: always -> madvise
khugepaged/defrag: 1 -> 0"
[ $have64 = 0 ] || want+="
hugepages-64kB/enabled: always -> never"
[ "$(grep -v '^modified \|^total ' "$OUT_FILE")" = "$want" ] || fail "--once printed something else than:
$want"
[ "$(inotify_total)" -eq "$ndrift" ] || fail "--once made $(inotify_total) writes, expected $ndrift (one per drifting knob; never rewrite an equal value)"
[ "$(thp_get enabled)" = madvise ] || fail "enabled reads $(thp_get enabled) after --once"
[ "$(thp_get khugepaged/defrag)" = 0 ] || fail "khugepaged/defrag reads $(thp_get khugepaged/defrag) after --once"
[ "$(thp_get defrag)" = madvise ] || fail "defrag reads $(thp_get defrag) after --once"
[ $have64 = 0 ] || [ "$(thp_get hugepages-64kB/enabled)" = never ] || fail "hugepages-64kB/enabled reads $(thp_get hugepages-64kB/enabled)"

# 4. Nothing left to do: no write at all, no output.
run "$INOTIFY_COUNT" "${dirs[@]}" -- "$THPGUARDD" --once --config "$P"
expect_rc 0 "a second --once"
[ "$(out)" = "total 0" ] || fail "a second --once wrote to the real sysfs or printed something"
expect_err_empty "a second --once: stderr"

run "$THPGUARDD" --verify --config "$P"
expect_rc 0 "--verify after --once"
expect_no_out ' (drift|unsupported|error)' "--verify after --once"
expect_out '^enabled +madvise +madvise +ok$' "--verify after --once"

echo "PASS: real sysfs drift is seen, corrected once, and left alone after"
