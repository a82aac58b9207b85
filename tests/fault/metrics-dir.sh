#!/bin/bash
# The metrics file's directory, as a running daemon sees it.
# Whoever owns a parent of the metrics path (here nobody, as the prometheus
# user owns /var/lib/prometheus on Debian) must not steer the root daemon's
# write into another directory, nor have it write into a directory they
# own. Each refusal is logged once, the daemon keeps enforcing, and it writes
# again once the directory is fixed.
#
# On a fixture tree (tmpfs), recheck every second (each one rewrites the
# metrics file), $P owned by nobody, the metrics directory $P/metrics root's:
#   1. root's 0755 directory in nobody's directory: written;
#   2. nobody swaps $P/metrics for a symlink to $ELSEWHERE (root's, 0755):
#      refused once, nothing created there, a drift still corrected;
#   3. nobody puts a directory of their own at $P/metrics: refused once,
#      nothing created in it, a drift still corrected;
#   4. root puts the directory back: "written again", the file is current.
#   5. the directory made 0777 (an emptyDir's mode): refused once, drift
#      still corrected; made 0755 again with a symlink planted at the file's
#      name: written again, the symlink replaced, not followed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to act as nobody and to own the metrics directory"
need setpriv util-linux
fixture_on_tmpfs
chmod 0755 "$TMP"
P=$TMP/p
mkdir -m 0755 "$P" "$P/metrics" "$TMP/elsewhere"
chown 65534:65534 "$P"
ELSEWHERE=$TMP/elsewhere
M=$P/metrics/thpguard.prom
write_policy "$POLICY" 'recheck_interval = 1; fight_threshold = 0; thp = { use_zero_page = false; };'
[ "$(cat "$T/use_zero_page")" = 1 ] || fail "the 6.18 fixture changed: use_zero_page must read 1"

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "$1"; }
# refused_once WHY DIR: logged once (from now on) over three rechecks, and DIR stays empty.
refused_once() {
        metrics_refused_once "$(log_lines)" "$M" "$1" "$2"
}

# 1. Debian's layout is accepted.
daemon_start_cmd "$THPGUARDD" --config "$POLICY" --sysfs-root "$ROOT" --log-target=console \
        --metrics-file "$M"
wait_until 5 test -s "$M" || true
grep -q '^thpguard_up 1$' "$M" || fail "no metrics file in a root-owned 0755 directory: $(ls -la "$P/metrics")"
[ "$(log_count 'cannot write the metrics file')" = 0 ] || fail "a safe directory was refused"

# 2. The directory swapped for a symlink by the owner of its parent.
as_nobody "mv '$P/metrics' '$P/metrics.old' && ln -s '$ELSEWHERE' '$P/metrics'"
refused_once 'a symbolic link on the way, not followed' "$ELSEWHERE"
drift_corrected 1

# 3. A directory of nobody's own.
as_nobody "rm '$P/metrics' && mkdir -m 0755 '$P/metrics'"
refused_once 'its directory can be written by a user other than root; refused' "$P/metrics"
drift_corrected 2

# 4. Fixed: written again, and current.
rm -rf "$P/metrics"
mv "$P/metrics.old" "$P/metrics"
wait_log "level=info msg=\"the metrics file $M is written again\"" 5
counted=$(awk '/^thpguard_corrections_total\{knob="use_zero_page",trigger="(inotify|recheck)"\}/ { n += $2 } END { print n + 0 }' "$M")
[ "$counted" -ge 2 ] || fail "the metrics file is not current: $counted corrections, 2 made: $(grep corrections_total "$M")"

# 5. Root's but world-writable, as a Kubernetes emptyDir always is: refused.
mv "$M" "$TMP/kept.prom"
chmod 0777 "$P/metrics"
refused_once 'its directory can be written by a user other than root; refused' "$P/metrics"
drift_corrected 3
# Safe again, with a symlink left at the file's name: replaced, not followed.
ln -s "$ELSEWHERE/thpguard.prom" "$M"
chmod 0755 "$P/metrics"
wait_until 3 eval '[ -f "$M" ] && [ ! -L "$M" ]' || true
[ -f "$M" ] && [ ! -L "$M" ] || fail "the symlink at $M was not replaced: $(ls -l "$M")"
[ "$(stat -c %u "$M")" = 0 ] || fail "$M is not root's"
kill -0 "$DAEMON_PID" || fail "the daemon died"
daemon_stop
[ "$(log_count 'AddressSanitizer|runtime error')" = 0 ] || fail "sanitizer report"
[ -z "$(ls -A "$ELSEWHERE")" ] || fail "something was written into $ELSEWHERE"
echo "PASS: a symlinked or foreign metrics directory is refused once, enforcement goes on, writing resumes"
