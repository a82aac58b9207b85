# pid tells a Go program by its ELF sections: the helper, given a .go.buildinfo
# section with objcopy, must be taken for Go; the plain helper must not.
. "$(dirname "$0")/lib.sh"
C=$THPGUARDCTL
command -v objcopy >/dev/null || skip "objcopy (binutils) is not installed"

EXE_TMP=$(mktemp -d)
printf '\377 Go buildinf:' >"$TMP/buildinfo"
objcopy --add-section .go.buildinfo="$TMP/buildinfo" "$THP_HELPER" "$EXE_TMP/go-helper"
chmod +x "$EXE_TMP/go-helper"

THP_HELPER=$EXE_TMP/go-helper start_hog 2 plain
expect_rc 0 "$C" pid "$HOG_PID" --json
json_check "$TMP/out" 'd["runtime"] == "go"' 'd["compare_with"].startswith("Go: compare Rss")' \
        'd["command"] == "go-helper"'

start_hog 2 plain
expect_rc 0 "$C" pid "$HOG_PID" --json
json_check "$TMP/out" 'd["runtime"] == "unknown"' 'd["compare_with"].startswith("Compare Rss")'

# Not an ELF file at all (a script): no guess.
printf '#!/bin/sh\nexec sleep 30\n' >"$EXE_TMP/script"
chmod +x "$EXE_TMP/script"
"$EXE_TMP/script" 9>&- &
CTL_PIDS+=($!)
sleep 0.2
expect_rc 0 "$C" pid "$!" --json
json_check "$TMP/out" 'd["runtime"] == "unknown"'
echo PASS
