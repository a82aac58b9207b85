#!/bin/bash
# Every man/*.scd is built and renders with `man -l` without a warning,
# and the pages document what the program really offers: each long option
# of `thpguardd --help` in thpguardd(8), each policy key in thpguard.conf(5).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need man man-db
need scdoc

n=0
for scd in "$SRCDIR"/man/*.scd; do
        page=$(basename "$scd" .scd)
        out=$BUILDDIR/man/$page
        [ -f "$out" ] || fail "man/$page.scd was not built to $out (is it in man/CMakeLists.txt's glob?)"
        [ "$out" -nt "$scd" ] || [ ! "$scd" -nt "$out" ] || fail "$out is older than its source: rebuild"
        err=$(MANWIDTH=80 man -l "$out" 2>&1 >/dev/null) || fail "man -l $page failed: $err"
        [ -z "$err" ] || fail "man -l $page printed warnings:
$err"
        text=$(MANWIDTH=80 man -l "$out" 2>/dev/null | col -b)
        for sec in NAME SYNOPSIS DESCRIPTION; do
                grep -q "^$sec" <<<"$text" || fail "$page has no $sec section"
        done
        # The install rule puts it in the section its name says.
        n=$((n + 1))
        echo "ok: $page ($(echo "$text" | wc -l) lines)"
done
[ "$n" -ge 2 ] || fail "expected at least thpguardd.8 and thpguard.conf.5, found $n pages"

# Each page goes to man<section> on install.
root=$(mktemp -d "$PKG_WORK/man-root.XXXXXX")
on_exit 'rm -rf "$root"'
DESTDIR=$root cmake --install "$BUILDDIR/man" >/dev/null
for scd in "$SRCDIR"/man/*.scd; do
        page=$(basename "$scd" .scd)
        sec=${page##*.}
        sec=${sec:0:1}
        find "$root" -path "*/man/man$sec/$page" | grep -q . || fail "$page is not installed to man$sec"
done
echo "ok: every page installs to its section"

# A program's page is in the section its install directory calls for:
# thpguardctl (bindir, a user command) in 1, thpguardd (sbindir) in 8.
for p in man1/thpguardctl.1 man8/thpguardd.8; do
        find "$root" -path "*/man/$p" | grep -q . || fail "$p is not installed"
done
head=$(MANWIDTH=80 man -l "$BUILDDIR/man/thpguardctl.1" 2>/dev/null | col -b | sed -n 1p)
grep -q 'thpguardctl(1)' <<<"$head" || fail "thpguardctl.1's title line is '$head', want thpguardctl(1)"
echo "ok: thpguardctl(1) and thpguardd(8) are in their sections"

# Every reference to one of our pages names its real section, in the pages,
# the sources (--help texts), the README and HACKING, the unit and catalog,
# and the packaging.
pages=$(for scd in "$SRCDIR"/man/*.scd; do basename "$scd" .scd; done)
for page in $pages; do
        name=${page%.*}
        sec=${page##*.}
        bad=$(cd "$SRCDIR" && grep -rnE "\b${name//./\.}\*?\(([0-9])\)" man src README.md HACKING.md systemd packaging 2>/dev/null |
                grep -vE "\b${name//./\.}\*?\($sec\)" || :)
        [ -z "$bad" ] || fail "references to $name in the wrong section (the page is $page):
$bad"
done
echo "ok: every reference to a thpguard page names its section"

# thpguardd(8) names every long option the program accepts.
d8=$(MANWIDTH=200 man -l "$BUILDDIR/man/thpguardd.8" 2>/dev/null | col -b)
for opt in $("$THPGUARDD" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
        grep -q -- "$opt" <<<"$d8" || fail "thpguardd(8) does not document $opt (listed by --help)"
done
echo "ok: thpguardd(8) documents every option of --help"
for s in "EXIT STATUS" SIGNALS JOURNAL FILES EXAMPLES; do
        grep -q "^$s" <<<"$d8" || fail "thpguardd(8) has no $s section"
done
for f in THPGUARD_KNOB THPGUARD_OBSERVED THPGUARD_DESIRED THPGUARD_TRIGGER THPGUARD_RESULT THPGUARD_ERRNO SIGHUP SIGTERM; do
        grep -q "$f" <<<"$d8" || fail "thpguardd(8) does not mention $f"
done
for id in $(sed -n 's/^#define THPGUARD_MESSAGE_[A-Z_]* *"\([0-9a-f]\{32\}\)"/\1/p' "$SRCDIR/include/thpguard/message-ids.h"); do
        grep -q "$id" <<<"$d8" || fail "thpguardd(8) does not list MESSAGE_ID $id"
done
echo "ok: thpguardd(8) has the exit codes, signals, journal fields and ids"

# thpguard-containerd-config(8) names every command and option of its --help, and its exit statuses.
d8c=$(MANWIDTH=200 man -l "$BUILDDIR/man/thpguard-containerd-config.8" 2>/dev/null | col -b)
tcc=$BUILDDIR/packaging/runtime/containerd/thpguard-containerd-config
for opt in $("$tcc" --help | grep -oE -- '(^  [a-z]+ |--[a-z][a-z-]*)' | tr -d ' ' | sort -u); do
        grep -q -- "$opt" <<<"$d8c" || fail "thpguard-containerd-config(8) does not document $opt (listed by --help)"
done
for s in "EXIT STATUS" "CONTAINERD VERSIONS" FILES EXAMPLES; do
        grep -q "^$s" <<<"$d8c" || fail "thpguard-containerd-config(8) has no $s section"
done
echo "ok: thpguard-containerd-config(8) documents every command and option of --help"

# thpguard.conf(5) names every policy key.
c5=$(MANWIDTH=200 man -l "$BUILDDIR/man/thpguard.conf.5" 2>/dev/null | col -b)
for key in mode recheck_interval fight_threshold fight_window metrics_file thp enabled defrag shmem_enabled \
        use_zero_page shrink_underused khugepaged pages_to_scan scan_sleep_millisecs alloc_sleep_millisecs \
        max_ptes_none max_ptes_swap max_ptes_shared sizes size; do
        grep -q -- "$key =" <<<"$c5" || fail "thpguard.conf(5) does not document the key '$key'"
done
for v in always madvise never defer defer+madvise within_size advise deny force inherit; do
        grep -q -- "\"$v\"" <<<"$c5" || fail "thpguard.conf(5) does not list the value \"$v\""
done
echo "ok: thpguard.conf(5) documents every key and value"
echo "PASS"
