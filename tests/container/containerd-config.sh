#!/bin/bash
# thpguard-containerd-config against Debian's containerd (`containerd config
# dump` only: no daemon runs), on config.toml files of this test's own:
#  1. install on a node's file (its own runc handler, SystemdCgroup = true,
#     mode 0640, another group): containerd reads both handlers on the shims
#     with that SystemdCgroup, and otherwise the file exactly as before; the
#     mode and owner are kept, the backup is the original byte for byte;
#     check agrees;
#  2. a second install changes nothing (same bytes, same inode);
#  3. remove gives back the original byte for byte and drops the backup;
#     check then says not in place; a second remove is no error; a change
#     made outside the block meanwhile is kept;
#  4. Debian's own config.toml (a CRI table with CNI directories only):
#     containerd 1.6 would lose its built-in runc handler, so it is written
#     out, and containerd reads nothing else differently;
#  5. no file: created with containerd's default version, loads with runc
#     and both handlers; remove deletes it;
#  6. a file without a final newline comes back as it was;
#  7. refused with status 3, the file untouched and no backup: a symbolic
#     link, a second hard link, no version (version 1; also where the only
#     `version =` line is inside a string), a handler of that
#     name written by hand, the README's old imports wiring (which already
#     cost the node its runc handler), a disabled CRI plugin;
#  8. a result containerd rejects (the runtimes as an inline table):
#     status 4, one line naming containerd's error, nothing changed;
#  9. --runtime crun, a relative import, the command line.
# After every run no temporary file is left beside the config.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need containerd
CONTAINERD=$(command -v containerd)
CMD=$BUILDDIR/packaging/runtime/containerd/thpguard-containerd-config
[ -x "$CMD" ] || fail "$CMD was not generated"
D=$TMP/etc-containerd
mkdir -p "$D"
chmod 0755 "$D"
F=$D/config.toml
V2='plugins."io.containerd.grpc.v1.cri"'

