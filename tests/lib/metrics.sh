# shellcheck shell=bash
# Reading the metrics textfile that thpguardd writes (metrics_file): a
# SAMPLE is a series as the file writes it, a name with its labels if any:
# thpguard_rechecks_total, or thpguard_knob_compliant{knob="enabled"}.

# shellcheck source=test.sh
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/test.sh"

# metric FILE SAMPLE: the sample's value as written; nothing (and success) when the file or the sample is absent.
metric() {
        [ -f "$1" ] || return 0
        awk -v s="$2" 'substr($0, 1, length(s) + 1) == s " " { print substr($0, length(s) + 2); exit }' "$1"
}

# metric_is FILE SAMPLE VALUE: the sample is there with that value.
metric_is() {
        [ "$(metric "$1" "$2")" = "$3" ]
}

# metric_ge FILE SAMPLE MIN: the sample is there and its integer part is at least MIN.
metric_ge() {
        local v
        v=$(metric "$1" "$2")
        [ -n "$v" ] && [ "${v%.*}" -ge "$3" ]
}

# wait_metric_ge FILE SAMPLE MIN SECONDS: waits until metric_ge; else fails with the last value seen.
wait_metric_ge() {
        wait_until "$4" metric_ge "$1" "$2" "$3" 2>/dev/null && return 0
        fail "metric $2 in $1 never reached $3 in $4 s (last: $(metric "$1" "$2" | grep . || echo absent))"
}
