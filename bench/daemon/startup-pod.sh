#!/bin/bash
# SPDX-License-Identifier: MIT
#
#   bench/daemon/startup-pod.sh BUILDDIR [STARTS]
#
# exec -> READY=1 (the policy applied) of thpguardd in a pod: the project's
# image (packaging/container/build-image --binaries BUILDDIR), run by podman
# as the DaemonSet runs it (its args, privileged, read-only root, the host's
# THP directory at /host/sys, /proc at /host/proc, the shipped default
# policy where the ConfigMap goes), STARTS times (default 20), one at a time.
# In a pod nothing is in the fd store, so the daemon forks its own loader
# for the write source: READY=1 must not wait for it (issue 38), and the
# line it logs when it joins says how much later it came.
#
# The clock: the entrypoint is exec-stamp (built here, static, bind-mounted),
# which sends its CLOCK_MONOTONIC time to NOTIFY_SOCKET and execs thpguardd;
# thpguardd's READY=1 goes to the same socket (a host directory mounted into
# the pod), where notify-listen.py stamps it. So the figure is what the
# by-hand row of bench/README.md measures, exec -> READY=1, without
# podman's and runc's own setup. Prints the figures and the machine.
#
# Needs root, podman and runc (Debian: podman runc; the rlimits are the
# ones this kind of machine accepts, as in tests/container), a non-sanitized
# build (ASan's startup would be measured), and a quiet machine. Restores
# every THP knob it finds (tests/lib/real-sysfs.sh).
set -euo pipefail
BUILD=$(realpath "${1:?usage: startup-pod.sh BUILDDIR [STARTS]}")
STARTS=${2:-20}
case $STARTS in '' | *[!0-9]*) echo "startup-pod.sh: STARTS must be a number, not '$STARTS'" >&2; exit 2 ;; esac
export SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
export THPGUARDD=$BUILD/src/thpguardd BUILDDIR=$BUILD
[ -x "$THPGUARDD" ] || { echo "startup-pod.sh: no $THPGUARDD: build first" >&2; exit 2; }
if grep -q 'THPGUARD_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null; then
        echo "startup-pod.sh: $BUILD is a sanitized build: give a plain one (cmake -DCMAKE_BUILD_TYPE=RelWithDebInfo)" >&2
        exit 2
fi
. "$SRCDIR/tests/container/lib.sh"
[ "$(id -u)" -eq 0 ] || fail "needs root (a privileged pod)"
need runc
need cc gcc
python_with yaml python3-yaml
podman_private
real_sysfs_begin
unset NOTIFY_SOCKET

eval "$("$PY" "$SRCDIR/tests/container/manifests.py" shell "$SRCDIR")"
ID=$$-$RANDOM
IMAGE=localhost/thpguard-bench:$ID
NAME=thpguard-bench-$ID
on_exit 'podman rmi -f "$IMAGE" >/dev/null 2>&1'
on_exit 'podman rm -f -t 0 "$NAME" >/dev/null 2>&1'
"$SRCDIR/packaging/container/build-image" --binaries "$BUILD" "$IMAGE" >"$TMP/build.log" 2>&1 ||
        { tail -n 20 "$TMP/build.log" >&2; fail "build-image failed"; }
cc -static -O2 -o "$TMP/exec-stamp" "$SRCDIR/bench/daemon/exec-stamp.c"
mkdir -p "$TMP/notify" "$TMP/metrics"
chmod 0777 "$TMP/notify"
"$PY" "$SRCDIR/bench/daemon/notify-listen.py" "$TMP/notify/sock" "$TMP/times" "$STARTS" >"$TMP/listen.out" &
listener=$!
on_exit 'kill '"$listener"' 2>/dev/null || :'
wait_until 10 grep -q listening "$TMP/listen.out" || fail "notify-listen.py did not start"

readies_above() { [ "$(wc -l <"$TMP/times")" -gt "$1" ]; }

# The node as the by-hand row finds it: drifted at the first start only.
thp_set enabled always
: >"$TMP/joins"
for ((i = 0; i < STARTS; i++)); do
        podman run --runtime runc --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --network none -d --name "$NAME" --privileged --read-only \
                -v "$THP:/host/sys/kernel/mm/transparent_hugepage" \
                -v /proc:/host/proc:ro \
                -v "$SRCDIR/conf/thpguard.conf:$DS_CONFIG:ro" \
                -v "$TMP/metrics:$(dirname "$DS_METRICS")" \
                -v "$TMP/notify:/run/bench-notify" -e NOTIFY_SOCKET=/run/bench-notify/sock \
                -v "$TMP/exec-stamp:/exec-stamp:ro" --entrypoint /exec-stamp \
                "$IMAGE" /usr/sbin/thpguardd "${DS_ARGS[@]}" >/dev/null || fail "podman run failed"
        wait_until 30 readies_above "$i" ||
                { podman logs "$NAME" >&2; fail "start $((i + 1)): no READY=1 within 30 s"; }
        # The write source's line, which comes when the loader has answered.
        wait_until 10 sh -c "podman logs '$NAME' 2>&1 | grep -q 'write source:'" || :
        podman logs "$NAME" 2>&1 | grep 'write source:' | head -n 1 >>"$TMP/joins" || :
        podman rm -f -t 10 "$NAME" >/dev/null
done
wait "$listener" || fail "notify-listen.py failed"

echo "machine: $(uname -srm), $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "podman $(podman --version | awk '{print $3}'), runc $(runc --version | awk 'NR == 1 {print $3}'), image of $BUILD"
awk '{ print ($2 - $1) / 1e6 }' "$TMP/times" | sort -n | awk -v n="$STARTS" '
        { v[NR] = $1 }
        END { printf "pod: exec -> READY=1 over %d starts: min %.2f ms, median %.2f ms, max %.2f ms\n",
                n, v[1], (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2), v[n] }'
echo "write source lines (first, and how many of each):"
sed 's/.*msg="//; s/".*//' "$TMP/joins" | sed -E 's/joined [0-9.]+ ms/joined N ms/' | sort | uniq -c
grep -oE 'joined [0-9.]+ ms after startup' "$TMP/joins" | awk '{ print $2 }' | sort -n | awk '
        { v[NR] = $1 }
        END { if (NR) printf "the write source joined (after READY=1), ms after its loader started: min %.1f ms, median %.1f ms, max %.1f ms\n",
                v[1], v[int((NR + 1) / 2)], v[NR] }'
