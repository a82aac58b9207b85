/* SPDX-License-Identifier: MIT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "thpguard/watch.h"

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
        assert_int_equal(w->n_dirs, 3);
        assert_int_equal(watches_lost(w), 0);

        fail_after = 1; /* room for transparent_hugepage/ only */
        assert_int_equal(watches_sync(w, s, &p), 2);
        fail_after = -1;
        assert_int_equal(w->n_dirs, 1);
        assert_int_equal(watches_lost(w), 2);

        /* Memory again: the next sync watches all three. */
        assert_int_equal(watches_sync(w, s, &p), 0);
        assert_int_equal(watches_lost(w), 0);
        sysfs_free(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sync_out_of_memory),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
