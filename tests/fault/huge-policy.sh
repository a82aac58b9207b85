#!/bin/bash
# Fault: a huge policy file, at startup (thpguardd -n and the daemon) and as
# a reload of a running daemon:
#   10mib        a valid policy padded with comments to 10 MiB;
#   sizes100k    100,000 thp.sizes entries, one a line (1.5 MiB);
#   keys100k     100,000 unknown keys, one a line: 0.99 MB, under the 1 MiB
#                size limit, so it reaches the parser;
#   sizes-fit    55,000 distinct thp.sizes entries: as many as fit in 1 MiB.
#
# Expected: refused quickly with a clear error, and bounded memory.
# "Quickly" is a correctness bound here, not a benchmark: 30 s on a busy
# machine for what should take milliseconds; a parser that goes quadratic
# takes minutes. Memory: the peak RSS of the refusing process (wait4's
# ru_maxrss; VmHWM for the running daemon) under 64 MiB. Diagnostics are
# capped at 100 messages and "... and N more". The running daemon rejects the
# file once, keeps its last good policy (a drift is corrected) and stays
# under the same memory bound.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
real_sysfs_begin
: "${PEAK_RSS:?PEAK_RSS is not set: run this test through ctest}"
LIMIT=30
RSS_MAX_KB=$((64 * 1024))
GOOD='recheck_interval = 3600; fight_threshold = 0;
thp = { enabled = "madvise"; };'

mk() { # NAME: writes $TMP/NAME.conf, root-owned 0644
        local f=$TMP/$1.conf
        case $1 in
        10mib)
                printf '%s\n' "$GOOD" >"$f"
                # (yes dies of SIGPIPE: not in a pipeline, or pipefail would stop the test)
                head -c $((10 * 1024 * 1024)) < <(yes '# padding padding padding padding padding padding padding') >>"$f"
                echo >>"$f"
                ;;
        sizes100k)
                { echo 'thp = { enabled = "madvise"; sizes = ('
                  seq 1 99999 | sed 's/.*/{ size = "&kB"; },/'
                  echo '{ size = "100000kB"; } ); };'; } >"$f"
                ;;
        keys100k)
                seq -f 'k%.0f=1;' 0 99999 >"$f"
                ;;
        sizes-fit)
                { echo 'thp = { enabled = "madvise"; sizes = ('
                  seq 1 54999 | sed 's/.*/{size="&kB"},/'
                  echo '{size="55000kB"} ); };'; } >"$f"
                ;;
        esac
        chmod 0644 "$f"
        echo "$1: $(wc -c <"$f") bytes, $(wc -l <"$f") lines"
}

# refuse_at_startup NAME WHAT CMD...: CMD must exit 1 within LIMIT, print a
# clear, capped error naming the file, and stay under RSS_MAX_KB.
refuse_at_startup() {
        local name=$1 what=$2 rc=0 rss ms lines
        shift 2
        "$PEAK_RSS" timeout -s KILL $LIMIT "$@" >"$TMP/out" 2>"$TMP/err.all" 9>&- || rc=$?
        rss=$(awk '/^peak_rss_kb / { print $2 }' "$TMP/err.all")
        ms=$(awk '/^elapsed_ms / { print $2 }' "$TMP/err.all")
        grep -Ev '^(peak_rss_kb|elapsed_ms) ' "$TMP/err.all" >"$TMP/err" || true
        lines=$(wc -l <"$TMP/err")
        [ $rc -ne 137 ] || rss="(killed, not measured)"
        echo "$name, $what: exit $rc in $ms ms, peak RSS $rss kB, $lines lines on stderr: $(head -c 200 "$TMP/err" | head -1)"
        [ $rc -ne 137 ] || fail "$name, $what: not refused within ${LIMIT}s (killed)"
        [ $rc -eq 1 ] || { cat "$TMP/err" >&2; fail "$name, $what: exit $rc, want 1"; }
        [ -n "$rss" ] && [ "$rss" -lt $RSS_MAX_KB ] || fail "$name, $what: peak RSS ${rss:-unknown} kB, want < $RSS_MAX_KB"
        # -n prints file:line lines; the daemon logs them at level error (logfmt),
        # after its info lines (the write source).
        grep -v -m1 '^level=info ' "$TMP/err" | grep -Eq "^(level=error msg=\")?$TMP/$name.conf" ||
                fail "$name, $what: the error does not name the file"
        [ "$lines" -le 101 ] || fail "$name, $what: $lines lines of diagnostics: not capped"
        [ ! -s "$TMP/out" ] || [ "$(cat "$TMP/out")" != "configuration OK" ] || fail "$name, $what: accepted"
        grep -q 'AddressSanitizer\|runtime error' "$TMP/err" && fail "$name, $what: sanitizer report"
        return 0
}

