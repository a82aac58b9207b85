#!/bin/bash
# The image has two recipes: the Containerfile (a connected machine) and
# build-image (no registry, podman import). They must make the same image:
# the same ENTRYPOINT ["thpguardd"], CMD (the DaemonSet's args), USER 0:0,
# PATH and OCI labels, the same source files, and both compile with
# packaging/container/compile (Debian's hardening flags) and lay out the tree
# with collect-rootfs. The tree has both binaries, every library's Debian
# copyright file and no shell. This test runs everywhere, podman or not.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
python_with yaml python3-yaml

"$PY" - "$SRCDIR" <<'PYEOF' || fail "the Containerfile and build-image differ (above)"
import json, re, sys
import yaml

src = sys.argv[1]
d = f"{src}/packaging/container"
cf = open(f"{d}/Containerfile").read()
bi = open(f"{d}/build-image").read()
problems = []

def one(pattern, text, what):
    m = re.search(pattern, text, re.M)
    if not m:
        problems.append(f"{what}: not found")
        return None
    return m.group(1)

# ENTRYPOINT, CMD, USER, ENV: the same in both.
for what, pcf, pbi in (("ENTRYPOINT", r"^ENTRYPOINT (\[.*\])$", r"--change 'ENTRYPOINT (\[.*\])'"),
                       ("CMD", r"^CMD (\[.*\])$", r"--change 'CMD (\[.*\])'")):
    a, b = one(pcf, cf, f"Containerfile {what}"), one(pbi, bi, f"build-image {what}")
    if a and b and json.loads(a) != json.loads(b):
        problems.append(f"{what}: Containerfile {a}, build-image {b}")
entrypoint = json.loads(one(r"^ENTRYPOINT (\[.*\])$", cf, "ENTRYPOINT") or "null")
cmd = json.loads(one(r"^CMD (\[.*\])$", cf, "CMD") or "null")
if entrypoint != ["thpguardd"]:
    problems.append(f"the ENTRYPOINT is {entrypoint}, not [\"thpguardd\"]")
ds = next(o for o in yaml.safe_load_all(open(f"{src}/packaging/kubernetes/daemonset.yaml")) if o and o["kind"] == "DaemonSet")
args = ds["spec"]["template"]["spec"]["containers"][0]["args"]
if cmd != args:
    problems.append(f"the CMD is {cmd}, the DaemonSet's args {args}")
for what, pcf, pbi in (("USER", r"^USER (\S+)$", r"--change 'USER (\S+)'"), ("ENV", r"^ENV (\S+)$", r"--change 'ENV (\S+)'")):
    a, b = re.findall(pcf, cf, re.M), re.findall(pbi, bi)
    if a != b:
        problems.append(f"{what}: Containerfile {a}, build-image {b}")
if re.findall(r"^USER (\S+)$", cf, re.M) != ["0:0"]:
    problems.append("the Containerfile's USER is not 0:0")

# OCI labels: the same keys; licenses MIT; the version default is the project's.
want = {f"org.opencontainers.image.{k}" for k in ("title", "description", "version", "revision", "created", "source", "licenses")}
labels_cf = set(re.findall(r"(org\.opencontainers\.image\.[a-z]+)=", cf))
labels_bi = set(re.findall(r"LABEL (org\.opencontainers\.image\.[a-z]+)=", bi))
if labels_cf != labels_bi:
    problems.append(f"labels: Containerfile {sorted(labels_cf)}, build-image {sorted(labels_bi)}")
if want - labels_cf:
    problems.append(f"labels missing: {sorted(want - labels_cf)}")
if 'org.opencontainers.image.licenses="MIT"' not in cf or "LABEL org.opencontainers.image.licenses=MIT'" not in bi:
    problems.append("the licenses label is not MIT in both")
version = one(r"^project\(thpguard VERSION (\S+)", open(f"{src}/CMakeLists.txt").read(), "project version")
if one(r"^ARG VERSION=(\S+)$", cf, "ARG VERSION") != version:
    problems.append(f"the Containerfile's ARG VERSION is not the project's {version}")
