/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "thpguard/number.h"

static void test_parse_hex(void **state) {
        uint64_t v = 7;

        assert_int_equal(number_parse_hex_u64("400", 3, &v), 0);
        assert_true(v == 0x400);
        assert_int_equal(number_parse_hex_u64("ffffffffffffffff", 16, &v), 0);
        assert_true(v == UINT64_MAX);
        v = 7;
        assert_int_equal(number_parse_hex_u64("FF", 2, &v), -EBADMSG);
        v = 7;
        assert_int_equal(number_parse_hex_u64("", 0, &v), -EBADMSG);
        assert_int_equal(number_parse_hex_u64("0x4", 3, &v), -EBADMSG);
        assert_int_equal(number_parse_hex_u64("4g", 2, &v), -EBADMSG);
        assert_int_equal(number_parse_hex_u64(" 4", 2, &v), -EBADMSG);
        assert_int_equal(number_parse_hex_u64("10000000000000000", 17, &v), -EBADMSG); /* 2^64 */
        assert_true(v == 7);
}

static void test_saturating(void **state) {
        assert_true(u64_sat_add(1, 2) == 3);
        assert_true(u64_sat_add(UINT64_MAX - 1, 1) == UINT64_MAX);
        /* The wrap thpguardctl printed as "(200 of 198)". */
        assert_true(u64_sat_add(UINT64_MAX - 1, 200) == UINT64_MAX);
        assert_true(u64_sat_add(UINT64_MAX, UINT64_MAX) == UINT64_MAX);

        assert_true(u64_sat_sub(5, 3) == 2);
        assert_true(u64_sat_sub(3, 5) == 0);
        assert_true(u64_sat_sub(0, UINT64_MAX) == 0);
        assert_true(u64_sat_sub(UINT64_MAX, 0) == UINT64_MAX);

        assert_true(u64_sat_mul(6, 7) == 42);
        assert_true(u64_sat_mul(UINT64_MAX, 0) == 0);
        assert_true(u64_sat_mul(UINT64_C(1) << 62, 100) == UINT64_MAX);
        assert_true(u64_sat_mul(UINT64_C(1) << 32, UINT64_C(1) << 32) == UINT64_MAX);
        assert_true(u64_sat_mul(UINT64_C(1) << 31, UINT64_C(1) << 32) == UINT64_C(1) << 63);
}

static void test_percent(void **state) {
        assert_int_equal(number_percent(0, 1), 0);
        assert_int_equal(number_percent(1, 2), 50);
        assert_int_equal(number_percent(1, 3), 33);
        assert_int_equal(number_percent(2, 3), 66);
        assert_int_equal(number_percent(99, 100), 99);
        assert_int_equal(number_percent(40, 100), 40);
        /* A true 100% whose product by 100 wraps to 0: "0%" before. */
        assert_int_equal(number_percent(UINT64_C(1) << 62, UINT64_C(1) << 62), 100);
        assert_int_equal(number_percent(UINT64_MAX, UINT64_MAX), 100);
        assert_int_equal(number_percent(UINT64_MAX - 1, UINT64_MAX), 99);
        assert_int_equal(number_percent(UINT64_MAX / 2, UINT64_MAX), 49);
        assert_int_equal(number_percent(UINT64_MAX / 2 + 1, UINT64_MAX), 50);
        assert_int_equal(number_percent(1, UINT64_MAX), 0);
        /* A part above the whole (forged) is all of it, never 101% or 300%. */
        assert_int_equal(number_percent(200, 198), 100);
        assert_int_equal(number_percent(3000, 1000), 100);
        assert_int_equal(number_percent(UINT64_MAX, 1), 100);
        /* Nothing to be a share of. */
        assert_int_equal(number_percent(0, 0), 0);
        assert_int_equal(number_percent(5, 0), 0);
}

#ifdef __SIZEOF_INT128__
/* Against the 128-bit product, where the compiler has one, on inputs of every magnitude. */
static void test_percent_exact(void **state) {
        uint64_t seed = 0x9e3779b97f4a7c15;

        for (int i = 0; i < 200000; i++) {
                uint64_t part, whole;

                /* xorshift64, each value cut to a random width so small and huge both occur */
                seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
                whole = seed >> (seed % 64);
                seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
                part = whole ? seed % whole : seed;
                if (whole == 0)
                        continue;
                assert_int_equal(number_percent(part, whole),
                                 (unsigned)((unsigned __int128)part * 100 / whole));
        }
}
#endif

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_hex),
                cmocka_unit_test(test_saturating),
                cmocka_unit_test(test_percent),
#ifdef __SIZEOF_INT128__
                cmocka_unit_test(test_percent_exact),
#endif
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
