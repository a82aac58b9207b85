#!/bin/bash
# A metrics path that fails its checks when the daemon starts does not stop
# it: the daemon starts, enforces, logs what is wrong with the path once,
# and writes the file once that is fixed, as it does for a directory that
# goes wrong while it runs (metrics-dir.sh). THP enforcement never depends
# on the metrics output. On reload, a policy naming a bad metrics_file is
# installed all the same, and the new path's problem is logged once.
#
# On a fixture tree (tmpfs), recheck every second (each one retries the
# metrics file), in $TMP (root's, 0755):
#   1. --metrics-file through a link in a 1777 directory: refused; the
#      directory made 0755, the link is trusted and the file written;
#   2. the policy's metrics_file, where another collector's file is: left
#      alone; the file removed, written;
#   3. the policy's metrics_file in nobody's directory: refused; chown'ed
#      to root, written;
#   4. a reload to a metrics_file where another collector's file is:
#      installed, refused once, a drift still corrected.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to own the metrics directories"
fixture_on_tmpfs
KNOBS='recheck_interval = 1; fight_threshold = 0; thp = { use_zero_page = false; };'
write_policy "$POLICY" "$KNOBS"
[ "$(cat "$T/use_zero_page")" = 1 ] || fail "the 6.18 fixture changed: use_zero_page must read 1"
OTHER='# HELP node_other Another collector.
node_other 1'

# started_and_enforcing FILE WHY: the daemon started, corrected at startup
# and corrects a drift, and says once that it cannot write FILE, for WHY.
started_and_enforcing() {
        has_event corrected knob=use_zero_page trigger=startup || fail "no correction at startup"
        drift_corrected 1
        metrics_refused_once 0 "$1" "$2"
}
# written_again FILE: fixed, "written again" is logged and FILE is the daemon's.
written_again() {
        wait_log "level=info msg=\"the metrics file $(re "$1") is written again\"" 5
        grep -q '^thpguard_up 1$' "$1" || fail "$1 is not the daemon's: $(head -3 "$1")"
}

# 1. A link in a shared directory, then made safe.
mkdir -m 0755 "$TMP/real" "$TMP/real/textfile"
mkdir -m 1777 "$TMP/shared"
ln -s "$TMP/real/textfile" "$TMP/shared/tf"
M=$TMP/shared/tf/thpguard.prom
tree_set use_zero_page 1
daemon_start_cmd "$THPGUARDD" --config "$POLICY" --sysfs-root "$ROOT" --log-target=console --metrics-file "$M"
started_and_enforcing "$M" 'a symbolic link on the way, not followed'
[ -z "$(ls -A "$TMP/real/textfile")" ] || fail "written through a link in a 1777 directory"
chmod 0755 "$TMP/shared"
written_again "$M"
daemon_stop

# 2. Another collector's file at the policy's metrics_file.
mkdir -m 0755 "$TMP/d2"
printf '%s\n' "$OTHER" >"$TMP/d2/thpguard.prom"
write_policy "$POLICY" "$KNOBS
metrics_file = \"$TMP/d2/thpguard.prom\";"
tree_set use_zero_page 1
daemon_start_cmd "$THPGUARDD" --config "$POLICY" --sysfs-root "$ROOT" --log-target=console
started_and_enforcing "$TMP/d2/thpguard.prom" 'exists and does not start like a file thpguardd wrote'
grep -q '^node_other 1$' "$TMP/d2/thpguard.prom" || fail "the other collector's file was replaced"
rm "$TMP/d2/thpguard.prom"
written_again "$TMP/d2/thpguard.prom"

# 4. A reload to another collector's file in the same directory (the
#    confinement fixes the directory at startup): installed, refused once.
printf '%s\n' "$OTHER" >"$TMP/d2/other.prom"
write_policy "$POLICY" "recheck_interval = 1; fight_threshold = 0; thp = { use_zero_page = false; };
metrics_file = \"$TMP/d2/other.prom\";"
mark=$(log_lines)
kill -HUP "$DAEMON_PID"
wait_event 5 policy_reloaded || fail "the policy naming another collector's file was not installed"
tree_set use_zero_page 1
wait_until 5 drifts_corrected_ge 2 || fail "no drift corrected after the reload: $(cat "$TMP/daemon.log")"
metrics_refused_once "$mark" "$TMP/d2/other.prom" 'exists and does not start like a file thpguardd wrote'
grep -q '^node_other 1$' "$TMP/d2/other.prom" || fail "the other collector's file was replaced on reload"
daemon_stop

# 3. A directory of nobody's.
mkdir -m 0755 "$TMP/d3"
chown 65534:65534 "$TMP/d3"
write_policy "$POLICY" "$KNOBS
metrics_file = \"$TMP/d3/thpguard.prom\";"
tree_set use_zero_page 1
daemon_start_cmd "$THPGUARDD" --config "$POLICY" --sysfs-root "$ROOT" --log-target=console
started_and_enforcing "$TMP/d3/thpguard.prom" 'its directory can be written by a user other than root; refused'
[ -z "$(ls -A "$TMP/d3")" ] || fail "the daemon wrote into nobody's directory: $(ls -A "$TMP/d3")"
chown 0:0 "$TMP/d3"
written_again "$TMP/d3/thpguard.prom"
kill -0 "$DAEMON_PID" || fail "the daemon died"
daemon_stop
[ "$(log_count 'AddressSanitizer|runtime error')" = 0 ] || fail "sanitizer report"
echo "PASS: a metrics path bad at startup or on reload is logged once, enforcement goes on, writing starts once fixed"
