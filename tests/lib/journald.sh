# shellcheck shell=bash
# journald for a test that reads the journal back: the machine's own where
# one runs (an ordinary Debian machine), else one started here and stopped
# at exit (CI's machine has none). Sourced after test.sh.

JOURNALD=/lib/systemd/systemd-journald

# journald_begin: a journald listening on /run/systemd/journal/socket, or skip.
journald_begin() {
        command -v journalctl >/dev/null && [ -x $JOURNALD ] || skip "systemd-journald is not installed"
        # A socket file alone proves nothing: a journald we stopped earlier leaves it behind.
        pgrep -x systemd-journal >/dev/null && return 0
        mkdir -p /run/systemd/journal
        rm -f /run/systemd/journal/socket
        $JOURNALD 9>&- &
        JOURNALD_STARTED=$!
        on_exit journald_end
        wait_until 2 test -S /run/systemd/journal/socket || skip "journald did not come up"
}

# journald_end: stops the journald journald_begin started, and leaves no stale socket.
journald_end() {
        [ -n "${JOURNALD_STARTED:-}" ] || return 0
        kill "$JOURNALD_STARTED" 2>/dev/null
        wait "$JOURNALD_STARTED" 2>/dev/null || true
        # Leave no stale socket that would make `auto` think a journal runs.
        rm -f /run/systemd/journal/socket
        JOURNALD_STARTED=
}
