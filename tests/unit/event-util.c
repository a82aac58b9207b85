/* SPDX-License-Identifier: MIT */
/*
 * The sd-event helpers behave the same whether libsystemd has the call or
 * the fallback is built (-DTHPGUARD_LIBSYSTEMD_API=239): the suite runs in
 * both builds. Only bounds are asserted that hold on a busy machine.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "thpguard/event-util.h"
#include "thpguard/macro.h"

static int on_time(sd_event_source *s, uint64_t usec, void *userdata) {
        uint64_t *fired = userdata;

        *fired = now_usec(CLOCK_MONOTONIC);
        return 0;
}

static void test_relative_timers_wait_at_least(void **state) {
        sd_event *e = NULL;
        sd_event_source *t = NULL;
        uint64_t start, fired = 0;

        assert_int_equal(sd_event_new(&e), 0);
        start = now_usec(CLOCK_MONOTONIC);
        assert_int_equal(
            event_add_time_relative(e, &t, CLOCK_MONOTONIC, 50 * USEC_PER_MSEC, 1, on_time, &fired), 0);
        while (!fired)
                assert_true(sd_event_run(e, UINT64_MAX) >= 0);
        assert_true(fired >= start + 50 * USEC_PER_MSEC);

        /* Re-armed relative to the loop's now (its last wakeup), not to when it was added. */
        assert_int_equal(sd_event_now(e, CLOCK_MONOTONIC, &start), 0);
        assert_int_equal(event_source_set_time_relative(t, 80 * USEC_PER_MSEC), 0);
        assert_int_equal(sd_event_source_set_enabled(t, SD_EVENT_ONESHOT), 0);
        fired = 0;
        while (!fired)
                assert_true(sd_event_run(e, UINT64_MAX) >= 0);
        print_message("re-armed timer fired %" PRIu64 " us after being set for 80000 us\n", fired - start);
        assert_true(fired >= start + 80 * USEC_PER_MSEC);

        assert_null(event_source_disable_unref(t));
        assert_null(event_source_disable_unref(NULL));
        sd_event_unref(e);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        *(int *)userdata = (int)si->ssi_signo;
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

static void test_signal_is_blocked_and_delivered(void **state) {
        sd_event *e = NULL;
        sd_event_source *s = NULL;
        sigset_t blocked;
        int got = 0;

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(event_add_signal(e, &s, SIGUSR1, on_signal, &got), 0);
        /* Blocked, or raise() below would kill the test: SIGUSR1's default action is to terminate. */
        assert_int_equal(sigprocmask(SIG_SETMASK, NULL, &blocked), 0);
        assert_int_equal(sigismember(&blocked, SIGUSR1), 1);
        assert_int_equal(raise(SIGUSR1), 0);
        assert_int_equal(sd_event_loop(e), 0);
        assert_int_equal(got, SIGUSR1);
        event_source_disable_unref(s);
        sd_event_unref(e);
}

/* An armed timer fires once at its time; one that cannot be armed ends the loop with EXIT_FAILURE. */
static void test_arm_timer(void **state) {
        sd_event *e = NULL;
        sd_event_source *t = NULL;
        uint64_t start, fired = 0;
        int enabled;

        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(sd_event_add_time(e, &t, CLOCK_MONOTONIC, 0, 1, on_time, &fired), 0);
        assert_int_equal(sd_event_source_set_enabled(t, SD_EVENT_OFF), 0);
        start = event_now(e, CLOCK_MONOTONIC); /* no wakeup yet: the clock's now */
        assert_true(start > 0);

        assert_int_equal(event_arm_timer(t, start + 20 * USEC_PER_MSEC), 0);
        while (!fired)
                assert_true(sd_event_run(e, UINT64_MAX) >= 0);
        assert_true(fired >= start + 20 * USEC_PER_MSEC);
        /* Once: it is off again, and the loop's now is its wakeup. */
        assert_int_equal(sd_event_source_get_enabled(t, &enabled), 0);
        assert_int_equal(enabled, SD_EVENT_OFF);
        assert_true(event_now(e, CLOCK_MONOTONIC) >= start + 20 * USEC_PER_MSEC);

        /* A timer whose loop has ended cannot be armed: the error comes back. */
        assert_int_equal(sd_event_exit(e, 0), 0);
        assert_true(sd_event_run(e, 0) >= 0);
        assert_true(event_arm_timer(t, start) < 0);
        event_source_disable_unref(t);
        sd_event_unref(e);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_arm_timer),
                cmocka_unit_test(test_relative_timers_wait_at_least),
                cmocka_unit_test(test_signal_is_blocked_and_delivered),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
