#!/bin/bash
# bench-impact-smoke: `bench/impact/run --quick` prints every table, well
# formed, and puts back every THP knob it touched: after a full run, after
# Ctrl-C during the thpguardd rows and after SIGTERM during the Redis part,
# leaving none of its processes behind. It checks structure and restoration,
# never the figures.
set -euo pipefail
: "${SRCDIR:?run through ctest}" "${BUILDDIR:?run through ctest}" "${THPGUARDD:?run through ctest}"
# shellcheck source=../../tests/lib/real-sysfs.sh
. "$SRCDIR/tests/lib/real-sysfs.sh"

need redis-server
need redis-benchmark redis-tools
real_sysfs_begin # the lock on fd 9, which the benchmark is told to use
OUT=$TMP

# Values no run of the benchmark sets, so that "restored" means restored.
thp_set enabled never
thp_set defrag defer
thp_set khugepaged/scan_sleep_millisecs 12345
thp_set khugepaged/pages_to_scan 4097
thp_set khugepaged/max_ptes_none 500

snapshot() {
        local k
        for k in $(thp_writable_knobs); do
                echo "$k=$(thp_get "$k")"
        done
}
BEFORE=$(snapshot)

# The benchmark on our lock; its pid is $!. A background job starts with
# SIGINT ignored, which bash could not trap: give it the default back, as a
# terminal's Ctrl-C finds it (env --default-signal, coreutils 8.31 and
# later; without it the Ctrl-C case is sent SIGTERM instead).
if env --default-signal=INT true 2>/dev/null; then
        LAUNCH=(env --default-signal=INT) INTR=INT INTR_RC=130
else
        LAUNCH=() INTR=TERM INTR_RC=143
fi
bench() {
        THP_LOCK_FD=9 "${LAUNCH[@]}" "$SRCDIR/bench/impact/run" --quick --build "$BUILDDIR" --thpguardd "$THPGUARDD" \
                >"$OUT/out" 2>"$OUT/err" &
}

expect_restored() { # WHEN
        local now
        now=$(snapshot)
        [ "$now" = "$BEFORE" ] || {
                diff <(echo "$BEFORE") <(echo "$now") >&2 || true
                fail "$1: knobs not restored (diff: before, after)"
        }
}

expect_nothing_left() { # WHEN PID: no process of ours (a child of PID) survives it
        local p
        for p in $(pgrep -f "$BUILDDIR/bench/impact/thpguard-impact|$THPGUARDD --config /run/thpguard-impact" || true); do
                fail "$1: left running: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
        done
        if [ -n "${REDIS:-}" ] && kill -0 "$REDIS" 2>/dev/null; then
                fail "$1: left redis-server $REDIS running"
        fi
        ls -d /run/thpguard-impact.* /dev/shm/thpguard-impact-redis.* /var/tmp/thpguard-impact-redis.* 2>/dev/null &&
                fail "$1: left its directories"
        return 0
}

# The rows of the table whose header row starts with HEADER: its data rows, one per line.
table() {
        awk -v h="$1" 'index($0, h) == 1 { on = 1; getline; next } on && /^\|/ { print; next } on { exit }' "$OUT/out"
}

