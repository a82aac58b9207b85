#!/bin/bash
# The image as build-image makes it (compiled from the sources with
# packaging/container/compile, as the Containerfile does), checked on the
# image itself (podman inspect, and its files through podman export):
#  - USER 0:0, ENTRYPOINT ["thpguardd"], CMD = the DaemonSet's args;
#  - OCI labels: version (CMakeLists.txt), revision (the git commit), created
#    (RFC 3339, within the last day), source (a URL), licenses (MIT);
#  - /usr/sbin/thpguardd and /usr/bin/thpguardctl built with Debian's
#    hardening flags: PIE, BIND_NOW and RELRO, the stack protector, FORTIFY
#    (readelf; a plain binary must fail the same check);
#  - a Debian copyright file for the package of every shared library in the
#    image, and thpguard's own; no shell.
# Needs podman (not runc: nothing runs); skips without it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
podman_private
need readelf binutils
need dpkg-buildflags dpkg-dev
python_with yaml python3-yaml

ID=$$-$RANDOM
IMAGE=localhost/thpguard-ctest-image:$ID
CID=
on_exit 'podman rmi -f "$IMAGE" >/dev/null 2>&1'
on_exit '[ -z "$CID" ] || podman rm -f "$CID" >/dev/null 2>&1'

t0=$(date +%s)
"$SRCDIR/packaging/container/build-image" "$IMAGE" 9>&- || fail "build-image failed"
podman image inspect "$IMAGE" --format '{{json .Config}}' >"$TMP/config.json"

# 1. The configuration and the labels.
eval "$("$PY" "$SRCDIR/tests/container/manifests.py" shell "$SRCDIR")"
revision=unknown
if git -C "$SRCDIR" rev-parse --verify -q HEAD >/dev/null 2>&1; then revision=$(git -C "$SRCDIR" rev-parse HEAD); fi
"$PY" - "$TMP/config.json" "$SRCDIR" "$revision" "$t0" "${DS_ARGS[@]}" <<'PYEOF' || fail "the image's configuration is not as intended (above)"
import datetime, json, re, sys
cfg = json.load(open(sys.argv[1]))
src, revision, t0, ds_args = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
version = re.search(r"^project\(thpguard VERSION (\S+)", open(f"{src}/CMakeLists.txt").read(), re.M).group(1)
problems = []
def expect(cond, what):
    if not cond:
        problems.append(what)
expect(cfg.get("User") == "0:0", f"User is {cfg.get('User')!r}, not 0:0")
expect(cfg.get("Entrypoint") == ["thpguardd"], f"Entrypoint is {cfg.get('Entrypoint')}, not [\"thpguardd\"]")
expect(cfg.get("Cmd") == ds_args, f"Cmd is {cfg.get('Cmd')}, the DaemonSet's args are {ds_args}")
expect("PATH=/usr/sbin:/usr/bin" in cfg.get("Env", []), f"Env is {cfg.get('Env')}")
L = {k.rsplit(".", 1)[1]: v for k, v in cfg.get("Labels", {}).items() if k.startswith("org.opencontainers.image.")}
expect(L.get("version") == version, f"version label {L.get('version')!r}, not {version!r}")
expect(L.get("revision", "").split("-dirty")[0] == revision, f"revision label {L.get('revision')!r}, not {revision!r}")
expect(L.get("licenses") == "MIT", f"licenses label {L.get('licenses')!r}")
expect(re.match(r"^https?://\S+$", L.get("source", "")) is not None, f"source label {L.get('source')!r} is not a URL")
try:
    created = datetime.datetime.strptime(L.get("created", ""), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    expect(t0 - 86400 <= created.timestamp() <= t0 + 3600, f"created label {L['created']} is not the build's time")
except ValueError:
    problems.append(f"created label {L.get('created')!r} is not RFC 3339 UTC")
for p in problems:
    print(f"FAIL: {p}")
if problems:
    sys.exit(1)
print(f"config: User 0:0, Entrypoint [thpguardd], Cmd the DaemonSet's args; labels {L}")
PYEOF

# 2. The files, as the image holds them.
CID=$(podman create "$IMAGE")
mkdir "$TMP/rootfs"
podman export "$CID" | tar -C "$TMP/rootfs" -xf - || fail "podman export failed"
R=$TMP/rootfs

# hardened FILE: why FILE lacks one of Debian's hardening features, or nothing.
hardened() {
        local f=$1 h d s
        h=$(readelf -hW "$f") d=$(readelf -dW "$f") s=$(readelf --dyn-syms -W "$f")
        grep -q 'Type:[[:space:]]*DYN' <<<"$h" && grep -q 'FLAGS_1.*PIE' <<<"$d" || echo "$f is not PIE"
        grep -Eq 'BIND_NOW|FLAGS_1.*NOW' <<<"$d" || echo "$f is not linked with -z now"
        readelf -lW "$f" | grep -q GNU_RELRO || echo "$f has no RELRO segment"
        grep -q '__stack_chk_fail' <<<"$s" || echo "$f has no stack protector"
        grep -Eq '__[a-z]+_chk(@|$| )' <<<"$s" || echo "$f is not built with _FORTIFY_SOURCE"
}
for f in usr/sbin/thpguardd usr/bin/thpguardctl; do
        [ -x "$R/$f" ] || fail "the image has no /$f"
        why=$(hardened "$R/$f")
        [ -z "$why" ] || fail "/$f in the image is not hardened: $why"
        echo "/$f: PIE, BIND_NOW, RELRO, stack protector, FORTIFY"
done
# The check itself: a plain binary fails every part of it.
printf '#include <stdio.h>\nint main(int c, char **v) { char b[8]; snprintf(b, sizeof b, "%%s", v[0]); puts(b); return c; }\n' >"$TMP/plain.c"
gcc -O0 -U_FORTIFY_SOURCE -fno-stack-protector -no-pie -Wl,-z,lazy -Wl,-z,norelro "$TMP/plain.c" -o "$TMP/plain" ||
        fail "test bug: cannot compile the plain binary"
[ "$(hardened "$TMP/plain" | wc -l)" -eq 5 ] || fail "test bug: the hardening check passes parts of a plain binary: $(hardened "$TMP/plain")"

# Copyright files: thpguard's, and the package of every shared library in the image.
cmp -s "$R/usr/share/doc/thpguard/copyright" "$SRCDIR/packaging/debian/copyright" ||
        fail "the image does not ship thpguard's copyright file"
n=0
while read -r lib; do
        host=/${lib#"$R"/}
        # dpkg knows a library by the path its package ships (/lib/... or /usr/lib/...): both are
        # tried, whole, so that a namesake elsewhere (libc6-i386's /lib32/libm.so.6) is never taken.
        pkg=
        for path in "$host" "${host#/usr}" "/usr$host"; do
                pkg=$(dpkg -S "$path" 2>/dev/null | head -n1 | cut -d: -f1 || true)
                [ -z "$pkg" ] || break
        done
        [ -n "$pkg" ] || fail "no Debian package owns $(basename "$lib") (the image's $host)"
        [ -s "$R/usr/share/doc/$pkg/copyright" ] || fail "the image has $host but not /usr/share/doc/$pkg/copyright"
        n=$((n + 1))
done < <(find "$R" -name '*.so*' -type f)
[ "$n" -ge 4 ] || fail "only $n shared libraries in the image: is it still dynamically linked?"
for sh in bin/sh usr/bin/sh bin/bash usr/bin/bash bin/busybox; do
        [ ! -e "$R/$sh" ] || fail "the image has a shell: /$sh"
done
echo "copyright files: thpguard and the packages of all $n shared libraries"
echo "PASS"
