#!/bin/bash
# Symlinks and special files under --sysfs-root are not
# followed or opened as root. Whoever can write to a fake root (a fixture
# tree, a pod's /host/sys that is not what it claims) must not make
# thpguardd write into an arbitrary file or hang on a FIFO.
#
# On a private copy of the 6.18 fixture tree, each of
#   1. a symlink at khugepaged/pages_to_scan to a file outside the root,
#   2. khugepaged/ itself a symlink to a copy outside the root,
#   3. a FIFO at khugepaged/pages_to_scan,
#   4. a character device (1,3: /dev/null's) at khugepaged/pages_to_scan
# is refused by --once, --verify and -n with one line naming the knob and
# why; nothing is written through it; use_zero_page (a digit, so a write
# sticks in a fixture file) is corrected beside it, so the run is no
# accident. Then the daemon on cases 1 and 3 together: each refusal logged
# once, use_zero_page corrected at startup and after a drift, the target
# untouched. Last, the default root /sys must be a sysfs: a tmpfs mounted
# over /sys in a private mount namespace, with the fixture tree copied in,
# is refused.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
fixture_on_tmpfs
K=$T/khugepaged
write_policy "$POLICY" 'recheck_interval = 1; fight_threshold = 0;
thp = { use_zero_page = false; khugepaged = { pages_to_scan = 2048; defrag = false; }; };'
[ "$(cat "$T/use_zero_page")" = 1 ] && [ "$(cat "$K/pages_to_scan")" = 4096 ] && [ "$(cat "$K/defrag")" = 1 ] ||
        fail "the 6.18 fixture changed: use_zero_page 1, khugepaged/pages_to_scan 4096 and defrag 1 expected"
PRISTINE=$TMP/pristine-khugepaged
cp -a "$K" "$PRISTINE"
# Each case starts from the fixture's khugepaged/.
reset() {
        rm -rf "$K"
        cp -a "$PRISTINE" "$K"
}

SYMLINK='a symbolic link on the way, not followed'
SPECIAL='not a regular file \(a FIFO, socket or device node\), not opened'
OUT=$TMP/out
ERR=$TMP/err

# cli ARGS...: thpguardd on the fixture root; a FIFO that blocked it would
# be a hang, so it gets 20 s. Status in $RC.
cli() {
        RC=0
        timeout 20 "$THPGUARDD" --config "$POLICY" --sysfs-root "$ROOT" "$@" >"$OUT" 2>"$ERR" 9>&- || RC=$?
        [ "$RC" != 124 ] || fail "thpguardd $* hung (killed after 20 s)"
}
show() {
        echo "---- stdout:"
        cat "$OUT"
        echo "---- stderr:"
        cat "$ERR"
        echo "----"
} >&2
expect() { # FILE REGEX WHAT
        grep -Eq -- "$2" "$1" || {
                show
                fail "$3: no line matching /$2/"
        }
}

