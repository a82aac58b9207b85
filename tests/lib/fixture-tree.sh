# shellcheck shell=bash
# A private copy of the 6.18 fixture tree on tmpfs, for a test that runs
# thpguardd's event loop (--sysfs-root) without the machine's sysfs:
# inotify works on tmpfs, and nothing else on the machine sees the writes.
# Sourced after test.sh (daemon.sh and tests/integration/lib.sh bring it).
#
# A fixture file is a regular file, not sysfs: the daemon writes the bare
# value at offset 0, which sticks only where it is as long as the old one
# ("1\n" -> "0\n", "511\n" -> "256\n"). Enforce such knobs (use_zero_page,
# shrink_underused, khugepaged/defrag, khugepaged/max_ptes_*); watch a
# choice knob (enabled, defrag) in audit mode only.

: "${FIXTURES:?FIXTURES is not set: run this test through ctest}"

# fixture_on_tmpfs: the copy as $ROOT (removed at exit), $T its THP
# directory; skips where /dev/shm is not a tmpfs.
fixture_on_tmpfs() {
        [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ] || skip "/dev/shm is not a tmpfs"
        ROOT=$(mktemp -d /dev/shm/thpguard-fixture.XXXXXX)
        on_exit 'rm -rf "$ROOT"'
        cp -a "$FIXTURES/6.18/." "$ROOT/"
        T=$ROOT/kernel/mm/transparent_hugepage
}

# tree_get KNOB: the value a knob of $T reads as: the bracketed word, or the number.
tree_get() {
        local v
        v=$(<"$T/$1")
        if [[ $v =~ \[([^]]+)\] ]]; then
                echo "${BASH_REMATCH[1]}"
        else
                echo "$v"
        fi
}

# tree_set KNOB VALUE: a foreign write, as a tool makes it (IN_MODIFY). A
# choice knob keeps its offered words, VALUE bracketed. A value as long as
# the old one is written in place, in one write() and without O_TRUNC, as
# the kernel's file would change: the daemon never reads a half-written or
# empty file.
tree_set() {
        local old v
        old=$(<"$T/$1")
        v=$2
        if [[ $old == *"["* ]]; then
                v=" ${old//[][]/} "
                v=${v/ $2 / [$2] }
                v=${v# }
                v=${v% }
        fi
        if [ ${#v} -eq ${#old} ]; then
                printf '%s\n' "$v" 1<>"$T/$1"
        else
                printf '%s\n' "$v" >"$T/$1"
        fi
}

# tree_is KNOB VALUE: the knob reads VALUE.
tree_is() {
        [ "$(tree_get "$1")" = "$2" ]
}

# tree_wait_for KNOB VALUE SECONDS: waits until the knob reads VALUE; on
# timeout fails, saying what it read.
tree_wait_for() {
        wait_until "$3" tree_is "$1" "$2" 2>/dev/null ||
                fail "$1 reads '$(tree_get "$1")', not '$2', after $3 s"
}

# tree_set_unseen KNOB VALUE: a write that raises no inotify event (through
# a shared mapping of the file), like one made through another sysfs
# superblock: only the daemon's recheck can see it. VALUE must be as long
# as what the knob holds.
tree_set_unseen() {
        "$PY" - "$T/$1" "$2" <<'PY'
import mmap, sys
with open(sys.argv[1], "r+b") as f:
    new = sys.argv[2].encode() + b"\n"
    m = mmap.mmap(f.fileno(), 0)
    assert len(new) == len(m), f"{sys.argv[1]}: {new!r} is not as long as {m[:]!r}"
    m[:] = new
    m.flush()
    m.close()
PY
}
