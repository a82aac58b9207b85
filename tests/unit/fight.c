/* SPDX-License-Identifier: MIT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fight.h"

#define S UINT64_C(1000000)

static const FightConfig config = { .threshold = 5, .window_usec = 10 * S, .backoff_max_usec = 30 * S };

static void test_threshold_and_window(void **state) {
        Fight f;

        assert_int_equal(fight_init(&f, &config), 0);
        /* Five corrections in the window are fine; the sixth within 10 s is a fight. */
        for (int i = 0; i < 5; i++)
                assert_false(fight_note_correction(&f, &config, 100 * S + (uint64_t)i * S, "always"));
        assert_true(fight_note_correction(&f, &config, 105 * S, "always"));
        assert_true(fight_in_backoff(&f));
        assert_string_equal(f.foreign, "always");
        assert_int_equal(f.until_usec, 106 * S);
        fight_done(&f);

        /* Six corrections spread over more than the window are not. */
        assert_int_equal(fight_init(&f, &config), 0);
        for (int i = 0; i < 20; i++)
                assert_false(fight_note_correction(&f, &config, (uint64_t)i * 3 * S, "always"));
        assert_false(fight_in_backoff(&f));
        fight_done(&f);
}

static void test_backoff_doubles_and_caps(void **state) {
        FightConfig c = config;
        uint64_t now = 0, suppressed;
        Fight f;

        c.backoff_max_usec = 5 * S;
        assert_int_equal(fight_init(&f, &c), 0);
        for (int i = 0; i < 6; i++)
                fight_note_correction(&f, &c, now, "always");
        assert_true(f.active);

        fight_note_suppressed(&f);
        fight_note_suppressed(&f);
        now = f.until_usec;
        assert_int_equal(fight_window_closed(&f, &c, now, true, &suppressed), FIGHT_CONTINUES);
        assert_int_equal(suppressed, 2);
        assert_int_equal(f.backoff_usec, 2 * S);
        now = f.until_usec;
        assert_int_equal(fight_window_closed(&f, &c, now, true, &suppressed), FIGHT_CONTINUES);
        assert_int_equal(suppressed, 0);
        assert_int_equal(f.backoff_usec, 4 * S);
        now = f.until_usec;
        fight_window_closed(&f, &c, now, true, &suppressed);
        assert_int_equal(f.backoff_usec, 5 * S); /* capped at the recheck interval */
        assert_true(fight_in_backoff(&f));

        /* The window closes without drift: over, with the fight's total. */
        fight_note_suppressed(&f);
        assert_int_equal(fight_window_closed(&f, &c, f.until_usec, false, &suppressed), FIGHT_ENDED);
        assert_int_equal(suppressed, 3);
        assert_false(fight_in_backoff(&f));
        /* And it takes a full new burst to start another. */
        assert_false(fight_note_correction(&f, &c, now + 100 * S, "never"));
        fight_done(&f);
}

static void test_disabled(void **state) {
        FightConfig c = config;
        Fight f;

        c.threshold = 0;
        assert_int_equal(fight_init(&f, &c), 0);
        for (int i = 0; i < 100; i++)
                assert_false(fight_note_correction(&f, &c, (uint64_t)i, "always"));
        fight_done(&f);
}

static void test_carry_over_keeps_the_fight(void **state) {
        FightConfig wider = config;
        uint64_t suppressed;
        Fight old, f;

        /* A fight in its second window, with suppressed drifts. */
        assert_int_equal(fight_init(&old, &config), 0);
        for (int i = 0; i < 6; i++)
                fight_note_correction(&old, &config, 100 * S + (uint64_t)i, "always");
        assert_true(old.active);
        fight_note_suppressed(&old);
        fight_window_closed(&old, &config, old.until_usec, true, &suppressed);
        fight_note_suppressed(&old);

        /* Reloaded with the same settings: still in backoff, same deadline, same counts. */
        assert_int_equal(fight_init(&f, &config), 0);
        fight_carry_over(&f, &config, &old, config.threshold);
        assert_true(fight_in_backoff(&f));
        assert_int_equal(f.until_usec, old.until_usec);
        assert_int_equal(f.backoff_usec, 2 * S);
        assert_string_equal(f.foreign, "always");
        assert_int_equal(fight_window_closed(&f, &config, f.until_usec, false, &suppressed), FIGHT_ENDED);
        assert_int_equal(suppressed, 2); /* the summary counts the whole fight, across the reload */
        fight_done(&f);

        /* A new recheck interval caps the backoff; a larger threshold keeps the recent corrections. */
        wider.threshold = 8;
        wider.backoff_max_usec = 1 * S;
        assert_int_equal(fight_init(&f, &wider), 0);
        fight_carry_over(&f, &wider, &old, config.threshold);
        assert_int_equal(f.backoff_usec, 1 * S);
        assert_int_equal(f.n_recent, 5);
        assert_int_equal(f.recent[0], 100 * S + 1); /* oldest kept first */
        assert_int_equal(f.recent[4], 100 * S + 5);
        assert_int_equal(f.head, 5);
        fight_done(&f);

        /* A smaller threshold keeps the newest corrections, and the ring is full. */
        wider.threshold = 2;
        assert_int_equal(fight_init(&f, &wider), 0);
        fight_carry_over(&f, &wider, &old, config.threshold);
        assert_int_equal(f.n_recent, 2);
        assert_int_equal(f.recent[0], 100 * S + 4);
        assert_int_equal(f.recent[1], 100 * S + 5);
        assert_int_equal(f.head, 0);
        fight_done(&f);

        /* Protection turned off ends it. */
        wider.threshold = 0;
        assert_int_equal(fight_init(&f, &wider), 0);
        fight_carry_over(&f, &wider, &old, config.threshold);
        assert_false(fight_in_backoff(&f));
        fight_done(&f);
        fight_done(&old);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_threshold_and_window),
                cmocka_unit_test(test_backoff_doubles_and_caps),
                cmocka_unit_test(test_disabled),
                cmocka_unit_test(test_carry_over_keeps_the_fight),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
