/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A THP sysfs tree of regular files in a temporary directory, for the unit
 * tests of what reads and writes knobs below a root: never the real sysfs.
 * Include after <cmocka.h>.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch-dir.h"
#include "thpguard/sysfs.h"

#define THP "kernel/mm/transparent_hugepage"

typedef struct Tree {
        char root[64];
        Sysfs *sysfs; /* the test's to open, once its files are in place; closed by tree_free() */
} Tree;

static inline void path_of(const Tree *t, const char *rel, char *buf, size_t size) {
        snprintf(buf, size, "%s/%s", t->root, rel);
}

static inline void put(const Tree *t, const char *rel, const char *text) {
        write_text(t->root, rel, text);
}

static inline void make_dir(const Tree *t, const char *rel) {
        char p[256];

        path_of(t, rel, p, sizeof(p));
        assert_int_equal(mkdir(p, 0755), 0);
}

static inline void move(const Tree *t, const char *from, const char *to) {
        char a[256], b[256];

        path_of(t, from, a, sizeof(a));
        path_of(t, to, b, sizeof(b));
        assert_int_equal(rename(a, b), 0);
}

/* The file's whole content, in a buffer the next call overwrites. */
static inline const char *slurp(const Tree *t, const char *rel) {
        static char buf[256];
        char p[256];
        FILE *f;
        size_t n;

        path_of(t, rel, p, sizeof(p));
        f = fopen(p, "re");
        assert_non_null(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

/* /tmp/thpguard-NAME.XXXXXX with an empty kernel/mm/transparent_hugepage/ in it. */
static inline Tree *tree_new(const char *name) {
        Tree *t = calloc(1, sizeof(*t));

        assert_non_null(t);
        snprintf(t->root, sizeof(t->root), "/tmp/thpguard-%s.XXXXXX", name);
        assert_non_null(mkdtemp(t->root));
        make_dir(t, "kernel");
        make_dir(t, "kernel/mm");
        make_dir(t, THP);
        return t;
}

static inline void tree_free(Tree *t) {
        sysfs_free(t->sysfs);
        remove_tree(t->root);
        free(t);
}
