# shellcheck shell=bash
# journald for a test that reads the journal back: the machine's own where
# one runs (an ordinary Debian machine), else one started here and stopped
# at exit (CI's machine has none). Sourced after test.sh.

JOURNALD=/lib/systemd/systemd-journald

# journald_begin: a journald listening on /run/systemd/journal/socket, or skip.
journald_begin() {
        command -v journalctl >/dev/null && [ -x $JOURNALD ] || skip "systemd-journald is not installed"
        # A socket file alone proves nothing: a journald we stopped earlier leaves
        # it behind. One that takes a datagram does (not pgrep: a journald in a
        # container or an nspawn'd system matches it, and pgrep's reads of
        # every command line can block).
        "$PY" -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).connect(sys.argv[1])' \
                /run/systemd/journal/socket 2>/dev/null && return 0
        mkdir -p /run/systemd/journal
        rm -f /run/systemd/journal/socket
        # What was there before, so that journald_end removes only what journald made.
        JOURNALD_RUN_BEFORE=" $(cd /run/systemd/journal && ls -A | tr '\n' ' ')"
        JOURNALD_LOG_DIR_NEW=
        [ -e /run/log/journal ] || JOURNALD_LOG_DIR_NEW=1
        $JOURNALD 9>&- &
        JOURNALD_STARTED=$!
        on_exit journald_end
        wait_until 2 test -S /run/systemd/journal/socket || skip "journald did not come up"
}

# journald_end: stops the journald journald_begin started, and removes the
# sockets and files it made in /run/systemd/journal (a stale `socket` would
# make `auto` think a journal runs), and its volatile journal if there was
# none before.
journald_end() {
        local f
        [ -n "${JOURNALD_STARTED:-}" ] || return 0
        kill "$JOURNALD_STARTED" 2>/dev/null
        wait "$JOURNALD_STARTED" 2>/dev/null || true
        for f in /run/systemd/journal/* /run/systemd/journal/.[!.]*; do
                [ -e "$f" ] || continue # a pattern that matched nothing
                case $JOURNALD_RUN_BEFORE in *" ${f##*/} "*) continue ;; esac
                rm -rf "$f"
        done
        [ -z "$JOURNALD_LOG_DIR_NEW" ] || rm -rf /run/log/journal
        JOURNALD_STARTED=
}
