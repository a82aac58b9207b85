#!/bin/bash
# The node-feature-discovery feature file on the real THP sysfs: thpguardd
# keeps thpguard.io/ labels of the effective enabled and defrag, the
# compliance and the policy's mode, in NFD's local-source format; the file
# follows each change within a second (a reload, a foreign write in audit
# mode, a write that restores compliance), is rewritten only on change (the
# same inode otherwise), --nfd-features-file overrides the policy's
# nfd_features_file, and an unsafe directory is refused with one warning.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
real_sysfs_begin

FD=$TMP/features.d
mkdir -p "$FD"
chmod 0755 "$FD"
F=$FD/thpguard

# has FILE LINE...: FILE holds every LINE as a whole line.
has() {
        local file=$1 line
        shift
        [ -f "$file" ] || return 1
        for line in "$@"; do grep -qxF -- "$line" "$file" || return 1; done
}
# follows FILE LINE...: within a second, FILE holds every LINE.
follows() {
        wait_until 1 has "$@" || fail "$1 does not hold $* within a second; it holds: $(cat "$1" 2>&1)"
}
# nfd_format FILE: every line is a comment or a thpguard.io/ label NFD accepts (no directive).
nfd_format() {
        local bad
        bad=$(grep -Ev '^(#( [^+].*)?|thpguard\.io/[a-z][a-z-]*=[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)$' "$1" || true)
        [ -z "$bad" ] || fail "$1 has lines NFD's local source does not read as labels: $bad"
        [ "$(tail -c1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || fail "$1 does not end with a newline"
        [ "$(stat -c %a "$1")" = 644 ] || fail "$1 is mode $(stat -c %a "$1"), not 644"
}

thp_set enabled madvise
thp_set defrag madvise
write_policy "$POLICY" "recheck_interval = 3600;
nfd_features_file = \"$F\";
thp = { enabled = \"madvise\"; defrag = \"madvise\"; };"
daemon_start
follows "$F" thpguard.io/enabled=madvise thpguard.io/defrag=madvise thpguard.io/compliant=true \
        thpguard.io/policy-mode=enforce
nfd_format "$F"
[ "$(grep -c '^thpguard\.io/' "$F")" = 4 ] || fail "$F has other labels: $(cat "$F")"

# Nothing changes, nothing is rewritten: a same-value write raises IN_MODIFY, the file stays.
ino=$(stat -c %i "$F")
thp_set enabled madvise
thp_set defrag madvise
sleep 0.3
[ "$(stat -c %i "$F")" = "$ino" ] || fail "$F was rewritten although no label changed"

# A reload to audit of a policy the node does not meet.
write_policy "$POLICY" "recheck_interval = 3600; mode = \"audit\";
nfd_features_file = \"$F\";
thp = { enabled = \"always\"; defrag = \"madvise\"; };"
kill -HUP "$DAEMON_PID"
follows "$F" thpguard.io/enabled=madvise thpguard.io/compliant=false thpguard.io/policy-mode=audit
# A foreign write the audit leaves: the effective value follows, '+' made a label character.
thp_set defrag defer+madvise
follows "$F" thpguard.io/defrag=defer-madvise thpguard.io/compliant=false
thp_set defrag madvise
thp_set enabled always
follows "$F" thpguard.io/enabled=always thpguard.io/defrag=madvise thpguard.io/compliant=true
nfd_format "$F"
daemon_stop
# After a stop the file stays as it was (no expiry: it is rewritten only on change).
has "$F" thpguard.io/enabled=always || fail "$F changed on stop: $(cat "$F")"

# --nfd-features-file overrides the policy's.
F2=$FD/thpguard-option
daemon_start --nfd-features-file "$F2"
follows "$F2" thpguard.io/enabled=always thpguard.io/policy-mode=audit
nfd_format "$F2"
daemon_stop

# A directory others may write: refused like the metrics file's, one warning, nothing written there.
BAD=$TMP/open-dir
mkdir -p "$BAD"
chmod 0777 "$BAD"
daemon_start --nfd-features-file "$BAD/thpguard"
wait_log 'level=warn msg="cannot write the feature file .*open-dir/thpguard: its directory can be written by a user other than root; refused; retrying later"'
thp_set enabled madvise
sleep 0.3
[ "$(log_count 'cannot write the feature file')" = 1 ] || fail "the refusal was logged $(log_count 'cannot write the feature file') times"
[ -z "$(ls -A "$BAD")" ] || fail "something was written to the unsafe directory: $(ls -A "$BAD")"
daemon_stop

# A relative path is refused at startup.
run "$THPGUARDD" --config "$POLICY" --nfd-features-file features.d/thpguard
expect_rc 2
expect_err "^thpguardd: --nfd-features-file: 'features.d/thpguard' is not an absolute path$"
echo PASS
