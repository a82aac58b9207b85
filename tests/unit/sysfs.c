/* SPDX-License-Identifier: MIT */
/*
 * sysfs.c on a fixture tree in a temporary directory: a knob handle whose
 * file, or whose whole directory, was renamed away and replaced is stale
 *, and symlinks and special files below the root are
 * refused on every path that opens a knob (item 5).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "thpguard/fileio.h"
#include "thpguard/sysfs.h"
#include "tree.h"

static int setup(void **state) {
        Tree *t = tree_new("sysfs");

        make_dir(t, THP "/khugepaged");
        make_dir(t, "outside");
        put(t, THP "/enabled", "always [madvise] never\n");
        put(t, THP "/khugepaged/pages_to_scan", "4096\n");
        put(t, "outside/target", "100\n");
        assert_int_equal(sysfs_new(t->root, &t->sysfs), 0);
        *state = t;
        return 0;
}

static int teardown(void **state) {
        tree_free(*state);
        return 0;
}

static void read_handle(const Tree *t, const char *knob, SysfsHandle *h, const char *want) {
        char buf[64];
        size_t len;
        int r;

        r = sysfs_read_handle(t->sysfs, knob, h, buf, sizeof(buf), &len);
        if (r < 0)
                fail_msg("%s: %s", knob, strerror(-r));
        assert_string_equal(buf, want);
}

/* The case: khugepaged/ renamed away whole, a new one in its place. */
static void test_stale_dir_replaced(void **state) {
        Tree *t = *state;
        SysfsHandle h = SYSFS_HANDLE_CLOSED;
        const char *knob = "khugepaged/pages_to_scan";

        read_handle(t, knob, &h, "4096\n");
        assert_false(sysfs_handle_is_stale(t->sysfs, knob, &h));

        move(t, THP "/khugepaged", THP "/khugepaged.old");
        make_dir(t, THP "/khugepaged");
        put(t, THP "/khugepaged/pages_to_scan", "100\n");
        /* The old file is not unlinked (it lives on in khugepaged.old): the handle still reads it. */
        read_handle(t, knob, &h, "4096\n");
        assert_true(sysfs_handle_is_stale(t->sysfs, knob, &h));
        sysfs_handle_close(&h);
        read_handle(t, knob, &h, "100\n");
        assert_false(sysfs_handle_is_stale(t->sysfs, knob, &h));
        sysfs_handle_close(&h);
}

/* A file replaced by rename while another link keeps the old one alive. */
static void test_stale_file_replaced(void **state) {
        Tree *t = *state;
        SysfsHandle h = SYSFS_HANDLE_CLOSED;
        char a[256], b[256];

        read_handle(t, "enabled", &h, "always [madvise] never\n");
        path_of(t, THP "/enabled", a, sizeof(a));
        path_of(t, "outside/enabled.keep", b, sizeof(b));
        assert_int_equal(link(a, b), 0);
        put(t, THP "/enabled.new", "always madvise [never]\n");
        move(t, THP "/enabled.new", THP "/enabled");
        assert_true(sysfs_handle_is_stale(t->sysfs, "enabled", &h));
        sysfs_handle_close(&h);
        read_handle(t, "enabled", &h, "always madvise [never]\n");
        assert_false(sysfs_handle_is_stale(t->sysfs, "enabled", &h));

        /* Unlinked, and gone from the path. */
        assert_int_equal(unlink(a), 0);
        assert_true(sysfs_handle_is_stale(t->sysfs, "enabled", &h));
        sysfs_handle_close(&h);
        /* A closed handle is not stale: there is nothing to close. */
        assert_false(sysfs_handle_is_stale(t->sysfs, "enabled", &h));
}

/* A symlink swapped in where the directory was: stale, and the reopen refuses it. */
static void test_stale_dir_becomes_symlink(void **state) {
        Tree *t = *state;
        SysfsHandle h = SYSFS_HANDLE_CLOSED;
        const char *knob = "khugepaged/pages_to_scan";
        char buf[64], p[256];
        size_t len;

        read_handle(t, knob, &h, "4096\n");
        move(t, THP "/khugepaged", "outside/khugepaged");
        path_of(t, THP "/khugepaged", p, sizeof(p));
        assert_int_equal(symlink("../../../outside/khugepaged", p), 0);
        assert_true(sysfs_handle_is_stale(t->sysfs, knob, &h));
        sysfs_handle_close(&h);
        assert_int_equal(sysfs_read_handle(t->sysfs, knob, &h, buf, sizeof(buf), &len), -ELOOP);
        assert_int_equal(h.fd, -1);
}

static void test_symlinked_knob(void **state) {
        Tree *t = *state;
        SysfsHandle h = SYSFS_HANDLE_CLOSED;
        char buf[64], p[256];
        size_t len;

        path_of(t, THP "/khugepaged/pages_to_scan", p, sizeof(p));
        assert_int_equal(unlink(p), 0);
        assert_int_equal(symlink("../../../../outside/target", p), 0);
        assert_int_equal(sysfs_read(t->sysfs, "khugepaged/pages_to_scan", buf, sizeof(buf), &len), -ELOOP);
        assert_int_equal(sysfs_read_handle(t->sysfs, "khugepaged/pages_to_scan", &h, buf, sizeof(buf), &len),
                         -ELOOP);
        assert_int_equal(sysfs_write(t->sysfs, "khugepaged/pages_to_scan", "4096"), -ELOOP);
        assert_int_equal(sysfs_write_handle(t->sysfs, "khugepaged/pages_to_scan", &h, "4096"), -ELOOP);
        assert_string_equal(slurp(t, "outside/target"), "100\n");
}

