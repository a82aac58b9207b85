/* SPDX-License-Identifier: MIT */
/*
 * open_beneath() (openat2 where this kernel has it) and open_beneath_walk()
 * (the O_NOFOLLOW walk of kernels before 5.6) on one fixture tree in a
 * temporary directory, case by case: both must open the same regular files
 * and directories and refuse the same symlinks, "..", FIFOs and device
 * nodes, and neither may block on a FIFO.
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
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch-dir.h"

#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/path.h"

typedef int (*OpenFn)(int dirfd, const char *rel, int flags);

typedef struct Tree {
        char dir[64];
        int fd;
        bool have_device;
} Tree;

static void at(const char *dir, const char *rel, char *buf, size_t size) {
        snprintf(buf, size, "%s/%s", dir, rel);
}

/*
 * root/
 *   kernel/mm/thp/enabled            "madvise"
 *   kernel/mm/thp/khugepaged/defrag  "1"
 *   kernel/mm/thp/link -> khugepaged/defrag         a symlink as the last component
 *   kernel/mm/thp/linkdir -> khugepaged             a symlink as a directory component
 *   kernel/mm/thp/abs -> /etc/passwd
 *   kernel/mm/thp/fifo                              a FIFO nobody writes to
 *   kernel/mm/thp/null                              a character device (1,3, /dev/null's)
 *   outside/secret                                  "secret"
 */
static int setup(void **state) {
        Tree *t = calloc(1, sizeof(*t));
        char p[256];

        assert_non_null(t);
        snprintf(t->dir, sizeof(t->dir), "/tmp/thpguard-fileio.XXXXXX");
        assert_non_null(mkdtemp(t->dir));
        at(t->dir, "kernel", p, sizeof(p));
        assert_int_equal(mkdir(p, 0755), 0);
        at(t->dir, "kernel/mm", p, sizeof(p));
        assert_int_equal(mkdir(p, 0755), 0);
        at(t->dir, "kernel/mm/thp", p, sizeof(p));
        assert_int_equal(mkdir(p, 0755), 0);
        at(t->dir, "kernel/mm/thp/khugepaged", p, sizeof(p));
        assert_int_equal(mkdir(p, 0755), 0);
        at(t->dir, "outside", p, sizeof(p));
        assert_int_equal(mkdir(p, 0755), 0);
        write_text(t->dir, "kernel/mm/thp/enabled", "madvise");
        write_text(t->dir, "kernel/mm/thp/khugepaged/defrag", "1");
        write_text(t->dir, "outside/secret", "secret");
        at(t->dir, "kernel/mm/thp/link", p, sizeof(p));
        assert_int_equal(symlink("khugepaged/defrag", p), 0);
        at(t->dir, "kernel/mm/thp/linkdir", p, sizeof(p));
        assert_int_equal(symlink("khugepaged", p), 0);
        at(t->dir, "kernel/mm/thp/abs", p, sizeof(p));
        assert_int_equal(symlink("/etc/passwd", p), 0);
        at(t->dir, "kernel/mm/thp/fifo", p, sizeof(p));
        assert_int_equal(mkfifo(p, 0644), 0);
        at(t->dir, "kernel/mm/thp/null", p, sizeof(p));
        /* mknod needs CAP_MKNOD: the device cases are left out without it. */
        t->have_device = mknod(p, S_IFCHR | 0666, makedev(1, 3)) == 0;
        if (!t->have_device)
                print_message("no CAP_MKNOD: the device node cases are skipped\n");
        t->fd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(t->fd >= 0);
        /* A FIFO that blocked us would hang the test: fail it instead. */
        alarm(30);
        *state = t;
        return 0;
}

