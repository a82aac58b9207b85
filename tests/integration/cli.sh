#!/bin/bash
# The command line: --help/--version, usage errors (exit 2 and a pointer to
# --help), and --sysfs-root / --config that do not lead to a THP tree or a
# file: one clear line naming the path, and each mode's exit code
# (-n 1; --verify and --once 2). None of these may print a result on stdout.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

root=$(fixture_copy 6.18)
POL=$TMP/ok.conf
write_policy "$POL" <<<'thp = { enabled = "madvise"; defrag = "madvise"; };'

for opt in --help -h; do
        run "$THPGUARDD" "$opt"
        expect_rc 0 "$opt"
        expect_out '^Usage: thpguardd' "$opt"
        for o in --config --sysfs-root --check-config --verify --json --once; do
                expect_out "$(re "$o")" "$opt (documents $o)"
        done
        expect_err_empty "$opt stderr"
done
for opt in --version -V; do
        run "$THPGUARDD" "$opt"
        expect_rc 0 "$opt"
        expect_out '^thpguardd [0-9]+\.[0-9]+' "$opt"
        expect_out_lines 1 "$opt"
        expect_err_empty "$opt stderr"
done

# usage_error WHAT REGEX ARGS...: exit 2, REGEX on stderr, nothing on stdout.
usage_error() {
        local what=$1 regex=$2
        shift 2
        run "$THPGUARDD" "$@"
        expect_rc 2 "$what"
        expect_err "$regex" "$what"
        expect_err "^Try 'thpguardd --help'\.$" "$what"
        expect_out_empty "$what: stdout"
}
usage_error "an unknown long option" "unrecognized option '--bogus'" --bogus
usage_error "an unknown short option" "invalid option -- 'x'" -x
usage_error "a stray argument" "unexpected argument 'extra'" --verify --config "$POL" --sysfs-root "$root" extra
usage_error "--config without its argument" "requires an argument" --verify --config
usage_error "--sysfs-root without its argument" "requires an argument" --verify --sysfs-root
usage_error "--json alone" '--json goes with --verify' --json --config "$POL" --sysfs-root "$root"
usage_error "--json with --once" '--json goes with --verify' --once --json --config "$POL" --sysfs-root "$root"
usage_error "--json with -n" '--json goes with --verify' -n --json --config "$POL" --sysfs-root "$root"
# The list grows with the modes (--alive came with the daemon); match its ends.
EXCL='^thpguardd: --check-config, --verify, .*--once.* exclude each other$'
usage_error "-n with --verify" "$EXCL" -n --verify --config "$POL" --sysfs-root "$root"
usage_error "--verify with --once" "$EXCL" --verify --once --config "$POL" --sysfs-root "$root"
usage_error "--check-config with --once" "$EXCL" --check-config --once --config "$POL" --sysfs-root "$root"
usage_error "all three modes" "$EXCL" -n --verify --once --config "$POL" --sysfs-root "$root"
# A usage error is found before any write: --once with a bad option writes nothing.
expect_fixture_unchanged 6.18 "$root"

# --sysfs-root that leads nowhere.
mkdir "$TMP/empty"
: >"$TMP/a-file"
declare -A WHY=(
        [$TMP/empty]='no kernel/mm/transparent_hugepage below it \(a kernel without THP, or not a sysfs mount\)'
        [$TMP/a-file]='Not a directory'
        [$TMP/missing]='No such file or directory'
)
declare -A MODE_RC=([-n]=1 [--verify]=2 [--once]=2)
for bad in "$TMP/empty" "$TMP/a-file" "$TMP/missing"; do
        for mode in -n --verify --once; do
                run "$THPGUARDD" "$mode" --config "$POL" --sysfs-root "$bad"
                expect_rc "${MODE_RC[$mode]}" "$mode --sysfs-root $bad"
                expect_err "^thpguardd: --sysfs-root $(re "$bad"): ${WHY[$bad]}$" "$mode --sysfs-root $bad"
                expect_err_lines 1 "$mode --sysfs-root $bad (one clear line)"
                expect_out_empty "$mode --sysfs-root $bad: stdout"
        done
done
[ ! -e "$TMP/missing" ] || fail "--sysfs-root created the missing directory"
[ -z "$(ls -A "$TMP/empty")" ] || fail "--sysfs-root wrote into the empty directory"

# --json too: an error is not a JSON document with compliant=false.
run "$THPGUARDD" --verify --json --config "$POL" --sysfs-root "$TMP/missing"
expect_rc 2 "--verify --json with a missing --sysfs-root"
expect_out_empty "--verify --json with a missing --sysfs-root: stdout"

# A missing --config, in each mode.
for mode in -n --verify --once; do
        run "$THPGUARDD" "$mode" --config "$TMP/none.conf" --sysfs-root "$root"
        expect_rc "${MODE_RC[$mode]}" "$mode with a missing --config"
        expect_err "^$(re "$TMP/none.conf"): cannot open: No such file or directory$" "$mode with a missing --config"
        expect_err_lines 1 "$mode with a missing --config (one clear line)"
        expect_out_empty "$mode with a missing --config: stdout"
done

# Spellings of the same root: trailing slashes and a relative path.
run "$THPGUARDD" --verify --config "$POL" --sysfs-root "$root"
expect_rc 0 "--verify"
cp "$OUT_FILE" "$TMP/plain.out"
run "$THPGUARDD" --verify --config "$POL" --sysfs-root "$root//"
expect_rc 0 "--verify with --sysfs-root ending in //"
cmp -s "$OUT_FILE" "$TMP/plain.out" || fail "--sysfs-root DIR// reads differently from DIR"
run bash -c 'cd "$1" && exec "$2" --verify --config "$3" --sysfs-root "./${4##*/}"' _ "$TMP" "$THPGUARDD" "$POL" "$root"
expect_rc 0 "--verify with a relative --sysfs-root"
cmp -s "$OUT_FILE" "$TMP/plain.out" || fail "a relative --sysfs-root reads differently"
# -c is --config.
run "$THPGUARDD" --verify -c "$POL" --sysfs-root "$root"
expect_rc 0 "--verify -c"
cmp -s "$OUT_FILE" "$TMP/plain.out" || fail "-c FILE is not --config FILE"

echo "PASS: command line"
