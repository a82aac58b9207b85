#!/bin/bash
# --verify against each fixture kernel, as a table and as JSON. The rows are
# checked against what the fixture files hold, read independently here: one row
# per managed knob in policy order, "ok" / "drift" / "unsupported", and the
# exit code 0 (all ok or unsupported) or 1 (any drift). --verify never writes.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# Debian's python3 (json is in its standard library); a pyenv shim on PATH
# costs a second per start.
PYTHON=$(command -v /usr/bin/python3 python3 | head -n1) || skip "python3 is needed to parse --verify --json"

# knob=desired, in the order of the policy below.
KNOBS=(
        enabled=@EN@ defrag=@DF@ shmem_enabled=never use_zero_page=1 shrink_underused=1
        khugepaged/defrag=@KD@ khugepaged/pages_to_scan=4096 khugepaged/scan_sleep_millisecs=10000
        khugepaged/alloc_sleep_millisecs=60000 khugepaged/max_ptes_none=511
        khugepaged/max_ptes_swap=64 khugepaged/max_ptes_shared=256
        hugepages-64kB/enabled=never hugepages-64kB/shmem_enabled=never
        hugepages-2048kB/enabled=inherit hugepages-2048kB/shmem_enabled=inherit
        hugepages-8kB/enabled=never hugepages-8kB/shmem_enabled=never
)
TEMPLATE='mode = "enforce";
thp = {
  enabled = "@EN@";
  defrag = "@DF@";
  shmem_enabled = "never";
  use_zero_page = true;
  shrink_underused = true;
  khugepaged = {
    defrag = @KDB@;
    pages_to_scan = 4096;
    scan_sleep_millisecs = 10000;
    alloc_sleep_millisecs = 60000;
    max_ptes_none = 511;
    max_ptes_swap = 64;
    max_ptes_shared = 256;
  };
  sizes = (
    { size = "64kB"; enabled = "never"; shmem_enabled = "never"; },
    { size = "2048kB"; enabled = "inherit"; shmem_enabled = "inherit"; },
    { size = "8kB"; enabled = "never"; shmem_enabled = "never"; }
  );
};'

# make_policy FILE EN DF KD(0|1)
make_policy() {
        local kdb=false
        [ "$4" = 1 ] && kdb=true
        sed -e "s/@EN@/$2/" -e "s/@DF@/$3/" -e "s/@KDB@/$kdb/" <<<"$TEMPLATE" | write_policy "$1"
}

