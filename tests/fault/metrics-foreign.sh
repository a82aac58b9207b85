#!/bin/bash
# The metrics file is only ever a NAME.prom file the daemon wrote itself:
# a policy that names another file (one a rename would replace, such as a
# root-owned file in a root-owned directory), or a .prom file that exists
# and was not written by thpguardd (another collector's, a symlink), is
# refused with one line naming the policy file, the line and the value,
# by the daemon and by --check-config; nothing is written, neither the
# knob nor the file. A file the daemon wrote itself is taken over.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
fixture_on_tmpfs
P=$TMP/policy.conf
D=$TMP/textfile
mkdir "$D"
printf 'some: root file\n' >"$D/victim"
printf '# HELP node_other Another collector.\nnode_other 1\n' >"$D/other.prom"
ln -s "$D/other.prom" "$D/link.prom"
before_knob=$(cat "$T/enabled")

# expect_refused VALUE WHY: the policy naming VALUE is refused, line 2 named, nothing written.
expect_refused() {
        write_policy "$P" "thp = { enabled = \"never\"; };
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
        [ "$(cat "$T/enabled")" = "$before_knob" ] || fail "metrics_file $1: the knob was written"
}
expect_refused "$D/victim" 'is not a NAME.prom file'
[ "$(cat "$D/victim")" = 'some: root file' ] || fail "the victim file changed"
expect_refused "$D/other.prom" 'exists and does not start like a file thpguardd wrote; refusing it'
grep -q '^node_other 1$' "$D/other.prom" || fail "the other collector's file changed"
expect_refused "$D/link.prom" 'cannot be checked'
[ -L "$D/link.prom" ] || fail "the symlink was replaced"
# --metrics-file: the same rules.
run "$THPGUARDD" --config "$P" --sysfs-root "$ROOT" --metrics-file "$D/victim"
expect_rc 2
expect_err "^thpguardd: --metrics-file: '$(re "$D/victim")' is not a NAME.prom file$"
write_policy "$P" 'thp = { enabled = "never"; };'
run "$THPGUARDD" --config "$P" --sysfs-root "$ROOT" --metrics-file "$D/other.prom" --log-target=console
expect_rc 1
expect_err "metrics-file $(re "$D/other.prom") exists and does not start like a file thpguardd wrote; not starting"
[ "$(cat "$T/enabled")" = "$before_knob" ] || fail "--metrics-file refused: the knob was written"
grep -q '^node_other 1$' "$D/other.prom" || fail "the other collector's file changed"

# Its own file, from an earlier run, is taken over.
write_policy "$P" "thp = { enabled = \"never\"; };
metrics_file = \"$D/thpguard.prom\";"
daemon_start_cmd "$THPGUARDD" --config "$P" --sysfs-root "$ROOT" --log-target=console
wait_until 5 test -f "$D/thpguard.prom" || fail "no metrics file"
daemon_stop
daemon_start_cmd "$THPGUARDD" --config "$P" --sysfs-root "$ROOT" --log-target=console
daemon_stop
grep -q '^thpguard_up 0$' "$D/thpguard.prom" || fail "the daemon's own file was not taken over"
echo "PASS: only a .prom file the daemon wrote itself is ever replaced"