# refused WHY KNOB...: every entry point refuses each KNOB, and only those.
refused() {
        local why=$1 k
        shift
        echo 1 >"$T/use_zero_page"
        cli --once
        [ "$RC" = 2 ] || { show; fail "--once: exit $RC, expected 2 (an error: a knob refused)"; }
        for k in "$@"; do expect "$ERR" "^thpguardd: $k: cannot read: $why$" "--once"; done
        [ "$(wc -l <"$ERR")" = $# ] || { show; fail "--once: more stderr lines than refused knobs ($#)"; }
        expect "$OUT" '^use_zero_page: 1 -> 0$' "--once (the positive control)"
        [ "$(cat "$T/use_zero_page")" = 0 ] || fail "--once did not correct use_zero_page"

        cli --verify
        [ "$RC" = 2 ] || { show; fail "--verify: exit $RC, expected 2 (error)"; }
        for k in "$@"; do
                expect "$OUT" "^$k +[0-9]+ +- +error \\(cannot read: $why\\)$" "--verify"
        done
        expect "$OUT" '^use_zero_page +0 +0 +ok$' "--verify"

        cli -n
        [ "$RC" = 0 ] || { show; fail "-n: exit $RC, expected 0 (the policy is valid)"; }
        for k in "$@"; do
                expect "$ERR" "^$POLICY:[0-9]+: warning: $k: cannot read: $why; this knob is skipped$" "-n"
        done
}

# 1. A symlink at the knob, to a file outside the root.
TARGET=$TMP/target
echo 100 >"$TARGET"
rm "$K/pages_to_scan"
ln -s "$TARGET" "$K/pages_to_scan"
refused "$SYMLINK" khugepaged/pages_to_scan
[ "$(cat "$TARGET")" = 100 ] || fail "the symlink's target was written: $(cat "$TARGET")"

# 2. The directory a symlink to a copy outside the root.
reset
OUTSIDE=$TMP/outside-khugepaged
mv "$K" "$OUTSIDE"
ln -s "$OUTSIDE" "$K"
refused "$SYMLINK" khugepaged/pages_to_scan khugepaged/defrag
diff -r "$PRISTINE" "$OUTSIDE" || fail "a file behind the symlinked directory was written"
rm "$K"

# 3. A FIFO (no writer: a blocking open would hang).
reset
rm "$K/pages_to_scan"
mkfifo "$K/pages_to_scan"
refused "$SPECIAL" khugepaged/pages_to_scan

# 4. A device node.
reset
rm "$K/pages_to_scan"
if mknod "$K/pages_to_scan" c 1 3 2>/dev/null; then
        refused "$SPECIAL" khugepaged/pages_to_scan
else
        echo "no CAP_MKNOD here: the device node case is left out"
fi

# 5. The daemon, with a symlinked pages_to_scan and a FIFO at defrag.
reset
rm "$K/pages_to_scan" "$K/defrag"
ln -s "$TARGET" "$K/pages_to_scan"
mkfifo "$K/defrag"
echo 1 >"$T/use_zero_page"
daemon_start_cmd "$THPGUARDD" --config "$POLICY" --sysfs-root "$ROOT" --log-target=console
wait_log "level=warn msg=\"khugepaged/pages_to_scan is error: cannot read: $SYMLINK; skipping it\"" 5
wait_log "level=warn msg=\"khugepaged/defrag is error: cannot read: $SPECIAL; skipping it\"" 5
wait_event 5 corrected knob=use_zero_page observed=1 desired=0 trigger=startup
echo 1 >"$T/use_zero_page"
wait_until 5 event_count_ge 2 corrected knob=use_zero_page observed=1 desired=0 ||
        { cat "$TMP/daemon.log"; fail "use_zero_page was not corrected after startup"; }
# Two rechecks: the refusals are not logged again.
sleep 2.5
kill -0 "$DAEMON_PID" || fail "the daemon died"
[ "$(log_count 'khugepaged/pages_to_scan is error')" = 1 ] || fail "the symlink's refusal was logged more than once"
[ "$(log_count 'khugepaged/defrag is error')" = 1 ] || fail "the FIFO's refusal was logged more than once"
daemon_stop
[ "$(cat "$TARGET")" = 100 ] || fail "the daemon wrote the symlink's target: $(cat "$TARGET")"
[ "$(log_count 'AddressSanitizer|runtime error')" = 0 ] || fail "sanitizer report"
reset

# 6. The default root must be a sysfs.
if unshare -m --propagation private true 2>/dev/null; then
        RC=0
        unshare -m --propagation private sh -c '
                mount -t tmpfs thpguard-fake-sys /sys && cp -a "$1/." /sys/ &&
                exec timeout 20 "$2" --config "$3" --verify' _ "$ROOT" "$THPGUARDD" "$POLICY" >"$OUT" 2>"$ERR" 9>&- || RC=$?
        [ "$RC" = 2 ] || { show; fail "--verify on a tmpfs at /sys: exit $RC, expected 2"; }
        expect "$ERR" '^thpguardd: --sysfs-root /sys: .*not a sysfs mount' "--verify on a tmpfs at /sys"
        # The same tree named by another path is a fixture: accepted.
        cli --verify
        [ "$RC" = 1 ] || { show; fail "--verify on the fixture root: exit $RC, expected 1 (drift)"; }
else
        echo "no private mount namespace here: the /sys magic case is left out"
fi
echo "PASS: symlinks, FIFOs and device nodes under the root are refused, and /sys must be a sysfs"
