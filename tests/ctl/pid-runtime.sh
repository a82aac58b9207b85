# pid tells a Go program by its ELF sections: the helper, given a .go.buildinfo
# section with objcopy, must be taken for Go; the plain helper must not.
. "$(dirname "$0")/lib.sh"
C=$THPGUARDCTL
need objcopy binutils

EXE_TMP=$(mktemp -d)
on_exit 'rm -rf "$EXE_TMP"'
printf '\377 Go buildinf:' >"$TMP/buildinfo"
objcopy --add-section .go.buildinfo="$TMP/buildinfo" "$THP_HELPER" "$EXE_TMP/go-helper"
chmod +x "$EXE_TMP/go-helper"

THP_HELPER=$EXE_TMP/go-helper start_hog 2 plain
run "$C" pid "$HOG_PID" --json
expect_rc 0
json_check "$OUT_FILE" 'd["runtime"] == "go"' 'd["compare_with"].startswith("Go: compare Rss")' \
        'd["command"] == "go-helper"'

start_hog 2 plain
run "$C" pid "$HOG_PID" --json
expect_rc 0
json_check "$OUT_FILE" 'd["runtime"] == "unknown"' 'd["compare_with"].startswith("Compare Rss")'

# Not an ELF file at all (a script): no guess.
printf '#!/bin/sh\nexec sleep 30\n' >"$EXE_TMP/script"
chmod +x "$EXE_TMP/script"
"$EXE_TMP/script" 9>&- &
stop_on_exit $!
sleep 0.2
run "$C" pid "$!" --json
expect_rc 0
json_check "$OUT_FILE" 'd["runtime"] == "unknown"'
echo PASS
