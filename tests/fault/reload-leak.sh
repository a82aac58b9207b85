#!/bin/bash
# Fault: a thousand failed reloads. libconfig 1.5 (Debian 12, RHEL 8) never
# frees the string token it discards on a syntax error (upstream #142), so a
# policy whose error follows a long string literal leaked that string at each
# reload attempt: one 900 KB literal line, 100 SIGHUPs, RSS 7.4 MB -> 95 MB,
# until the pod's memory limit restarts it into a refusal.
#
# Expected: across 1,000 failed reloads of any policy up to the 1 MiB cap,
# the daemon's RSS stays within 1 MiB of its value before them. Two
# policies, each its own 1,000 reloads:
#   huge    the issue's: one 900 KB string literal, then a syntax error. The
#           pre-scan refuses the literal (too long) before libconfig sees it.
#   bound   a literal of exactly the longest length allowed, then a syntax
#           error: the worst a policy can still make libconfig leak, on every
#           reload. The bound is chosen so that 1,000 of those fit in 1 MiB.
# Each SIGHUP waits for its own rejection line (signals coalesce), so every
# one is a parse. The daemon is thpguardd-plain (no sanitizers: ASan's
# quarantine holds freed memory on purpose), on a private fixture tree; the
# running daemon keeps enforcing its first policy.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
fixture_on_tmpfs
RELOADS=${RELOADS:-1000}
WARMUP=20
SLACK_KB=1024
STRING_MAX=$(sed -n 's/^#define POLICY_STRING_MAX *\([0-9][0-9]*\).*/\1/p' "$SRCDIR/include/thpguard/policy.h")
[ -n "$STRING_MAX" ] || fail "test bug: no POLICY_STRING_MAX in include/thpguard/policy.h"

write_policy "$POLICY" 'recheck_interval = 3600;
thp = { enabled = "madvise"; };'
daemon_start_cmd "$THPGUARDD_PLAIN" --config "$POLICY" --sysfs-root "$ROOT" --log-target=console

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status"; }

# A line made of a string literal of N bytes: libconfig expects a setting name there.
literal_line() { printf '"%s"\n' "$(head -c "$1" /dev/zero | tr '\0' A)"; }

# Waiting without a process per poll (grep and sleep would make the 2,000
# waits take most of a minute): the log is read line by line on fd 3, and a
# read with a timeout on a FIFO nobody writes is the sleep.
mkfifo "$TMP/never"
exec 3<"$TMP/daemon.log" 4<>"$TMP/never"
REJECTED=0
PARTIAL= # a line the daemon was still writing when it was read
# reload: one SIGHUP, then waits for its rejection line (10 s at most).
reload() {
        local line i
        kill -HUP "$DAEMON_PID"
        for ((i = 0; i < 10000; i++)); do
                while IFS= read -r -u 3 line || { PARTIAL+=$line && false; }; do
                        line=$PARTIAL$line
                        PARTIAL=
                        [[ $line == *'msg="policy rejected'* ]] || continue
                        REJECTED=$((REJECTED + 1))
                        return 0
                done
                read -r -t 0.001 -u 4 line || true
        done
        tail -3 "$TMP/daemon.log" >&2
        fail "the daemon did not reject reload $((REJECTED + 1)) within 10 s"
}

failed_reloads() { # NAME: $RELOADS failed reloads of $TMP/NAME.conf
        local name=$1 rss0 rss i
        cp "$TMP/$name.conf" "$TMP/next.conf"
        mv "$TMP/next.conf" "$POLICY"
        # Warm up: the allocator settles around the 1 MiB read buffer first.
        for ((i = 1; i <= WARMUP; i++)); do
                reload
        done
        rss0=$(rss_kb)
        for ((i = 1; i <= RELOADS; i++)); do
                reload
                if [ $((i % 50)) = 0 ] || [ $i = "$RELOADS" ]; then
                        rss=$(rss_kb)
                        [ "$rss" -le $((rss0 + SLACK_KB)) ] ||
                                fail "$name: RSS $rss0 kB -> $rss kB after $i failed reloads (more than $SLACK_KB kB)"
                fi
        done
        kill -0 "$DAEMON_PID" || fail "$name: the daemon died"
        echo "$name: $RELOADS failed reloads, RSS $rss0 kB -> $rss kB; last rejection: $(event_lines policy_rejected | tail -1 | cut -c1-200)"
}

literal_line $((900 * 1000)) >"$TMP/huge.conf"
literal_line "$STRING_MAX" >"$TMP/bound.conf"
chmod 0644 "$TMP/huge.conf" "$TMP/bound.conf"
failed_reloads huge
event_says policy_rejected "thpguard\.conf:1: string literal longer than $STRING_MAX bytes" ||
        fail "huge: the rejection does not say why: $(event_lines policy_rejected | tail -1 | cut -c1-300)"
failed_reloads bound

# Still enforcing the first policy (on the fixture a write does not stick,
# but it is tried), and a good policy still loads.
printf '[always] madvise never\n' 1<>"$T/enabled" # in place: no empty read
wait_until 5 has_event correction_failed knob=enabled observed=always desired=madvise ||
        { cat "$TMP/daemon.log"; fail "the last good policy was not acted on"; }
write_policy "$POLICY" 'recheck_interval = 3600;
thp = { defrag = "madvise"; };'
kill -HUP "$DAEMON_PID"
wait_event 5 policy_reloaded policy="$POLICY"
daemon_stop
echo "PASS: $RELOADS failed reloads each of a huge and a bound-length literal, RSS within $SLACK_KB kB"
