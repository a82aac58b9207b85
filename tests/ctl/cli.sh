# thpguardctl's command line: help, usage errors, one-line errors naming the file, exit codes.
. "$(dirname "$0")/lib.sh"
C=$THPGUARDCTL

run "$C" --help
expect_rc 0
grep -q '^Exit status: 0 success; 1 ' "$OUT_FILE" || fail "--help does not document the exit status"
for cmd in status pid exec; do grep -q "thpguardctl $cmd" "$OUT_FILE" || fail "--help misses $cmd"; done
run "$C" status --help
expect_rc 0
run "$C" --version
expect_rc 0
grep -q '^thpguardctl ' "$OUT_FILE" || fail "--version"

run "$C"
expect_rc 2
run "$C" frobnicate
expect_rc 2
grep -q "unknown command 'frobnicate'" "$ERR_FILE" || fail "unknown command message"
run "$C" status extra
expect_rc 2
run "$C" status --top abc
expect_rc 2
grep -q -- "--top 'abc'" "$ERR_FILE" || fail "--top error does not name the value"
run "$C" status --top 1001
expect_rc 2
run "$C" status --thp=disable
expect_rc 2
run "$C" pid
expect_rc 2
run "$C" pid 12x
expect_rc 2
grep -q "'12x' is not a PID" "$ERR_FILE" || fail "pid error does not name the value"
run "$C" pid 0
expect_rc 2
run "$C" pid 1 2
expect_rc 2
run "$C" pid 1 --top 17
expect_rc 2
run "$C" pid 1 --config /etc/x
expect_rc 2

run "$C" status --sysfs-root "$TMP/nope"
expect_rc 1
grep -q "^thpguardctl: --sysfs-root $TMP/nope: No such file or directory$" "$ERR_FILE" || fail "sysfs root message: $(cat "$ERR_FILE")"
[ "$(wc -l <"$ERR_FILE")" = 1 ] || fail "more than one error line"
mkdir -p "$TMP/empty"
run "$C" status --sysfs-root "$TMP/empty"
expect_rc 1
grep -q "no kernel/mm/transparent_hugepage below it" "$ERR_FILE" || fail "no-THP message: $(cat "$ERR_FILE")"
run "$C" status --proc-root "$TMP/nope"
expect_rc 1
grep -q "^thpguardctl: --proc-root $TMP/nope: " "$ERR_FILE" || fail "proc root message"
run "$C" status --config "$TMP/nope.conf"
expect_rc 1
grep -q "$TMP/nope.conf" "$ERR_FILE" || fail "policy error does not name the file"
printf 'thp = { enabled = "sometimes"; };\n' >"$TMP/bad.conf"
run "$C" status --config "$TMP/bad.conf"
expect_rc 1
grep -q "bad.conf:1:" "$ERR_FILE" || fail "policy error has no file:line: $(cat "$ERR_FILE")"

run "$C" pid 4194304 --proc-root "$CTL_FIXTURES/proc-hostile"
expect_rc 1
grep -q "^thpguardctl: $CTL_FIXTURES/proc-hostile/4194304/status: no such process$" "$ERR_FILE" || fail "pid message: $(cat "$ERR_FILE")"

# exec: 125 for our own failures, 126/127 like env(1), otherwise the command's status.
run "$C" exec true
expect_rc 125
grep -q -- "--thp=disable|advised-only|inherit is required" "$ERR_FILE" || fail "exec without --thp"
run "$C" exec --thp=sometimes -- true
expect_rc 125
grep -q -- "--thp 'sometimes'" "$ERR_FILE" || fail "exec --thp error does not name the value"
run "$C" exec --thp=disable
expect_rc 125
run "$C" exec --thp=disable -- "$TMP/no-such-command"
expect_rc 127
grep -q "$TMP/no-such-command: No such file or directory" "$ERR_FILE" || fail "not-found message"
: >"$TMP/not-executable"
run "$C" exec --thp=disable -- "$TMP/not-executable"
expect_rc 126
# Options after COMMAND are the command's, not ours.
run "$C" exec --thp=inherit echo --json --top 3
expect_rc 0
[ "$(cat "$OUT_FILE")" = "--json --top 3" ] || fail "exec took the command's options"
echo PASS
