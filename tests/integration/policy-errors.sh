#!/bin/bash
# Policy errors end to end, from the binary (tests/unit/policy.c covers
# each class in detail): every error names file:line (or file: for file-level
# problems), all errors of a file come out in one run, and the exit codes are
# -n 1, --verify 2, --once 2. Every bad policy here also asks for a value that
# drifts on the fixture (enabled = "never"), so "--once wrote nothing" means
# something: a bad policy never leads to a write.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

root=$(fixture_copy 6.18)
mapfile -t dirs < <(find "$root/kernel/mm/transparent_hugepage" -type d)

# check_bad NAME FILE REGEX...: each REGEX must be a stderr line, in every mode,
# and there must be exactly that many lines.
check_bad() {
        local name=$1 file=$2 mode r
        shift 2
        declare -A rc=([-n]=1 [--verify]=2 [--once]=2)
        for mode in -n --verify --once; do
                run timeout 20 "$INOTIFY_COUNT" "${dirs[@]}" -- "$THPGUARDD" "$mode" --config "$file" --sysfs-root "$root"
                [ "$RC" -ne 124 ] || fail "$name: $mode hung (a FIFO must be refused, not read)"
                expect_rc "${rc[$mode]}" "$name: $mode"
                [ "$(inotify_total)" -eq 0 ] || fail "$name: $mode wrote to the sysfs tree"
                [ "$(out)" = "total 0" ] || fail "$name: $mode printed a result for an invalid policy"
                for r in "$@"; do
                        expect_err "$r" "$name: $mode stderr"
                done
                expect_err_lines $# "$name: $mode stderr (exactly the expected errors)"
        done
        expect_fixture_unchanged 6.18 "$root"
}

# Every in-file error class at once: all reported, each with its line.
P=$TMP/many.conf
write_policy "$P" <<'CONF'
mode = "enforce";
bogus_top = 1;
thp = {
  enabled = "never";
  defrag = "sometimes";
  shmem_enabled = 3;
  use_zero_page = "yes";
  khugepaged = {
    pages_to_scan = 0;
    max_ptes_nonee = 5;
    max_ptes_none = -1;
  };
  sizes = (
    { size = "64KB"; enabled = "never"; },
    { size = "2048kB"; enabled = "inherit"; },
    { size = "2048kB"; shmem_enabled = "inherit"; },
    { size = "16kB"; enabled = "sometimes"; colour = "red"; }
  );
};
recheck_interval = 0;
CONF
F=$(re "$P")
L_TOP=$(line_of "$P" bogus_top)
L_DEFRAG=$(line_of "$P" '"sometimes";$')
L_SHMEM=$(line_of "$P" 'shmem_enabled = 3')
L_ZERO=$(line_of "$P" use_zero_page)
L_SCAN=$(line_of "$P" pages_to_scan)
L_NONEE=$(line_of "$P" max_ptes_nonee)
L_NONE=$(line_of "$P" 'max_ptes_none = -1')
L_64=$(line_of "$P" 64KB)
L_2M_FIRST=$(line_of "$P" '"2048kB"; enabled')
L_2M_DUP=$(line_of "$P" '"2048kB"; shmem_enabled')
L_16=$(line_of "$P" 16kB)
L_RECHECK=$(line_of "$P" recheck_interval)
check_bad "many errors" "$P" \
        "^$F:$L_TOP: policy: unknown key \"bogus_top\" \(expected mode, recheck_interval, .*thp\)$" \
        "^$F:$L_DEFRAG: thp\.defrag: invalid value \"sometimes\" \(expected always, defer, defer\+madvise, madvise or never\)$" \
        "^$F:$L_SHMEM: thp\.shmem_enabled: expected a string, got an integer$" \
        "^$F:$L_ZERO: thp\.use_zero_page: expected a boolean \(true or false\), got a string$" \
        "^$F:$L_SCAN: thp\.khugepaged\.pages_to_scan: 0 is out of range 1\.\.[0-9]+$" \
        "^$F:$L_NONEE: thp\.khugepaged: unknown key \"max_ptes_nonee\" \(expected defrag, pages_to_scan, .*max_ptes_shared\)$" \
        "^$F:$L_NONE: thp\.khugepaged\.max_ptes_none: -1 is out of range 0\.\.[0-9]+$" \
        "^$F:$L_64: thp\.sizes\[0\]\.size: malformed size \"64KB\" \(expected <digits>kB, such as \"64kB\"\)$" \
        "^$F:$L_2M_DUP: thp\.sizes\[2\]\.size: duplicate size \"2048kB\" \(first given at line $L_2M_FIRST\)$" \
        "^$F:$L_16: thp\.sizes\[3\]\.enabled: invalid value \"sometimes\" \(expected always, inherit, madvise or never\)$" \
        "^$F:$L_16: thp\.sizes\[3\]: unknown key \"colour\" \(expected enabled or shmem_enabled\)$" \
        "^$F:$L_RECHECK: recheck_interval: 0 is out of range 1\.\.86400$"