# refuse_on_reload NAME: the running daemon rejects it once and keeps enforcing.
refuse_on_reload() {
        local name=$1 rej0 rel0 hwm
        rej0=$(event_count policy_rejected)
        rel0=$(event_count policy_reloaded)
        cp "$TMP/$name.conf" "$TMP/next.conf"
        mv "$TMP/next.conf" "$POLICY"
        kill -HUP "$DAEMON_PID"
        wait_event "$LIMIT" policy_rejected level=error policy="$POLICY"
        event_says policy_rejected "$(re "$POLICY")" || fail "$name, reload: the rejection does not name the file"
        wait_until "$LIMIT" event_count_ge $((rej0 + 1)) policy_rejected || true
        sleep 0.5
        [ "$(event_count policy_rejected)" = $((rej0 + 1)) ] || fail "$name, reload: $(($(event_count policy_rejected) - rej0)) rejections, want 1"
        [ "$(event_count policy_reloaded)" = "$rel0" ] || fail "$name, reload: the huge policy was loaded"
        thp_set enabled never
        thp_wait_for enabled madvise 5 || fail "$name, reload: the last good policy is not enforced"
        hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$DAEMON_PID/status")
        echo "$name, reload: rejected once; daemon VmHWM $hwm kB"
        [ "$hwm" -lt $RSS_MAX_KB ] || fail "$name, reload: daemon peak RSS $hwm kB, want < $RSS_MAX_KB"
        write_policy "$POLICY" "$GOOD"
        wait_until 5 event_count_ge $((rel0 + 1)) policy_reloaded || fail "$name: the good policy put back was not reloaded"
}

thp_set enabled always
write_policy "$POLICY" "$GOOD"
daemon_start
thp_wait_for enabled madvise 5 || fail "startup did not correct"
# Each policy in a subshell, so one failure does not hide the others.
FAILED=()
for name in 10mib sizes100k keys100k sizes-fit; do
        set +e
        (
                set -e
                mk $name
                refuse_at_startup $name "-n" "$THPGUARDD" -n --config "$TMP/$name.conf"
                case $name in
                10mib | sizes100k) grep -q "^$TMP/$name.conf: is [0-9]* bytes; a policy may be at most 1048576 bytes$" "$TMP/err" ||
                        fail "$name: no clear size error" ;;
                esac
                refuse_at_startup $name "daemon" "$THPGUARDD" --config "$TMP/$name.conf" --log-target=console
                if [ "$THPGUARDD_PLAIN" != "$THPGUARDD" ]; then
                        refuse_at_startup $name "-n, no sanitizers" "$THPGUARDD_PLAIN" -n --config "$TMP/$name.conf"
                fi
                refuse_on_reload $name
        )
        rc=$?
        set -e
        [ $rc -eq 0 ] || FAILED+=("$name")
done
[ ${#FAILED[@]} -eq 0 ] || fail "not refused quickly with bounded memory: ${FAILED[*]}"
daemon_stop
echo "PASS: huge policies refused quickly with bounded memory"
