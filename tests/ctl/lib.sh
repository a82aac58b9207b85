# shellcheck shell=bash
# Shared by the thpguardctl shell tests.
set -euo pipefail

: "${THPGUARDCTL:?}" "${THP_HELPER:?}" "${CTL_FIXTURES:?}" "${FIXTURES:?}"

# shellcheck source=../lib/safe-tmp.sh
. "${SRCDIR:?}/tests/lib/safe-tmp.sh"
# Policies go in $TMP, which may be noexec (/run): programs go in $EXE_TMP.
TMP=$(safe_mktemp thpguard-ctl)
EXE_TMP=
CTL_PIDS=()
ctl_cleanup() {
        local p
        for p in "${CTL_PIDS[@]}"; do
                kill "$p" 2>/dev/null || true
                wait "$p" 2>/dev/null || true
        done
        rm -rf "$TMP" ${EXE_TMP:+"$EXE_TMP"}
}
trap ctl_cleanup EXIT

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

skip() {
        echo "SKIP: $*"
        exit 77
}

# expect_rc WANT CMD...: runs CMD, keeps stdout/stderr in $TMP/out and $TMP/err.
expect_rc() {
        local want=$1 rc=0
        shift
        "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
        if [ "$rc" != "$want" ]; then
                echo "--- stdout"; cat "$TMP/out"; echo "--- stderr"; cat "$TMP/err"
                fail "'$*' exited $rc, wanted $want"
        fi
}

# json_check FILE PYTHON-EXPR...: each expression, with d the parsed document, must be true.
json_check() {
        local file=$1
        shift
        python3 - "$file" "$@" <<'PY'
import json, sys
with open(sys.argv[1], encoding="utf-8") as f:
    d = json.load(f)
def top_pids(d): return [p["pid"] for p in d["processes"]["top"]]
def knob(d, path): return next(k for k in d["knobs"] if k["knob"] == path)
for expr in sys.argv[2:]:
    if not eval(expr):
        print("json check failed: " + expr, file=sys.stderr)
        print(json.dumps(d, indent=1)[:6000], file=sys.stderr)
        sys.exit(1)
PY
}

# start_hog MIB MODE [PREFIX...]: runs thp-helper hog in the background; sets HOG_PID.
start_hog() {
        local mib=$1 mode=$2 i out
        shift 2
        out="$TMP/hog.$RANDOM"
        "$@" "$THP_HELPER" hog "$mib" "$mode" >"$out" 9>&- &
        HOG_PID=$!
        CTL_PIDS+=("$HOG_PID")
        for ((i = 0; i < 500; i++)); do
                grep -q '^ready$' "$out" 2>/dev/null && return 0
                kill -0 "$HOG_PID" 2>/dev/null || fail "hog exited early: $(cat "$out")"
                sleep 0.02
        done
        fail "hog did not get ready in 10 s"
}

anon_huge_kb() {
        awk '/^AnonHugePages:/ { print $2 }' "/proc/$1/smaps_rollup"
}

# real_sysfs_begin (tests/lib/real-sysfs.sh, sourced at top level: it declares
# globals) replaces the EXIT trap; chain ours in front so the helpers are gone
# before the knobs are put back.
ctl_real_sysfs_begin() {
        real_sysfs_begin
        trap 'ctl_cleanup; real_sysfs_restore' EXIT
}
