#!/bin/bash
# The BPF write probe as the write source, on the real sysfs and kernel:
#  1. as root it is in force (the write-source event says bpf), and the
#     daemon holds no capability once it runs;
#  2. a write through a sysfs of another network namespace (what a
#     privileged pod without hostNetwork writes through), to each managed
#     knob, is corrected within 1 s, not at the recheck, with trigger=bpf
#     and the writer named with its pid, comm and network namespace;
#  3. a write through an inherited fd names the process that wrote, not
#     the one that opened;
#  4. 200 one-shot `sh -c 'echo ...'` writers, each reaped at once, 20 ms
#     apart, with both CPUs kept busy: >= 99 % named with their pid (on the
#     syscall-exit hook a record can come after the correction: this is
#     what checks that it still reaches its record);
#  5. where BPF cannot be had, it falls back cleanly: bpf() refused (a
#     seccomp filter) or no BTF (/sys/kernel/btf hidden) gives fanotify,
#     says why, and still corrects and names a writer on this mount;
#  6. a write of the policy's own value, right before a drift, is never
#     named as the drift's writer (its record needs no wakeup, and may be
#     read only with the drift's);
#  7. with the probe loaded in the host's namespaces and the daemon in a
#     network namespace with its own /sys (PrivateNetwork=yes, a pod), a
#     write through the host's /sys is corrected at once.
set -euo pipefail
source "$SRCDIR/tests/lib/daemon.sh"
: "${REFUSE_BPF:?REFUSE_BPF is not set: run this test through ctest}"
: "${UNIT_EXEC:?UNIT_EXEC is not set: run this test through ctest}"
real_sysfs_begin
need unshare util-linux

# busy_cpus: a process spinning on each CPU, killed at exit or by `kill "${hogs[@]}"`.
busy_cpus() {
        hogs=()
        for _ in 1 2; do
                (while :; do :; done) &
                hogs+=($!)
        done
        on_exit "kill ${hogs[*]} 2>/dev/null || true"
}

# one_shot_drifts N [CMD...]: N one-shot `sh -c 'echo always > enabled'`
# writers 20 ms apart, each reaped at once, both CPUs busy, CMD run before
# each; their pids in pids. Returns once the daemon has logged N more
# corrections of enabled, or after 3 s.
one_shot_drifts() {
        local n=$1 want i
        shift
        want=$(($(event_count corrected knob=enabled observed=always) + n))
        busy_cpus
        pids=()
        for ((i = 0; i < n; i++)); do
                [ $# -eq 0 ] || "$@"
                sh -c 'echo always > "$1"' sh "$THP/enabled" &
                pids+=($!)
                wait $!
                sleep 0.02
        done
        kill "${hogs[@]}" 2>/dev/null || true
        wait_until 3 event_count_ge "$want" corrected knob=enabled observed=always || true
}

# ---- 1. The probe is in force. ----
probe_daemon_start
for set in CapEff CapPrm CapBnd; do
        v=$(sed -n "s/^$set:[[:space:]]*//p" "/proc/$DAEMON_PID/status")
        [ "$v" = 0000000000000000 ] || fail "$set is $v after startup, want 0"
done
host_netns=$(stat -Lc %i /proc/self/ns/net)

# ---- 3. A write through an inherited fd names the writer, not the opener. ----
cp /bin/echo "$TMP/inheritor"
(
        exec 3>"$THP/enabled" # the opener: this subshell
        sh -c 'echo $$ >"$1"; exec "$2" always >&3' sh "$TMP/inheritor.pid" "$TMP/inheritor"
)
thp_wait_for enabled madvise 1 || fail "the inherited fd's write was not corrected"
wait_event 2 corrected knob=enabled observed=always writer_pid="$(cat "$TMP/inheritor.pid")" writer_comm=inheritor
echo "a write through an inherited fd: named after the process that wrote"

# ---- 2. Through another network namespace's sysfs, each knob. ----
# other_mount_write KNOB VALUE: writes through a sysfs mounted in a new
# network namespace; prints the writer's pid and network namespace.
other_mount_write() {
        unshare -m -n sh -c 'mount -t sysfs sysfs /sys && echo "$$ $(stat -Lc %i /proc/self/ns/net)" &&
                echo "$2" > "$1"' sh "$THP/$1" "$2"
}
for kv in enabled:always defrag:never khugepaged/defrag:1; do
        knob=${kv%%:*} value=${kv#*:}
        case $knob in
        enabled | defrag) desired=madvise ;;
        *) desired=0 ;;
        esac
        read -r pid netns < <(other_mount_write "$knob" "$value")
        [ "$netns" != "$host_netns" ] || fail "test bug: the writer's network namespace is the host's"
        thp_wait_for "$knob" "$desired" 1 || fail "a write of $value to $knob through another mount was not corrected within 1 s"
        wait_event 2 corrected knob="$knob" observed="$value" trigger=bpf writer_pid="$pid" writer_comm=sh \
                writer_netns="$netns"
