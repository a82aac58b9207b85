# shellcheck shell=bash
# Helpers for the fleet tests (metrics file, manifests, container image).
# Source after `set -euo pipefail`.
#
#   fleet_init            makes $TMP (removed on exit, after any cleanup hooks)
#   on_exit CMD           runs CMD at exit, before $TMP is removed (last added, first run)
#   python_with MODULE    skips unless Debian's python3 imports MODULE
#   metrics_check FILE [--all] [EXPECT...]   the real-parser check (check-metrics.py)
#   metric FILE SAMPLE    the value of one sample, as written in the file
#   metric_is FILE SAMPLE VALUE              true if the sample has that value
#   wait_until SECONDS CMD...                polls CMD every 50 ms until it succeeds

# real-sysfs.sh brings skip, fail, thp_get, thp_set, thp_wait_for and real_sysfs_begin.
# shellcheck source=../lib/real-sysfs.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/real-sysfs.sh"
# shellcheck source=../lib/safe-tmp.sh
. "$SRCDIR/tests/lib/safe-tmp.sh"

: "${THPGUARDD:?THPGUARDD is not set: run this test through ctest}"

# Debian's interpreter, whatever python3 comes first in PATH: the parser and
# PyYAML are Debian packages (python3-prometheus-client, python3-yaml).
PY=/usr/bin/python3
FLEET_EXIT_HOOKS=()

on_exit() {
        FLEET_EXIT_HOOKS=("$1" "${FLEET_EXIT_HOOKS[@]}")
}

fleet_exit() {
        local rc=$? h
        for h in "${FLEET_EXIT_HOOKS[@]}"; do
                eval "$h" || true
        done
        if [ -n "${TMP:-}" ] && [ -d "$TMP" ]; then
                rm -rf -- "$TMP"
        fi
        exit "$rc"
}

fleet_init() {
        [ -x "$THPGUARDD" ] || fail "THPGUARDD=$THPGUARDD is not an executable"
        TMP=$(safe_mktemp thpguard-fleet)
        chmod 0755 "$TMP"
        trap fleet_exit EXIT
}

python_with() {
        [ -x "$PY" ] || skip "$PY is not installed"
        "$PY" -c "import $1" 2>/dev/null || skip "$PY cannot import $1 (apt-get install ${2:-python3-$1})"
}

metrics_check() {
        "$PY" "$SRCDIR/tests/container/check-metrics.py" "$@" || fail "the metrics file does not hold up (above)"
}

# metric FILE SAMPLE: the value, or nothing if the sample is absent.
metric() {
        awk -v s="$2" 'substr($0, 1, length(s) + 1) == s " " { print substr($0, length(s) + 2) }' "$1"
}

# metric_is FILE SAMPLE VALUE: for wait_until, which needs a command, not a value.
metric_is() {
        [ "$(metric "$1" "$2")" = "$3" ]
}

# metric_ge FILE SAMPLE MIN: the sample is there and at least MIN.
metric_ge() {
        local v
        v=$(metric "$1" "$2")
        [ -n "$v" ] && [ "${v%.*}" -ge "$3" ]
}

wait_until() {
        local limit=$1 i
        shift
        for ((i = 0; i < limit * 20; i++)); do
                "$@" && return 0
                sleep 0.05
        done
        return 1
}

# policy_file FILE: stdin to FILE, root-owned 0644 as policy_load() demands.
policy_file() {
        cat >"$1.tmp"
        chmod 0644 "$1.tmp"
        mv -f "$1.tmp" "$1"
}
