/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "thpguard/knob.h"
#include "thpguard/path.h"

static void test_sizes(void **state) {
        assert_true(knob_size_is_valid("64kB"));
        assert_true(knob_size_is_valid("2048kB"));
        assert_true(knob_size_is_valid("1048576kB"));

        /* Nothing that could leave the THP directory ever passes. */
        assert_false(knob_size_is_valid("../../power/state"));
        assert_false(knob_size_is_valid("64kB/../../.."));
        assert_false(knob_size_is_valid("64kB/"));
        assert_false(knob_size_is_valid("/64kB"));
        assert_false(knob_size_is_valid("64KB"));
        assert_false(knob_size_is_valid("64k"));
        assert_false(knob_size_is_valid("64"));
        assert_false(knob_size_is_valid("kB"));
        assert_false(knob_size_is_valid(""));
        assert_false(knob_size_is_valid("0kB"));
        assert_false(knob_size_is_valid("064kB"));
        assert_false(knob_size_is_valid("-64kB"));
        assert_false(knob_size_is_valid("64kBx"));
        assert_false(knob_size_is_valid("12345678901kB"));
}

static void test_paths(void **state) {
        const KnobSpec *spec;
        char buf[KNOB_PATH_MAX];

        spec = knob_spec_find(KNOB_GROUP_TOP, "enabled");
        assert_non_null(spec);
        assert_int_equal(knob_path_build(KNOB_GROUP_TOP, NULL, spec, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "enabled");

        spec = knob_spec_find(KNOB_GROUP_KHUGEPAGED, "max_ptes_none");
        assert_non_null(spec);
        assert_int_equal(knob_path_build(KNOB_GROUP_KHUGEPAGED, NULL, spec, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "khugepaged/max_ptes_none");

        spec = knob_spec_find(KNOB_GROUP_SIZE, "shmem_enabled");
        assert_non_null(spec);
        assert_int_equal(knob_path_build(KNOB_GROUP_SIZE, "64kB", spec, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "hugepages-64kB/shmem_enabled");
        assert_int_equal(knob_path_build(KNOB_GROUP_SIZE, "../x", spec, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(knob_path_build(KNOB_GROUP_SIZE, "4294967295kB", spec, buf, sizeof(buf)), 0);

        /* Read-only files have no spec, so they can never be managed. */
        assert_null(knob_spec_find(KNOB_GROUP_TOP, "hpage_pmd_size"));
        assert_null(knob_spec_find(KNOB_GROUP_KHUGEPAGED, "full_scans"));
        assert_null(knob_spec_find(KNOB_GROUP_KHUGEPAGED, "pages_collapsed"));
        assert_null(knob_spec_find(KNOB_GROUP_SIZE, "stats"));
}

static void test_vocabulary(void **state) {
        const KnobSpec *spec = knob_spec_find(KNOB_GROUP_TOP, "defrag");
        char buf[128];

        assert_true(knob_spec_accepts_word(spec, "defer+madvise"));
        assert_false(knob_spec_accepts_word(spec, "inherit"));
        assert_int_equal(knob_spec_vocabulary_string(spec, buf, sizeof(buf)), 0);
        assert_string_equal(buf, "always, defer, defer+madvise, madvise or never");

        spec = knob_spec_find(KNOB_GROUP_SIZE, "enabled");
        assert_true(knob_spec_accepts_word(spec, "inherit"));
        spec = knob_spec_find(KNOB_GROUP_TOP, "shmem_enabled");
        assert_false(knob_spec_accepts_word(spec, "inherit")); /* only per size */
        spec = knob_spec_find(KNOB_GROUP_SIZE, "shmem_enabled");
        assert_false(knob_spec_accepts_word(spec, "deny"));

        assert_int_equal(knob_ptes_max(2097152, 4096), 511);
        assert_int_equal(knob_ptes_max(536870912, 65536), 8191);
        assert_int_equal(knob_ptes_max(0, 4096), 0);
}

static void test_path_join(void **state) {
        char buf[64];

        assert_int_equal(path_join_root("/sys", "kernel/mm", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "/sys/kernel/mm");
        assert_int_equal(path_join_root("/host/sys/", "/kernel/mm", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "/host/sys/kernel/mm");
        assert_int_equal(path_join_root("/", "proc/1/status", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "/proc/1/status");
        assert_int_equal(path_join_root("/x",
                                        "0123456789012345678901234567890123456789012345678901234567890", buf,
                                        sizeof(buf)),
                         -ENAMETOOLONG);
}

static void test_knob_in_dir(void **state) {
        const char *name = NULL;

        assert_true(knob_in_dir("enabled", "", &name));
        assert_string_equal(name, "enabled");
        assert_true(knob_in_dir("khugepaged/defrag", "khugepaged", &name));
        assert_string_equal(name, "defrag");
        assert_true(knob_in_dir("hugepages-64kB/enabled", "hugepages-64kB", &name));
        assert_string_equal(name, "enabled");
}

/* An event in one directory must not wake a knob of another, nor of a prefix. */
static void test_knob_in_other_dir(void **state) {
        const char *name = "untouched";

        assert_false(knob_in_dir("khugepaged/defrag", "", &name));
        assert_false(knob_in_dir("defrag", "khugepaged", &name));
        assert_false(knob_in_dir("hugepages-64kB/enabled", "hugepages-64k", &name));
        assert_false(knob_in_dir("hugepages-64kB/enabled", "hugepages-64kBx", &name));
        assert_false(knob_in_dir("hugepages-64kB/enabled", "hugepages-2048kB", &name));
        /* ret_name is written only on success. */
        assert_string_equal(name, "untouched");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_knob_in_dir), cmocka_unit_test(test_knob_in_other_dir),
                cmocka_unit_test(test_sizes),       cmocka_unit_test(test_paths),
                cmocka_unit_test(test_vocabulary),  cmocka_unit_test(test_path_join),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
