#!/bin/bash
# The metrics file is only ever a NAME.prom file the daemon wrote itself.
# A policy that names another file (one a rename would replace, such as a
# root-owned file in a root-owned directory) is an invalid policy, refused
# with one line naming the policy file, the line and the value, by the
# daemon and by --check-config; nothing is written. A .prom file that
# exists and was not written by thpguardd (another collector's, a symlink)
# is what the path holds now, not a policy error: --check-config says so in
# a warning, and the daemon starts and enforces, logs why once, and leaves
# the file alone. A file the daemon wrote itself is taken over.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
fixture_on_tmpfs
P=$TMP/policy.conf
D=$TMP/textfile
mkdir "$D"
printf 'some: root file\n' >"$D/victim"
printf '# HELP node_other Another collector.\nnode_other 1\n' >"$D/other.prom"
ln -s "$D/other.prom" "$D/link.prom"
before_knob=$(cat "$T/use_zero_page")
[ "$before_knob" = 1 ] || fail "the 6.18 fixture changed: use_zero_page must read 1"
KNOBS='recheck_interval = 1; fight_threshold = 0; thp = { use_zero_page = false; };'

# expect_refused VALUE WHY: the policy naming VALUE is refused, line 2 named, nothing written.
expect_refused() {
        write_policy "$P" "$KNOBS
metrics_file = \"$1\";"
        run "$THPGUARDD" --check-config --config "$P" --sysfs-root "$ROOT"
        expect_rc 1 "--check-config with metrics_file $1"
        expect_err "^$(re "$P"):2: metrics_file: \"$(re "$1")\" $2"
        run "$THPGUARDD" --config "$P" --sysfs-root "$ROOT" --log-target=console
        expect_rc 1 "the daemon with metrics_file $1"
        # logfmt on the console escapes the quotes.
        expect_err "$(re "$P"):2: metrics_file: \\\\\"$(re "$1")\\\\\" $2|$(re "$P"):2: metrics_file: \"$(re "$1")\" $2"
        EVENT_LOG=$ERR_FILE has_event policy_rejected level=error policy="$P" ||
                fail "metrics_file $1: no policy_rejected event (message_id=${MESSAGE_ID[policy_rejected]}) on stderr"
        [ "$(cat "$T/use_zero_page")" = "$before_knob" ] || fail "metrics_file $1: the knob was written"
}

# expect_left_alone FILE WHY ARGS...: the daemon, started with ARGS,
# enforces (a drift at startup and one later corrected), and logs once that
# it cannot write FILE, for WHY.
expect_left_alone() {
        local file=$1 why=$2
        shift 2
        tree_set use_zero_page 1
        daemon_start_cmd "$THPGUARDD" --sysfs-root "$ROOT" --log-target=console "$@"
        has_event corrected knob=use_zero_page trigger=startup || fail "$file: no correction at startup"
        drift_corrected 1
        metrics_refused_once 0 "$file" "$why"
        daemon_stop
}

expect_refused "$D/victim" 'is not a NAME.prom file'
[ "$(cat "$D/victim")" = 'some: root file' ] || fail "the victim file changed"

# Another collector's file, and a symlink to it: a warning, and the daemon enforces.
for name in other link; do
        [ $name = other ] && why='exists and does not start like a file thpguardd wrote' ||
                why='cannot be checked: a symbolic link on the way, not followed'
        write_policy "$P" "$KNOBS
metrics_file = \"$D/$name.prom\";"
        run "$THPGUARDD" --check-config --config "$P" --sysfs-root "$ROOT"
        expect_rc 0 "--check-config with metrics_file $D/$name.prom"
        expect_err "^$(re "$P"):2: warning: metrics_file: \"$(re "$D/$name.prom")\" cannot be written now: $(re "$why");"
        expect_left_alone "$D/$name.prom" "$why" --config "$P"
        grep -q '^node_other 1$' "$D/other.prom" || fail "the other collector's file changed"
        [ -L "$D/link.prom" ] || fail "the symlink was replaced"
done

# --metrics-file: the same rules.
run "$THPGUARDD" --config "$P" --sysfs-root "$ROOT" --metrics-file "$D/victim"
expect_rc 2
expect_err "^thpguardd: --metrics-file: '$(re "$D/victim")' is not a NAME.prom file$"
write_policy "$P" "$KNOBS"
expect_left_alone "$D/other.prom" 'exists and does not start like a file thpguardd wrote' \
        --config "$P" --metrics-file "$D/other.prom"
grep -q '^node_other 1$' "$D/other.prom" || fail "the other collector's file changed"
[ "$(ls -A "$D" | sort | tr '\n' ' ')" = "link.prom other.prom victim " ] || fail "files appeared in $D: $(ls -A "$D")"

# Its own file, from an earlier run, is taken over.
write_policy "$P" "$KNOBS
metrics_file = \"$D/thpguard.prom\";"
daemon_start_cmd "$THPGUARDD" --config "$P" --sysfs-root "$ROOT" --log-target=console
wait_until 5 test -f "$D/thpguard.prom" || fail "no metrics file"
daemon_stop
daemon_start_cmd "$THPGUARDD" --config "$P" --sysfs-root "$ROOT" --log-target=console
daemon_stop
grep -q '^thpguard_up 0$' "$D/thpguard.prom" || fail "the daemon's own file was not taken over"
[ "$(log_count 'cannot write the metrics file')" = 0 ] || fail "the daemon's own file was refused"
echo "PASS: only a .prom file the daemon wrote itself is ever replaced; any other stops no enforcement"
