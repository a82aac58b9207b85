/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "thpguard/compliance.h"

static PolicyKnob knob(KnobGroup group, const char *key, const char *desired) {
        PolicyKnob k = { .spec = knob_spec_find(group, key) };

        assert_non_null(k.spec);
        assert_int_equal(knob_path_build(group, "64kB", k.spec, k.path, sizeof(k.path)), 0);
        snprintf(k.desired, sizeof(k.desired), "%s", desired);
        return k;
}

static KnobStatus eval(const PolicyKnob *k, int read_result, const char *content, uint64_t ptes_max) {
        KnobStatus st;

        compliance_evaluate(k, read_result, content, content ? strlen(content) : 0, ptes_max, &st);
        return st;
}

static void test_choice(void **state) {
        PolicyKnob k = knob(KNOB_GROUP_TOP, "enabled", "madvise");
        KnobStatus st;

        st = eval(&k, 0, "always [madvise] never\n", PTES_MAX_UNKNOWN);
        assert_int_equal(st.state, KNOB_STATE_OK);
        assert_string_equal(st.actual, "madvise");

        st = eval(&k, 0, "[always] madvise never\n", PTES_MAX_UNKNOWN);
        assert_int_equal(st.state, KNOB_STATE_DRIFT);
        assert_string_equal(st.actual, "always");
        assert_string_equal(st.reason, "");
}

static void test_unsupported(void **state) {
        PolicyKnob k = knob(KNOB_GROUP_TOP, "defrag", "defer+madvise");
        PolicyKnob ptes = knob(KNOB_GROUP_KHUGEPAGED, "max_ptes_none", "600");
        KnobStatus st;

        /* A 3.10 kernel: no defer+madvise. */
        st = eval(&k, 0, "[always] madvise never\n", PTES_MAX_UNKNOWN);
        assert_int_equal(st.state, KNOB_STATE_UNSUPPORTED);
        assert_string_equal(st.actual, "always");
        assert_string_equal(
            st.reason, "\"defer+madvise\" is not offered by this kernel (offers: always madvise never)");

        st = eval(&k, -ENOENT, NULL, PTES_MAX_UNKNOWN);
        assert_int_equal(st.state, KNOB_STATE_UNSUPPORTED);
        assert_string_equal(st.reason, "not present on this kernel");
        assert_string_equal(st.actual, "");

        st = eval(&ptes, 0, "511\n", 511);
        assert_int_equal(st.state, KNOB_STATE_UNSUPPORTED);
        assert_string_equal(st.reason, "600 is above this kernel's maximum 511");
        st = eval(&ptes, 0, "511\n", 1023);
        assert_int_equal(st.state, KNOB_STATE_DRIFT);
        st = eval(&ptes, 0, "600\n", PTES_MAX_UNKNOWN);
        assert_int_equal(st.state, KNOB_STATE_OK);
}

static void test_numbers_and_errors(void **state) {
        PolicyKnob b = knob(KNOB_GROUP_KHUGEPAGED, "defrag", "0");
        PolicyKnob sz = knob(KNOB_GROUP_SIZE, "enabled", "inherit");
        KnobStatus st;

        assert_int_equal(eval(&b, 0, "0\n", PTES_MAX_UNKNOWN).state, KNOB_STATE_OK);
        assert_int_equal(eval(&b, 0, "1\n", PTES_MAX_UNKNOWN).state, KNOB_STATE_DRIFT);

        st = eval(&b, 0, "[yes] no\n", PTES_MAX_UNKNOWN);
        assert_int_equal(st.state, KNOB_STATE_ERROR);
        assert_string_equal(st.reason, "unexpected content for a numeric knob");

        st = eval(&b, -EACCES, NULL, PTES_MAX_UNKNOWN);
        assert_int_equal(st.state, KNOB_STATE_ERROR);
        assert_string_equal(st.reason, "cannot read: Permission denied");

        assert_string_equal(sz.path, "hugepages-64kB/enabled");
        assert_int_equal(eval(&sz, 0, "always inherit madvise [never]\n", PTES_MAX_UNKNOWN).state,
                         KNOB_STATE_DRIFT);
        assert_int_equal(eval(&sz, 0, "garbage", PTES_MAX_UNKNOWN).state, KNOB_STATE_ERROR);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_choice),
                cmocka_unit_test(test_unsupported),
                cmocka_unit_test(test_numbers_and_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
