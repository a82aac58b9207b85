/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "thpguard/knob-value.h"

#define PARSE(type, lit, ret) knob_value_parse(type, lit, sizeof(lit) - 1, ret)

static void test_choice_real_reads(void **state) {
        KnobValue v;

        assert_int_equal(PARSE(KNOB_CHOICE, "always [madvise] never\n", &v), 0);
        assert_string_equal(v.active, "madvise");
        assert_int_equal(v.n_offered, 3);
        assert_true(knob_value_offers(&v, "never"));
        assert_false(knob_value_offers(&v, "defer"));

        assert_int_equal(PARSE(KNOB_CHOICE, "always defer defer+madvise [madvise] never\n", &v), 0);
        assert_string_equal(v.active, "madvise");
        assert_true(knob_value_offers(&v, "defer+madvise"));

        assert_int_equal(PARSE(KNOB_CHOICE, "always within_size advise [never] deny force\n", &v), 0);
        assert_string_equal(v.active, "never");
        assert_int_equal(v.n_offered, 6);

        /* 3.10 prints the active word first; no trailing newline is fine too. */
        assert_int_equal(PARSE(KNOB_CHOICE, "[always] madvise never", &v), 0);
        assert_string_equal(v.active, "always");
}

static void test_choice_hostile(void **state) {
        KnobValue v = { .active = "untouched" };
        char junk[4096];

        assert_int_equal(PARSE(KNOB_CHOICE, "always madvise never\n", &v), -EBADMSG);     /* no brackets */
        assert_int_equal(PARSE(KNOB_CHOICE, "[always] [madvise] never\n", &v), -EBADMSG); /* two */
        assert_int_equal(PARSE(KNOB_CHOICE, "", &v), -EBADMSG);
        assert_int_equal(PARSE(KNOB_CHOICE, "\n", &v), -EBADMSG);
        assert_int_equal(PARSE(KNOB_CHOICE, "always [madvise never\n", &v), -EBADMSG);
        assert_int_equal(PARSE(KNOB_CHOICE, "always [] never\n", &v), -EBADMSG);
        assert_int_equal(PARSE(KNOB_CHOICE, "always [mad]vise never\n", &v), -EBADMSG);
        assert_int_equal(PARSE(KNOB_CHOICE, "always [MADVISE] never\n", &v), -EBADMSG);
        assert_int_equal(PARSE(KNOB_CHOICE, "always [madvise] never\n\n", &v), -EBADMSG);
        assert_int_equal(PARSE(KNOB_CHOICE, "always [mad\0vise] never\n", &v), -EBADMSG); /* embedded NUL */
        assert_int_equal(PARSE(KNOB_CHOICE, "[aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n", &v), -EBADMSG);

        memset(junk, 'x', sizeof(junk));
        junk[100] = '[';
        assert_int_equal(knob_value_parse(KNOB_CHOICE, junk, sizeof(junk), &v), -EBADMSG);
        memset(junk, 0xff, sizeof(junk));
        assert_int_equal(knob_value_parse(KNOB_CHOICE, junk, sizeof(junk), &v), -EBADMSG);
        /* Longer than a sysfs page. */
        assert_int_equal(knob_value_parse(KNOB_CHOICE, junk, KNOB_READ_MAX + 1, &v), -EBADMSG);

        /* Failures leave the output alone. */
        assert_string_equal(v.active, "untouched");
}

