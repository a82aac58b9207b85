#!/bin/bash
# Least privilege: no code path writes anywhere but the
# managed knobs under the sysfs root and the metrics file.
#
# The daemon runs under strace -f (every syscall that takes a path, %file)
# through startup (drift corrected), inotify and recheck-only drift
# corrections, a valid reload that changes the managed set, an invalid one,
# metrics writes (--metrics-file) and SIGTERM. Then every open with a write
# flag (O_WRONLY, O_RDWR, O_CREAT, O_TRUNC), every rename, unlink, mkdir,
# rmdir, link, symlink, truncate, chmod, chown and mknod it attempted, failed
# or not, must name only:
#   - a knob a policy managed: $THP/<knob>;
#   - the metrics file, or its temporary file beside it ($TMP/.m.prom.XXXXXX),
#     created, renamed over the metrics file, or unlinked on failure.
# Files are opened relative to directory fds (no symlink is followed below a
# root): strace -y names each fd's path, and a name is checked as
# that path joined with it.
# Positive controls: the log shows the writes happened (corrections, a
# metrics file), so the trace is not empty by accident.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
real_sysfs_begin
need strace strace
unshare -m -n true 2>/dev/null || skip "cannot create mount and network namespaces here"
M=$M

KNOBS_A=(enabled defrag khugepaged/defrag)
KNOBS_B=(enabled shmem_enabled)
for k in "${KNOBS_A[@]}" "${KNOBS_B[@]}"; do [ -f "$THP/$k" ] || skip "this kernel has no $k"; done
thp_set enabled always
thp_set defrag always
thp_set khugepaged/defrag 0
write_policy "$POLICY" 'recheck_interval = 1; fight_threshold = 0;
thp = { enabled = "madvise"; defrag = "madvise"; khugepaged = { defrag = true; }; };'

# LeakSanitizer cannot run under ptrace; the rest of ASan can.
# strace forks the daemon: DAEMON_PID is strace's until the daemon's is known.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 daemon_start_cmd \
        strace -f -qq -y -s 4096 -o "$TMP/strace.log" -e trace=%file \
        "$THPGUARDD" --config "$POLICY" --log-target=console --metrics-file "$M"
STRACE_PID=$DAEMON_PID
on_exit 'kill -KILL $STRACE_PID 2>/dev/null || true'
DAEMON_PID=$(child_pids $STRACE_PID thpguardd)
[ -n "$DAEMON_PID" ] || { cat "$TMP/daemon.log"; fail "thpguardd did not start under strace"; }

thp_wait_for enabled madvise 10 || fail "startup did not correct"
# inotify-visible drift.
thp_set enabled never
thp_wait_for enabled madvise 10 || fail "inotify drift not corrected"
thp_set khugepaged/defrag 0
thp_wait_for khugepaged/defrag 1 10 || fail "inotify drift not corrected"
# recheck-only drift: through a second sysfs mount, in new mount and network namespaces.
unshare -m -n --propagation private sh -c 'mkdir -p "$1" && mount -t sysfs sysfs "$1" &&
        echo always >"$1/kernel/mm/transparent_hugepage/defrag"' _ "$TMP/sys2" 9>&-
