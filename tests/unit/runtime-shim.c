/* SPDX-License-Identifier: MIT */
/* The runtime shim's name and its search for the real runtime (src/shim/runtime-shim.c). */
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

#include "runtime-shim.h"

static void ok(const char *argv0, const char *runtime, ThpMode mode) {
        RuntimeShimName n;

        assert_int_equal(runtime_shim_parse_name(argv0, &n), 0);
        assert_string_equal(n.runtime, runtime);
        assert_int_equal(n.mode, mode);
}

static void bad(const char *argv0) {
        RuntimeShimName n = { .runtime = "untouched" };

        assert_int_equal(runtime_shim_parse_name(argv0, &n), -EINVAL);
        assert_string_equal(n.runtime, "untouched");
}

static void test_parse(void **state) {
        (void)state;
        ok("/usr/libexec/thpguard/runc-thp-disable", "runc", THP_MODE_DISABLE);
        ok("/usr/libexec/thpguard/runc-thp-advised-only", "runc", THP_MODE_ADVISED_ONLY);
        ok("crun-thp-disable", "crun", THP_MODE_DISABLE);
        ok("./crun-thp-advised-only", "crun", THP_MODE_ADVISED_ONLY);

        bad(NULL);
        bad("");
        bad("thp-runtime-shim");
        bad("/usr/libexec/thpguard/runc");
        bad("runc-thp-inherit"); /* a shim that changes nothing is a mistake */
        bad("runc-thp-never");
        bad("runc-thp-");
        bad("-thp-disable");
        bad("runc-thp-disable-x");
        bad("runc-thp-disable/");
        bad("youki-thp-disable"); /* not one of the runtimes shipped */
        bad("/usr/bin/sh-thp-disable");
        bad("runcrunc-thp-disable");
        bad("runc-thp-advised-only\n");
}

static char root[64];

static void make_file(const char *rel, mode_t mode) {
        char path[256];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(chmod(path, mode), 0);
}

static int setup_root(void **state) {
        const char *dirs[] = {
                "usr", "usr/local", "usr/local/sbin", "usr/local/bin", "usr/sbin", "usr/bin"
        };
        char path[256];

        (void)state;
        snprintf(root, sizeof(root), "/tmp/unit-runtime-shim-XXXXXX");
        assert_non_null(mkdtemp(root));
        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
                snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
                assert_int_equal(mkdir(path, 0755), 0);
        }
        return 0;
}

static int teardown_root(void **state) {
        char cmd[128];

        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        return system(cmd) == 0 ? 0 : -1;
}

static void test_find(void **state) {
        char found[4096], want[256];
        struct stat self;

        (void)state;
        assert_int_equal(runtime_shim_find_runtime(root, "runc", NULL, found, sizeof(found)), -ENOENT);

        /* Not executable, or not a regular file: passed over. */
        make_file("usr/local/sbin/runc", 0644);
        snprintf(want, sizeof(want), "%s/usr/local/bin/runc", root);
        assert_int_equal(mkdir(want, 0755), 0);
        assert_int_equal(runtime_shim_find_runtime(root, "runc", NULL, found, sizeof(found)), -ENOENT);

        make_file("usr/bin/runc", 0755);
        snprintf(want, sizeof(want), "%s/usr/bin/runc", root);
        assert_int_equal(runtime_shim_find_runtime(root, "runc", NULL, found, sizeof(found)), 0);
        assert_string_equal(found, want);

        /* A default PATH's order: /usr/sbin before /usr/bin. */
        make_file("usr/sbin/runc", 0755);
        snprintf(want, sizeof(want), "%s/usr/sbin/runc", root);
        assert_int_equal(runtime_shim_find_runtime(root, "runc", NULL, found, sizeof(found)), 0);
        assert_string_equal(found, want);

        /* The shim itself under the runtime's name (a symlink back to it) is never chosen. */
        assert_int_equal(stat(want, &self), 0);
        snprintf(want, sizeof(want), "%s/usr/bin/runc", root);
        assert_int_equal(runtime_shim_find_runtime(root, "runc", &self, found, sizeof(found)), 0);
        assert_string_equal(found, want);

        /* Only a bare name is searched for; the result must fit. */
        assert_int_equal(runtime_shim_find_runtime(root, "../runc", NULL, found, sizeof(found)), -EINVAL);
        assert_int_equal(runtime_shim_find_runtime(root, "", NULL, found, sizeof(found)), -EINVAL);
        assert_int_equal(runtime_shim_find_runtime(root, "runc", NULL, found, 8), -ENAMETOOLONG);

        assert_int_equal(runtime_shim_find_runtime(root, "crun", NULL, found, sizeof(found)), -ENOENT);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test_setup_teardown(test_find, setup_root, teardown_root),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