# A libconfig syntax error: its line.
P=$TMP/syntax.conf
printf 'thp = {\n  enabled = "never";\n  defrag = ;\n};\n' | write_policy "$P"
check_bad "syntax error" "$P" "^$(re "$P"):3: syntax error$"

# An unterminated group: the error is at the end.
P=$TMP/unterminated.conf
printf 'thp = {\n  enabled = "never";\n' | write_policy "$P"
check_bad "unterminated group" "$P" "^$(re "$P"):[23]: syntax error$"

# Wrong type for a group and for the sizes list.
P=$TMP/types.conf
printf 'mode = 1;\nthp = {\n  enabled = "never";\n  khugepaged = 5;\n  sizes = "64kB";\n};\n' | write_policy "$P"
check_bad "wrong group types" "$P" \
        "^$(re "$P"):1: mode: expected a string, got an integer$" \
        "^$(re "$P"):4: thp\.khugepaged: expected a group, khugepaged = \{ \.\.\. \}, got an integer$" \
        "^$(re "$P"):5: thp\.sizes: expected a list of groups, \( \{ size = \"64kB\"; \.\.\. \} \), got a string$"

# @include would let a policy pull in any file.
P=$TMP/include.conf
printf 'thp = { enabled = "never"; };\n@include "/etc/passwd"\n' | write_policy "$P"
check_bad "@include" "$P" "^$(re "$P"):2: @include is not supported in a policy$"

# File-level problems: named by file, no line.
P=$TMP/nul.conf
printf 'thp = { enabled = "never"; };\n\0\n' | write_policy "$P"
check_bad "NUL byte" "$P" "^$(re "$P"): contains a NUL byte; a policy is a text file$"

P=$TMP/big.conf
{
        echo 'thp = { enabled = "never"; };'
        head -c $((1024 * 1024)) /dev/zero | tr '\0' '#'
} | write_policy "$P"
check_bad "larger than 1 MiB" "$P" "^$(re "$P"): is [0-9]+ bytes; a policy may be at most 1048576 bytes$"

check_bad "missing file" "$TMP/missing.conf" "^$(re "$TMP/missing.conf"): cannot open: No such file or directory$"

mkdir "$TMP/dir.conf"
check_bad "a directory" "$TMP/dir.conf" "^$(re "$TMP/dir.conf"): not a regular file$"

mkfifo "$TMP/fifo.conf"
check_bad "a FIFO" "$TMP/fifo.conf" "^$(re "$TMP/fifo.conf"): not a regular file$"

check_bad "a character device" /dev/null "^/dev/null: not a regular file$"

# Unreadable: a 0600 root file read by nobody (root reads anything).
if [ "$(id -u)" -eq 0 ] && setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$THPGUARDD" 2>/dev/null; then
        P=$TMP/secret.conf
        write_policy "$P" <<<'thp = { enabled = "never"; };'
        chmod 0600 "$P"
        run setpriv --reuid=65534 --regid=65534 --clear-groups "$THPGUARDD" -n --config "$P" --sysfs-root "$root"
        expect_rc 1 "-n as nobody on an unreadable policy"
        expect_err "^$(re "$P"): cannot open: Permission denied$" "-n as nobody on an unreadable policy"
        run setpriv --reuid=65534 --regid=65534 --clear-groups "$THPGUARDD" --verify --config "$P" --sysfs-root "$root"
        expect_rc 2 "--verify as nobody on an unreadable policy"
else
        echo "note: unreadable-policy case not run (needs root, and nobody must be able to run $THPGUARDD)"
fi

echo "PASS: policy errors"
