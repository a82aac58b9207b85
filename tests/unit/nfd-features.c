/* SPDX-License-Identifier: MIT */
/* The node-feature-discovery feature file (src/daemon/nfd-features.c): its text, and its rewrite on change
 * only. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "nfd-features.h"

static void value(const char *in, const char *want) {
        char buf[NFD_LABEL_VALUE_MAX];

        nfd_label_value(in, buf, sizeof(buf));
        assert_string_equal(buf, want);
}

static void test_label_value(void **state) {
        char small[4];

        (void)state;
        value("madvise", "madvise");
        value("defer+madvise", "defer-madvise");
        value("within_size", "within_size");
        value("", "");
        value("+", "");
        value("-x-", "x");
        value("._a b_.", "a-b");
        value("\x1b[31m", "31m");
        /* Kubernetes: at most 63 characters. */
        value("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
              "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
        nfd_label_value("madvise", small, sizeof(small));
        assert_string_equal(small, "mad");
}

/* Every line a comment or "thpguard.io/<name>=<value>", as NFD's local source reads them. */
static void assert_nfd_format(const char *text) {
        for (const char *line = text; *line;) {
                const char *nl = strchr(line, '\n');

                assert_non_null(nl); /* every line ends */
                if (line[0] != '#') {
                        const char *eq = memchr(line, '=', (size_t)(nl - line));

                        assert_non_null(eq);
                        assert_memory_equal(line, NFD_LABEL_PREFIX, strlen(NFD_LABEL_PREFIX));
                        assert_true(nl - eq - 1 >= 1 && nl - eq - 1 <= 63);
                } else
                        assert_false(line[1] == ' ' && line[2] == '+'); /* no directive */
                line = nl + 1;
        }
}

static void test_render(void **state) {
        NfdLabels l = {
                .enabled = "madvise", .defrag = "defer+madvise", .compliant = 1, .policy_mode = "enforce"
        };
        char buf[NFD_FILE_MAX], tiny[64];
        size_t len;

        (void)state;
        assert_int_equal(nfd_features_render(&l, buf, sizeof(buf), &len), 0);
        assert_int_equal(strlen(buf), len);
        assert_nfd_format(buf);
        assert_non_null(strstr(buf, "\nthpguard.io/enabled=madvise\n"
                                    "thpguard.io/defrag=defer-madvise\n"
                                    "thpguard.io/compliant=true\n"
                                    "thpguard.io/policy-mode=enforce\n"));
        assert_int_equal(buf[len - 1], '\n');

        /* What is not known is left out. */
        l = (NfdLabels){ .enabled = "always", .compliant = -1 };
        assert_int_equal(nfd_features_render(&l, buf, sizeof(buf), &len), 0);
        assert_nfd_format(buf);
        assert_non_null(strstr(buf, "\nthpguard.io/enabled=always\n"));
        assert_null(strstr(buf, "defrag"));
        assert_null(strstr(buf, "compliant"));
        assert_null(strstr(buf, "policy-mode"));
        l.compliant = 0;
        assert_int_equal(nfd_features_render(&l, buf, sizeof(buf), &len), 0);
        assert_non_null(strstr(buf, "\nthpguard.io/compliant=false\n"));

        assert_int_equal(nfd_features_render(&l, tiny, sizeof(tiny), &len), -ENOBUFS);
}

static void test_file(void **state) {
        NfdLabels l = {
                .enabled = "madvise", .defrag = "madvise", .compliant = 1, .policy_mode = "enforce"
        };
        char dir[] = "/tmp/unit-nfd-XXXXXX", path[64], buf[NFD_FILE_MAX];
        struct stat st1, st2;
        NfdFile *f;
        FILE *in;
        size_t n;

        (void)state;
        assert_int_equal(nfd_file_new("relative", &f), -EINVAL);
        assert_non_null(mkdtemp(dir));
        assert_int_equal(chmod(dir, 0755), 0);
        snprintf(path, sizeof(path), "%s/thpguard", dir);
        assert_int_equal(nfd_file_new(path, &f), 0);
        assert_string_equal(nfd_file_path(f), path);

        assert_int_equal(nfd_file_update(f, &l), 1);
        assert_int_equal(nfd_file_error(f), 0);
        assert_int_equal(stat(path, &st1), 0);
        assert_int_equal(st1.st_mode & 07777, 0644);
        in = fopen(path, "re");
        assert_non_null(in);
        n = fread(buf, 1, sizeof(buf) - 1, in);
        fclose(in);
        buf[n] = '\0';
        assert_nfd_format(buf);
        assert_non_null(strstr(buf, "thpguard.io/enabled=madvise\n"));

        /* The same labels: not rewritten (the same inode stays). */
        assert_int_equal(nfd_file_update(f, &l), 0);
        assert_int_equal(stat(path, &st2), 0);
        assert_int_equal(st1.st_ino, st2.st_ino);
        /* A change: a new file renamed over it. */
        snprintf(l.enabled, sizeof(l.enabled), "always");
        assert_int_equal(nfd_file_update(f, &l), 1);
        assert_int_equal(stat(path, &st2), 0);
        assert_int_not_equal(st1.st_ino, st2.st_ino);

        /* A directory others may write is refused, as for the metrics file, and tried again later. */
        assert_int_equal(chmod(dir, 0777), 0);
        snprintf(l.enabled, sizeof(l.enabled), "never");
        assert_true(nfd_file_update(f, &l) < 0);
        assert_true(nfd_file_error(f) < 0);
        assert_int_equal(chmod(dir, 0755), 0);
        assert_int_equal(nfd_file_update(f, &l), 1);
        assert_int_equal(nfd_file_error(f), 0);

        nfd_file_free(f);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_label_value),
                cmocka_unit_test(test_render),
                cmocka_unit_test(test_file),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
