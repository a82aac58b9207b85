# thpguardctl watch in a real terminal (tmux): while a helper faults in
# huge pages, the full-screen view shows a non-zero THP fault rate, the
# helper in its top list and, where the kernel has hugepages-2048kB/stats/,
# the 2 MiB row of the mTHP table with its faults and a fallback ratio;
# after a resize it is drawn at the new size; q and
# Ctrl-C end it with the terminal as it was (no alternate screen, cursor
# shown, keypad mode off, the same stty settings).
. "$(dirname "$0")/lib.sh"
need tmux
C=$THPGUARDCTL

real_sysfs_begin
thp_set enabled madvise
[ -f "$THP/hugepages-2048kB/enabled" ] && thp_set hugepages-2048kB/enabled inherit

# A server of our own, without any user configuration.
T=(tmux -L "thpguard-watch-$$" -f /dev/null)
on_exit '"${T[@]}" kill-server 2>/dev/null || true'

# The pane's shell: the terminal settings before and after, and watch's exit status.
cat >"$TMP/pane.sh" <<EOF
stty -g >"$TMP/stty.\$1.before"
"$C" watch --interval 1 --top 10
echo "watch exited rc=\$?"
stty -g >"$TMP/stty.\$1.after"
exec sleep 600
EOF

screen() { "${T[@]}" capture-pane -p -t "$1"; }
pane_flag() { "${T[@]}" display-message -p -t "$1" "#{$2}"; }
show() {
        echo "--- the screen of $1:"
        screen "$1" || true
}

# poll SECONDS CMD...: CMD every 0.2 s until it succeeds (tmux is a process each time; 10 ms is too often).
poll() {
        local end=$((SECONDS + $1))
        shift
        while ! "$@"; do
                [ "$SECONDS" -lt "$end" ] || return 1
                sleep 0.2
        done
}

start_watch() {
        "${T[@]}" new-session -d -s "$1" -x 120 -y 50 "bash $TMP/pane.sh $1"
        poll 20 first_frame "$1" || { show "$1"; fail "$1: no first frame in 20 s"; }
}
first_frame() { screen "$1" | grep -q '^per second'; }

start_watch w
[ "$(pane_flag w alternate_on)" = 1 ] || { show w; fail "the view is not on the alternate screen"; }

"$THP_HELPER" grow 128 >"$TMP/grow.out" 9>&- &
GROW_PID=$!
stop_on_exit "$GROW_PID"
poll 10 grep -q '^ready$' "$TMP/grow.out" || fail "thp-helper grow did not start"

faults_on_screen() {
        screen w | awk '$1 == "faults" && $2 == "alloc" && $3 + 0 > 0 { found = 1 } END { exit !found }'
}
helper_in_top() {
        screen w | awk -v pid="$GROW_PID" '$1 == pid && $NF == "thp-helper" && $2 + 0 > 0 { found = 1 } END { exit !found }'
}
if ! poll 30 faults_on_screen; then
        # The kernel itself may refuse (no free 2 MiB block): then there is nothing to show.
        ahp=$(awk '/^AnonHugePages:/ { print $2 }' "/proc/$GROW_PID/smaps_rollup" 2>/dev/null || echo 0)
        [ "${ahp:-0}" -gt 0 ] || skip "the kernel gave the helper no huge page (AnonHugePages 0 kB, enabled=madvise, MADV_HUGEPAGE)"
        show w
        fail "no non-zero THP fault rate on the screen in 30 s while the helper has ${ahp} kB AnonHugePages"
fi
poll 30 helper_in_top || { show w; fail "the helper (pid $GROW_PID) is not in the top list with a growth > 0"; }
echo "seen: a fault rate > 0 and the helper (pid $GROW_PID) in the top list"
# The mTHP table: its 2 MiB row moves with the helper's faults (got or fallen back), a ratio beside them.
size_row_moves() {
        screen w | awk '$1 == "2048kB" && ($2 + 0 > 0 || $3 + 0 > 0) && $4 ~ /^[01]\.[0-9][0-9]$/ { found = 1 } END { exit !found }'
}
if [ -f "$THP/hugepages-2048kB/stats/anon_fault_alloc" ]; then
        screen w | grep -q 'anon_fault_fallback/s  fallback_ratio  split/s' ||
                { show w; fail "the mTHP table has no fallback_ratio and split/s columns"; }
        poll 30 size_row_moves || { show w; fail "the 2048kB row shows no fault and no fallback ratio while the helper faults"; }
        echo "seen: $(screen w | awk '$1 == "2048kB"' | tr -s ' ')"
fi

# The title ends with "q: quit" at the right edge: its length is the terminal's width.
width_is() { [ "$(screen w | head -n 1 | awk '{ print length($0) }')" = "$1" ] && screen w | head -n 1 | grep -q 'q: quit$'; }
width_is 120 || { show w; fail "the title is not 120 columns wide"; }
"${T[@]}" resize-window -t w -x 90 -y 30
poll 10 width_is 90 || { show w; fail "not drawn again at 90 columns after the resize"; }
[ "$(screen w | wc -l)" -le 30 ] || { show w; fail "more than 30 lines after the resize"; }
echo "seen: drawn again at 90x30"

# restored NAME: watch ended with 0 and left the terminal as it found it.
restored() {
        screen "$1" | grep -q '^watch exited rc=0$' && [ -s "$TMP/stty.$1.after" ]
}
check_restored() {
        poll 10 restored "$1" || { show "$1"; fail "$1: watch did not end with 0 after $2"; }
        [ "$(pane_flag "$1" alternate_on)" = 0 ] || { show "$1"; fail "$1: still on the alternate screen after $2"; }
        [ "$(pane_flag "$1" cursor_flag)" = 1 ] || fail "$1: the cursor is still hidden after $2"
        [ "$(pane_flag "$1" keypad_cursor_flag)" = 0 ] || fail "$1: keypad mode still on after $2"
        cmp -s "$TMP/stty.$1.before" "$TMP/stty.$1.after" ||
                fail "$1: stty settings changed by $2: $(cat "$TMP/stty.$1.before") -> $(cat "$TMP/stty.$1.after")"
        screen "$1" | grep -q 'q: quit' && { show "$1"; fail "$1: the view is still on the screen after $2"; }
        echo "seen: the terminal restored after $2"
}
"${T[@]}" send-keys -t w q
check_restored w q

start_watch c
"${T[@]}" send-keys -t c C-c
check_restored c Ctrl-C
echo PASS