if not re.match(r"^https?://\S+$", one(r"^ARG SOURCE=(\S+)$", cf, "ARG SOURCE") or ""):
    problems.append("the Containerfile's ARG SOURCE is not a URL (build-image reads it from there)")

# Sources: the Containerfile's COPY lines (but the packaging/container scripts) and build-image's cp.
copied_cf = set()
for line in re.findall(r"^COPY (?!--)(.*) \S+$", cf, re.M):
    copied_cf |= {w.rstrip("/") for w in line.split() if not w.startswith("packaging/container/")}
copied_bi = set()
for line in re.findall(r'^\s*cp -a (.*)$', bi, re.M):
    copied_bi |= set(re.findall(r'"\$srcdir/(\S+?)"', line))
if copied_cf != copied_bi:
    problems.append(f"sources: Containerfile {sorted(copied_cf)}, build-image {sorted(copied_bi)}")

for name, text in (("Containerfile", cf), ("build-image", bi)):
    for script in ("compile", "collect-rootfs"):
        if not re.search(rf"(packaging/container/|\$here/){script}\b", text):
            problems.append(f"{name} does not run {script}")
if not re.search(r"^FROM scratch$", cf, re.M):
    problems.append("the Containerfile's runtime stage is not FROM scratch")
if "dpkg-dev" not in cf:
    problems.append("the Containerfile's build stage does not install dpkg-dev (dpkg-buildflags)")

for p in problems:
    print(f"FAIL: {p}")
if problems:
    sys.exit(1)
print(f"same image: ENTRYPOINT {entrypoint}, CMD {cmd}, labels {sorted(k.split('.')[-1] for k in labels_cf)}, "
      f"sources {sorted(copied_cf)}")
PYEOF

# collect-rootfs on the build tree's binaries: the loader, every library ldd
# names and its package's copyright file, the policy, no shell; and the tree
# runs both binaries by itself.
CTL=$BUILDDIR/src/ctl/thpguardctl
[ -x "$CTL" ] || fail "no thpguardctl at $CTL"
"$SRCDIR/packaging/container/collect-rootfs" "$TMP/rootfs" "$THPGUARDD" "$CTL" "$SRCDIR/conf/thpguard.conf" \
        "$SRCDIR/packaging/debian/copyright" || fail "collect-rootfs failed"
[ -x "$TMP/rootfs/usr/sbin/thpguardd" ] || fail "no /usr/sbin/thpguardd in the tree"
[ -x "$TMP/rootfs/usr/bin/thpguardctl" ] || fail "no /usr/bin/thpguardctl in the tree"
cmp -s "$TMP/rootfs/etc/thpguard/thpguard.conf" "$SRCDIR/conf/thpguard.conf" || fail "the tree's policy is not conf/thpguard.conf"
[ "$(stat -c %a "$TMP/rootfs/etc/thpguard/thpguard.conf")" = 644 ] || fail "the tree's policy is not 0644"
cmp -s "$TMP/rootfs/usr/share/doc/thpguard/copyright" "$SRCDIR/packaging/debian/copyright" ||
        fail "the tree does not ship thpguard's copyright file"
for sh in bin/sh usr/bin/sh bin/bash usr/bin/bash; do
        [ ! -e "$TMP/rootfs/$sh" ] || fail "the tree has a shell: /$sh"
done
for d in host/sys/kernel/mm/transparent_hugepage host/proc run/thpguard etc/thpguard; do
        [ -d "$TMP/rootfs/$d" ] || fail "the tree has no mount point /$d"
done
n=0
while read -r lib; do
        [ -e "$TMP/rootfs$lib" ] || fail "the tree lacks $lib, which ldd names"
        pkg=$( (dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")") | head -n1 | cut -d: -f1)
        [ -s "$TMP/rootfs/usr/share/doc/$pkg/copyright" ] || fail "the tree lacks /usr/share/doc/$pkg/copyright (for $lib)"
        n=$((n + 1))
done < <(for b in "$THPGUARDD" "$CTL"; do ldd "$b"; done | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u)
echo "collect-rootfs: $(find "$TMP/rootfs" -type f | wc -l) files, $n libraries with their copyright files, no shell"
echo "PASS"
