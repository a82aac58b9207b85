# Raw bytes from a policy never reach the terminal, and --json is always
# valid UTF-8 JSON. A policy with mode = "\xff\x1b[31mRED\n" made
# thpguardd -n and thpguardctl status print the raw ESC and newline, and
# thpguardctl status --json carry a raw 0xff that no strict parser accepts.
# Text must escape (\xNN) every byte outside printable ASCII; JSON must
# decode as strict UTF-8 and parse. Also: a valid policy and a sysfs root at
# paths made of such bytes, which reach both reports as they are.
. "$(dirname "$0")/lib.sh"
: "${THPGUARDD:?}"
C=$THPGUARDCTL
PY=/usr/bin/python3
[ -x $PY ] || skip "$PY is not installed"

# text_clean FILE WHAT: nothing but printable ASCII and the newline ending each line.
text_clean() {
        $PY - "$1" "$2" <<'PY' || fail "$2: raw bytes in text output (above)"
import sys
data = open(sys.argv[1], "rb").read()
bad = [i for i, b in enumerate(data) if (b < 0x20 and b != 0x0A) or b >= 0x7F]
if bad:
    print(f"{sys.argv[2]}: byte 0x{data[bad[0]]:02x} at offset {bad[0]} of {len(data)}: {data!r}", file=sys.stderr)
    sys.exit(1)
PY
}

# json_valid FILE WHAT [PYTHON-EXPR...]: strict UTF-8, one JSON document, each EXPR true of it (d).
json_valid() {
        $PY - "$@" <<'PY' || fail "$2: not valid UTF-8 JSON, or a check failed (above)"
import json, sys
raw = open(sys.argv[1], "rb").read()
try:
    d = json.loads(raw.decode("utf-8"))
except Exception as e:
    print(f"{sys.argv[2]}: {e}: {raw[:2000]!r}", file=sys.stderr)
    sys.exit(1)
for expr in sys.argv[3:]:
    if not eval(expr):
        print(f"{sys.argv[2]}: check failed: {expr}\n{json.dumps(d, indent=1)[:4000]}", file=sys.stderr)
        sys.exit(1)
PY
}

SYS=$TMP/sys
cp -a "$FIXTURES/6.18" "$SYS"
HOSTILE=$'\xff\x1b[31mRED\n'
# The value as the diagnostics must show it.
SHOWN='\\xff\\x1b\[31mRED\\x0a'

# The issue's policy, with libconfig escapes, and a second one with the raw bytes in the file.
mkdir -m 0755 "$TMP/p"
P=$TMP/p/escapes.conf
printf '%s\n' 'mode = "\xff\x1b[31mRED\n";' 'thp = { enabled = "\xff\x1b[31mRED\n"; };' >"$P"
R=$TMP/p/raw.conf
printf 'mode = "%s";\nthp = { enabled = "madvise"; defrag = "%s"; };\n' "$HOSTILE" "$HOSTILE" >"$R"
chmod 0644 "$P" "$R"

for f in "$P" "$R"; do
        run "$THPGUARDD" -n --config "$f" --sysfs-root "$SYS"
        expect_rc 1
        text_clean "$ERR_FILE" "thpguardd -n $f: stderr"
        grep -Eq ": mode: invalid value \"$SHOWN\" \(expected enforce, audit or lock\)$" "$ERR_FILE" ||
                fail "thpguardd -n $f: the value is not shown escaped: $(cat "$ERR_FILE")"

        run "$THPGUARDD" --verify --json --config "$f" --sysfs-root "$SYS"
        expect_rc 2
        text_clean "$ERR_FILE" "thpguardd --verify --json $f: stderr"
        [ ! -s "$OUT_FILE" ] || fail "thpguardd --verify --json printed a report for a refused policy"

        for json in "" --json; do
                run "$C" status $json --config "$f" --sysfs-root "$SYS"
                expect_rc 1
                text_clean "$ERR_FILE" "thpguardctl status $json --config $f: stderr"
                grep -Eq "invalid value \"$SHOWN\"" "$ERR_FILE" || fail "thpguardctl status $json: $(cat "$ERR_FILE")"
        done
