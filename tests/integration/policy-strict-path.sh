#!/bin/bash
# StrictModes on the whole path. Before, only the policy file was
# checked: with its directory at mode 0777, a non-root user replaced the
# policy by a symlink to another root-owned file, and the daemon reloaded
# and enforced that. Now every directory from / down to the file, and along
# each symlink, must be root-owned and not writable by group or others:
#  1. a running daemon (audit mode, on a fixture tree) refuses the swapped
#     policy, logging the directory, and keeps its last good policy: a drift
#     is still judged against it;
#  2. once the directory is 0755 again, the same link is accepted;
#  3. -n refuses a policy under /tmp (1777: sticky does not make it safe),
#     naming /tmp, and under a link whose target is there;
#  4. a 0777 directory on a read-only mount (a Kubernetes ConfigMap volume:
#     the kubelet makes it 0777 and mounts it read-only) is accepted, and the
#     same directory read-write is not.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root: the refusal applies to root"
# shellcheck source=../lib/daemon.sh
. "$SRCDIR/tests/lib/daemon.sh"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

root=$(fixture_copy 6.18)
T=$root/kernel/mm/transparent_hugepage
ETC=$TMP/etc
# Below the policy's directory: once started, the daemon reads only there
# (Landlock), so a link re-pointed to another directory needs a restart.
PROFILES=$ETC/profiles
mkdir -m 0755 "$ETC" "$PROFILES"
# The fixture reads madvise: the first policy is compliant, the other is not.
write_policy "$ETC/thpguard.conf" 'recheck_interval = 3600;
thp = { enabled = "madvise"; };'
write_policy "$PROFILES/never.conf" 'recheck_interval = 3600;
thp = { enabled = "never"; };'

daemon_start_cmd "$THPGUARDD" --config "$ETC/thpguard.conf" --sysfs-root "$root" --audit --log-target=console

# 1. The attack: the directory becomes 0777 and nobody swaps in a link.
chmod 0777 "$ETC"
"${NOBODY[@]}" ln -s "$PROFILES/never.conf" "$ETC/.swap"
"${NOBODY[@]}" mv -T "$ETC/.swap" "$ETC/thpguard.conf"
[ "$(stat -c %U "$ETC/thpguard.conf")" = nobody ] || fail "test bug: the link is not nobody's"
kill -HUP "$DAEMON_PID"
wait_event 5 policy_rejected level=error policy="$ETC/thpguard.conf"
# Why has no field: the rejection's text names the directory and its mode.
event_says policy_rejected "$(re "$ETC/thpguard.conf"): directory $(re "$ETC") is mode 0777: group or others can replace the policy; refusing it" ||
        { cat "$TMP/daemon.log"; fail "the rejection does not name the directory and its mode"; }
# Still the first policy: a drift to always is judged against madvise, not never.
printf '[always] madvise never\n' 1<>"$T/enabled" # in place, as long as before: no empty read
wait_event 5 audit_drift knob=enabled observed=always desired=madvise
[ "$(event_count policy_reloaded)" = 0 ] || fail "the swapped policy was loaded"
[ "$(event_count audit_drift desired=never)" = 0 ] || fail "the swapped policy is in force"
echo "1. refused with the directory named; the last good policy still judges drift"

# 2. The directory safe again: the link and its root-owned target pass.
chmod 0755 "$ETC"
kill -HUP "$DAEMON_PID"
wait_event 5 policy_reloaded policy="$ETC/thpguard.conf"
wait_event 5 audit_drift knob=enabled desired=never
daemon_stop
echo "2. with the directory at 0755, the same link is accepted"

# 3. /tmp is 1777: refused, sticky or not, directly or as a link's target.
TMPDIR_POLICY=$(mktemp -d /tmp/thpguard-strict.XXXXXX)
on_exit 'rm -rf "$TMPDIR_POLICY"'
write_policy "$TMPDIR_POLICY/p.conf" <<<'thp = { enabled = "madvise"; };'
run "$THPGUARDD" -n --config "$TMPDIR_POLICY/p.conf" --sysfs-root "$root"
expect_rc 1 "-n on a policy under /tmp"
expect_err "^$(re "$TMPDIR_POLICY/p.conf"): directory /tmp is mode 1777: group or others can replace the policy; refusing it$"
expect_err_lines 1 "-n on a policy under /tmp"
ln -s "$TMPDIR_POLICY/p.conf" "$ETC/to-tmp.conf"
run "$THPGUARDD" -n --config "$ETC/to-tmp.conf" --sysfs-root "$root"
expect_rc 1 "-n through a link to /tmp"
expect_err "^$(re "$ETC/to-tmp.conf"): directory /tmp is mode 1777"
echo "3. /tmp (1777) refused, directly and as a link's target"

# 4. A ConfigMap volume: the kubelet's directory is 0777, mounted read-only.
if ! unshare -m --propagation private true 2>/dev/null; then
        skip "cannot make a private mount namespace here; parts 1-3 passed"
fi
CM=$TMP/configmap
TS=..2026_11_30_08_00_00.123456789
mkdir -p "$CM/$TS"
chmod 0777 "$CM"
chmod 0755 "$CM/$TS"
write_policy "$CM/$TS/thpguard.conf" <<<'thp = { enabled = "madvise"; };'
ln -s "$TS" "$CM/..data"
ln -s ..data/thpguard.conf "$CM/thpguard.conf"
run "$THPGUARDD" -n --config "$CM/thpguard.conf" --sysfs-root "$root"
expect_rc 1 "-n in a read-write 0777 directory"
expect_err "^$(re "$CM/thpguard.conf"): directory $(re "$CM") is mode 0777"
run unshare -m --propagation private sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && exec "$2" -n --config "$1/thpguard.conf" --sysfs-root "$3"' sh "$CM" "$THPGUARDD" "$root"
expect_rc 0 "-n in a 0777 directory on a read-only mount (a ConfigMap volume)"
expect_out '^configuration OK$'
expect_err_empty "-n on the read-only ConfigMap volume"
echo "4. a 0777 ConfigMap directory on a read-only mount is accepted, read-write it is not"
echo "PASS: StrictModes on the whole path"