thp_wait_for defrag madvise 10 || fail "recheck drift not corrected"
# A valid reload that changes the managed set, then an invalid one.
shmem=$(thp_get shmem_enabled)
want_shmem=$([ "$shmem" = never ] && echo advise || echo never)
write_policy "$POLICY" "recheck_interval = 1; fight_threshold = 0;
thp = { enabled = \"never\"; shmem_enabled = \"$want_shmem\"; };"
kill -HUP "$DAEMON_PID"
thp_wait_for enabled never 10 || fail "reload not applied"
thp_wait_for shmem_enabled "$want_shmem" 10 || fail "reload not applied"
write_policy "$POLICY" 'thp = { enabled = "sometimes"; };'
wait_event 10 policy_rejected policy="$POLICY"
# Let a recheck or two rewrite the metrics file, then stop.
sleep 2.5
kill -TERM "$DAEMON_PID"
rc=0
wait_exit $STRACE_PID 30 || rc=$?
[ $rc -ne 124 ] || { cat "$TMP/daemon.log"; fail "thpguardd under strace did not exit within 30 s of SIGTERM"; }
DAEMON_PID=
[ $rc -eq 0 ] || { cat "$TMP/daemon.log"; fail "thpguardd exited $rc"; }

# Positive controls.
[ "$(event_count corrected)" -ge 5 ] || fail "fewer corrections than driven: the trace would prove little"
grep -q '^thpguard_up 0$' "$M" || fail "no final metrics file"

allowed_knob() {
        local p=$1 k
        for k in "${KNOBS_A[@]}" "${KNOBS_B[@]}"; do [ "$p" = "$THP/$k" ] && return 0; done
        return 1
}
is_tmp() { [[ $1 =~ ^$TMP/\.m\.prom\.[A-Za-z0-9]{6}$ ]]; }

violation() { echo "VIOLATION: $*" >&2; violations=$((violations + 1)); }
# at DIRFD NAME: the path a *at() call names. strace -y writes a directory fd
# as 7</sys/kernel/mm/transparent_hugepage> and AT_FDCWD as AT_FDCWD</cwd>.
at() {
        if [[ $2 == /* ]]; then
                echo "$2"
        elif [[ $1 =~ \<(.*)\>$ ]]; then
                echo "${BASH_REMATCH[1]%/}/$2"
        else
                echo "?$1?/$2"
        fi
}
DIRFD='([A-Z_]+|[0-9]+)(<[^>]*>)?'
# check_trace FILE: counts writes, renames and violations in an strace log.
check_trace() {
        violations=0 writes=0 renames=0
        # One syscall a line: "PID name(args) = result". Resumed halves are skipped; their
        # start line carries the arguments.
        while IFS= read -r line; do
                [[ $line =~ ^[0-9]+\ +([a-z0-9_]+)\((.*)$ ]] || continue
                sc=${BASH_REMATCH[1]} args=${BASH_REMATCH[2]}
                case $sc in
                open | creat)
                        [[ $args =~ ^\"([^\"]*)\"(,\ ([A-Z_|]+))? ]] || { violation "unparsed: $line"; continue; }
                        path=${BASH_REMATCH[1]} flags=${BASH_REMATCH[3]:-}
                        ;;&
                openat | openat2)
                        [[ $args =~ ^$DIRFD,\ \"([^\"]*)\"(,\ ([A-Z_|]+|\{[^}]*\}))? ]] ||
                                { violation "unparsed: $line"; continue; }
                        path=$(at "${BASH_REMATCH[1]}${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}") flags=${BASH_REMATCH[5]:-}
                        ;;&
                open | creat | openat | openat2)
                        if [ "$sc" = creat ] || [[ $flags =~ O_WRONLY|O_RDWR|O_CREAT|O_TRUNC ]]; then
                                writes=$((writes + 1))
                                allowed_knob "$path" || is_tmp "$path" || violation "$line"
                        fi
                        ;;
                rename)
                        renames=$((renames + 1))
                        [[ $args =~ ^\"([^\"]*)\",\ \"([^\"]*)\" ]] || { violation "unparsed: $line"; continue; }
                        from=${BASH_REMATCH[1]} to=${BASH_REMATCH[2]}
                        if ! is_tmp "$from" || [ "$to" != "$M" ]; then violation "$line"; fi
                        ;;
                renameat | renameat2)
                        renames=$((renames + 1))
                        [[ $args =~ ^$DIRFD,\ \"([^\"]*)\",\ $DIRFD,\ \"([^\"]*)\" ]] ||
                                { violation "unparsed: $line"; continue; }
                        from=$(at "${BASH_REMATCH[1]}${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}")
                        to=$(at "${BASH_REMATCH[4]}${BASH_REMATCH[5]}" "${BASH_REMATCH[6]}")
                        if ! is_tmp "$from" || [ "$to" != "$M" ]; then violation "$line"; fi
                        ;;
                unlink)
                        [[ $args =~ ^\"([^\"]*)\" ]] || { violation "unparsed: $line"; continue; }
                        is_tmp "${BASH_REMATCH[1]}" || violation "$line"
                        ;;
                unlinkat)
                        [[ $args =~ ^$DIRFD,\ \"([^\"]*)\" ]] || { violation "unparsed: $line"; continue; }
                        is_tmp "$(at "${BASH_REMATCH[1]}${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}")" || violation "$line"
                        ;;
                mkdir | mkdirat | rmdir | link | linkat | symlink | symlinkat | truncate | chmod | fchmodat | fchmodat2 | \
                        chown | lchown | fchownat | mknod | mknodat | utime | utimes | utimensat | futimesat | setxattr | lsetxattr | \
                        removexattr | lremovexattr)
                        violation "$line"
                        ;;
                esac
        done <"$1"
}

# The checker itself must catch a stray write (a negative control), also one
# named relative to a directory fd, and pass the daemon's own.
printf '%s\n' "1 openat(AT_FDCWD</>, \"/etc/thpguard-stray\", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 3" \
        "1 renameat2(4<$TMP>, \".m.prom.AbC123\", 4<$TMP>, \"passwd\", 0) = 0" \
        "1 unlink(\"$THP/enabled\") = -1 EPERM (Operation not permitted)" \
        "1 mkdir(\"$TMP/x\", 0755) = 0" \
        "1 openat(5</etc>, \"shadow\", O_RDWR|O_NOFOLLOW|O_CLOEXEC) = 6</etc/shadow>" \
        "1 openat(5<$THP>, \"enabled\", O_RDWR|O_NOCTTY|O_NONBLOCK|O_NOFOLLOW|O_CLOEXEC) = 6<$THP/enabled>" \
        "1 openat(4<$TMP>, \".m.prom.AbC123\", O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0644) = 5" \
        "1 renameat(4<$TMP>, \".m.prom.AbC123\", 4<$TMP>, \"m.prom\") = 0" \
        "1 unlinkat(4<$TMP>, \".m.prom.AbC123\", 0) = 0" >"$TMP/bad.log"
check_trace "$TMP/bad.log" 2>/dev/null
[ "$violations" = 5 ] && [ "$writes" = 4 ] && [ "$renames" = 2 ] ||
        fail "test bug: the trace checker found $violations of 5 planted violations ($writes writes, $renames renames)"
check_trace "$TMP/strace.log"
echo "strace: $(wc -l <"$TMP/strace.log") path syscalls, $writes opens for writing, $renames renames, $violations violations"
[ "$violations" = 0 ] || fail "$violations writes outside the managed knobs and the metrics file"
[ "$writes" -ge 2 ] && [ "$renames" -ge 2 ] || fail "test bug: the trace shows no knob or metrics write"
echo "PASS: every write went to a managed knob or the metrics file"
