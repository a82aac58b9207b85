#!/bin/bash
# The unit as this build installs it: `systemd-analyze verify` prints
# nothing on stderr (it exits 0 even on unknown keys, so stderr is what
# counts), `systemd-analyze security --offline=true` scores it <= 1.1 with
# writer attribution and <= 1.0 with the shipped drop-in that turns it off,
# and the lines the unit must have are there.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need systemd-analyze systemd

root=$(mktemp -d "$PKG_WORK/unit-root.XXXXXX")
on_exit 'rm -rf "$root"'
DESTDIR=$root cmake --install "$BUILDDIR" >/dev/null
unit=$(find "$root" -name thpguardd.service -path '*/systemd/system/*')
[ -f "$unit" ] || fail "cmake --install installed no thpguardd.service"
echo "unit: ${unit#"$root"}"

# verify checks that every command exists under --root. ExecReload= runs
# /bin/kill, which the packages depend on (procps, /usr/bin/kill): put the
# host's in the root, as the dependency would.
kill_bin=
for k in /bin/kill /usr/bin/kill; do
        [ -x "$k" ] && kill_bin=$k && break
done
[ -n "$kill_bin" ] || skip "no /bin/kill on this machine (package procps)"
mkdir -p "$root/bin" "$root/usr/bin"
cp "$kill_bin" "$root/bin/kill"

err=$(systemd-analyze verify --man=no --root="$root" "$unit" 2>&1 >/dev/null) || fail "systemd-analyze verify exited $?: $err"
[ -z "$err" ] || fail "systemd-analyze verify printed on stderr:
$err"
echo "verify: clean"

# exposure UNIT MAX: the score, which must be <= MAX.
exposure() {
        local out score
        out=$(systemd-analyze security --offline=true --root="$root" "$1" 2>&1) || true
        score=$(echo "$out" | sed -n 's/.*Overall exposure level for thpguardd.service: \([0-9.]*\) .*/\1/p')
        [ -n "$score" ] || fail "no score in systemd-analyze security's output:
$out"
        echo "security ($1): $(echo "$out" | grep 'Overall exposure')"
        awk -v s="$score" -v m="$2" 'BEGIN { exit !(s <= m) }' || fail "exposure $score > $2:
$(echo "$out" | grep '✗')"
}
# With attribution: fanotify_mark() allowed from @privileged (0.2) on top
# of the 1.0 below; the unit's hardening block explains each line.
exposure "$unit" 1.1
# The drop-in from thpguardd(8) takes it back to 1.0.
dropin=$(find "$root" -name no-writer-attribution.conf)
[ -f "$dropin" ] || fail "cmake --install installed no no-writer-attribution.conf"
mkdir -p "$root/etc/systemd/system/thpguardd.service.d"
cp "$dropin" "$root/etc/systemd/system/thpguardd.service.d/"
exposure thpguardd.service 1.0
rm -r "$root/etc/systemd/system/thpguardd.service.d"

# What the issue asks of the unit, line by line.
want=(
        'Type=notify'
        'ExecReload=/bin/kill -HUP $MAINPID'
        'WatchdogSec='
        'Restart=always'
        'RestrictAddressFamilies=AF_UNIX'
        'IPAddressDeny=any'
        'ConditionPathIsDirectory=/sys/kernel/mm/transparent_hugepage'
        'DefaultDependencies=no'
        'After=systemd-journald.socket'
        'Before=sysinit.target'
        'Before=kubelet.service containerd.service docker.service'
        'Conflicts=shutdown.target'
        'Before=shutdown.target'
        'ReadWritePaths=/sys/kernel/mm/transparent_hugepage'
        'ProtectKernelTunables=yes'
        'CapabilityBoundingSet='
        'SecureBits=noroot noroot-locked no-setuid-fixup no-setuid-fixup-locked keep-caps-locked'
        'NoNewPrivileges=yes'
        'PrivateUsers=yes'
        'FileDescriptorStoreMax=4'
        'NotifyAccess=exec'
        'Nice=-5'
        'ProtectProc=invisible'
        'SystemCallFilter=~@privileged @resources'
        'SystemCallFilter=fanotify_mark'
        'SystemCallFilter=landlock_create_ruleset landlock_add_rule landlock_restrict_self'
        'WantedBy=sysinit.target'
)
for w in "${want[@]}"; do
        grep -qxF -- "$w" <(sed 's/[[:space:]]*$//' "$unit") || grep -q "^${w//\$/\\\$}" "$unit" ||
                fail "the unit lacks '$w'"
done
# PrivateNetwork=yes would give the service its own /sys on systemd >= 254,
# where inotify sees no foreign write (one sysfs superblock per netns).
! grep -q '^PrivateNetwork=' "$unit" || fail "the unit sets PrivateNetwork=: inotify would miss drift on systemd >= 254"
exec_start=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")
# systemctl reload validates the same file the daemon reads before SIGHUP.
config=$(sed -n 's/^ExecStart=.*--config \([^ ]*\).*/\1/p' "$unit")
first_reload=$(sed -n 's/^ExecReload=//p' "$unit" | head -n 1)
[ "$first_reload" = "$exec_start --check-config --config $config" ] ||
        fail "the first ExecReload= is '$first_reload', want '$exec_start --check-config --config $config'"
[ -x "$root$exec_start" ] || fail "ExecStart=$exec_start is not what cmake installed"
# The groups come from a privileged ExecStartPre= that may fail without failing the start.
pre=$(sed -n 's/^ExecStartPre=//p' "$unit")
[ "${pre%%/*}" = "-+" ] || fail "ExecStartPre=$pre: want the prefix -+ (privileged, failure ignored)"
pre_bin=${pre#-+}
pre_bin=${pre_bin%% *}
[ -x "$root$pre_bin" ] || fail "ExecStartPre=$pre: $pre_bin is not what cmake installed"
# The helper reads the daemon's own policy (its write_probe_hook).
[[ "$pre " == *" --config $config "* ]] || fail "ExecStartPre=$pre does not read the daemon's policy (--config $config)"
echo "unit lines: all present; ExecStart=$exec_start"

# The catalog: one entry per MESSAGE_ID of include/thpguard/message-ids.h,
# and journalctl accepts the file.
catalog=$(find "$root" -name thpguard.catalog)
[ "${catalog#"$root"}" = /usr/lib/systemd/catalog/thpguard.catalog ] ||
        fail "the catalog is installed at '${catalog#"$root"}', not /usr/lib/systemd/catalog/thpguard.catalog"
ids=$(sed -n 's/^#define THPGUARD_MESSAGE_[A-Z_]* *"\([0-9a-f]\{32\}\)"/\1/p' "$SRCDIR/include/thpguard/message-ids.h")
[ "$(echo "$ids" | wc -l)" -ge 6 ] || fail "found fewer than 6 MESSAGE_IDs in message-ids.h"
journalctl --root="$root" --update-catalog 2>&1 | { ! grep .; } || fail "journalctl --update-catalog complained"
dump=$(journalctl --root="$root" --dump-catalog)
for id in $ids; do
        echo "$dump" | grep -q "^-- $id" || fail "the catalog has no entry for MESSAGE_ID $id"
done
echo "catalog: $(echo "$ids" | wc -l) entries, one per MESSAGE_ID"
echo "PASS"
