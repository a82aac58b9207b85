#!/bin/bash
# The layers of src/ point one way: basic -> shared -> writers, and the
# programs on top (daemon, helper, shim, ctl) use the layers and never one
# another. Read off every #include of every file under src/:
#  - "thpguard/X.h" is a header of include/thpguard/, whose folder is that
#    of its X.c (or, for a header alone, the one HEADER_ONLY below names);
#    that folder must be the includer's own or a layer below it;
#  - "X.h" is a header beside the includer, in its own folder;
#  - no path climbs out of its folder ("../").
# And include/thpguard/ holds only what more than one folder uses: a header
# used by its own folder alone belongs beside its .c.
set -euo pipefail
source "$SRCDIR/tests/lib/test.sh"
cd "$SRCDIR"

declare -A RANK=([basic]=0 [shared]=1 [writers]=2 [daemon]=3 [helper]=3 [shim]=3 [ctl]=3)
# Headers with no .c of their own, and the folder whose vocabulary they are.
declare -A HEADER_ONLY=([macro.h]=basic [json-util.h]=basic [message-ids.h]=shared [write-source.h]=shared
        [write-probe-record.h]=writers)

# folder_of FILE: the first folder below src/ (src/writers/bpf/x.c is writers').
folder_of() {
        local f=${1#src/}
        echo "${f%%/*}"
}

# owner_of HEADER: the folder of include/thpguard/HEADER.
owner_of() {
        local h=$1 c
        if [ -n "${HEADER_ONLY[$h]:-}" ]; then
                echo "${HEADER_ONLY[$h]}"
                return
        fi
        c=$(git ls-files "src/*/${h%.h}.c" "src/*/*/${h%.h}.c" | head -n 1)
        [ -n "$c" ] || return 1
        folder_of "$c"
}

bad=()
declare -A USERS
for folder in "${!RANK[@]}"; do
        [ -d "src/$folder" ] || fail "src/$folder/ is missing: the layers are ${!RANK[*]}"
done
while IFS= read -r f; do
        folder=$(folder_of "$f")
        [ -n "${RANK[$folder]:-}" ] || {
                bad+=("$f: src/$folder/ is no layer or program this check knows")
                continue
        }
        while IFS= read -r inc; do
                case $inc in
                *../*)
                        bad+=("$f: #include \"$inc\" climbs out of its folder")
                        ;;
                thpguard/*)
                        h=${inc#thpguard/}
                        if [ ! -e "include/thpguard/$h" ]; then
                                bad+=("$f: #include \"$inc\": no include/thpguard/$h")
                                continue
                        fi
                        USERS[$h]="${USERS[$h]:-} $folder"
                        if ! owner=$(owner_of "$h"); then
                                bad+=("$f: include/thpguard/$h has no .c in src/ and no folder in HEADER_ONLY")
                        elif [ "$owner" != "$folder" ] &&
                                { [ "${RANK[$owner]}" -ge "${RANK[$folder]}" ]; }; then
                                bad+=("$f ($folder): #include \"$inc\" points up or across, to $owner")
                        fi
                        ;;
                *.skel.h) ;; # bpftool's skeleton, generated in the build tree
                *)
                        [ -e "$(dirname "$f")/$inc" ] || [ -e "src/$folder/$inc" ] ||
                                bad+=("$f: #include \"$inc\" is not beside it in src/$folder/")
                        ;;
                esac
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(git ls-files src | grep -E '\.(c|h)$')

# include/thpguard/'s own includes: a header of a folder includes only its
# own folder's or a lower layer's; a header included by another one is
# part of that one's interface, so shared as widely.
for hp in include/thpguard/*.h; do
        h=${hp##*/}
        owner=$(owner_of "$h") || continue
        while IFS= read -r inc; do
                i=${inc#thpguard/}
                USERS[$i]="${USERS[$i]:-} $owner include"
                io=$(owner_of "$i") || continue
                [ "$io" = "$owner" ] || [ "${RANK[$io]}" -lt "${RANK[$owner]}" ] ||
                        bad+=("$hp ($owner): #include \"$inc\" points up or across, to $io")
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(thpguard\/[^"]*\)".*/\1/p' "$hp")
done

# Only what more than one folder shares is in include/thpguard/.
for hp in include/thpguard/*.h; do
        h=${hp##*/}
        folders=$(tr ' ' '\n' <<<"${USERS[$h]:-}" | sed '/^$/d' | sort -u | tr '\n' ' ')
        n=$(wc -w <<<"$folders")
        [ "$n" -ge 2 ] || bad+=("include/thpguard/$h is used by ${folders:-no folder} only: it belongs beside its .c")
done

if [ "${#bad[@]}" -gt 0 ]; then
        printf '%s\n' "${bad[@]}" >&2
        fail "${#bad[@]} include(s) break the layers (basic -> shared -> writers -> the programs)"
fi
echo "every #include under src/ points down or inside its folder; include/thpguard/ holds only what folders share"
