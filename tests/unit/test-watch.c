/* SPDX-License-Identifier: MIT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "thpguard/watch.h"

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
                cmocka_unit_test(test_knob_in_dir),
                cmocka_unit_test(test_knob_in_other_dir),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
