/* SPDX-License-Identifier: MIT */
#include <errno.h>
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
        assert_string_equal(out,
                            "level=notice msg=\"corrected enabled\" "
                            "message_id=5b0a3c7e2f8d4e61a9c4d2b7f1e08a31 knob=enabled result=corrected\n");
        free(out);
}

/*
 * A writer chooses its command line and cgroup path: long ones go last and
 * are cut, so the unit, pod and container that follow them in the record
 * still reach a logfmt line (a pod's only log).
 */
static void test_long_values_go_last(void **state) {
        char long_cgroup[1600], long_cmdline[3000], *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        Logger l;

        memset(long_cgroup, 'c', sizeof(long_cgroup) - 1);
        long_cgroup[0] = '/';
        long_cgroup[sizeof(long_cgroup) - 1] = '\0';
        memset(long_cmdline, 'x', sizeof(long_cmdline) - 1);
        long_cmdline[sizeof(long_cmdline) - 1] = '\0';
        LogField fields[] = {
                { "THPGUARD_KNOB", "enabled" },
                { "THPGUARD_WRITER_CMDLINE", long_cmdline },
                { "THPGUARD_WRITER_CGROUP", long_cgroup },
                { "THPGUARD_WRITER_UNIT", "cri-containerd-abc.scope" },
                { "THPGUARD_WRITER_POD_UID", "1b2c3d4e-5f60-7a8b-9c0d-e1f2a3b4c5d6" },
                { "THPGUARD_WRITER_CONTAINER_ID", "abc" },
        };

        logger_init(&l, LOG_TARGET_CONSOLE, "/nonexistent/journal/socket", f);
        log_event(&l, LOG_NOTICE, "5b0a3c7e2f8d4e61a9c4d2b7f1e08a31", fields, ELEMENTSOF(fields), "%s",
                  long_cmdline);
        fclose(f);
        assert_true(len <= LOG_LINE_MAX);
        assert_non_null(strstr(out,
                               " message_id=5b0a3c7e2f8d4e61a9c4d2b7f1e08a31 knob=enabled "
                               "writer_unit=cri-containerd-abc.scope "
                               "writer_pod_uid=1b2c3d4e-5f60-7a8b-9c0d-e1f2a3b4c5d6 writer_container_id=abc "
                               "writer_cmdline=xxx"));
        assert_non_null(strstr(out, "x... writer_cgroup=/ccc"));
        assert_non_null(strstr(out, "c...\n"));
        free(out);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_logfmt_quoting),
                cmocka_unit_test(test_targets),
                cmocka_unit_test(test_no_journald_falls_back),
                cmocka_unit_test(test_long_values_go_last),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