done
grep -Eq ":2: thp.enabled: invalid value \"$SHOWN\" \(expected always, madvise or never\)$" \
        <("$THPGUARDD" -n --config "$P" --sysfs-root "$SYS" 2>&1) || fail "the knob's value is not shown escaped"

# The default policy path is not an explicit --config: thpguardctl status
# reports the refusal inside its output, text and JSON. /etc/thpguard comes
# from an overlay in a private mount namespace.
if unshare -m --propagation private true 2>/dev/null; then
        OV=$TMP/overlay
        mkdir -p "$OV/upper" "$OV/work"
        in_etc() { # CMD...: with $P as /etc/thpguard/thpguard.conf
                unshare -m --propagation private sh -c '
                        mount -t overlay overlay -o "lowerdir=/etc,upperdir=$0/upper,workdir=$0/work" /etc || exit 99
                        mkdir -p -m 0755 /etc/thpguard && cp "$1" /etc/thpguard/thpguard.conf &&
                                chmod 0644 /etc/thpguard/thpguard.conf || exit 99
                        shift; exec "$@"' "$OV" "$P" "$@"
        }
        rc=0
        in_etc "$C" status --sysfs-root "$SYS" >"$OUT_FILE" 2>"$ERR_FILE" || rc=$?
        if [ $rc = 99 ]; then
                echo "SKIP (part): no overlay of /etc here: $(cat "$ERR_FILE")"
        else
                [ $rc = 0 ] || fail "status with a refused default policy: exit $rc: $(cat "$ERR_FILE")"
                text_clean "$OUT_FILE" "thpguardctl status, refused default policy"
                grep -Eq "Policy /etc/thpguard/thpguard.conf: not loaded \(.*invalid value \"$SHOWN\"" "$OUT_FILE" ||
                        fail "status text does not report the refusal: $(head -3 "$OUT_FILE")"
                in_etc "$C" status --json --sysfs-root "$SYS" >"$OUT_FILE" 2>"$ERR_FILE" ||
                        fail "status --json with a refused default policy: $(cat "$ERR_FILE")"
                json_valid "$OUT_FILE" "thpguardctl status --json, refused default policy" \
                        'not d["policy"]["loaded"]' \
                        'chr(0x1b) not in d["policy"]["error"] and "\\x1b[31mRED\\x0a" in d["policy"]["error"]'
        fi
fi

# A valid policy and a sysfs root whose paths hold those bytes: the paths are
# escaped in text and come out as valid UTF-8 in JSON (U+FFFD for the 0xff).
D=$TMP/$HOSTILE
mkdir -m 0755 "$D"
printf 'thp = { enabled = "madvise"; };\n' >"$D/thpguard.conf"
chmod 0644 "$D/thpguard.conf"
S=$TMP/sys$HOSTILE
cp -a "$FIXTURES/6.18" "$S"
run "$THPGUARDD" --verify --json --config "$D/thpguard.conf" --sysfs-root "$S"
expect_rc 0
json_valid "$OUT_FILE" "thpguardd --verify --json at a hostile path" \
        'd["config"].endswith("/\ufffd\x1b[31mRED\n/thpguard.conf")' \
        'd["sysfs_root"].endswith("/sys\ufffd\x1b[31mRED\n")' 'd["compliant"]'
for json in "" --json; do
        run "$C" status $json --config "$D/thpguard.conf" --sysfs-root "$S"
        expect_rc 0
        if [ -n "$json" ]; then
                json_valid "$OUT_FILE" "thpguardctl status --json at a hostile path" \
                        'd["policy"]["file"].endswith("/\ufffd\x1b[31mRED\n/thpguard.conf")' 'd["policy"]["loaded"]'
        else
                text_clean "$OUT_FILE" "thpguardctl status at a hostile path"
                grep -q 'RED\\x0a/thpguard.conf (enforce): 1 managed knob' "$OUT_FILE" || fail "status text: $(head -3 "$OUT_FILE")"
        fi
done
echo PASS
