#!/bin/bash
# The image has two recipes: the Containerfile (a connected machine) and
# build-image (no registry, podman import). They must make the same image:
# the same default command and PATH, the same source files, the same CMake
# options, and both lay out the tree with collect-rootfs. This test runs
# everywhere, podman or not.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
fleet_init

"$PY" - "$SRCDIR/packaging/container" <<'PYEOF' || fail "the Containerfile and build-image differ (above)"
import json, re, sys

d = sys.argv[1]
cf = open(f"{d}/Containerfile").read()
bi = open(f"{d}/build-image").read()
problems = []

cmd_cf = json.loads(re.search(r"^CMD (\[.*\])$", cf, re.M).group(1))
cmd_bi = json.loads(re.search(r"--change 'CMD (\[.*\])'", bi).group(1))
if cmd_cf != cmd_bi:
    problems.append(f"CMD: Containerfile {cmd_cf}, build-image {cmd_bi}")
if cmd_cf != ["/usr/sbin/thpguardd", "--sysfs-root", "/host/sys", "--config", "/etc/thpguard/thpguard.conf"]:
    problems.append(f"the default command is {cmd_cf}, not the DaemonSet's")

env_cf = re.findall(r"^ENV (\S+)$", cf, re.M)
env_bi = re.findall(r"--change 'ENV (\S+)'", bi)
if env_cf != env_bi:
    problems.append(f"ENV: Containerfile {env_cf}, build-image {env_bi}")

# Sources: the Containerfile's COPY lines (but collect-rootfs) and build-image's cp.
copied_cf = sorted(m.rstrip("/") for m in re.findall(r"^COPY (?!--)(\S+) ", cf, re.M)
                   if "collect-rootfs" not in m)
cp = re.search(r'cp -a ((?:"\$srcdir/\S+" )+)"\$work/src/"', bi).group(1)
copied_bi = sorted(re.findall(r'"\$srcdir/(\S+?)"', cp))
if copied_cf != copied_bi:
    problems.append(f"sources: Containerfile {copied_cf}, build-image {copied_bi}")

opts_cf = sorted(re.findall(r"-D\w+=\w+", re.search(r"RUN cmake -S[^\n]*", cf).group(0)))
opts_bi = sorted(re.findall(r"-D\w+=\w+", re.search(r'cmake -S "\$work/src"[^\n]*', bi).group(0)))
if opts_cf != opts_bi:
    problems.append(f"CMake options: Containerfile {opts_cf}, build-image {opts_bi}")

for name, text in (("Containerfile", cf), ("build-image", bi)):
    if "collect-rootfs" not in text:
        problems.append(f"{name} does not use collect-rootfs")
if not re.search(r"^FROM scratch$", cf, re.M):
    problems.append("the Containerfile's runtime stage is not FROM scratch")

for p in problems:
    print(f"FAIL: {p}")
if problems:
    sys.exit(1)
print(f"same image: CMD {cmd_cf}, sources {copied_cf}, options {opts_cf}")
PYEOF

# collect-rootfs on the build tree's binary: the loader, every library ldd
# names, the policy, no shell; and the tree runs thpguardd by itself.
"$SRCDIR/packaging/container/collect-rootfs" "$TMP/rootfs" "$THPGUARDD" "$SRCDIR/conf/thpguard.conf" ||
        fail "collect-rootfs failed"
[ -x "$TMP/rootfs/usr/sbin/thpguardd" ] || fail "no /usr/sbin/thpguardd in the tree"
cmp -s "$TMP/rootfs/etc/thpguard/thpguard.conf" "$SRCDIR/conf/thpguard.conf" || fail "the tree's policy is not conf/thpguard.conf"
[ "$(stat -c %a "$TMP/rootfs/etc/thpguard/thpguard.conf")" = 644 ] || fail "the tree's policy is not 0644"
for sh in bin/sh usr/bin/sh bin/bash usr/bin/bash; do
        [ ! -e "$TMP/rootfs/$sh" ] || fail "the tree has a shell: /$sh"
done
while read -r lib; do
        [ -e "$TMP/rootfs$lib" ] || fail "the tree lacks $lib, which ldd names"
done < <(ldd "$THPGUARDD" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
echo "collect-rootfs: $(find "$TMP/rootfs" -type f | wc -l) files, no shell"
echo "PASS"
