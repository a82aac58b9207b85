/* SPDX-License-Identifier: MIT */
/*
 * enforce.c on a fixture tree in a temporary directory, never the real
 * sysfs: a compliant knob is not written, a drift is written and read
 * back, audit mode only reports, an absent or unsupported knob is skipped,
 * and a write that does not stick fails with what it read back. A fixture
 * file is a regular file, written at offset 0 without truncation as sysfs
 * is: a numeric knob reads back what was written, a choice file does not.
 */
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

#include "thpguard/enforce.h"
#include "tree.h"

static int setup(void **state) {
        Tree *t = tree_new("enforce");

        make_dir(t, THP "/khugepaged");
        put(t, THP "/enabled", "always [madvise] never\n");
        put(t, THP "/hpage_pmd_size", "2097152\n");
        put(t, THP "/khugepaged/defrag", "1\n");
        put(t, THP "/khugepaged/max_ptes_none", "511\n");
        assert_int_equal(sysfs_new(t->root, &t->sysfs), 0);
        *state = t;
        return 0;
}

static int teardown(void **state) {
        tree_free(*state);
        return 0;
}

static PolicyKnob knob(KnobGroup group, const char *key, const char *desired) {
        PolicyKnob k = { .spec = knob_spec_find(group, key) };

        assert_non_null(k.spec);
        assert_int_equal(knob_path_build(group, NULL, k.spec, k.path, sizeof(k.path)), 0);
        snprintf(k.desired, sizeof(k.desired), "%s", desired);
        return k;
}

/* Compliant: nothing to do, and nothing is written. */
static void test_compliant(void **state) {
        Tree *t = *state;
        PolicyKnob k = knob(KNOB_GROUP_TOP, "enabled", "madvise");
        EnforceOutcome o;

        enforce_knob(t->sysfs, &k, NULL, POLICY_MODE_ENFORCE, &o);
        assert_int_equal(o.action, ENFORCE_NONE);
        assert_int_equal(o.before.state, KNOB_STATE_OK);
        assert_string_equal(o.before.actual, "madvise");
        assert_false(o.written);
        assert_string_equal(slurp(t, THP "/enabled"), "always [madvise] never\n");
}

/* A drift is written, read back, and reported with the value it had. */
static void test_corrected(void **state) {
        Tree *t = *state;
        PolicyKnob k = knob(KNOB_GROUP_KHUGEPAGED, "defrag", "0");
        EnforceOutcome o;

        enforce_knob(t->sysfs, &k, NULL, POLICY_MODE_ENFORCE, &o);
        assert_int_equal(o.action, ENFORCE_CORRECTED);
        assert_true(o.written);
        assert_string_equal(o.before.actual, "1");
        assert_string_equal(o.after, "0");
        assert_string_equal(slurp(t, THP "/khugepaged/defrag"), "0\n");

        /* Again: compliant now, not written again. */
        enforce_knob(t->sysfs, &k, NULL, POLICY_MODE_ENFORCE, &o);
        assert_int_equal(o.action, ENFORCE_NONE);
        assert_false(o.written);
}

/* The daemon's way: through a handle kept open across checks. */
static void test_corrected_through_handle(void **state) {
        Tree *t = *state;
        PolicyKnob k = knob(KNOB_GROUP_KHUGEPAGED, "defrag", "0");
        SysfsHandle h = SYSFS_HANDLE_CLOSED;
        EnforceOutcome o;

        enforce_knob(t->sysfs, &k, &h, POLICY_MODE_ENFORCE, &o);
        assert_int_equal(o.action, ENFORCE_CORRECTED);
        assert_true(h.fd >= 0);
        assert_string_equal(slurp(t, THP "/khugepaged/defrag"), "0\n");

        put(t, THP "/khugepaged/defrag", "1\n");
        enforce_knob(t->sysfs, &k, &h, POLICY_MODE_ENFORCE, &o);
        assert_int_equal(o.action, ENFORCE_CORRECTED);
        assert_string_equal(o.before.actual, "1");
        assert_string_equal(slurp(t, THP "/khugepaged/defrag"), "0\n");
        sysfs_handle_close(&h);
}

/* Audit mode reports the drift and never writes. */
static void test_audit(void **state) {
        Tree *t = *state;
        PolicyKnob k = knob(KNOB_GROUP_KHUGEPAGED, "defrag", "0");
        EnforceOutcome o;

        enforce_knob(t->sysfs, &k, NULL, POLICY_MODE_AUDIT, &o);
        assert_int_equal(o.action, ENFORCE_AUDIT);
        assert_int_equal(o.before.state, KNOB_STATE_DRIFT);
        assert_string_equal(o.before.actual, "1");
        assert_false(o.written);
        assert_string_equal(slurp(t, THP "/khugepaged/defrag"), "1\n");
}