static void test_symlinked_dir(void **state) {
        Tree *t = *state;
        Sysfs *s = NULL;
        char buf[64], p[256];
        size_t len;

        /* khugepaged/ itself a symlink to a copy outside. */
        move(t, THP "/khugepaged", "outside/khugepaged");
        path_of(t, THP "/khugepaged", p, sizeof(p));
        assert_int_equal(symlink("../../../outside/khugepaged", p), 0);
        assert_int_equal(sysfs_read(t->sysfs, "khugepaged/pages_to_scan", buf, sizeof(buf), &len), -ELOOP);
        assert_int_equal(sysfs_write(t->sysfs, "khugepaged/pages_to_scan", "1"), -ELOOP);
        assert_string_equal(slurp(t, "outside/khugepaged/pages_to_scan"), "4096\n");

        /* kernel/mm a symlink: the root is refused as a whole. */
        move(t, "kernel/mm", "outside/mm");
        path_of(t, "kernel/mm", p, sizeof(p));
        assert_int_equal(symlink("../outside/mm", p), 0);
        assert_int_equal(sysfs_new(t->root, &s), -ELOOP);
        assert_null(s);
}

static void test_special_knobs(void **state) {
        Tree *t = *state;
        SysfsHandle h = SYSFS_HANDLE_CLOSED;
        char buf[64], p[256];
        size_t len;

        path_of(t, THP "/khugepaged/pages_to_scan", p, sizeof(p));
        assert_int_equal(unlink(p), 0);
        assert_int_equal(mkfifo(p, 0644), 0);
        assert_int_equal(sysfs_read(t->sysfs, "khugepaged/pages_to_scan", buf, sizeof(buf), &len), -EBADFD);
        assert_int_equal(sysfs_read_handle(t->sysfs, "khugepaged/pages_to_scan", &h, buf, sizeof(buf), &len),
                         -EBADFD);
        assert_int_equal(sysfs_write(t->sysfs, "khugepaged/pages_to_scan", "1"), -EBADFD);
        /* A directory where a knob should be. */
        assert_int_equal(sysfs_read(t->sysfs, "khugepaged", buf, sizeof(buf), &len), -EISDIR);
}

static void test_roots(void **state) {
        Tree *t = *state;
        Sysfs *s = NULL;
        char p[256];

        path_of(t, "outside", p, sizeof(p));
        assert_int_equal(sysfs_new(p, &s), -ENODEV);
        path_of(t, "nope", p, sizeof(p));
        assert_int_equal(sysfs_new(p, &s), -ENOENT);
        path_of(t, "outside/target", p, sizeof(p));
        assert_int_equal(sysfs_new(p, &s), -ENOTDIR);
        assert_null(s);
        /* The root itself may be a symlink: the operator named it. */
        path_of(t, "rootlink", p, sizeof(p));
        assert_int_equal(symlink(t->root, p), 0);
        assert_int_equal(sysfs_new(p, &s), 0);
        s = sysfs_free(s);
        /* The real /sys is a sysfs: accepted, however it is spelled (the negative case needs a mount). */
        if (access("/sys/" THP, F_OK) == 0) {
                assert_int_equal(sysfs_new("/sys", &s), 0);
                s = sysfs_free(s);
                assert_int_equal(sysfs_new("//sys/", &s), 0);
                s = sysfs_free(s);
        }
}

/* The max_ptes_* bound is read once, from hpage_pmd_size below the root; unknown when it cannot be. */
static void test_ptes_max(void **state) {
        Tree *t = *state;
        Sysfs *s = NULL;

        assert_true(sysfs_ptes_max(t->sysfs) == PTES_MAX_UNKNOWN); /* no hpage_pmd_size in the tree */

        put(t, THP "/hpage_pmd_size", "2097152\n");
        assert_int_equal(sysfs_new(t->root, &s), 0);
        assert_int_equal(sysfs_ptes_max(s), 2097152 / (uint64_t)sysconf(_SC_PAGESIZE) - 1);
        sysfs_free(s);

        put(t, THP "/hpage_pmd_size", "huge\n");
        assert_int_equal(sysfs_new(t->root, &s), 0);
        assert_true(sysfs_ptes_max(s) == PTES_MAX_UNKNOWN);
        sysfs_free(s);
}

/* A root without THP said as such; every other errno as fileio_strerror() says it. */
static void test_strerror(void **state) {
        (void)state;
        assert_non_null(strstr(sysfs_strerror(ENODEV), "a kernel without THP"));
        assert_string_equal(sysfs_strerror(ELOOP), fileio_strerror(ELOOP));
        assert_string_equal(sysfs_strerror(ENOENT), strerror(ENOENT));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_strerror),
                cmocka_unit_test_setup_teardown(test_ptes_max, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stale_dir_replaced, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stale_file_replaced, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stale_dir_becomes_symlink, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlinked_knob, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlinked_dir, setup, teardown),
                cmocka_unit_test_setup_teardown(test_special_knobs, setup, teardown),
                cmocka_unit_test_setup_teardown(test_roots, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