static void test_numbers(void **state) {
        KnobValue v;
        uint64_t u;

        assert_int_equal(PARSE(KNOB_UINT, "4096\n", &v), 0);
        assert_string_equal(v.active, "4096");
        assert_int_equal(PARSE(KNOB_UINT, "0\n", &v), 0);
        assert_string_equal(v.active, "0");
        assert_int_equal(PARSE(KNOB_BOOL, "1\n", &v), 0);
        assert_string_equal(v.active, "1");
        /* Leading zeros normalise, so "0511" compares equal to desired "511". */
        assert_int_equal(PARSE(KNOB_UINT, "0511\n", &v), 0);
        assert_string_equal(v.active, "511");

        assert_int_equal(PARSE(KNOB_BOOL, "2\n", &v), -EBADMSG);
        assert_int_equal(PARSE(KNOB_BOOL, "[yes] no\n", &v), -EBADMSG);
        assert_int_equal(PARSE(KNOB_UINT, "-1\n", &v), -EBADMSG);
        assert_int_equal(PARSE(KNOB_UINT, " 1\n", &v), -EBADMSG);
        assert_int_equal(PARSE(KNOB_UINT, "1 \n", &v), -EBADMSG);
        assert_int_equal(PARSE(KNOB_UINT, "", &v), -EBADMSG);
        assert_int_equal(PARSE(KNOB_UINT, "1\0002\n", &v), -EBADMSG);
        assert_int_equal(PARSE(KNOB_UINT, "18446744073709551616\n", &v), -EBADMSG); /* 2^64 */

        assert_int_equal(knob_value_parse_u64("2097152\n", 8, &u), 0);
        assert_int_equal(u, 2097152);
        assert_int_equal(knob_value_parse_u64("18446744073709551615", 20, &u), 0);
        assert_true(u == UINT64_MAX);
}

static void test_offered_string(void **state) {
        char buf[64];
        KnobValue v;

        assert_int_equal(PARSE(KNOB_CHOICE, "always [madvise] never\n", &v), 0);
        knob_value_offered_string(&v, buf, sizeof(buf));
        assert_string_equal(buf, "always madvise never");
}

#define SETS(type, lit, word) knob_value_write_sets(type, lit, sizeof(lit) - 1, word)

/* What a write(2) sets, as the kernel parses it: what the probe's value is compared by. */
static void test_write_sets(void **state) {
        /* The forms measured on 6.18: the bare word, with one newline or none. */
        assert_true(SETS(KNOB_CHOICE, "madvise\n", "madvise"));
        assert_true(SETS(KNOB_CHOICE, "madvise", "madvise"));
        assert_false(SETS(KNOB_CHOICE, "always\n", "madvise"));
        assert_false(SETS(KNOB_CHOICE, "madvis", "madvise"));
        assert_false(SETS(KNOB_CHOICE, "madvise extra", "madvise"));
        /* What the kernel refuses with EINVAL sets nothing. */
        assert_false(SETS(KNOB_CHOICE, "[madvise]", "madvise"));
        assert_false(SETS(KNOB_CHOICE, " madvise", "madvise"));
        assert_false(SETS(KNOB_CHOICE, "MADVISE", "madvise"));
        assert_false(SETS(KNOB_CHOICE, "madvise\n\n", "madvise"));
        assert_false(SETS(KNOB_CHOICE, "madvise\0", "madvise"));
        assert_false(SETS(KNOB_CHOICE, "", "madvise"));
        assert_false(SETS(KNOB_CHOICE, "\n", "madvise"));
        /* Numbers as kstrtoul() reads them: leading zeros and a '+' too. */
        assert_true(SETS(KNOB_BOOL, "0\n", "0"));
        assert_true(SETS(KNOB_BOOL, "+0", "0"));
        assert_true(SETS(KNOB_UINT, "0511\n", "511"));
        assert_false(SETS(KNOB_BOOL, "1\n", "0"));
        assert_false(SETS(KNOB_BOOL, "+", "0"));
        assert_false(SETS(KNOB_BOOL, "-0", "0"));
        assert_false(SETS(KNOB_UINT, "5 11", "511"));
        assert_false(SETS(KNOB_UINT, "18446744073709551616", "0")); /* 2^64: refused, not 0 */
        /* A policy word that is not a number matches no number. */
        assert_false(SETS(KNOB_UINT, "1", "one"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_write_sets),     cmocka_unit_test(test_choice_real_reads),
                cmocka_unit_test(test_choice_hostile), cmocka_unit_test(test_numbers),
                cmocka_unit_test(test_offered_string),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