# Each row of TABLE has N cells and each cell I (1-based) matches REGEX[I]; "" matches anything.
check_rows() { # NAME N_ROWS REGEX...
        local name=$1 want=$2 rows row i
        shift 2
        local -a re=("$@") cells
        rows=$(table "$name")
        [ "$(grep -c . <<<"$rows")" = "$want" ] || { cat "$OUT/out" >&2; fail "table '$name': want $want rows, got: $rows"; }
        while IFS= read -r row; do
                row=${row#| }
                row=${row% |}
                IFS='|' read -ra cells <<<"$row"
                [ "${#cells[@]}" = "${#re[@]}" ] || fail "table '$name': ${#cells[@]} cells, want ${#re[@]}: $row"
                for i in "${!re[@]}"; do
                        cells[i]=$(sed 's/^ *//; s/ *$//' <<<"${cells[i]}")
                        [[ ${cells[i]} =~ ^${re[i]}$ ]] || fail "table '$name': cell $((i + 1)) '${cells[i]}' is not ${re[i]}: $row"
                done
        done <<<"$rows"
}

# --- a whole run ------------------------------------------------------------
bench
pid=$!
rc=0
wait "$pid" || rc=$?
[ "$rc" = 0 ] || { cat "$OUT/out" "$OUT/err" >&2; fail "the quick run exited $rc"; }
expect_restored "after a full run"
expect_nothing_left "after a full run"

for line in '^- date: [0-9]{4}-[0-9]{2}-[0-9]{2} ' '^- kernel: [^ ]+ ' '^- cpu: .+, [0-9]+ cores$' \
        '^- memory: [0-9.]+ GiB$' '^## Go-like heap$' '^## Copy-on-write after fork$' '^## Redis$' \
        '^- load average at the end: ' '^knobs restored: all [0-9]+ read their saved values$'; do
        grep -Eq "$line" "$OUT/out" || { cat "$OUT/out" >&2; fail "no line matches $line"; }
done
MIB='[0-9]+\.[0-9]'
NUM='[0-9]+(\.[0-9]+)?'
DUR="[0-9.]+ (µs|ms|s) of [0-9.]+ (µs|ms|s)"
DAEMON='[1-9][0-9]* corrections, [0-9]+ fight warnings, [0-9]+ "goes on", CPU [0-9.]+ ms'
check_rows "| scenario |" 6 '.+' "$MIB" "$MIB" "$MIB" "$MIB" "$MIB" '([0-9]+|-)' "$DUR" "(-|$DAEMON)"
for label in 'enabled=always' 'enabled=always, max_ptes_none=0' 'enabled=madvise' \
        'thpguardd \(madvise\), writer of always every 5 s' 'thpguardd \(madvise\), writer of always every 0.1 s' \
        'thpguardd \(madvise, fight_threshold = 0\), writer of always every 0.1 s'; do
        table "| scenario |" | grep -Eq "^\| $label \| [0-9]" || fail "no heap row '$label'"
done
table "| scenario |" | grep -E '^\| thpguardd' | grep -Eqv "$DAEMON" && fail "a thpguardd row has no daemon figures"
check_rows "| writes |" 1 '[0-9]+' "$MIB" "$MIB" "$NUM" "$NUM"
check_rows "| enabled | test |" 6 '(always|madvise|never)' '(SET|GET)' "$NUM" "$NUM" "$NUM" "$NUM"
check_rows "| enabled | RSS loaded |" 3 '(always|madvise|never)' "$MIB" "$MIB" "$MIB" "$MIB" "$MIB" "$MIB" \
        '[0-9]+' "$NUM" '(-1|[0-9]+)' "$MIB"
echo "ok: full quick run, tables well formed, knobs restored"

# --- Ctrl-C while thpguardd and a writer run --------------------------------
bench
pid=$!
for ((i = 0; i < 3000; i++)); do
        grep -q '^| enabled=madvise |' "$OUT/out" && pgrep -P "$pid" -f 'writer always' >/dev/null && break
        kill -0 "$pid" 2>/dev/null || fail "the run ended before its thpguardd rows: $(cat "$OUT/out" "$OUT/err")"
        sleep 0.01
done
kill -"$INTR" "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = "$INTR_RC" ] || fail "interrupted run (SIG$INTR) exited $rc, want $INTR_RC: $(cat "$OUT/err")"
grep -q '^knobs restored: all' "$OUT/out" || fail "interrupted run did not confirm restoration: $(cat "$OUT/err")"
expect_restored "after Ctrl-C with thpguardd running"
expect_nothing_left "after Ctrl-C with thpguardd running"
echo "ok: SIG$INTR during the thpguardd rows"

# --- SIGTERM while Redis runs -----------------------------------------------
bench
pid=$!
REDIS=
for ((i = 0; i < 6000; i++)); do
        REDIS=$(pgrep -P "$pid" redis-server || true)
        [ -n "$REDIS" ] && break
        kill -0 "$pid" 2>/dev/null || fail "the run ended before starting Redis: $(cat "$OUT/out" "$OUT/err")"
        sleep 0.01
done
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 143 ] || fail "terminated run exited $rc, want 143: $(cat "$OUT/err")"
grep -q '^knobs restored: all' "$OUT/out" || fail "terminated run did not confirm restoration: $(cat "$OUT/err")"
expect_restored "after SIGTERM with Redis running"
expect_nothing_left "after SIGTERM with Redis running"
echo "ok: SIGTERM during the Redis part"
echo "PASS"
