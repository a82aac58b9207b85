# What the exec modes do to memory, on the real kernel with enabled=always:
# a control run gets huge pages in a plain region; under --thp=advised-only
# only the MADV_HUGEPAGE region gets them; under --thp=disable none does.
. "$(dirname "$0")/lib.sh"

C=$THPGUARDCTL

rc=0
"$C" exec --thp=advised-only -- true 2>"$ERR_FILE" || rc=$?
[ "$rc" = 125 ] && skip "this kernel refuses PR_THP_DISABLE_EXCEPT_ADVISED: $(cat "$ERR_FILE")"

real_sysfs_begin
thp_set enabled always
[ -f "$THP/hugepages-2048kB/enabled" ] && thp_set hugepages-2048kB/enabled inherit

# region_ahp PID advised|plain: AnonHugePages of that region, from thpguardctl pid's smaps view.
smaps_json() { "$C" pid "$1" --json --top 16 >"$TMP/pid.json" || fail "pid $1"; }

start_hog 32 both
smaps_json "$HOG_PID"
python3 - "$TMP/pid.json" <<'PY' || skip "control run: the kernel gave no huge page to a plain region with enabled=always"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if any(not m["madv_hugepage"] and m["anon_huge_pages_kb"] > 0 for m in d["smaps"]["top"]) else 1)
PY
kill "$HOG_PID"

start_hog 32 both "$C" exec --thp=advised-only --
smaps_json "$HOG_PID"
json_check "$TMP/pid.json" \
        "any(m['madv_hugepage'] and m['anon_huge_pages_kb'] > 0 for m in d['smaps']['top'])" \
        "all(m['madv_hugepage'] for m in d['smaps']['top'])" \
        "d['thp_enabled'] is True"
kill "$HOG_PID"

start_hog 32 both "$C" exec --thp=disable --
smaps_json "$HOG_PID"
json_check "$TMP/pid.json" "d['smaps']['anon_huge_pages_kb'] == 0" "d['thp_enabled'] is False" \
        "d['verdict'].startswith('THP disabled for this process')"
echo PASS