/* A knob this kernel lacks, or a value above its max_ptes bound, is skipped unwritten. */
static void test_unsupported(void **state) {
        Tree *t = *state;
        PolicyKnob absent = knob(KNOB_GROUP_TOP, "shmem_enabled", "advise");
        PolicyKnob above = knob(KNOB_GROUP_KHUGEPAGED, "max_ptes_none", "600");
        EnforceOutcome o;

        enforce_knob(t->sysfs, &absent, NULL, POLICY_MODE_ENFORCE, &o);
        assert_int_equal(o.action, ENFORCE_NONE);
        assert_int_equal(o.before.state, KNOB_STATE_UNSUPPORTED);

        assert_int_equal(sysfs_ptes_max(t->sysfs), 511);
        enforce_knob(t->sysfs, &above, NULL, POLICY_MODE_ENFORCE, &o);
        assert_int_equal(o.action, ENFORCE_NONE);
        assert_int_equal(o.before.state, KNOB_STATE_UNSUPPORTED);
        assert_false(o.written);
        assert_string_equal(slurp(t, THP "/khugepaged/max_ptes_none"), "511\n");
}

/* Written, but the file reads back another value: failed, -EIO, with what it read. */
static void test_write_does_not_stick(void **state) {
        Tree *t = *state;
        PolicyKnob k = knob(KNOB_GROUP_KHUGEPAGED, "max_ptes_none", "3");
        EnforceOutcome o;
        char why[256];

        put(t, THP "/khugepaged/max_ptes_none", "17\n"); /* "3" written over it reads back 37 */
        enforce_knob(t->sysfs, &k, NULL, POLICY_MODE_ENFORCE, &o);
        assert_int_equal(o.action, ENFORCE_FAILED);
        assert_true(o.written);
        assert_int_equal(o.error, -EIO);
        assert_string_equal(o.before.actual, "17");
        assert_string_equal(o.after, "37");
        enforce_describe_failure(&o, why, sizeof(why));
        assert_string_equal(why, "the write did not stick: reads back 37");
}

/* Written, and the file no longer reads as a value: failed, -EBADMSG. */
static void test_write_garbles(void **state) {
        Tree *t = *state;
        PolicyKnob k = knob(KNOB_GROUP_TOP, "enabled", "never");
        EnforceOutcome o;
        char why[256];

        /* "never" over "[always]..." leaves "neverys] madvise never". */
        put(t, THP "/enabled", "[always] madvise never\n");
        enforce_knob(t->sysfs, &k, NULL, POLICY_MODE_ENFORCE, &o);
        assert_int_equal(o.action, ENFORCE_FAILED);
        assert_true(o.written);
        assert_int_equal(o.error, -EBADMSG);
        assert_string_equal(o.before.actual, "always");
        enforce_describe_failure(&o, why, sizeof(why));
        assert_string_equal(why, "the write went through, but the file no longer reads as a value");
}

/* How each failure is said in the logs. */
static void test_describe_failure(void **state) {
        EnforceOutcome o = { .action = ENFORCE_FAILED };
        char why[256];

        o.error = -EROFS;
        enforce_describe_failure(&o, why, sizeof(why));
        assert_non_null(strstr(why, "sysfs is read-only here"));
        o.error = -EACCES;
        enforce_describe_failure(&o, why, sizeof(why));
        assert_non_null(strstr(why, "sysfs is read-only here"));
        o.error = -EINVAL;
        enforce_describe_failure(&o, why, sizeof(why));
        assert_non_null(strstr(why, "the kernel rejected the value"));
        o.error = -EIO; /* nothing read back: said as a plain write failure */
        enforce_describe_failure(&o, why, sizeof(why));
        assert_non_null(strstr(why, "write failed: "));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_compliant, setup, teardown),
                cmocka_unit_test_setup_teardown(test_corrected, setup, teardown),
                cmocka_unit_test_setup_teardown(test_corrected_through_handle, setup, teardown),
                cmocka_unit_test_setup_teardown(test_audit, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unsupported, setup, teardown),
                cmocka_unit_test_setup_teardown(test_write_does_not_stick, setup, teardown),
                cmocka_unit_test_setup_teardown(test_write_garbles, setup, teardown),
                cmocka_unit_test(test_describe_failure),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
