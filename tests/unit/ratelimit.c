/* SPDX-License-Identifier: MIT */
/*
 * The corrector thread's wakeup limit (src/basic/ratelimit.c): the burst goes
 * through, the next event is told when the window ends, and a new window
 * starts counting afresh. Pure: the test gives the time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "thpguard/ratelimit.h"

#define S UINT64_C(1000000)

static void test_burst_then_window_end(void **state) {
        RateLimit rl = RATELIMIT_INIT(S, 3);

        for (int i = 0; i < 3; i++)
                assert_int_equal(ratelimit_count(&rl, 10 * S + (uint64_t)i), 0);
        /* Over the limit: sleep until the window that began at 10 s ends. */
        assert_int_equal(ratelimit_count(&rl, 10 * S + 500), 11 * S);
        assert_int_equal(ratelimit_count(&rl, 11 * S - 1), 11 * S);
        /* The window has ended: a new one, with the whole burst again. */
        for (int i = 0; i < 3; i++)
                assert_int_equal(ratelimit_count(&rl, 11 * S + (uint64_t)i), 0);
        assert_int_equal(ratelimit_count(&rl, 11 * S + 3), 12 * S);
}

static void test_burst_lowered_in_a_fight(void **state) {
        RateLimit rl = RATELIMIT_INIT(S, 5000);

        assert_int_equal(ratelimit_count(&rl, 0), 0);
        /* The loop lowers the burst when a fight starts; it holds from the next event on. */
        rl.burst = 2;
        assert_int_equal(ratelimit_count(&rl, 1), 0);
        assert_int_equal(ratelimit_count(&rl, 2), S);
}

static void test_no_overflow_near_the_end_of_time(void **state) {
        RateLimit rl = RATELIMIT_INIT(S, 1);

        assert_int_equal(ratelimit_count(&rl, UINT64_MAX - 10), 0);
        /* The window's end saturates instead of wrapping to the past. */
        assert_int_equal(ratelimit_count(&rl, UINT64_MAX - 9), UINT64_MAX);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_burst_then_window_end),
                cmocka_unit_test(test_burst_lowered_in_a_fight),
                cmocka_unit_test(test_no_overflow_near_the_end_of_time),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