static int teardown(void **state) {
        Tree *t = *state;
        char cmd[128];

        alarm(0);
        close(t->fd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
        assert_int_equal(system(cmd), 0);
        free(t);
        return 0;
}

static void expect_content(OpenFn fn, int dirfd, const char *rel, const char *want) {
        char buf[64] = "";
        ssize_t n;
        int fd;

        fd = fn(dirfd, rel, O_RDONLY);
        if (fd < 0)
                fail_msg("%s: %s", rel, strerror(-fd));
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        assert_true(n >= 0);
        buf[n] = '\0';
        assert_string_equal(buf, want);
}

static void expect_error(OpenFn fn, int dirfd, const char *rel, int flags, int err) {
        int fd = fn(dirfd, rel, flags);

        if (fd >= 0)
                close(fd);
        if (fd != -err)
                fail_msg("%s (flags 0%o): got %s, want %s", rel, (unsigned)flags,
                         fd >= 0 ? "an fd" : strerror(-fd), strerror(err));
}

static void check_regular_and_dirs(OpenFn fn, Tree *t) {
        int fd;

        expect_content(fn, t->fd, "kernel/mm/thp/enabled", "madvise");
        expect_content(fn, t->fd, "kernel/mm/thp/khugepaged/defrag", "1");
        /* Empty and "." components and a doubled slash resolve as the kernel would. */
        expect_content(fn, t->fd, "kernel//mm/./thp/khugepaged/defrag", "1");

        fd = fn(t->fd, "kernel/mm/thp/khugepaged", O_PATH | O_DIRECTORY);
        assert_true(fd >= 0);
        expect_content(fn, fd, "defrag", "1");
        close(fd);
        /* "" names dirfd itself: the metrics directory "/" is opened this way. */
        fd = fn(t->fd, "", O_PATH | O_DIRECTORY);
        assert_true(fd >= 0);
        expect_content(fn, fd, "outside/secret", "secret");
        close(fd);
        /* O_PATH on a regular file: how a stale handle is compared with its path. */
        fd = fn(t->fd, "kernel/mm/thp/enabled", O_PATH);
        assert_true(fd >= 0);
        close(fd);

        expect_error(fn, t->fd, "kernel/mm/thp/khugepaged", O_RDONLY, EISDIR);
        expect_error(fn, t->fd, "kernel/mm/thp/enabled", O_PATH | O_DIRECTORY, ENOTDIR);
        expect_error(fn, t->fd, "kernel/mm/thp/missing", O_RDONLY, ENOENT);
        expect_error(fn, t->fd, "kernel/none/thp/enabled", O_RDONLY, ENOENT);
        expect_error(fn, t->fd, "kernel/mm/thp/enabled/x", O_RDONLY, ENOTDIR);
}

static void check_symlinks(OpenFn fn, Tree *t) {
        int flags[] = { O_RDONLY, O_WRONLY, O_RDWR, O_PATH };

        for (size_t i = 0; i < ELEMENTSOF(flags); i++) {
                /* The last component, relative and absolute targets. */
                expect_error(fn, t->fd, "kernel/mm/thp/link", flags[i], ELOOP);
                expect_error(fn, t->fd, "kernel/mm/thp/abs", flags[i], ELOOP);
                /* A directory component. */
                expect_error(fn, t->fd, "kernel/mm/thp/linkdir/defrag", flags[i], ELOOP);
        }
        expect_error(fn, t->fd, "kernel/mm/thp/linkdir", O_PATH | O_DIRECTORY, ELOOP);
        /* Nothing leaves the root. */
        expect_error(fn, t->fd, "kernel/mm/../../outside/secret", O_RDONLY, EXDEV);
        expect_error(fn, t->fd, "..", O_PATH | O_DIRECTORY, EXDEV);
        expect_error(fn, t->fd, "/etc/passwd", O_RDONLY, EXDEV);
}

static void check_special_files(OpenFn fn, Tree *t) {
        /* O_RDWR would open a FIFO even with no reader; O_WRONLY would fail with ENXIO. */
        int flags[] = { O_RDONLY, O_WRONLY, O_RDWR, O_PATH };

        for (size_t i = 0; i < ELEMENTSOF(flags); i++) {
                expect_error(fn, t->fd, "kernel/mm/thp/fifo", flags[i], EBADFD);
                if (t->have_device)
                        expect_error(fn, t->fd, "kernel/mm/thp/null", flags[i], EBADFD);
        }
}

static void test_openat2_regular(void **state) {
        check_regular_and_dirs(open_beneath, *state);
}
static void test_walk_regular(void **state) {
        check_regular_and_dirs(open_beneath_walk, *state);
}
static void test_openat2_symlinks(void **state) {
        check_symlinks(open_beneath, *state);
}
static void test_walk_symlinks(void **state) {
        check_symlinks(open_beneath_walk, *state);
}
static void test_openat2_special(void **state) {
        check_special_files(open_beneath, *state);
}
static void test_walk_special(void **state) {
        check_special_files(open_beneath_walk, *state);
}

/* The root itself is the operator's: a symlink there is followed, one below it is not. */
static void test_open_below(void **state) {
        Tree *t = *state;
        char root[256], link[256], buf[16] = "";
        int fd;

        at(t->dir, "kernel/mm", root, sizeof(root));
        at(t->dir, "mmlink", link, sizeof(link));
        assert_int_equal(symlink(root, link), 0);
        fd = open_below(link, "thp/enabled", O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(read(fd, buf, sizeof(buf) - 1), 7);
        assert_string_equal(buf, "madvise");
        close(fd);
        /* A leading slash in rel is the join's, not an absolute path. */
        fd = open_below(root, "/thp/enabled", O_RDONLY);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(open_below(root, "thp/link", O_RDONLY), -ELOOP);
        assert_int_equal(open_below(root, "thp/fifo", O_RDONLY), -EBADFD);
        assert_int_equal(open_below(root, "thp/nope", O_RDONLY), -ENOENT);
        at(t->dir, "missing", root, sizeof(root));
        assert_int_equal(open_below(root, "thp/enabled", O_RDONLY), -ENOENT);
}

static void test_strerror(void **state) {
        assert_non_null(strstr(fileio_strerror(ELOOP), "symbolic link"));
        assert_non_null(strstr(fileio_strerror(EBADFD), "not a regular file"));
        assert_non_null(strstr(fileio_strerror(FILEIO_EUNSAFE_DIR), "written by a user other than root"));
        /* A sysfs root without THP is sysfs.c's to say (sysfs_strerror()), not every file's. */
        assert_string_equal(fileio_strerror(ENODEV), strerror(ENODEV));
        assert_string_equal(fileio_strerror(ENOENT), strerror(ENOENT));
}

static void test_path_equal(void **state) {
        assert_true(path_equal("/sys", "/sys"));
        assert_true(path_equal("/sys/", "/sys"));
        assert_true(path_equal("//sys//", "/sys"));
        assert_false(path_equal("/sys", "/sysx"));
        assert_false(path_equal("/sy", "/sys"));
        assert_false(path_equal("sys", "/sys"));
        assert_false(path_equal("/host/sys", "/sys"));
        assert_false(path_equal("/", "/sys"));
        assert_true(path_equal("/", "//"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_openat2_regular, setup, teardown),
                cmocka_unit_test_setup_teardown(test_walk_regular, setup, teardown),
                cmocka_unit_test_setup_teardown(test_openat2_symlinks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_walk_symlinks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_openat2_special, setup, teardown),
                cmocka_unit_test_setup_teardown(test_walk_special, setup, teardown),
                cmocka_unit_test_setup_teardown(test_open_below, setup, teardown),
                cmocka_unit_test(test_strerror),
                cmocka_unit_test(test_path_equal),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
