#!/bin/bash
# The golden image (packaging/image/): built by build-image with mkosi 14
# from the .deb of this tree and a profile, then its first boot under qemu
# (TCG, one CPU) with its own kernel and initrd:
#
#  1. packaging/image/build-image with THPGUARD_PROFILE=go-services (enabled
#     and defrag never, khugepaged defrag off: every knob off Debian's
#     kernel defaults), THPGUARD_IMAGE_BOOT=kernel (this machine's kernel
#     has no vfat, which the UEFI layout's ESP needs), and for the test
#     only: transparent_hugepage=always on the kernel command line (so the
#     daemon has something to correct at boot, whatever the kernel's
#     default) and a report unit (image-guest/) through --extra-tree;
#  2. the image ships no machine-id: its boot is a first boot;
#  3. qemu boots it; the report unit waits for the boot to finish, writes
#     what it saw to the image and powers off; debugfs reads it back:
#     thpguardd.service active before sysinit.target and basic.target
#     (ActiveEnterTimestampMonotonic), the knobs at the profile's values,
#     the startup corrections of each in the journal, thpguardd --verify 0.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need mkosi mkosi
need qemu-system-x86_64 qemu-system-x86
need debugfs e2fsprogs
need sfdisk fdisk
need dpkg-buildpackage dpkg-dev
need dh debhelper
need jq
need python3
[ "$(id -u)" -eq 0 ] || skip "needs root (mkosi)"

BOOT_TIMEOUT=${THPGUARD_IMAGE_BOOT_TIMEOUT:-600}
deb=$(pkg_build deb)
work=$PKG_WORK/image
rm -rf "$work"
mkdir -p "$work/guest/usr/local/sbin" "$work/guest/etc/systemd/system/multi-user.target.wants"
on_exit '[ "$TEST_RC" -ne 0 ] || rm -f "$work/out/thpguard-node.raw"'
install -m 0755 "$SRCDIR/tests/packaging/image-guest/report" "$work/guest/usr/local/sbin/thpguard-image-report"
install -m 0644 "$SRCDIR/tests/packaging/image-guest/thpguard-image-report.service" "$work/guest/etc/systemd/system/"
ln -s ../thpguard-image-report.service "$work/guest/etc/systemd/system/multi-user.target.wants/"

# ---- 1. Build ------------------------------------------------------------------
t0=$SECONDS
THPGUARD_PROFILE=go-services THPGUARD_IMAGE_BOOT=kernel THPGUARD_DEB=$deb \
        timeout 1500 "$SRCDIR/packaging/image/build-image" "$work/out" --extra-tree="$work/guest" \
        --kernel-command-line=transparent_hugepage=always \
        --kernel-command-line=systemd.mask=serial-getty@ttyS0.service --kernel-command-line=panic=1 \
        </dev/null >"$work/build.log" 2>&1 9>&- || fail "build-image failed: $(tail -n 30 "$work/build.log")"
t_build=$((SECONDS - t0))
img=$work/out/thpguard-node.raw
for f in raw vmlinuz initrd cmdline; do
        [ -s "$work/out/thpguard-node.$f" ] || fail "build-image made no thpguard-node.$f"
done
echo "ok: build-image in $t_build s: $(ls -s --block-size=M "$img" | cut -d' ' -f1) allocated of $(($(stat -c %s "$img") >> 20)) MB; cmdline: $(cat "$work/out/thpguard-node.cmdline")"

