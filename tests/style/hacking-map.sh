#!/bin/bash
# HACKING.md's layout table is the map of the tree: every source and header
# under src/ and include/thpguard/ is named in it (by its path, or by a
# pattern such as `src/daemon/daemon-*.c` or a folder such as `src/ctl/`;
# a header beside its .c, src/d/x.h, by the module's src/d/x.c), and
# every src/ or include/ path it names in backquotes exists. A file added,
# moved or removed without the map fails here.
set -euo pipefail
source "$SRCDIR/tests/lib/test.sh"
cd "$SRCDIR"

map=$TMP/map
# The layout section only: from its heading to the next one.
sed -n '/^## Layout/,/^## /p' HACKING.md >"$map"
[ -s "$map" ] || fail "HACKING.md has no ## Layout section"
# Every `...` span of it, one a line.
grep -o '`[^`]*`' "$map" | tr -d '`' | sort -u >"$TMP/named"

missing=()
while IFS= read -r f; do
        found=
        while IFS= read -r n; do
                case $n in
                src/* | include/*) ;;
                *) continue ;;
                esac
                # A folder (src/ctl/) covers what is below it; a pattern its matches.
                if [[ $n == */ && $f == "$n"* ]] || [[ $f == $n ]] ||
                        [[ $f == src/*.h && ${f%.h}.c == $n ]]; then
                        found=1
                        break
                fi
        done <"$TMP/named"
        [ -n "$found" ] || missing+=("$f")
done < <(git ls-files src include | grep -E '\.(c|h)$')
[ "${#missing[@]}" -eq 0 ] || fail "HACKING.md's layout table does not name: ${missing[*]}"

# The table's rows only (the prose around it has examples such as src/x.c), placeholders (MODULE) aside.
grep '^|' "$map" | grep -o '`[^`]*`' | tr -d '`' | sort -u >"$TMP/rows"
stale=()
while IFS= read -r n; do
        case $n in
        *MODULE*) continue ;;
        src/* | include/*) ;;
        *) continue ;;
        esac
        # A name with words after it ("src/x.c, src/y.c") is split by the table itself; patterns must match.
        compgen -G "$n" >/dev/null || [ -e "$n" ] || stale+=("$n")
done <"$TMP/rows"
[ "${#stale[@]}" -eq 0 ] || fail "HACKING.md's layout table names what is not in the tree: ${stale[*]}"
echo "HACKING.md's layout names every file under src/ and include/thpguard/, and nothing that is not there"