# tcc ARGS...: the command on this test's file, the build tree's shims and Debian's containerd.
tcc() {
        run "$CMD" "$@" --config "$F" --containerd "$CONTAINERD" --shim-dir "$SHIMDIR"
}
# no_temporaries: nothing but the file, its backup and what the test put there.
no_temporaries() {
        local left
        left=$(find "$D" -name '.*thpguard*' | head -n3)
        [ -z "$left" ] || fail "temporary files left beside the config: $left"
}
# dump_of FILE OUT: containerd's reading of FILE.
dump_of() {
        "$CONTAINERD" --config "$1" config dump >"$2" 2>"$2.err" || fail "containerd config dump $1: $(tail -n2 "$2.err")"
}
# dump_check DUMP RUNTIME SYSTEMD_CGROUP: both handlers as the command must
# write them, the default handler runc there; prints the dump less the two
# handlers' tables and the imports line to DUMP.rest.
dump_check() {
        "$PY" - "$1" "$SHIMDIR" "$2" "$3" <<'PY' || fail "containerd's reading of $F (above)"
import re, sys
path, shimdir, runtime, systemd = sys.argv[1:]
dump = open(path).read()
prefix = '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.'
tables, name = {}, "(top level)"
for line in dump.splitlines():
    s = line.strip()
    if s.startswith("["):
        name = s
    tables.setdefault(name, []).append(s)
def keys(t):
    return dict(l.split(" = ", 1) for l in tables.get(t, [])[1:] if " = " in l)
bad = []
for mode in ("disable", "advised-only"):
    h, o = keys(prefix + "thp-%s]" % mode), keys(prefix + "thp-%s.options]" % mode)
    want = '"%s/%s-thp-%s"' % (shimdir, runtime, mode)
    if h.get("runtime_type") != '"io.containerd.runc.v2"' or o.get("BinaryName") != want or o.get("SystemdCgroup") != systemd:
        bad.append("thp-%s: %s %s" % (mode, h, o))
if keys('[plugins."io.containerd.grpc.v1.cri".containerd]').get("default_runtime_name") != '"runc"' or \
        keys(prefix + "runc]").get("runtime_type") != '"io.containerd.runc.v2"':
    bad.append("the default handler runc is not there")
rest = [l for t, ls in tables.items() if not t.startswith(prefix + "thp-") for l in ls if l]
open(path + ".rest", "w").write("\n".join(l for l in rest if not l.startswith("imports =")) + "\n")
if bad:
    print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
# rest_of DUMP: the dump's tables, blank lines and the imports line left out (as dump_check's .rest).
rest_of() {
        "$PY" - "$1" <<'PY'
import sys
print("\n".join(l.strip() for l in open(sys.argv[1]) if l.strip() and not l.startswith("imports =")))
PY
}

# 1. A node's file.
cat >"$F.orig" <<EOF
# This node's containerd.
version = 2

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.example/pause:3.9"   # pinned
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/opt/cni/bin"
    conf_dir = "/etc/cni/net.d"
EOF
cp "$F.orig" "$F"
chown 0:1 "$F"
chmod 0640 "$F"
dump_of "$F" "$TMP/before.dump"
tcc install
expect_rc 0 "install ($(err))"
expect_out "runtime handlers thp-disable and thp-advised-only added .*SystemdCgroup = true as handler \"runc\" has it, config version 2"
expect_out "the file as it was: $(re "$F.thpguard-bak")\$"
[ "$(stat -c '%a %u:%g' "$F")" = "640 0:1" ] || fail "install left $F at $(stat -c '%a %u:%g' "$F"), not 640 0:1"
cmp "$F.thpguard-bak" "$F.orig" || fail "the backup is not the original"
[ "$(stat -c '%a %u:%g' "$F.thpguard-bak")" = "640 0:1" ] || fail "the backup is $(stat -c '%a %u:%g' "$F.thpguard-bak")"
head -c "$(stat -c %s "$F.orig")" "$F" | cmp -s - "$F.orig" || fail "install changed the file above its block:
$(diff "$F.orig" "$F")"
dump_of "$F" "$TMP/after.dump"
dump_check "$TMP/after.dump" runc true
diff <(rest_of "$TMP/before.dump") "$TMP/after.dump.rest" >"$TMP/diff" ||
        fail "containerd reads more changed than the two handlers: $(head -n5 "$TMP/diff")"
tcc check
expect_rc 0 "check after install ($(err))"
no_temporaries
echo "ok: install adds both handlers (SystemdCgroup copied), keeps mode, owner and a backup; containerd reads nothing else changed"

# 2. Idempotent.
cp -p "$F" "$TMP/installed"
ino=$(stat -c %i "$F")
tcc install
expect_rc 0 "the second install ($(err))"
expect_out "are in place; nothing changed"
cmp "$F" "$TMP/installed" || fail "the second install changed the file"
[ "$(stat -c %i "$F")" = "$ino" ] || fail "the second install replaced the file"
no_temporaries
echo "ok: a second install changes nothing"

# 3. Undo.
tcc remove
expect_rc 0 "remove ($(err))"
cmp "$F" "$F.orig" || fail "remove did not give back the original: $(diff "$F.orig" "$F" | head -n5)"
[ "$(stat -c '%a %u:%g' "$F")" = "640 0:1" ] || fail "remove left $F at $(stat -c '%a %u:%g' "$F")"
[ ! -e "$F.thpguard-bak" ] || fail "remove kept a backup that is the file itself"
tcc check
expect_rc 1 "check after remove"
expect_err "are not in it"
tcc remove
expect_rc 0 "a second remove"
expect_out "nothing changed"
cmp "$F" "$F.orig" || fail "a second remove changed the file"
tcc install
expect_rc 0
sed -i 's|registry.example/pause:3.9|registry.example/pause:3.10|' "$F"
tcc remove
expect_rc 0 "remove after a change outside the block ($(err))"
sed 's|registry.example/pause:3.9|registry.example/pause:3.10|' "$F.orig" | cmp -s - "$F" ||
        fail "remove did not keep the change outside its block: $(diff "$F.orig" "$F" | head -n5)"
expect_out "is not what the file is now .*kept"
rm -f "$F.thpguard-bak"
no_temporaries
echo "ok: remove gives back the original, byte for byte, and keeps changes made outside the block"

# 4. Debian's own /etc/containerd/config.toml (containerd 1.6.20-1+deb12u3, 1.7.24-6).
cat >"$F" <<'EOF'
version = 2

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "/etc/cni/net.d"
  [plugins."io.containerd.internal.v1.opt"]
    path = "/var/lib/containerd/opt"
EOF
cp "$F" "$F.orig"
dump_of "$F" "$TMP/before.dump"
tcc install
expect_rc 0 "install on Debian's config.toml ($(err))"
grep -qxF "[$V2.containerd.runtimes.runc]" "$F" || fail "the built-in runc handler was not written out: $(cat "$F")"
dump_of "$F" "$TMP/after.dump"
dump_check "$TMP/after.dump" runc false
diff <(rest_of "$TMP/before.dump") "$TMP/after.dump.rest" >"$TMP/diff" ||
        fail "containerd reads more changed than the two handlers: $(head -n5 "$TMP/diff")"
tcc remove
expect_rc 0
cmp "$F" "$F.orig" || fail "remove did not give back Debian's file"
echo "ok: Debian's config.toml: containerd's built-in runc handler is written out with the two, and taken out again"

# 5. No file.
rm -f "$F" "$F.thpguard-bak"
want=$("$CONTAINERD" config default | awk '/^version/ { print $3; exit }')
tcc install
expect_rc 0 "install with no file ($(err))"
[ "$(head -n1 "$F")" = "version = $want" ] || fail "the new file begins '$(head -n1 "$F")', not version = $want"
[ "$(stat -c %a "$F")" = 644 ] || fail "the new file is mode $(stat -c %a "$F")"
[ ! -e "$F.thpguard-bak" ] || fail "a backup of a file that did not exist"
dump_of "$F" "$TMP/after.dump"
dump_check "$TMP/after.dump" runc false
printf 'version = %s\n' "$want" >"$TMP/empty.toml"
dump_of "$TMP/empty.toml" "$TMP/before.dump"
diff <(rest_of "$TMP/before.dump") "$TMP/after.dump.rest" >"$TMP/diff" ||
        fail "with the new file containerd reads more than its defaults and the two handlers: $(head -n5 "$TMP/diff")"
tcc remove
expect_rc 0
[ ! -e "$F" ] || fail "remove left the file that install created: $(cat "$F")"
echo "ok: no file: one of version $want with containerd's defaults and the two handlers, deleted again by remove"

# 6. No final newline.
printf 'version = 2\n[%s.containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"' "$V2" >"$F.orig"
cp "$F.orig" "$F"
tcc install
expect_rc 0 "install on a file without a final newline ($(err))"
tcc install
expect_rc 0
expect_out "nothing changed"
tcc remove
expect_rc 0
cmp "$F" "$F.orig" || fail "the file without a final newline did not come back as it was: $(od -c "$F" | tail -n3)"
rm -f "$F.thpguard-bak"
no_temporaries
echo "ok: a file without a final newline comes back without one"

# 7. Refusals: status 3, the file as it was, no backup.
# refused WHAT REGEX: install exits 3 with one line matching REGEX, and changes nothing.
refused() {
        local before
        before=$(stat -c '%i %s %Y' "$F" 2>/dev/null || echo none)
        tcc install
        expect_rc 3 "install on $1"
        expect_err_lines 1 "install's complaint about $1"
        expect_err "$2" "install's complaint about $1"
        [ "$(stat -c '%i %s %Y' "$F" 2>/dev/null || echo none)" = "$before" ] || fail "install changed $F although it refused $1"
        [ ! -e "$F.thpguard-bak" ] || fail "install left a backup although it refused $1"
        no_temporaries
        echo "ok: refused $1: $(err)"
}
cp "$F.orig" "$D/real.toml"
ln -sf real.toml "$F"
refused "a symbolic link" "is a symbolic link"
rm -f "$F"
ln "$D/real.toml" "$F"
refused "a hard link" "has 2 hard links"
rm -f "$F" "$D/real.toml"
printf '[plugins.cri]\n  sandbox_image = "x/y:z"\n' >"$F"
refused "a file with no version" "no top-level version = 2 or 3: containerd reads such a file as the deprecated version 1"
printf 'oom_score = 0\nnote = """\nversion = 2\n"""\n' >"$F"
refused "a version line inside a string" "containerd reads .* as the deprecated version 1"
{ cat "$F.orig"; printf '\n[%s.containerd.runtimes.thp-disable]\n  runtime_type = "io.containerd.runc.v2"\n' "$V2"; } >"$F"
refused "a handler thp-disable written by hand" "already has a runtime handler thp-disable that thpguard-containerd-config did not write"
# The wiring README.md gave before: a drop-in with the handlers, imported.
printf 'version = 2\n[%s.containerd.runtimes.thp-disable]\n  runtime_type = "io.containerd.runc.v2"\n' "$V2" >"$D/old-dropin.toml"
{ printf 'version = 2\nimports = ["%s"]\n' "$D/old-dropin.toml"; sed 1d "$F.orig"; echo; } >"$F"
refused "the old imports wiring" "but no such handler: its CRI plugin would not load as it is \(the file imports others: on containerd 1.6 and 1.7 a CRI table in an imported file replaces"
rm -f "$D/old-dropin.toml"
{ printf 'version = 2\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n'; sed 1d "$F.orig"; echo; } >"$F"
refused "a disabled CRI plugin" "disables containerd's CRI plugin"

# 8. A result containerd rejects: the file as it was, status 4.
printf 'version = 2\n[%s.containerd]\n  default_runtime_name = "runc"\n  runtimes = { runc = { runtime_type = "io.containerd.runc.v2" } }\n' "$V2" >"$F"
cp "$F" "$TMP/inline"
tcc install
expect_rc 4 "install where containerd rejects the result"
expect_err_lines 1
expect_err "^thpguard-containerd-config: containerd does not accept $(re "$F") with the handlers added: .*could not re-define exist inline table.*; nothing changed\$"
cmp "$F" "$TMP/inline" || fail "install changed a file whose result containerd rejects"
[ ! -e "$F.thpguard-bak" ] || fail "a backup although nothing changed"
no_temporaries
echo "ok: a result containerd rejects: $(err)"

# 9. crun; an import relative to the config's directory (the candidate is
# checked from the same directory); the command line.
printf 'version = 2\nimports = ["opt.toml"]\n[%s.containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"\n' "$V2" >"$F"
printf 'version = 2\n[plugins."io.containerd.internal.v1.opt"]\n  path = "%s/opt"\n' "$TMP" >"$D/opt.toml"
cp "$F" "$F.orig"
tcc install --runtime crun
expect_rc 0 "install --runtime crun with a relative import ($(err))"
dump_of "$F" "$TMP/after.dump"
dump_check "$TMP/after.dump" crun false
grep -qF "path = \"$TMP/opt\"" "$TMP/after.dump" || fail "the relative import is not read"
tcc check
expect_rc 1 "check without --runtime crun on crun's handlers"
expect_err "not as install would write them"
tcc check --runtime crun
expect_rc 0 "check --runtime crun ($(err))"
tcc remove
expect_rc 0
cmp "$F" "$F.orig" || fail "remove after --runtime crun"
no_temporaries
run "$CMD" --help
expect_rc 0
for w in install remove check --config --runtime --containerd --shim-dir; do
        expect_out "^ +$(re "$w")( |$)" "--help"
done
run "$CMD" install --bogus
expect_rc 2 "an unknown option"
run "$CMD" install --runtime kata --config "$F"
expect_rc 2 "--runtime kata"
run "$CMD" --config "$F"
expect_rc 2 "no command"
run "$CMD" install --config config.toml
expect_rc 2 "a relative --config"
run "$CMD" install --config "$F" --containerd "$CONTAINERD" --shim-dir "$TMP/no-shims"
expect_rc 5 "install with no shims"
expect_err "runc-thp-disable is not an executable"
cmp "$F" "$F.orig" || fail "install without shims changed the file"
echo "ok: --runtime crun, a relative import, the command line"
echo PASS
