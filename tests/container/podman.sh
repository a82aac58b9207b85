#!/bin/bash
# The proof that the fleet deployment works: the image, built here without
# any registry (packaging/container/build-image), run by podman the way the
# DaemonSet runs it, on this machine's real THP sysfs:
#  - the DaemonSet's args (run by the image's ENTRYPOINT) and probes, read
#    from daemonset.yaml;
#  - only the host's THP directory bind-mounted writable at
#    /host/sys/kernel/mm/transparent_hugepage (hostPath), the host's /proc
#    read-only at /host/proc, the policy as a ConfigMap volume in the
#    kubelet's layout (thpguard.conf -> ..data/thpguard.conf, ..data ->
#    ..TIMESTAMP), the metrics directory as a volume, a read-only root file
#    system, privileged;
# and asserts that:
#  1. the startup applies the ConfigMap's policy, and both probes pass; every
#     thread of the daemon, seen from the host, holds no capability in any
#     set (bounding included), has NoNewPrivs 1 and a seccomp filter
#     (Seccomp: 2), although the container is privileged;
#  2. a foreign write on the host is corrected (inotify through the bind);
#  3. the container's stderr has the logfmt line of that correction;
#  4. a policy change published by a ..data symlink swap, as the kubelet
#     does it, is picked up by itself (no signal, no restart);
#  5. the metrics file parses with a real parser and counts all of it;
#  6. `thpguardctl status --sysfs-root /host/sys --proc-root /host/proc`,
#     exec'd in the running container as the DaemonSet's comment says,
#     describes the host: its knobs and its processes, not the container's;
#  7. stopping the container exits 0 and leaves the values (and says
#     thpguard_up 0);
#  8. the image's default command, run with no capability at all
#     (--cap-drop=all, no-new-privileges) and the policy as a single mounted
#     file, also enforces: what a permissive runtime can drop.
# Skips where podman cannot run containers at all; removes its containers
# and image whatever happens; restores every THP knob (real_sysfs_begin).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# runc: crun fails on this kind of machine.
need runc
python_with yaml python3-yaml
python_with prometheus_client python3-prometheus-client
podman_private
real_sysfs_begin

# What the test machine needs: runc, not crun, and rlimits it accepts. No network at all.
PODMAN_RUN=(podman run --runtime runc --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --network none)
ID=$$-$RANDOM
IMAGE=localhost/thpguard-ctest:$ID
NAME=thpguard-ctest-$ID
NAME2=thpguard-ctest-$ID-caps

on_exit 'podman rmi -f "$IMAGE" >/dev/null 2>&1'
on_exit 'podman rm -f -t 0 "$NAME" "$NAME2" >/dev/null 2>&1'

# The DaemonSet's container: DS_ARGS, DS_READY, DS_LIVE, DS_CONFIG, DS_METRICS, ...
eval "$("$PY" "$SRCDIR/tests/container/manifests.py" shell "$SRCDIR")"
POLICY_DIR=$(dirname "$DS_CONFIG")
METRICS_DIR=$(dirname "$DS_METRICS")

# 0. The image, from the sources, with no registry.
"$SRCDIR/packaging/container/build-image" "$IMAGE" 9>&- || fail "build-image failed"
cmd=$(podman image inspect "$IMAGE" --format '{{json .Config.Cmd}}')
want=$("$PY" -c 'import json, sys; print(json.dumps(sys.argv[1:], separators=(",", ":")))' "${DS_ARGS[@]}")
[ "$cmd" = "$want" ] || fail "the image's default arguments are $cmd, the DaemonSet's $want"
# Can podman run a container at all? Its own failures (125, 126) mean no: skip.
# (The ENTRYPOINT is thpguardd: the arguments go to it.)
rc=0
"${PODMAN_RUN[@]}" --rm "$IMAGE" --version >"$TMP/version" 2>"$TMP/version.err" || rc=$?
case $rc in
0) grep -q '^thpguardd ' "$TMP/version" || fail "thpguardd --version in the image printed: $(cat "$TMP/version")" ;;
125 | 126) skip "podman cannot run containers here (exit $rc): $(head -n3 "$TMP/version.err" | tr '\n' ' ')" ;;
*) fail "thpguardd --version in the image exited $rc: $(cat "$TMP/version.err")" ;;
esac