# The knob=desired list for given EN DF KD.
knob_list() {
        local k
        for k in "${KNOBS[@]}"; do
                k=${k//@EN@/$1}
                k=${k//@DF@/$2}
                echo "${k//@KD@/$3}"
        done
}

# Checks the --verify table in $OUT_FILE against the fixture at $1, for the
# knob=desired lines on stdin. Prints the exit code --verify must have had.
check_table() {
        local root=$1 thp=$1/kernel/mm/transparent_hugepage kv knob want actual i=0 drift=0 row
        local -a lines
        mapfile -t lines <"$OUT_FILE"
        [[ ${lines[0]:-} =~ ^KNOB\ +DESIRED\ +ACTUAL\ +STATE$ ]] || fail "--verify: no KNOB DESIRED ACTUAL STATE header"
        while read -r kv; do
                knob=${kv%%=*}
                want=${kv#*=}
                i=$((i + 1))
                if [ ! -e "$thp/$knob" ]; then
                        row="^$(re "$knob") +$(re "$want") +- +unsupported \\(not present on this kernel\\)$"
                else
                        actual=$(fx_get "$root" "$knob")
                        if [ "$actual" = "$want" ]; then
                                row="^$(re "$knob") +$(re "$want") +$(re "$actual") +ok$"
                        else
                                row="^$(re "$knob") +$(re "$want") +$(re "$actual") +drift$"
                                drift=1
                        fi
                fi
                # Rows come in policy order.
                [[ ${lines[i]:-} =~ $row ]] || fail "--verify row $i: expected /$row/ (fixture $root)"
        done
        [ "${#lines[@]}" -eq $((i + 1)) ] || fail "--verify table has ${#lines[@]} lines, expected $((i + 1)) (header + one row per managed knob)"
        echo "$drift"
}

check_json() { # root policy < knob=desired lines (python's own stdin is its script)
        WANTED=$(cat) "$PYTHON" - "$OUT_FILE" "$1" "$2" <<'PY'
import json, os, re, sys

doc_file, root, policy = sys.argv[1:4]
wanted = [l.split("=", 1) for l in os.environ["WANTED"].split()]
thp = os.path.join(root, "kernel/mm/transparent_hugepage")
errors = []

def check(cond, msg):
    if not cond:
        errors.append(msg)

with open(doc_file) as f:
    doc = json.load(f)  # raises on anything that is not one JSON document

check(set(doc) == {"config", "sysfs_root", "mode", "compliant", "knobs", "write_source", "write_source_detail"},
      f"top-level keys {sorted(doc)}")
check(doc["write_source"] in ("bpf", "fanotify", "none"), f"write_source {doc['write_source']!r}")
check(doc.get("config") == policy, f"config {doc.get('config')!r} != {policy!r}")
check(doc.get("sysfs_root") == root, f"sysfs_root {doc.get('sysfs_root')!r} != {root!r}")
check(doc.get("mode") == "enforce", f"mode {doc.get('mode')!r}")
knobs = doc.get("knobs", [])
check(isinstance(knobs, list) and len(knobs) == len(wanted), f"{len(knobs)} knobs, expected {len(wanted)}")
drift = False
for row, (knob, desired) in zip(knobs, wanted):
    path = os.path.join(thp, knob)
    if not os.path.exists(path):
        exp = {"knob": knob, "desired": desired, "actual": None, "state": "unsupported",
               "reason": "not present on this kernel"}
    else:
        text = open(path).read()
        m = re.search(r"\[([^]]+)\]", text)
        actual = m.group(1) if m else text.strip()
        offered = text.replace("[", "").replace("]", "").split()
        if m and desired not in offered:
            exp = {"knob": knob, "desired": desired, "actual": actual, "state": "unsupported"}
        else:
            exp = {"knob": knob, "desired": desired, "actual": actual,
                   "state": "ok" if actual == desired else "drift"}
            drift |= actual != desired
    if exp["state"] == "unsupported" and "reason" not in exp:
        check("not offered" in row.get("reason", ""), f"{knob}: reason {row.get('reason')!r}")
        row = {k: v for k, v in row.items() if k != "reason"}
    check(row == exp, f"{knob}: got {row}, expected {exp}")
check(doc.get("compliant") is (not drift), f"compliant {doc.get('compliant')!r} with drift={drift}")
if errors:
    print("\n".join(errors), file=sys.stderr)
    sys.exit(1)
print(1 if drift else 0)
PY
}

declare -A EN=([el7-3.10]=always [5.15]=madvise [6.1]=always [6.18]=madvise)
declare -A DF=([el7-3.10]=always [5.15]=madvise [6.1]=madvise [6.18]=madvise)

for fx in "${FIXTURE_NAMES[@]}"; do
        root=$(fixture_copy "$fx")
        mapfile -t dirs < <(find "$root/kernel/mm/transparent_hugepage" -type d)

        # Compliant where present, unsupported elsewhere: exit 0.
        pol=$TMP/compliant-$fx.conf
        make_policy "$pol" "${EN[$fx]}" "${DF[$fx]}" 1
        run "$THPGUARDD" --verify --config "$pol" --sysfs-root "$root"
        expect_rc 0 "$fx: --verify of a compliant policy"
        expect_err_empty "$fx: --verify stderr"
        d=$(knob_list "${EN[$fx]}" "${DF[$fx]}" 1 | check_table "$root")
        [ "$d" = 0 ] || fail "$fx: test bug: the compliant policy drifts"
        expect_no_out ' drift$' "$fx: --verify of a compliant policy"

        # enabled, defrag and khugepaged/defrag drift: exit 1, named in the rows.
        pol=$TMP/drift-$fx.conf
        make_policy "$pol" never never 0
        run "$INOTIFY_COUNT" "${dirs[@]}" -- "$THPGUARDD" --verify --config "$pol" --sysfs-root "$root"
        expect_rc 1 "$fx: --verify with drift"
        [ "$(inotify_total)" -eq 0 ] || fail "$fx: --verify wrote to the sysfs tree"
        sed -i '/^total [0-9]*$/d' "$OUT_FILE"
        expect_out "^enabled +never +${EN[$fx]} +drift$" "$fx: --verify"
        expect_out "^defrag +never +${DF[$fx]} +drift$" "$fx: --verify"
        expect_out "^khugepaged/defrag +0 +1 +drift$" "$fx: --verify"
        d=$(knob_list never never 0 | check_table "$root")
        [ "$d" = 1 ] || fail "$fx: test bug: the drifting policy does not drift"

        # The same as JSON, parsed back with a JSON library.
        for kind in compliant drift; do
                pol=$TMP/$kind-$fx.conf
                if [ $kind = compliant ]; then
                        list=$(knob_list "${EN[$fx]}" "${DF[$fx]}" 1)
                        want_rc=0
                else
                        list=$(knob_list never never 0)
                        want_rc=1
                fi
                run "$THPGUARDD" --verify --json --config "$pol" --sysfs-root "$root"
                expect_rc "$want_rc" "$fx: --verify --json ($kind)"
                expect_err_empty "$fx: --verify --json stderr"
                d=$(check_json "$root" "$pol" <<<"$list" 2>"$TMP/py.err") ||
                        fail "$fx: --verify --json ($kind): $(cat "$TMP/py.err")"
                [ "$d" = "$want_rc" ] || fail "$fx: --verify --json ($kind): exit $want_rc but drift=$d in the document"
        done

        # defer+madvise on a kernel without it: unsupported, not drift, in both forms.
        pol=$TMP/defer-$fx.conf
        write_policy "$pol" <<<'thp = { defrag = "defer+madvise"; };'
        run "$THPGUARDD" --verify --config "$pol" --sysfs-root "$root"
        if [ "$fx" = el7-3.10 ]; then
                expect_rc 0 "$fx: --verify (an unsupported value is not drift)"
                expect_out '^defrag +defer\+madvise +always +unsupported \("defer\+madvise" is not offered by this kernel \(offers: always madvise never\)\)$'
        else
                expect_rc 1 "$fx: --verify defer+madvise"
                expect_out '^defrag +defer\+madvise +madvise +drift$'
        fi
        run "$THPGUARDD" --verify --json --config "$pol" --sysfs-root "$root"
        d=$(check_json "$root" "$pol" <<<"defrag=defer+madvise" 2>"$TMP/py.err") ||
                fail "$fx: --verify --json defer+madvise: $(cat "$TMP/py.err")"
        expect_rc "$d" "$fx: --verify --json defer+madvise"

        expect_fixture_unchanged "$fx" "$root"
done
echo "PASS: --verify and --verify --json on ${FIXTURE_NAMES[*]}"