# The root partition, read without a mount.
read -r offset < <(sfdisk -J "$img" | python3 -c '
import json, sys
t = json.load(sys.stdin)["partitiontable"]
print([p for p in t["partitions"] if p["type"] == "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709"][0]["start"] * t.get("sectorsize", 512))')
fs="$img?offset=$offset"
image_cat() {
        debugfs -R "cat $1" "$fs" 2>/dev/null
}
# ---- 2. What was baked in ---------------------------------------------------------
[ "$(image_cat /etc/thpguard/thpguard.conf | sha256sum)" = "$(sha256sum <"$SRCDIR/conf/profiles/go-services.conf")" ] ||
        fail "the image's /etc/thpguard/thpguard.conf is not the go-services profile: $(image_cat /etc/thpguard/thpguard.conf)"
debugfs -R 'stat /etc/systemd/system/sysinit.target.wants/thpguardd.service' "$fs" 2>/dev/null | grep -q 'Type: symlink' ||
        fail "thpguardd.service is not enabled in the image"
mid=$(image_cat /etc/machine-id)
[ -z "$mid" ] || [ "$mid" = uninitialized ] || fail "the image ships a machine-id ($mid): its boot would not be a first boot"
echo "ok: the image has the go-services profile as /etc/thpguard/thpguard.conf, thpguardd.service enabled, no machine-id"

# ---- 3. First boot --------------------------------------------------------------------
t0=$SECONDS
rc=0
timeout -k 10 "$BOOT_TIMEOUT" qemu-system-x86_64 -nodefaults -no-user-config -accel tcg -smp 1 -m 1024 \
        -display none -no-reboot -serial "file:$work/console.log" \
        -kernel "$work/out/thpguard-node.vmlinuz" -initrd "$work/out/thpguard-node.initrd" \
        -append "$(cat "$work/out/thpguard-node.cmdline")" \
        -drive "file=$img,format=raw,if=virtio" </dev/null >"$work/qemu.log" 2>&1 9>&- || rc=$?
t_boot=$((SECONDS - t0))
image_cat /var/lib/thpguard-image-test/report >"$work/report"
for f in journal.txt verify.txt status.txt corrections.json; do
        image_cat "/var/lib/thpguard-image-test/$f" >"$work/$f"
done
if ! grep -qx end "$work/report"; then
        [ "$rc" -eq 124 ] && fail "the guest did not power off within $BOOT_TIMEOUT s: $(tail -n 30 "$work/console.log")"
        fail "no complete report on the image (qemu exited $rc): $(tail -n 30 "$work/console.log")"
fi
echo "ok: qemu (TCG, 1 CPU) booted the image and powered off in $t_boot s; report:"
sed 's/^/    /' "$work/report"
fact() {
        sed -n "s|^$1 ||p" "$work/report" | head -n 1
}
[ "$(fact boots)" = 1 ] || fail "the journal has $(fact boots) boots, not one: not the first boot"
grep -q 'systemd\[1\]: Detected first boot' "$work/console.log" || fail "systemd did not say 'Detected first boot' on the console"
[[ $(fact cmdline) == *transparent_hugepage=always* ]] || fail "the kernel command line lacks transparent_hugepage=always: $(fact cmdline)"
case $(fact state) in running | degraded) ;; *) fail "the guest's boot ended $(fact state)" ;; esac
[ "$(fact active)" = active/running ] || fail "thpguardd.service is $(fact active): $(cat "$work/status.txt")"
t_unit=$(fact t:thpguardd.service) t_sysinit=$(fact t:sysinit.target) t_basic=$(fact t:basic.target)
[ "${t_unit:-0}" -gt 0 ] && [ "$t_unit" -lt "$t_sysinit" ] && [ "$t_sysinit" -lt "$t_basic" ] ||
        fail "thpguardd active at ${t_unit:-?} us, sysinit.target ${t_sysinit:-?} us, basic.target ${t_basic:-?} us: not before them"
echo "ok: first boot: thpguardd active at $t_unit us < sysinit.target $t_sysinit us < basic.target $t_basic us (monotonic)"
for kv in enabled=never defrag=never khugepaged/defrag=0; do
        [ "$(fact "knob:${kv%%=*}")" = "${kv#*=}" ] || fail "${kv%%=*} reads $(fact "knob:${kv%%=*}"), the profile wants ${kv#*=}"
done
[ "$(fact verify_rc)" = 0 ] || fail "thpguardd --verify exited $(fact verify_rc): $(cat "$work/verify.txt")"
echo "ok: knobs at the profile: enabled=never defrag=never khugepaged/defrag=0; thpguardd --verify exits 0"
for kv in enabled:always:never defrag:madvise:never khugepaged/defrag:1:0; do
        IFS=: read -r k o w <<<"$kv"
        entry=$(jq -c --arg k "$k" --arg o "$o" --arg w "$w" 'select(.THPGUARD_KNOB == $k and .THPGUARD_TRIGGER == "startup"
                and .THPGUARD_OBSERVED == $o and .THPGUARD_DESIRED == $w)' "$work/corrections.json" | tail -n 1)
        [ -n "$entry" ] || fail "no startup correction of $k ($o -> $w) in the guest's journal: $(jq -r .MESSAGE "$work/corrections.json")"
        echo "ok: journal: $(jq -r '"\(.MESSAGE) [MESSAGE_ID=\(.MESSAGE_ID) THPGUARD_TRIGGER=\(.THPGUARD_TRIGGER)] at \(.__MONOTONIC_TIMESTAMP) us"' <<<"$entry")"
done
echo "wall time: build-image $t_build s, boot and report $t_boot s"
echo PASS