# A ConfigMap volume as the kubelet lays it out, and its atomic update
# (kubelet's AtomicWriter: a new ..TIMESTAMP dir, ..data_tmp -> it, renamed over ..data).
CM=$TMP/configmap
mkdir -p "$CM"
# The kubelet makes the volume's directory 0777 (an emptyDir) and mounts it
# read-only: the daemon must accept it (a read-only mount is not writable).
chmod 0777 "$CM"
cm_publish() {
        local ts old
        ts=..$(date +%Y_%m_%d_%H_%M_%S).$(date +%N)
        old=$(readlink "$CM/..data" 2>/dev/null || true)
        mkdir "$CM/$ts"
        cp "$1" "$CM/$ts/$DS_CONFIGMAP_KEY"
        chmod 0444 "$CM/$ts/$DS_CONFIGMAP_KEY"
        chmod 0755 "$CM/$ts"
        ln -s "$ts" "$CM/..data_tmp"
        mv -T "$CM/..data_tmp" "$CM/..data"
        [ -L "$CM/$DS_CONFIGMAP_KEY" ] || ln -s "..data/$DS_CONFIGMAP_KEY" "$CM/$DS_CONFIGMAP_KEY"
        if [ -n "$old" ]; then rm -rf -- "${CM:?}/$old"; fi
}
"$PY" "$SRCDIR/tests/container/manifests.py" configmap "$SRCDIR" "$DS_CONFIGMAP_KEY" >"$TMP/policy-1.conf"
grep -q '^  enabled = "madvise";' "$TMP/policy-1.conf" || fail "test bug: the ConfigMap's policy no longer sets enabled = madvise"
grep -q '^  defrag = "madvise";' "$TMP/policy-1.conf" || fail "test bug: the ConfigMap's policy no longer sets defrag = madvise"
cm_publish "$TMP/policy-1.conf"
mkdir -p "$TMP/metrics"

# Drifted before the pod starts, as on a node that comes up with the kernel's default.
thp_set enabled always
thp_set defrag always

# 1. Start as the DaemonSet does.
"${PODMAN_RUN[@]}" -d --name "$NAME" --privileged --read-only \
        -v "$THP:/host/sys/kernel/mm/transparent_hugepage" \
        -v /proc:/host/proc:ro \
        -v "$CM:$POLICY_DIR:ro" \
        -v "$TMP/metrics:$METRICS_DIR" \
        "$IMAGE" "${DS_ARGS[@]}" >/dev/null || fail "podman run failed"
thp_wait_for enabled madvise 10 || { podman logs "$NAME" >&2; fail "the startup did not apply enabled"; }
thp_wait_for defrag madvise 2 || fail "the startup did not apply defrag"
wait_until 10 podman exec "$NAME" "${DS_READY[@]}" >/dev/null || {
        podman exec "$NAME" "${DS_READY[@]}" >&2 || true
        fail "the readinessProbe (${DS_READY[*]}) does not pass on a compliant node"
}
podman exec "$NAME" "${DS_LIVE[@]}" >/dev/null || fail "the livenessProbe (${DS_LIVE[*]}) fails on a running daemon"
pid=$(podman inspect "$NAME" --format '{{.State.Pid}}')
[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = thpguardd ] || fail "the container's first process is $(cat "/proc/$pid/comm" 2>/dev/null), not thpguardd"
for t in /proc/"$pid"/task/*; do
        for f in CapInh CapPrm CapEff CapBnd CapAmb; do
                v=$(sed -n "s/^$f:[[:space:]]*//p" "$t/status")
                [ "$v" = 0000000000000000 ] || fail "the privileged pod's daemon, thread ${t##*/}: $f is $v, want 0"
        done
        grep -q '^NoNewPrivs:[[:space:]]*1$' "$t/status" || fail "the pod's daemon, thread ${t##*/}: NoNewPrivs is not 1"
        grep -q '^Seccomp:[[:space:]]*2$' "$t/status" || fail "the pod's daemon, thread ${t##*/}: Seccomp is not 2"
