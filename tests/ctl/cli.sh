# thpguardctl's command line: help, usage errors, one-line errors naming the file, exit codes.
. "$(dirname "$0")/lib.sh"
C=$THPGUARDCTL

expect_rc 0 "$C" --help
grep -q '^Exit status: 0 success; 1 ' "$TMP/out" || fail "--help does not document the exit status"
for cmd in status pid exec; do grep -q "thpguardctl $cmd" "$TMP/out" || fail "--help misses $cmd"; done
expect_rc 0 "$C" status --help
expect_rc 0 "$C" --version
grep -q '^thpguardctl ' "$TMP/out" || fail "--version"

expect_rc 2 "$C"
expect_rc 2 "$C" frobnicate
grep -q "unknown command 'frobnicate'" "$TMP/err" || fail "unknown command message"
expect_rc 2 "$C" status extra
expect_rc 2 "$C" status --top abc
grep -q -- "--top 'abc'" "$TMP/err" || fail "--top error does not name the value"
expect_rc 2 "$C" status --top 1001
expect_rc 2 "$C" status --thp=disable
expect_rc 2 "$C" pid
expect_rc 2 "$C" pid 12x
grep -q "'12x' is not a PID" "$TMP/err" || fail "pid error does not name the value"
expect_rc 2 "$C" pid 0
expect_rc 2 "$C" pid 1 2
expect_rc 2 "$C" pid 1 --top 17
expect_rc 2 "$C" pid 1 --config /etc/x

expect_rc 1 "$C" status --sysfs-root "$TMP/nope"
grep -q "^thpguardctl: --sysfs-root $TMP/nope: No such file or directory$" "$TMP/err" || fail "sysfs root message: $(cat "$TMP/err")"
[ "$(wc -l <"$TMP/err")" = 1 ] || fail "more than one error line"
mkdir -p "$TMP/empty"
expect_rc 1 "$C" status --sysfs-root "$TMP/empty"
grep -q "no kernel/mm/transparent_hugepage below it" "$TMP/err" || fail "no-THP message: $(cat "$TMP/err")"
expect_rc 1 "$C" status --proc-root "$TMP/nope"
grep -q "^thpguardctl: --proc-root $TMP/nope: " "$TMP/err" || fail "proc root message"
expect_rc 1 "$C" status --config "$TMP/nope.conf"
grep -q "$TMP/nope.conf" "$TMP/err" || fail "policy error does not name the file"
printf 'thp = { enabled = "sometimes"; };\n' >"$TMP/bad.conf"
expect_rc 1 "$C" status --config "$TMP/bad.conf"
grep -q "bad.conf:1:" "$TMP/err" || fail "policy error has no file:line: $(cat "$TMP/err")"

expect_rc 1 "$C" pid 4194304 --proc-root "$CTL_FIXTURES/proc-hostile"
grep -q "^thpguardctl: $CTL_FIXTURES/proc-hostile/4194304/status: no such process$" "$TMP/err" || fail "pid message: $(cat "$TMP/err")"

# exec: 125 for our own failures, 126/127 like env(1), otherwise the command's status.
expect_rc 125 "$C" exec true
grep -q -- "--thp=disable|advised-only|inherit is required" "$TMP/err" || fail "exec without --thp"
expect_rc 125 "$C" exec --thp=sometimes -- true
grep -q -- "--thp 'sometimes'" "$TMP/err" || fail "exec --thp error does not name the value"
expect_rc 125 "$C" exec --thp=disable
expect_rc 127 "$C" exec --thp=disable -- "$TMP/no-such-command"
grep -q "$TMP/no-such-command: No such file or directory" "$TMP/err" || fail "not-found message"
: >"$TMP/not-executable"
expect_rc 126 "$C" exec --thp=disable -- "$TMP/not-executable"
# Options after COMMAND are the command's, not ours.
expect_rc 0 "$C" exec --thp=inherit echo --json --top 3
[ "$(cat "$TMP/out")" = "--json --top 3" ] || fail "exec took the command's options"
echo PASS
