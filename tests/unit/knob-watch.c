/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "knob-watch.h"
#include "tree.h"

/* Linked with -Wl,--wrap=realloc: fails every realloc() after the first fail_after ones. */
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);
static int fail_after = -1;

void *__wrap_realloc(void *p, size_t n) {
        if (fail_after == 0)
                return NULL;
        if (fail_after > 0)
                fail_after--;
        return __real_realloc(p, n);
}

/* Directories skipped because memory ran out count as unwatched, and stay so. */
static void test_sync_out_of_memory(void **state) {
        PolicyKnob knobs[] = {
                { .path = "enabled" },
                { .path = "defrag" },
                { .path = "khugepaged/defrag" },
                { .path = "hugepages-64kB/enabled" },
        };
        Policy p = { .n_knobs = ELEMENTSOF(knobs), .knobs = knobs };
        _cleanup_(watches_freep) Watches *w = NULL;
        Sysfs *s = NULL;
        char root[4096];

        snprintf(root, sizeof(root), "%s/6.18", getenv("FIXTURES"));
        assert_int_equal(sysfs_new(root, &s), 0);
        assert_int_equal(watches_new(&w), 0);

        assert_int_equal(watches_sync(w, s, &p), 0);
        assert_int_equal(watches_listed(w), 3);
        assert_int_equal(watches_lost(w), 0);

        fail_after = 1; /* room for transparent_hugepage/ only */
        assert_int_equal(watches_sync(w, s, &p), 2);
        fail_after = -1;
        assert_int_equal(watches_listed(w), 1);
        assert_int_equal(watches_lost(w), 2);

        /* Memory again: the next sync watches all three. */
        assert_int_equal(watches_sync(w, s, &p), 0);
        assert_int_equal(watches_lost(w), 0);
        sysfs_free(s);
}

/* What one read of the knobs' watch says, decoded: a bit per kind of event seen. */
enum {
        SEEN_ENABLED = 1 << 0,  /* a write to enabled, in transparent_hugepage/ */
        SEEN_MOVED = 1 << 1,    /* khugepaged/ itself renamed away: a new inode */
        SEEN_LOST = 1 << 2,     /* khugepaged/'s watch gone */
        SEEN_OVERFLOW = 1 << 3, /* never here */
};

static unsigned decode_all(Watches *w) {
        char buf[4096] __attribute__((aligned(8)));
        size_t offset = 0;
        unsigned seen = 0;
        WatchEvent ev;
        ssize_t n;

        n = read(watches_fd(w), buf, sizeof(buf));
        assert_true(n > 0);
        while (watches_next(w, buf, (size_t)n, &offset, &ev) > 0) {
                if (ev.overflow)
                        seen |= SEEN_OVERFLOW;
                else if (!ev.dir)
                        continue;
                else if (strcmp(ev.dir, "") == 0 && ev.name && strcmp(ev.name, "enabled") == 0 &&
                         !ev.replaced)
                        seen |= SEEN_ENABLED;
                else if (strcmp(ev.dir, "khugepaged") == 0 && ev.lost)
                        seen |= SEEN_LOST;
                else if (strcmp(ev.dir, "khugepaged") == 0 && !ev.name && ev.replaced)
                        seen |= SEEN_MOVED;
        }
        assert_int_equal(offset, (size_t)n);
        return seen;
}

/* Events decoded by directory and file; a directory renamed away loses its watch, and the path is watched
 * again. */
static void test_decode(void **state) {
        PolicyKnob knobs[] = { { .path = "enabled" }, { .path = "khugepaged/defrag" } };
        Policy p = { .n_knobs = ELEMENTSOF(knobs), .knobs = knobs };
        _cleanup_(watches_freep) Watches *w = NULL;
        Tree *t = tree_new("watch");

        make_dir(t, THP "/khugepaged");
        put(t, THP "/enabled", "always [madvise] never\n");
        put(t, THP "/khugepaged/defrag", "1\n");
        assert_int_equal(sysfs_new(t->root, &t->sysfs), 0);
        assert_int_equal(watches_new(&w), 0);
        assert_int_equal(watches_sync(w, t->sysfs, &p), 0);
        assert_true(watches_quiet(w));

        put(t, THP "/enabled", "never\n");
        assert_false(watches_quiet(w));
        assert_int_equal(decode_all(w), SEEN_ENABLED);
        assert_true(watches_quiet(w));

        move(t, THP "/khugepaged", THP "/khugepaged.old");
        /* The watch is dropped while decoding IN_MOVE_SELF: its IN_IGNORED comes in the next read. */
        assert_int_equal(decode_all(w) & SEEN_MOVED, SEEN_MOVED);
        assert_int_equal(decode_all(w) & SEEN_LOST, SEEN_LOST);
        assert_int_equal(watches_lost(w), 1);

        make_dir(t, THP "/khugepaged");
        assert_int_equal(watches_readd(w, t->sysfs), 1);
        assert_int_equal(watches_lost(w), 0);
        tree_free(t);
}

/* The policy file's watch: its own name and a ConfigMap's ..data swap count, a neighbour does not. */
static void test_file_watch(void **state) {
        _cleanup_(file_watch_freep) FileWatch *w = NULL;
        Tree *t = tree_new("file-watch");
        char path[128], data[128];

        path_of(t, "thpguard.conf", path, sizeof(path));
        assert_int_equal(file_watch_new(path, &w), 0);
        assert_string_equal(file_watch_dir(w), t->root);
        assert_int_equal(file_watch_start(w), 0);
        assert_false(file_watch_changed(w));

        put(t, "other.conf", "x\n");
        assert_false(file_watch_changed(w));
        put(t, "thpguard.conf", "mode = \"audit\";\n");
        assert_true(file_watch_changed(w));
        assert_false(file_watch_changed(w)); /* all read */

        path_of(t, "..data_tmp", data, sizeof(data));
        assert_int_equal(symlink(".", data), 0);
        move(t, "..data_tmp", "..data");
        assert_true(file_watch_changed(w));
        tree_free(t);
}

/* A directory that does not exist cannot be watched: said, not fatal. */
static void test_file_watch_no_dir(void **state) {
        _cleanup_(file_watch_freep) FileWatch *w = NULL;

        assert_int_equal(file_watch_new("/nonexistent-thpguard/thpguard.conf", &w), 0);
        assert_string_equal(file_watch_dir(w), "/nonexistent-thpguard");
        assert_int_equal(file_watch_start(w), -ENOENT);
        file_watch_free(TAKE_PTR(w));

        assert_int_equal(file_watch_new("thpguard.conf", &w), 0);
        assert_string_equal(file_watch_dir(w), ".");
        file_watch_free(TAKE_PTR(w));
        assert_int_equal(file_watch_new("/thpguard.conf", &w), 0);
        assert_string_equal(file_watch_dir(w), "/");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sync_out_of_memory),
                cmocka_unit_test(test_decode),
                cmocka_unit_test(test_file_watch),
                cmocka_unit_test(test_file_watch_no_dir),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