done
# Into a file, not a pipe into grep -q: under pipefail, podman logs killed by SIGPIPE would fail it.
podman logs "$NAME" >"$TMP/pod.log" 2>&1
grep -q 'msg="confined: Landlock ABI [0-9]*, seccomp filter"' "$TMP/pod.log" ||
        { cat "$TMP/pod.log" >&2; fail "the pod's daemon did not confine itself with Landlock and seccomp"; }
echo "1. started: policy applied, readiness and liveness pass; $(ls /proc/"$pid"/task | wc -l) threads, no capability, NoNewPrivs 1, Seccomp 2"

# 2. A foreign write on the host, seen through the bind mount and corrected.
thp_set enabled always
thp_wait_for enabled madvise 1 || fail "a foreign write on the host was not corrected within 1 s"
echo "2. a foreign write on the host was corrected"

# 3. The container's stderr: one logfmt line per event, the journal's fields.
podman logs "$NAME" >"$TMP/stdout" 2>"$TMP/stderr"
want=(corrected level=notice knob=enabled observed=always desired=madvise trigger=inotify result=corrected)
EVENT_LOG=$TMP/stderr has_event "${want[@]}" || { cat "$TMP/stderr" >&2; fail "the container's stderr has no ${want[*]} line"; }
EVENT_LOG=$TMP/stderr has_event corrected trigger=startup result=corrected ||
        fail "the container's stderr does not log the startup corrections"
[ ! -s "$TMP/stdout" ] || fail "the daemon wrote to stdout: $(cat "$TMP/stdout")"
echo "3. stderr: $(EVENT_LOG=$TMP/stderr event_lines "${want[@]}" | head -n 1)"

# 4. The ConfigMap changes: the kubelet swaps ..data; nobody signals the daemon.
sed 's/^  enabled = "madvise";/  enabled = "never";/' "$TMP/policy-1.conf" >"$TMP/policy-2.conf"
cm_publish "$TMP/policy-2.conf"
thp_wait_for enabled never 5 || { podman logs "$NAME" >&2; fail "the ..data swap was not picked up"; }
podman logs "$NAME" >"$TMP/logs" 2>&1
EVENT_LOG=$TMP/logs has_event policy_reloaded || fail "no policy_reloaded event after the ..data swap"
thp_set enabled always
thp_wait_for enabled never 1 || fail "the new policy is not enforced after the swap"
wait_until 10 podman exec "$NAME" "${DS_READY[@]}" >/dev/null || fail "not ready after the policy change"
echo "4. the ..data swap was picked up: enabled is now never"

# 5. The metrics file, on the host side of the volume, through the real parser.
# (One swap may count two reloads: the kubelet, and cm_publish, delete the
# old ..TIMESTAMP directory after the swap, and that is a `..` entry too.)
M=$TMP/metrics/$(basename "$DS_METRICS")
wait_until 3 metric_is "$M" 'thpguard_corrections_total{knob="enabled",trigger="reload"}' 1 ||
        fail "the metrics file does not count the reload's correction"
# The file is rewritten at most once a second: the last correction may still
# be in the trailing write.
wait_until 3 metric_ge "$M" 'thpguard_corrections_total{knob="enabled",trigger="inotify"}' 2 ||
        fail "the metrics file counts $(metric "$M" 'thpguard_corrections_total{knob="enabled",trigger="inotify"}') inotify corrections of enabled, want at least 2"
metrics_check "$M" --all \
        'thpguard_up=1' \
        'thpguard_corrections_total{knob="enabled",trigger="startup"}=1' \
        'thpguard_corrections_total{knob="defrag",trigger="startup"}=1' \
        'thpguard_corrections_total{knob="enabled",trigger="inotify"}>=2' \
        'thpguard_policy_reloads_total{result="ok"}>=1' \
        'thpguard_policy_reloads_total{result="failed"}=0' \
        'thpguard_knob_compliant{knob="enabled"}=1' \
        'thpguard_knob_supported{knob="khugepaged/defrag"}=1' \
        'thpguard_recheck_interval_seconds=30'
