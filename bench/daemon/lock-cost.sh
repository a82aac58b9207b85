#!/bin/bash
# lock-cost.sh BUILDDIR [ROUNDS]: what lock mode (thpguardd(8), LOCK MODE)
# costs. Rounds alternate no daemon, thpguardd in mode enforce and in mode
# lock (the same policy: enabled and defrag at madvise), and time, with
# open-loop, per operation:
#   - open+close of another sysfs file (/sys/kernel/mm/ksm/run) and of a
#     tmpfs file: what every other file's reader pays (nothing is marked
#     but the knobs, so nothing should change);
#   - a knob write as a writer makes it (open, write of the knob's own
#     value, close): a write today in enforce, a refused open in lock.
# Then the daemon's CPU (its own and its gate's, /proc/PID/stat) while a
# writer is refused in a loop for 10 s. Medians and min-max of the rounds.
# Root; takes the real-sysfs tests' lock and puts every knob back.
set -euo pipefail
B=$(cd "${1:?usage: lock-cost.sh BUILDDIR [ROUNDS]}" && pwd)
ROUNDS=${2:-5}
T=/sys/kernel/mm/transparent_hugepage
D=$B/src/thpguardd
L=$B/bench/daemon/open-loop
[ -x "$D" ] && [ -x "$L" ] || { echo "build thpguardd and open-loop first" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }
TMP=$(mktemp -d /run/thpguard-lock-cost.XXXXXX) # not below /tmp: thpguardd refuses a policy there
exec 9>/tmp/thpguard-real-sysfs.lock
flock -w 120 9
saved_enabled=$(sed 's/.*\[\(.*\)\].*/\1/' $T/enabled)
saved_defrag=$(sed 's/.*\[\(.*\)\].*/\1/' $T/defrag)
pid=
cleanup() {
        [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
        echo "$saved_enabled" >$T/enabled || true
        echo "$saved_defrag" >$T/defrag || true
        rm -rf "$TMP" /dev/shm/thpguard-lock-cost
}
trap cleanup EXIT
echo madvise >$T/enabled
echo madvise >$T/defrag
: >/dev/shm/thpguard-lock-cost
policy() {
        printf 'mode = "%s"; recheck_interval = 30; fight_threshold = 0;\nthp = { enabled = "madvise"; defrag = "madvise"; };\n' "$1" >"$TMP/p.conf"
}
start() { # MODE: thpguardd on it, ready (its lock line in lock mode)
        policy "$1"
        "$D" --config "$TMP/p.conf" --log-target=console 9>&- 2>"$TMP/d.log" &
        pid=$!
        for _ in $(seq 100); do
                grep -q 'msg="confined' "$TMP/d.log" && return 0
                sleep 0.05
        done
        cat "$TMP/d.log" >&2
        exit 1
}
stop() { kill "$pid"; wait "$pid" || true; pid=; }
ns() { "$L" "$@" | awk '{ print $2 }'; }
declare -A fig
for ((r = 0; r < ROUNDS; r++)); do
        for mode in none enforce lock; do
                [ "$mode" = none ] || start "$mode"
                fig[$mode.sysfs]+="$(ns read /sys/kernel/mm/ksm/run 200000) "
                fig[$mode.tmpfs]+="$(ns read /dev/shm/thpguard-lock-cost 200000) "
                fig[$mode.knob]+="$(ns write $T/defrag 20000) "
                [ "$mode" = none ] || stop
        done
done
med() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { printf "%d (%d-%d)", a[int((NR + 1) / 2)], a[1], a[NR] }'; }
ratio() { # A B: median of A over median of B
        awk -v a="$(tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')" \
                -v b="$(tr ' ' '\n' <<<"$2" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')" \
                'BEGIN { printf "%.2fx", a / b }'
}
echo "machine: $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "ns per operation, median (min-max) of $ROUNDS rounds; ratio to no daemon"
printf '%-44s %-20s %-28s %-28s\n' operation "no daemon" "mode enforce" "mode lock"
for op in sysfs tmpfs knob; do
        case $op in
        sysfs) what="open+close /sys/kernel/mm/ksm/run" ;;
        tmpfs) what="open+close a tmpfs file" ;;
        knob) what="knob write (lock: a refused open)" ;;
        esac
        printf '%-44s %-20s %-28s %-28s\n' "$what" "$(med <<<"${fig[none.$op]}")" \
                "$(med <<<"${fig[enforce.$op]}") $(ratio "${fig[enforce.$op]}" "${fig[none.$op]}")" \
                "$(med <<<"${fig[lock.$op]}") $(ratio "${fig[lock.$op]}" "${fig[none.$op]}")"
done
# The daemon's CPU against a writer refused in a loop for 10 s.
start lock
gate=$(pgrep -P "$pid" -x thpguardd-gate | head -1)
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
n=$((10 * 1000000000 / $(ns write $T/enabled 20000)))
d0=$(cpu "$pid") g0=$(cpu "$gate") t0=$(date +%s%N)
"$L" write $T/enabled "$n" >"$TMP/loop.out"
d1=$(cpu "$pid") g1=$(cpu "$gate") t1=$(date +%s%N)
hz=$(getconf CLK_TCK)
awk -v d=$((d1 - d0)) -v g=$((g1 - g0)) -v hz="$hz" -v ns=$((t1 - t0)) -v out="$(cat "$TMP/loop.out")" 'BEGIN {
        s = ns / 1e9
        printf "a writer refused in a loop for %.1f s (%s): thpguardd %.1f %%, its gate %.1f %% of a core\n",
                s, out, 100 * d / hz / s, 100 * g / hz / s
}'
grep -c 'msg="refused' "$TMP/d.log" | sed 's/^/journal lines for it: /'
stop
