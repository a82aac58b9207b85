/* SPDX-License-Identifier: MIT */
/* The per-process THP mode (src/shared/thp-mode.c) against a prctl() the test plays the kernel for. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>

#include <cmocka.h>

#include "thpguard/thp-mode.h"

/* The fake kernel: what PR_SET_THP_DISABLE does and what PR_GET_THP_DISABLE reads back. */
static int fake_set_errno;       /* 0: the set is taken */
static int fake_refuse_flags;    /* non-zero arg3 is EINVAL, as before 6.18 */
static int fake_readback = -100; /* -100: read back what was set */
static int fake_state;
static int fake_calls;

static int fake_prctl(int option, unsigned long arg2, unsigned long arg3) {
        fake_calls++;
        if (option == PR_SET_THP_DISABLE) {
                if (fake_set_errno || (fake_refuse_flags && arg3)) {
                        errno = fake_set_errno ? fake_set_errno : EINVAL;
                        return -1;
                }
                fake_state = (int)(arg2 | arg3);
                return 0;
        }
        assert_int_equal(option, PR_GET_THP_DISABLE);
        return fake_readback == -100 ? fake_state : fake_readback;
}

static int reset(void **state) {
        (void)state;
        fake_set_errno = fake_refuse_flags = fake_state = fake_calls = 0;
        fake_readback = -100;
        return 0;
}

static void test_names(void **state) {
        (void)state;
        assert_int_equal(thp_mode_from_string("disable"), THP_MODE_DISABLE);
        assert_int_equal(thp_mode_from_string("advised-only"), THP_MODE_ADVISED_ONLY);
        assert_int_equal(thp_mode_from_string("inherit"), THP_MODE_INHERIT);
        assert_int_equal(thp_mode_from_string("never"), _THP_MODE_INVALID);
        assert_int_equal(thp_mode_from_string("Disable"), _THP_MODE_INVALID);
        assert_int_equal(thp_mode_from_string(""), _THP_MODE_INVALID);
        assert_int_equal(thp_mode_from_string(NULL), _THP_MODE_INVALID);
        for (int m = 0; m < _THP_MODE_MAX; m++)
                assert_int_equal(thp_mode_from_string(thp_mode_to_string((ThpMode)m)), m);
        assert_null(thp_mode_to_string(_THP_MODE_INVALID));
        assert_null(thp_mode_to_string(_THP_MODE_MAX));
}

static void test_apply(void **state) {
        char why[512] = "";

        (void)state;
        assert_int_equal(thp_mode_apply(THP_MODE_DISABLE, fake_prctl, why, sizeof(why)), 0);
        assert_int_equal(fake_state, 1);
        assert_int_equal(fake_calls, 2); /* set, then read back */
        assert_int_equal(thp_mode_apply(THP_MODE_ADVISED_ONLY, fake_prctl, why, sizeof(why)), 0);
        assert_int_equal(fake_state, 3);
        assert_int_equal(thp_mode_apply(THP_MODE_INHERIT, fake_prctl, why, sizeof(why)), 0);
        assert_int_equal(fake_state, 0);
        assert_int_equal(thp_mode_apply(_THP_MODE_INVALID, fake_prctl, why, sizeof(why)), -EINVAL);
}

static void test_refused(void **state) {
        char why[512] = "";

        (void)state;
        /* A kernel before 6.18: advised-only is refused, never turned into disable. */
        fake_refuse_flags = 1;
        assert_int_equal(thp_mode_apply(THP_MODE_ADVISED_ONLY, fake_prctl, why, sizeof(why)), -EINVAL);
        assert_non_null(strstr(why, "needs PR_THP_DISABLE_EXCEPT_ADVISED (Linux 6.18 or later)"));
        assert_non_null(strstr(why, "Not falling back"));
        assert_int_equal(fake_state, 0);
        assert_int_equal(fake_calls, 1);
        /* ... while disable still works there. */
        assert_int_equal(thp_mode_apply(THP_MODE_DISABLE, fake_prctl, why, sizeof(why)), 0);

        /* Any other refusal (a seccomp filter's EPERM) names the call and the error. */
        fake_set_errno = EPERM;
        assert_int_equal(thp_mode_apply(THP_MODE_DISABLE, fake_prctl, why, sizeof(why)), -EPERM);
        assert_non_null(strstr(why, "prctl(PR_SET_THP_DISABLE, 1, 0) for THP mode disable"));
        assert_non_null(strstr(why, strerror(EPERM)));
}

static void test_readback(void **state) {
        char why[512] = "";

        (void)state;
        /* Taken but not kept (a kernel that ignores arg3): caught by the read-back. */
        fake_readback = 1;
        assert_int_equal(thp_mode_apply(THP_MODE_ADVISED_ONLY, fake_prctl, why, sizeof(why)), -EIO);
        assert_non_null(strstr(why, "reads back 1 after setting 3"));
        fake_readback = -1;
        assert_int_equal(thp_mode_apply(THP_MODE_DISABLE, fake_prctl, why, sizeof(why)), -EIO);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_names, reset),
                cmocka_unit_test_setup(test_apply, reset),
                cmocka_unit_test_setup(test_refused, reset),
                cmocka_unit_test_setup(test_readback, reset),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
