/* SPDX-License-Identifier: MIT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "thpguard/log.h"

static void test_logfmt_quoting(void **state) {
        char buf[256] = "";

        logfmt_append(buf, sizeof(buf), "level", "notice");
        logfmt_append(buf, sizeof(buf), "msg", "corrected enabled: always -> madvise (inotify)");
        logfmt_append(buf, sizeof(buf), "knob", "hugepages-64kB/enabled");
        logfmt_append(buf, sizeof(buf), "observed", "");
        logfmt_append(buf, sizeof(buf), "x", "a \"q\" b\\c\nd=e");
        assert_string_equal(buf, "level=notice msg=\"corrected enabled: always -> madvise (inotify)\" "
                                 "knob=hugepages-64kB/enabled observed=\"\" x=\"a \\\"q\\\" b\\\\c\\nd=e\"");

        /* Truncates instead of overflowing. */
        char small[8] = "";
        logfmt_append(small, sizeof(small), "knob", "enabled");
        assert_int_equal(strlen(small), 7);
}

static void test_targets(void **state) {
        LogTarget t;
        Logger l;

        assert_int_equal(log_target_from_string("auto", &t), 0);
        assert_int_equal(t, LOG_TARGET_AUTO);
        assert_int_equal(log_target_from_string("console", &t), 0);
        assert_int_equal(log_target_from_string("syslog", &t), -EINVAL);

        /* auto picks the console where no journal socket exists (a pod). */
        logger_init(&l, LOG_TARGET_AUTO, "/nonexistent/journal/socket", stderr);
        assert_int_equal(l.target, LOG_TARGET_CONSOLE);
        logger_init(&l, LOG_TARGET_AUTO, "/", stderr);
        assert_int_equal(l.target, LOG_TARGET_JOURNAL);
}

static void test_no_journald_falls_back(void **state) {
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        LogField fields[] = { { "THPGUARD_KNOB", "enabled" }, { "THPGUARD_RESULT", "corrected" } };
        Logger l;

        /*
         * Asked for the journal, but journald is gone: sd_journal_send() would
         * return 0 and lose the entry, so it must come out on the console.
         */
        logger_init(&l, LOG_TARGET_JOURNAL, "/nonexistent/journal/socket", f);
        log_event(&l, LOG_NOTICE, "5b0a3c7e2f8d4e61a9c4d2b7f1e08a31", fields, 2, "corrected %s", "enabled");
        fclose(f);
        assert_string_equal(out, "level=notice msg=\"corrected enabled\" knob=enabled result=corrected "
                                 "message_id=5b0a3c7e2f8d4e61a9c4d2b7f1e08a31\n");
        free(out);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_logfmt_quoting),
                cmocka_unit_test(test_targets),
                cmocka_unit_test(test_no_journald_falls_back),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
