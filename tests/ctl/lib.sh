# shellcheck shell=bash
# What the thpguardctl tests share beyond tests/lib (which this brings:
# test.sh, real-sysfs.sh, policy.sh). $TMP may be noexec (/run): a test
# puts programs in a directory of its own.
set -euo pipefail

# shellcheck source=../lib/real-sysfs.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/real-sysfs.sh"
# shellcheck source=../lib/policy.sh
. "$SRCDIR/tests/lib/policy.sh"

: "${THPGUARDCTL:?}" "${THP_HELPER:?}" "${CTL_FIXTURES:?}" "${FIXTURES:?}"

# stop_on_exit PID: the process is terminated at exit, before the knobs are put back.
stop_on_exit() {
        on_exit "terminate $1"
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

hog_ready_or_gone() {
        grep -q '^ready$' "$1" 2>/dev/null || ! kill -0 "$HOG_PID" 2>/dev/null
}

# start_hog MIB MODE [PREFIX...]: runs thp-helper hog in the background (stopped at exit); sets HOG_PID once it is ready.
start_hog() {
        local mib=$1 mode=$2 out
        shift 2
        out="$TMP/hog.$RANDOM"
        "$@" "$THP_HELPER" hog "$mib" "$mode" >"$out" 9>&- &
        HOG_PID=$!
        stop_on_exit "$HOG_PID"
        wait_until 10 hog_ready_or_gone "$out" || fail "hog did not get ready in 10 s"
        grep -q '^ready$' "$out" || fail "hog exited early: $(cat "$out")"
}

# anon_huge_kb PID: the process's AnonHugePages in kB (smaps_rollup).
anon_huge_kb() {
        awk '/^AnonHugePages:/ { print $2 }' "/proc/$1/smaps_rollup"
}
