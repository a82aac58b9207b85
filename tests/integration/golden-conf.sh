#!/bin/bash
# Golden test: every policy shipped under conf/ (recursively: conf/profiles/
# too) must pass `thpguardd -n` against every fixture kernel, and against this
# machine's /sys when it has THP. Warnings are allowed (a profile may use a
# knob an old kernel lacks) and shown; errors are not. Finding no .conf at all
# is a failure: a broken glob must not pass silently.
#
# Each file is checked through a root-owned 0644 copy: a checkout made by a
# non-root user (or with umask 002) would otherwise be refused by the
# ownership rule when ctest runs as root, which says nothing about the
# content. The copy keeps the relative path, so messages stay readable.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

CONF_DIR=$SRCDIR/conf
[ -d "$CONF_DIR" ] || fail "no conf/ directory in $SRCDIR"
mapfile -t CONFS < <(cd "$CONF_DIR" && find . -name '*.conf' \( -type f -o -type l \) | sed 's|^\./||' | sort)
[ "${#CONFS[@]}" -gt 0 ] || fail "no *.conf found under $CONF_DIR: nothing shipped would be checked"

roots=()
for fx in "${FIXTURE_NAMES[@]}"; do
        roots+=("$(fixture_copy "$fx")")
done
if [ -d /sys/kernel/mm/transparent_hugepage ]; then
        roots+=(/sys)
else
        echo "note: this machine has no /sys/kernel/mm/transparent_hugepage; fixtures only"
fi

n=0
for rel in "${CONFS[@]}"; do
        copy=$TMP/conf/$rel
        mkdir -p "$(dirname "$copy")"
        write_policy "$copy" <"$CONF_DIR/$rel"
        for r in "${roots[@]}"; do
                run "$THPGUARDD" -n --config "$copy" --sysfs-root "$r"
                expect_rc 0 "conf/$rel against --sysfs-root $r"
                expect_out '^configuration OK$' "conf/$rel against $r"
                if grep -Ev "^$(re "$copy")(:[0-9]+)?: warning: " "$ERR_FILE" >"$TMP/not-warnings"; then
                        fail "conf/$rel against $r: stderr has more than warnings: $(cat "$TMP/not-warnings")"
                fi
                if [ -s "$ERR_FILE" ]; then
                        echo "conf/$rel on ${r##*/sysfs-}: $(wc -l <"$ERR_FILE") warning(s):"
                        sed "s|^$TMP/conf/|conf/|; s|^|    |" "$ERR_FILE"
                fi
                n=$((n + 1))
        done
        # The same file through --verify: it must load (exit 0 or 1, never 2).
        run "$THPGUARDD" --verify --config "$copy" --sysfs-root "${roots[-1]}"
        [ "$RC" -eq 0 ] || [ "$RC" -eq 1 ] || fail "conf/$rel: --verify exits $RC (2 means the policy did not load)"
done
echo "PASS: ${#CONFS[@]} shipped policies (${CONFS[*]}), $n -n runs"
