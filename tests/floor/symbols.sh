#!/bin/bash
# Proves the RHEL 8 floor from a newer system: the binaries of a floor build
# reference no libsystemd symbol version above THPGUARD_LIBSYSTEMD_API and no
# json-c function newer than THPGUARD_JSONC_API (objdump -T).
#
# json-c 0.14 brought symbol versioning and put every function it then had,
# old or new, under JSONC_0.14. So JSONC_0.15 and later are refused by
# version, and the JSONC_0.14 node by name: the functions json-c 0.14 added
# (its ChangeLog: 64-bit unsigned integers and json_tokener_get_parse_end).
set -euo pipefail
. "${SRCDIR:?SRCDIR is not set: run this test through ctest}/tests/lib/test.sh"

[ -n "${THPGUARD_LIBSYSTEMD_API:-}" ] && [ -n "${THPGUARD_JSONC_API:-}" ] ||
        skip "not a floor build: configure with -DTHPGUARD_LIBSYSTEMD_API=239 -DTHPGUARD_JSONC_API=0.13 (tests/run-all builds build-floor so)"
need objdump binutils

jsonc_014_added=(json_object_new_uint64 json_object_get_uint64 json_object_set_uint64 json_tokener_get_parse_end)

# version_gt A B: A is a newer version than B (dotted numbers).
version_gt() {
        [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$1" ]
}

bad=0
for bin in "$THPGUARDD" "$THPGUARDCTL"; do
        dyn=$(objdump -T "$bin") || fail "objdump -T $bin failed"
        # An undefined symbol's line ends in "(VERSION) NAME" (or "VERSION NAME").
        while read -r version name; do
                case $version in
                LIBSYSTEMD_*)
                        v=${version#LIBSYSTEMD_}
                        if [ "$v" -gt "$THPGUARD_LIBSYSTEMD_API" ]; then
                                echo "$(basename "$bin"): $name@$version is newer than libsystemd $THPGUARD_LIBSYSTEMD_API"
                                bad=1
                        fi
                        ;;
                JSONC_0.14)
                        for f in "${jsonc_014_added[@]}"; do
                                if [ "$name" = "$f" ] && version_gt 0.14 "$THPGUARD_JSONC_API"; then
                                        echo "$(basename "$bin"): $name was added in json-c 0.14, after $THPGUARD_JSONC_API"
                                        bad=1
                                fi
                        done
                        ;;
                JSONC_PRIVATE) ;;
                JSONC_*)
                        v=${version#JSONC_}
                        if version_gt "$v" "$THPGUARD_JSONC_API"; then
                                echo "$(basename "$bin"): $name@$version is newer than json-c $THPGUARD_JSONC_API"
                                bad=1
                        fi
                        ;;
                esac
        done < <(awk '/[*]UND[*]/ { v = $(NF-1); gsub(/[()]/, "", v); print v, $NF }' <<<"$dyn")
        n_sd=$(grep -c 'LIBSYSTEMD_' <<<"$dyn" || true)
        n_json=$(grep -c 'JSONC_' <<<"$dyn" || true)
        echo "$(basename "$bin"): $n_sd libsystemd and $n_json json-c references checked"
done
[ "$bad" -eq 0 ] || fail "the floor build references symbols above the floor (listed above)"
echo "ok: nothing above libsystemd $THPGUARD_LIBSYSTEMD_API or json-c $THPGUARD_JSONC_API"
