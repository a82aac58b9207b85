/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A scratch directory for the unit tests that read or write files
 * (tests/unit/metrics.c, tests/unit/metrics-kernel.c, and tree.h's THP
 * trees). Include it after <cmocka.h>.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A new empty directory under /tmp; the caller frees the name and calls remove_tree(). */
static inline char *tmpdir(void) {
        char *d = strdup("/tmp/thpguard-metrics.XXXXXX");

        assert_non_null(d);
        assert_non_null(mkdtemp(d));
        return d;
}

/* dir/name holding text. */
static inline void write_text(const char *dir, const char *name, const char *text) {
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

static inline void remove_tree(const char *dir) {
        char cmd[600];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}
