#!/bin/bash
# A struct split across the daemon's files is one module's: its fields are
# touched in the owner's .c alone, and every other file calls the owner's
# functions (daemon-writers.h, daemon-corrector.h). Read off every file of
# src/daemon/ but the owner: no member access through the embedded field
# (d->attribution.x, rt->corrector.x) and no variable of the owned type (an
# alias such as `KnobAttribution *a = &rt->attribution` would get round the
# first). Declaring the member (daemon-internal.h) and passing the whole
# struct to the owner (&d->corrector) are the door.
set -euo pipefail
source "$SRCDIR/tests/lib/test.sh"
cd "$SRCDIR"

# owner file : the embedded member's name : the owned types
OWNED=(
        "src/daemon/daemon-writers.c:attribution:KnobAttribution|WriterAttribution"
        "src/daemon/daemon-corrector.c:corrector:Corrector|CorrectorKnob|CorrectorLocked"
)

bad=()
for entry in "${OWNED[@]}"; do
        IFS=: read -r owner member types <<<"$entry"
        [ -f "$owner" ] || fail "$owner, the owner of .$member, is gone: update this test"
        header=${owner%.c}.h
        while IFS= read -r f; do
                [ "$f" = "$owner" ] || [ "$f" = "$header" ] && continue
                while IFS= read -r hit; do
                        bad+=("$f:$hit")
                done < <(grep -nE "(\.|->)$member(\.|->)[A-Za-z_]|\b($types)\b" "$f" |
                        grep -vE '^[0-9]+:\s*(/?\*|//)' |
                        grep -vE "^[0-9]+:\s*($types)\s+$member;" || true)
        done < <(git ls-files 'src/daemon/*.c' 'src/daemon/*.h')
done

if [ "${#bad[@]}" -gt 0 ]; then
        printf '%s\n' "${bad[@]}" >&2
        fail "${#bad[@]} use(s) of another module's fields: call its functions instead"
fi
echo "ok: the fields of writer attribution and the corrector are touched by their owners alone"
