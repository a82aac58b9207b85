#!/bin/bash
# A metrics path through a symbolic link that only root can have placed,
# as Debian's /var/run -> /run, is written: the link is followed where the
# policy's own path check would follow it (every directory up to it root's,
# and only root may write it). The same link in a directory others may
# write is not followed: refused once, and enforcement goes on.
#
# On a fixture tree (tmpfs), recheck every second; in $TMP (under /run,
# root's, 0755): run/textfile, the real directory; var/run -> $TMP/run;
# shared/ (1777) holding run -> $TMP/run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root: the link is trusted only where root alone may write"
fixture_on_tmpfs
[ "$(stat -c %u:%a "$TMP")" = 0:755 ] || skip "$TMP is not root's 0755 (THPGUARD_TEST_TMP?)"
mkdir -m 0755 "$TMP/run" "$TMP/run/textfile" "$TMP/var"
ln -s "$TMP/run" "$TMP/var/run"
mkdir -m 1777 "$TMP/shared"
ln -s "$TMP/run" "$TMP/shared/run"
write_policy "$POLICY" 'recheck_interval = 1; fight_threshold = 0; thp = { use_zero_page = false; };'
[ "$(cat "$T/use_zero_page")" = 1 ] || fail "the 6.18 fixture changed: use_zero_page must read 1"

# 1. Through the root-owned link: written, no refusal, and --alive reads it.
M=$TMP/var/run/textfile/thpguard.prom
daemon_start_cmd "$THPGUARDD" --config "$POLICY" --sysfs-root "$ROOT" --log-target=console --metrics-file "$M"
wait_until 5 test -s "$TMP/run/textfile/thpguard.prom" || true
grep -q '^thpguard_up 1$' "$TMP/run/textfile/thpguard.prom" ||
        fail "no metrics file through $TMP/var/run: $(cat "$TMP/daemon.log")"
drift_corrected 1
run "$THPGUARDD" --config "$POLICY" --metrics-file "$M" --alive
expect_rc 0 "--alive through the link"
[ "$(log_count 'cannot write the metrics file')" = 0 ] || fail "the link was refused: $(cat "$TMP/daemon.log")"

# 2. The policy's metrics_file through the machine's own /var/run, on reload.
if [ "$(readlink /var/run)" = /run ] && [[ $TMP == /run/* ]]; then
        write_policy "$POLICY" "recheck_interval = 1; fight_threshold = 0; thp = { use_zero_page = false; };
metrics_file = \"/var/run/${TMP#/run/}/run/textfile/policy.prom\";"
        daemon_stop
        daemon_start_cmd "$THPGUARDD" --config "$POLICY" --sysfs-root "$ROOT" --log-target=console
        wait_until 5 test -s "$TMP/run/textfile/policy.prom" || fail "no metrics file through /var/run: $(cat "$TMP/daemon.log")"
        drift_corrected 1
else
        echo "note: /var/run is not a link to /run here, or $TMP is not under /run: its own link only" >&2
fi
daemon_stop

# 3. The same link in a 1777 directory: not followed, logged once, enforcement goes on.
M=$TMP/shared/run/textfile/shared.prom
daemon_start_cmd "$THPGUARDD" --config "$POLICY" --sysfs-root "$ROOT" --log-target=console --metrics-file "$M"
drift_corrected 1
metrics_refused_once 0 "$M" 'a symbolic link on the way, not followed'
[ ! -e "$TMP/run/textfile/shared.prom" ] || fail "written through a link in a 1777 directory"
daemon_stop
[ "$(log_count 'AddressSanitizer|runtime error')" = 0 ] || fail "sanitizer report"
echo "PASS: a metrics path through a root-owned link is written; through one in a shared directory, refused once"