done
echo "writes through another network namespace's sysfs: corrected at once and named, each knob"

# ---- 4. One-shot writers, reaped at once, on a busy node. ----
one_shot_drifts "${WRITERS:-200}"
event_lines corrected knob=enabled observed=always writer_comm=sh >"$TMP/named.log"
writers_named 99 "one-shot writers, reaped at once, both CPUs busy" "$TMP/named.log" "${pids[@]}"
! grep -q "writer_pid=$DAEMON_PID " "$TMP/daemon.log" || fail "the daemon named itself as a writer"

# ---- 6. A write of the policy's own value is never named for a drift. ----
# Its record needs no wakeup, and on the syscall-exit hook it can come after
# the compliant read: it must not be taken for the writer of the drift that
# follows. Each round: `compliant` writes madvise, then a one-shot sh drifts;
# both CPUs busy, so the corrector and the writers meet in every order.
cp /bin/echo "$TMP/compliant"
write_compliant() { "$TMP/compliant" madvise >"$THP/enabled"; }
one_shot_drifts 50 write_compliant
! grep -E "writer_comm=compliant( |$)" "$TMP/daemon.log" >&2 ||
        fail "a writer of the policy's own value was named for a drift (above)"
event_lines corrected knob=enabled observed=always writer_comm=sh >"$TMP/named.log"
writers_named 99 "drifts right after a write of the policy's own value" "$TMP/named.log" "${pids[@]}"
daemon_stop

# ---- 7. The probe loaded in the host's namespaces, the daemon in a network namespace of its own. ----
# As under the unit with PrivateNetwork=yes (systemd 254 and later mount a
# new /sys for it) or in a pod without hostNetwork: the daemon watches
# another sysfs than the host's, and only it knows which; a write through
# the host's /sys must still wake it (its records are quiet only for the
# superblock the daemon itself said, in the probe's config map).
echo 'mount -t sysfs sysfs /sys && exec "$@"' >"$TMP/own-netns.sh"
need_mount_ns
daemon_start_cmd "$UNIT_EXEC" --write-source=bpf --write-probe-hook="$PROBE_HOOK" unshare -m -n --propagation private sh "$TMP/own-netns.sh" \
        "$THPGUARDD" --config "$POLICY" --log-target=console
has_event write_source write_source=bpf ||
        fail "own network namespace: the passed probe is not in force: $(grep -m1 'write source' "$TMP/daemon.log")"
for kv in enabled:always defrag:never; do
        knob=${kv%%:*} value=${kv#*:}
        sh -c 'echo "$2" > "$1"' sh "$THP/$knob" "$value"
        thp_wait_for "$knob" madvise 1 ||
                fail "own network namespace: a write of $value to $knob through the host's /sys was not corrected within 1 s"
        wait_event 2 corrected knob="$knob" observed="$value" trigger=bpf writer_comm=sh
done
daemon_stop
echo "the probe loaded in the host's namespaces, the daemon with its own /sys: host writes corrected at once"

# ---- 5. Where BPF cannot be had: fanotify, said, and still correcting. ----
fallback_check() { # fallback_check WHAT: the daemon just started without the probe
        has_event write_source write_source=fanotify ||
                fail "$1: the write source is not fanotify: $(grep -m1 'write source' "$TMP/daemon.log")"
        sh -c 'echo always > "$1"' sh "$THP/enabled"
        thp_wait_for enabled madvise 1 || fail "$1: a drift on this mount was not corrected"
        wait_event 2 corrected knob=enabled observed=always trigger=inotify writer_comm=sh
        daemon_stop
}
daemon_start_cmd "$REFUSE_BPF" "$THPGUARDD" --config "$POLICY" --log-target=console --write-probe-hook="$PROBE_HOOK"
event_says write_source 'Operation not permitted' write_source=fanotify
fallback_check "bpf() refused"
echo "bpf() refused: fanotify, and why"

need_mount_ns
cat >"$TMP/no-btf.sh" <<EOF
mount -t tmpfs none /sys/kernel/btf && exec "\$@"
EOF
daemon_start_cmd unshare -m --propagation private sh "$TMP/no-btf.sh" "$THPGUARDD" --config "$POLICY" \
        --log-target=console --write-probe-hook="$PROBE_HOOK"
event_says write_source 'no BTF' write_source=fanotify
fallback_check "no BTF"
echo "no BTF: fanotify, and why"