echo "5. the metrics file parses and counts every correction"

# 6. thpguardctl in the pod, on the host's paths: the host's knobs and processes.
podman exec "$NAME" thpguardctl status --json --sysfs-root /host/sys --proc-root /host/proc \
        >"$TMP/ctl.json" 2>"$TMP/ctl.err" || fail "thpguardctl status in the container failed: $(cat "$TMP/ctl.err")"
# A process may exit while find lists /proc: that is no failure.
host_procs=$({ find /proc -maxdepth 1 -name '[0-9]*' 2>/dev/null || true; } | wc -l)
"$PY" - "$TMP/ctl.json" "$host_procs" "$(thp_get enabled)" "$(thp_get defrag)" <<'PYEOF' || fail "thpguardctl in the container does not describe the host (above)"
import json, sys
d = json.load(open(sys.argv[1]))
host_procs, enabled, defrag = int(sys.argv[2]), sys.argv[3], sys.argv[4]
knobs = {k["knob"]: k for k in d["knobs"]}
problems = []
if d["sysfs_root"] != "/host/sys" or d["proc_root"] != "/host/proc":
    problems.append(f"roots {d['sysfs_root']} {d['proc_root']}")
if knobs["enabled"]["value"] != enabled or knobs["defrag"]["value"] != defrag:
    problems.append(f"knobs {knobs['enabled']['value']} {knobs['defrag']['value']}, the host has {enabled} {defrag}")
# The container alone has two processes; the host's /proc has them all.
if d["processes"]["scanned"] < max(5, host_procs // 2):
    problems.append(f"{d['processes']['scanned']} processes scanned, the host has {host_procs}")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
PYEOF
podman exec "$NAME" thpguardctl status --sysfs-root /host/sys --proc-root /host/proc >"$TMP/ctl.txt" ||
        fail "thpguardctl status (text) in the container failed"
grep -q '^Knobs (/host/sys/kernel/mm/transparent_hugepage)' "$TMP/ctl.txt" || fail "thpguardctl status printed: $(head -5 "$TMP/ctl.txt")"
echo "6. thpguardctl status in the container: $(head -n1 "$TMP/ctl.txt")"

# 7. Stop (SIGTERM, as the kubelet does): exit 0, the values stay.
before=$(for k in enabled defrag khugepaged/defrag; do echo "$k=$(thp_get "$k")"; done)
podman stop -t 10 "$NAME" >/dev/null
code=$(podman inspect "$NAME" --format '{{.State.ExitCode}}')
[ "$code" = 0 ] || { podman logs "$NAME" >&2; fail "the container exited $code on SIGTERM"; }
after=$(for k in enabled defrag khugepaged/defrag; do echo "$k=$(thp_get "$k")"; done)
[ "$before" = "$after" ] || fail "stopping changed the node: before $before, after $after"
[ "$(thp_get enabled)" = never ] || fail "stopping rolled enabled back"
metrics_check "$M" --all 'thpguard_up=0'
echo "7. stopped with exit 0; the node keeps enabled=never; thpguard_up 0"

# 8. The image's default command, no privilege, no capability, the policy as one file.
thp_set enabled always
"${PODMAN_RUN[@]}" -d --name "$NAME2" --read-only --cap-drop=all --security-opt no-new-privileges \
        -v "$THP:/host/sys/kernel/mm/transparent_hugepage" \
        -v "$TMP/policy-1.conf:/etc/thpguard/thpguard.conf:ro" "$IMAGE" >/dev/null ||
        fail "podman run of the default command failed"
thp_wait_for enabled madvise 10 || { podman logs "$NAME2" >&2; fail "with no capability, the startup did not apply"; }
thp_set enabled never
thp_wait_for enabled madvise 1 || fail "with no capability, a foreign write was not corrected"
podman stop -t 10 "$NAME2" >/dev/null
code=$(podman inspect "$NAME2" --format '{{.State.ExitCode}}')
[ "$code" = 0 ] || fail "the unprivileged container exited $code on SIGTERM"
echo "8. the default command enforces with --cap-drop=all"
echo "PASS"
