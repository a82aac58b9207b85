# shellcheck shell=bash
# safe_mktemp NAME: makes a new empty directory (mode 0700, as mktemp -d)
# and prints its path, for tests that write a policy file into it.
#
# As root, thpguardd and thpguardctl refuse a policy whose path goes through
# a directory not owned by root or that group or others may write (the
# StrictModes rule, thpguard.conf(5)), and /tmp is mode 1777: as root the
# directory goes under $THPGUARD_TEST_TMP, by default /run (root-owned,
# 0755). /run may be mounted noexec: put no program there. As another user
# the rule only warns, and it goes under ${TMPDIR:-/tmp}.
safe_mktemp() {
        local base
        if [ "$(id -u)" -eq 0 ]; then
                base=${THPGUARD_TEST_TMP:-/run}
        else
                base=${TMPDIR:-/tmp}
        fi
        mktemp -d "$base/$1.XXXXXX"
}
