# shellcheck shell=bash
# The policy writer.

# shellcheck source=test.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/test.sh"

# write_policy FILE [TEXT]: writes TEXT and a newline (without TEXT: stdin,
# byte for byte) to FILE, root-owned 0644 as the daemon demands, and renames
# it into place, so that a daemon watching FILE never reads half of it.
write_policy() {
        if [ $# -ge 2 ]; then
                printf '%s\n' "$2" >"$1.tmp"
        else
                cat >"$1.tmp"
        fi
        chown 0:0 "$1.tmp" 2>/dev/null || true
        chmod 0644 "$1.tmp"
        mv -f "$1.tmp" "$1"
}
