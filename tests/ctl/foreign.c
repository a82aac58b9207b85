/* SPDX-License-Identifier: MIT */
/* foreign.c: --since, journal data as hostile bytes, grouping by writer and knob, the caps. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "foreign.h"
#include "thpguard/message-ids.h"
#include "thpguard/writer.h"

#define LIT(s) s, sizeof(s) - 1
#define SEC    UINT64_C(1000000)
#define NOW    (UINT64_C(1767225600) * SEC) /* 2026-01-01 00:00:00 UTC */

static int utc(void **state) {
        setenv("TZ", "UTC", 1);
        tzset();
        return 0;
}

static uint64_t since(const char *s) {
        uint64_t v = UINT64_MAX;

        assert_int_equal(ctl_since_parse(s, NOW, &v), 0);
        return v;
}

static void test_since_relative(void **state) {
        assert_true(since("-24h") == NOW - 24 * 3600 * SEC);
        assert_true(since("-30min") == NOW - 30 * 60 * SEC);
        assert_true(since("-30m") == NOW - 30 * 60 * SEC);
        assert_true(since("-7d") == NOW - 7 * 86400 * SEC);
        assert_true(since("-2w") == NOW - 14 * 86400 * SEC);
        assert_true(since("-90s") == NOW - 90 * SEC);
        assert_true(since("-5sec") == NOW - 5 * SEC);
        assert_true(since("-0h") == NOW);
        /* Further back than the epoch: everything, not an error. */
        assert_true(since("-100000000d") == 0);
}

static void test_since_absolute(void **state) {
        assert_true(since("2026-01-01") == NOW);
        assert_true(since("2025-12-31 23:30") == NOW - 30 * 60 * SEC);
        assert_true(since("2025-12-31 23:59:59") == NOW - SEC);
        assert_true(since("2025-12-31T23:59:59") == NOW - SEC);
        assert_true(since("2024-02-29") == UINT64_C(1709164800) * SEC); /* a leap day */
        assert_true(since("1970-01-01") == 0);
}

static void test_since_bad(void **state) {
        static const char *const bad[] = {
                "",
                "-",
                "-h",
                "-24",
                "24h",
                "+24h",
                "-24 h",
                "-24hours",
                "-1y",
                "-24H",
                "- 24h",
                "-99999999999999999999h", /* does not fit in 64 bits */
                "-1000000000000d",        /* fits, but not once in microseconds */
                "-0x10h",
                "yesterday",
                "now",
                "2025-02-30",
                "2025-02-29",
                "2025-13-01",
                "2025-00-10",
                "2025-1-01",
                "2025-01-1",
                "25-01-01",
                "2025-01-01 1:00",
                "2025-01-01 24:00",
                "2025-01-01 12:60",
                "2025-01-01 12:30:60",
                "2025-01-01 12:30:",
                "2025-01-01 12",
                "2025-01-01 12:30:15x",
                "2025-01-01  12:30",
                "2025-01-01x",
                "1969-12-31",
                "-2025-01-01",
                "2025/01/01",
        };
        uint64_t v = 42;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (ctl_since_parse(bad[i], NOW, &v) != -EINVAL)
                        fail_msg("'%s' was accepted", bad[i]);
                assert_true(v == 42); /* not written on failure */
        }
        assert_int_equal(ctl_since_parse(NULL, NOW, &v), -EINVAL);
}

static void test_time(void **state) {
        char buf[64];

        assert_string_equal(ctl_time_utc(NOW, buf, sizeof(buf)), "2026-01-01T00:00:00Z");
        assert_string_equal(ctl_time_local(NOW - SEC, buf, sizeof(buf)), "2025-12-31 23:59:59");
        assert_string_equal(ctl_time_utc(NOW, buf, 4), "-"); /* no room: a dash, not half a date */
}

static void test_field_value(void **state) {
        char buf[16], big[CTL_FIELD_MAX];
        uint64_t v = 7;

        assert_int_equal(
            ctl_field_value(LIT("THPGUARD_WRITER=tuned.service"), "THPGUARD_WRITER", big, sizeof(big)), 0);
        assert_string_equal(big, "tuned.service");
        /* Control bytes, bytes above 0x7e and a NUL inside the value come out as \xNN. */
        assert_int_equal(
            ctl_field_value(LIT("THPGUARD_WRITER=a\x1b[31m\n\xff\0b"), "THPGUARD_WRITER", big, sizeof(big)),
            0);
        assert_string_equal(big, "a\\x1b[31m\\x0a\\xff\\x00b");
        /* An empty value is empty. */
        assert_int_equal(ctl_field_value(LIT("THPGUARD_KNOB="), "THPGUARD_KNOB", big, sizeof(big)), 0);
        assert_string_equal(big, "");
        /* Another field: a longer name with the same start, a name without '=', a shorter datum. */
        assert_int_equal(ctl_field_value(LIT("THPGUARD_WRITER_PID=5"), "THPGUARD_WRITER", big, sizeof(big)),
                         -ENOENT);
        assert_int_equal(ctl_field_value(LIT("THPGUARD_WRITER"), "THPGUARD_WRITER", big, sizeof(big)),
                         -ENOENT);
        assert_int_equal(ctl_field_value(LIT("THPGUARD_WRITE"), "THPGUARD_WRITER", big, sizeof(big)),
                         -ENOENT);
        assert_int_equal(ctl_field_value(LIT("X"), "THPGUARD_WRITER", big, sizeof(big)), -ENOENT);
        /* A value longer than the buffer is cut at a whole character. */
        assert_int_equal(ctl_field_value(LIT("K=0123456789abcdefXYZ"), "K", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0123456789abcde");
        assert_int_equal(ctl_field_value(LIT("K=0123456789a\x01"), "K", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0123456789a\\x01"); /* 15 characters and the NUL */
        assert_int_equal(ctl_field_value(LIT("K=0123456789ab\x01"), "K", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0123456789ab"); /* "\x01" would not fit whole */

        assert_int_equal(ctl_field_u64(LIT("THPGUARD_WRITER_PID=812"), "THPGUARD_WRITER_PID", &v), 0);
        assert_true(v == 812);
        v = 7;
        assert_int_equal(ctl_field_u64(LIT("THPGUARD_WRITER_PID=8x"), "THPGUARD_WRITER_PID", &v), -EBADMSG);
        assert_int_equal(ctl_field_u64(LIT("THPGUARD_WRITER_PID="), "THPGUARD_WRITER_PID", &v), -EBADMSG);
        assert_int_equal(ctl_field_u64(LIT("THPGUARD_WRITER_PID=-1"), "THPGUARD_WRITER_PID", &v), -EBADMSG);
        assert_int_equal(
            ctl_field_u64(LIT("THPGUARD_WRITER_PID=99999999999999999999"), "THPGUARD_WRITER_PID", &v),
            -EBADMSG);
        assert_int_equal(ctl_field_u64(LIT("THPGUARD_WRITER_PID=1\0"), "THPGUARD_WRITER_PID", &v), -EBADMSG);
        assert_true(v == 7);
}

static void test_field_value_huge(void **state) {
        size_t n = 16 * 1024 * 1024;
        char *data = malloc(n), buf[CTL_FIELD_MAX];

        assert_non_null(data);
        memcpy(data, "THPGUARD_WRITER_CMDLINE=", 24);
        memset(data + 24, 0xff, n - 24);
        assert_int_equal(ctl_field_value(data, n, "THPGUARD_WRITER_CMDLINE", buf, sizeof(buf)), 0);
        assert_int_equal(strlen(buf), (sizeof(buf) - 1) / 4 * 4);
        assert_memory_equal(buf, "\\xff\\xff", 8);
        free(data);
}

/* A record made of datums, as journal.c hands them over. */
static CtlRecord record(uint64_t usec, const char *const *data) {
        CtlRecord r = { .usec = usec };

        for (; *data; data++)
                ctl_record_take(&r, *data, strlen(*data));
        return r;
}

static void test_record(void **state) {
        CtlRecord r;

        r = record(5, (const char *const[]){
                          "MESSAGE_ID=" THPGUARD_MESSAGE_CORRECTED, "MESSAGE=corrected",
                          "THPGUARD_KNOB=hugepages-2048kB/enabled", "THPGUARD_WRITER=tuned.service",
                          "THPGUARD_WRITER_PID=812", "THPGUARD_WRITER_COMM=tuned",
                          "THPGUARD_WRITER_EXE=/usr/sbin/tuned", "THPGUARD_WRITER_UNIT=tuned.service",
                          "THPGUARD_WRITER_CGROUP=/x", "_UID=0", NULL });
        assert_int_equal(r.kind, CTL_RECORD_DRIFT);
        assert_true(r.usec == 5);
        assert_string_equal(r.knob, "hugepages-2048kB/enabled");
        assert_string_equal(r.writer, "tuned.service");
        assert_true(r.pid == 812);
        assert_false(r.exited);
        assert_string_equal(r.comm, "tuned");
        assert_string_equal(r.exe, "/usr/sbin/tuned");
        assert_string_equal(r.unit, "tuned.service");
        assert_string_equal(r.pod_uid, "");

        r = record(0, (const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_CORRECTION_FAILED, NULL });
        assert_int_equal(r.kind, CTL_RECORD_DRIFT);
        r = record(0, (const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_AUDIT_DRIFT, NULL });
        assert_int_equal(r.kind, CTL_RECORD_DRIFT);
        r = record(0, (const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_WRITER_FIGHT,
                                             "THPGUARD_WRITER=pid 4021", "THPGUARD_WRITER_PID=4021",
                                             "THPGUARD_WRITER_EXITED=1", "THPGUARD_WRITER_POD_UID=0c1d",
                                             "THPGUARD_WRITER_CONTAINER_ID=5f3e", NULL });
        assert_int_equal(r.kind, CTL_RECORD_FIGHT);
        assert_true(r.exited);
        assert_string_equal(r.pod_uid, "0c1d");
        assert_string_equal(r.container_id, "5f3e");
        /* Another program's MESSAGE_ID (or a longer one that starts like ours) is not ours. */
        r = record(0, (const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_POLICY_RELOADED, NULL });
        assert_int_equal(r.kind, CTL_RECORD_NONE);
        r = record(0, (const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_CORRECTED "00", NULL });
        assert_int_equal(r.kind, CTL_RECORD_NONE);
        /* A pid that is not a number is no pid; EXITED is 1 or nothing. */
        r = record(0,
                   (const char *const[]){ "THPGUARD_WRITER_PID=12 ", "THPGUARD_WRITER_EXITED=yes", NULL });
        assert_true(r.pid == 0);
        assert_false(r.exited);
}

static WriteSource write_source_of(const char *const *data) {
        CtlRecord r = record(1, data);

        return ctl_record_write_source(&r);
}

static void test_record_write_source(void **state) {
        CtlRecord r;

        r = record(7, (const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_SOURCE,
                                             "MESSAGE=write source: bpf (passed in): ...",
                                             "THPGUARD_WRITE_SOURCE=bpf", NULL });
        assert_int_equal(r.kind, CTL_RECORD_WRITE_SOURCE);
        assert_int_equal(ctl_record_write_source(&r), WRITE_SOURCE_BPF);
        /* The field before the MESSAGE_ID, as sd-journal may enumerate them. */
        assert_int_equal(
            write_source_of((const char *const[]){ "THPGUARD_WRITE_SOURCE=fanotify",
                                                   "MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_SOURCE, NULL }),
            WRITE_SOURCE_FANOTIFY);
        assert_int_equal(write_source_of((const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_SOURCE,
                                                                "THPGUARD_WRITE_SOURCE=none", NULL }),
                         WRITE_SOURCE_NONE);
        /* Said twice, the same: still that. */
        assert_int_equal(write_source_of((const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_SOURCE,
                                                                "THPGUARD_WRITE_SOURCE=bpf",
                                                                "THPGUARD_WRITE_SOURCE=bpf", NULL }),
                         WRITE_SOURCE_BPF);

        /* Only the three words, exactly: anything else, or two that disagree, says nothing. */
        static const char *const bad[] = {
                "THPGUARD_WRITE_SOURCE=auto",     "THPGUARD_WRITE_SOURCE=unknown",
                "THPGUARD_WRITE_SOURCE=",         "THPGUARD_WRITE_SOURCE=BPF",
                "THPGUARD_WRITE_SOURCE=bpf ",     "THPGUARD_WRITE_SOURCE= bpf",
                "THPGUARD_WRITE_SOURCE=bpfx",     "THPGUARD_WRITE_SOURCE=bp",
                "THPGUARD_WRITE_SOURCE=evil\x1b", "THPGUARD_WRITE_SOURCE=bpf\n",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(write_source_of((const char *const[]){
                                     "MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_SOURCE, bad[i], NULL }),
                                 WRITE_SOURCE_AUTO);
        assert_int_equal(write_source_of((const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_SOURCE,
                                                                "THPGUARD_WRITE_SOURCE=bpf",
                                                                "THPGUARD_WRITE_SOURCE=evil", NULL }),
                         WRITE_SOURCE_AUTO);
        assert_int_equal(write_source_of((const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_SOURCE,
                                                                "THPGUARD_WRITE_SOURCE=none",
                                                                "THPGUARD_WRITE_SOURCE=bpf", NULL }),
                         WRITE_SOURCE_AUTO);
        /* A NUL inside: the journal's bytes, not a C string. */
        r = (CtlRecord){};
        ctl_record_take(&r, LIT("MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_SOURCE));
        ctl_record_take(&r, LIT("THPGUARD_WRITE_SOURCE=bpf\0none"));
        assert_int_equal(ctl_record_write_source(&r), WRITE_SOURCE_AUTO);
        r = (CtlRecord){};
        ctl_record_take(&r, LIT("MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_SOURCE));
        ctl_record_take(&r, "THPGUARD_WRITE_SOURCE=bpf", strlen("THPGUARD_WRITE_SOURCE=bp")); /* cut */
        assert_int_equal(ctl_record_write_source(&r), WRITE_SOURCE_AUTO);

        /* The field on any other record says nothing: only the startup record's counts. */
        assert_int_equal(write_source_of((const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_CORRECTED,
                                                                "THPGUARD_WRITE_SOURCE=bpf", NULL }),
                         WRITE_SOURCE_AUTO);
        assert_int_equal(
            write_source_of((const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_POLICY_RELOADED,
                                                   "THPGUARD_WRITE_SOURCE=bpf", NULL }),
            WRITE_SOURCE_AUTO);
        assert_int_equal(write_source_of((const char *const[]){ "THPGUARD_WRITE_SOURCE=bpf", NULL }),
                         WRITE_SOURCE_AUTO);
        /* A longer MESSAGE_ID that starts like it is not it. */
        r = record(0, (const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_SOURCE "0",
                                             "THPGUARD_WRITE_SOURCE=bpf", NULL });
        assert_int_equal(r.kind, CTL_RECORD_NONE);
        assert_int_equal(ctl_record_write_source(&r), WRITE_SOURCE_AUTO);
}

static CtlRecord drift(uint64_t usec, const char *knob, const char *writer, uint64_t pid) {
        CtlRecord r = { .kind = CTL_RECORD_DRIFT, .usec = usec, .pid = pid };

        snprintf(r.knob, sizeof(r.knob), "%s", knob);
        snprintf(r.writer, sizeof(r.writer), "%s", writer);
        return r;
}

static void add(CtlForeign *f, CtlRecord r) {
        assert_int_equal(ctl_foreign_add(f, &r), 0);
}

/* Lock mode's refusals: their own count, the unlogged ones in it, and no write in any knob's summary. */
static void test_refused(void **state) {
        CtlForeign f = { .since_usec = 100 };
        CtlRecord r;

        r = record(300, (const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_REFUSED,
                                               "THPGUARD_KNOB=enabled", "THPGUARD_WRITER=sh",
                                               "THPGUARD_WRITER_PID=4242", "THPGUARD_SUPPRESSED=4", NULL });
        assert_int_equal(r.kind, CTL_RECORD_REFUSED);
        assert_true(r.suppressed == 4);
        add(&f, r);
        r.suppressed = 0;
        r.usec = 400;
        add(&f, r);
        /* A forged huge count saturates, never wraps. */
        r = record(500,
                   (const char *const[]){ "MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_REFUSED, "THPGUARD_WRITER=x",
                                          "THPGUARD_SUPPRESSED=18446744073709551615", NULL });
        add(&f, r);
        add(&f, drift(350, "enabled", "tuned.service", 812));
        ctl_foreign_sort(&f);
        assert_true(f.n_refused == UINT64_MAX);
        assert_true(f.n_drift == 1);
        assert_int_equal(f.n_writers, 3);
        assert_string_equal(f.writers[0].label, "tuned.service");
        assert_true(f.writers[1].n_refused == UINT64_MAX || f.writers[2].n_refused == UINT64_MAX);
        for (size_t i = 0; i < f.n_writers; i++)
                if (strcmp(f.writers[i].label, "sh") == 0) {
                        assert_true(f.writers[i].n_refused == 6);
                        assert_true(f.writers[i].n_drift == 0);
                        assert_true(f.writers[i].last_pid == 4242);
                }
        assert_true(ctl_foreign_knob(&f, "enabled")->n_drift == 1);
        ctl_foreign_done(&f);
}

static void test_group(void **state) {
        CtlForeign f = { .since_usec = 100 };
        CtlRecord r;
        const CtlKnobWrites *k;
        char buf[CTL_FIELD_MAX + 64];

        r = drift(300, "enabled", "tuned.service", 812);
        snprintf(r.unit, sizeof(r.unit), "tuned.service");
        snprintf(r.comm, sizeof(r.comm), "tuned");
        assert_int_equal(ctl_foreign_add(&f, &r), 0);
        add(&f, drift(200, "defrag", "tuned.service", 800));
        /* Later, without the unit: the unit of the earlier record stays, the pid is the latest. */
        add(&f, drift(400, "enabled", "tuned.service", 813));
        add(&f, drift(350, "enabled", "", 0));
        add(&f, drift(360, "defrag", "", 0));
        r = drift(500, "defrag", "sh", 4021);
        r.exited = true;
        assert_int_equal(ctl_foreign_add(&f, &r), 0);
        r.kind = CTL_RECORD_FIGHT;
        r.usec = 510;
        assert_int_equal(ctl_foreign_add(&f, &r), 0);
        /* Before since, and not ours: not counted. */
        add(&f, drift(99, "enabled", "tuned.service", 1));
        r = drift(600, "enabled", "tuned.service", 2);
        r.kind = CTL_RECORD_NONE;
        assert_int_equal(ctl_foreign_add(&f, &r), 0);
        ctl_foreign_sort(&f);

        assert_true(f.n_drift == 6 && f.n_fight == 1 && f.n_drift_unknown == 2);
        assert_int_equal(f.n_writers, 3);
        assert_string_equal(f.writers[0].label, "tuned.service");
        assert_true(f.writers[0].n_drift == 3 && f.writers[0].n_fight == 0);
        assert_true(f.writers[0].first_usec == 200 && f.writers[0].last_usec == 400);
        assert_true(f.writers[0].last_pid == 813);
        assert_string_equal(f.writers[0].unit, "tuned.service");
        assert_string_equal(f.writers[0].comm, ""); /* comm is the latest record's */
        assert_int_equal(f.writers[0].n_knobs, 2);
        assert_string_equal(f.writers[0].knobs[0], "defrag");
        assert_string_equal(f.writers[0].knobs[1], "enabled");
        /* Unknown writers are one group; it sorts by its drift records as any other. */
        assert_string_equal(f.writers[1].label, "");
        assert_true(f.writers[1].n_drift == 2);
        assert_string_equal(f.writers[2].label, "sh");
        assert_true(f.writers[2].n_drift == 1 && f.writers[2].n_fight == 1);
        assert_true(f.writers[2].last_usec == 510 && f.writers[2].last_exited);
        assert_true(f.other.n_drift + f.other.n_fight == 0);

        k = ctl_foreign_knob(&f, "enabled");
        assert_non_null(k);
        assert_true(k->n_drift == 3 && k->n_fight == 0 && k->last_usec == 400 && k->last_pid == 813);
        assert_string_equal(k->last_writer, "tuned.service");
        k = ctl_foreign_knob(&f, "defrag");
        assert_non_null(k);
        assert_true(k->n_drift == 3 && k->n_fight == 1 && k->last_usec == 500);
        assert_string_equal(writer_describe_as(WRITER_FORM_TABLE, k->last_writer, k->last_pid,
                                               k->last_exited, "", buf, sizeof(buf)),
                            "sh (pid 4021, exited)");
        assert_null(ctl_foreign_knob(&f, "shmem_enabled"));
        ctl_foreign_done(&f);
        assert_null(f.writers);
}

static CtlRecord write_source(uint64_t usec, WriteSource s) {
        return (CtlRecord){ .kind = CTL_RECORD_WRITE_SOURCE, .usec = usec, .write_source = s };
}

static void test_group_write_source(void **state) {
        CtlForeign f = { .since_usec = 100 };
        CtlRecord r;

        /* None read: unknown. */
        add(&f, drift(150, "enabled", "tuned.service", 812));
        assert_int_equal(f.write_source, WRITE_SOURCE_AUTO);
        /* Before since too: the daemon logs it once, when it starts. */
        add(&f, write_source(50, WRITE_SOURCE_FANOTIFY));
        assert_int_equal(f.write_source, WRITE_SOURCE_FANOTIFY);
        assert_true(f.write_source_usec == 50);
        /* The latest wins, whatever order they come in. */
        add(&f, write_source(300, WRITE_SOURCE_BPF));
        add(&f, write_source(200, WRITE_SOURCE_NONE));
        assert_int_equal(f.write_source, WRITE_SOURCE_BPF);
        assert_true(f.write_source_usec == 300);
        /* One that says nothing (a bad value, two that disagreed) changes nothing, however late. */
        add(&f, write_source(400, WRITE_SOURCE_AUTO));
        r = write_source(500, WRITE_SOURCE_NONE);
        r.write_source_bad = true;
        add(&f, r);
        /* The field on a drift record is not a write-source record. */
        r = drift(600, "defrag", "tuned.service", 812);
        r.write_source = WRITE_SOURCE_NONE;
        add(&f, r);
        assert_int_equal(f.write_source, WRITE_SOURCE_BPF);
        assert_true(f.write_source_usec == 300);
        /* No write: the counts are the two drift records'. */
        assert_true(f.n_drift == 2 && f.n_fight == 0 && f.n_writers == 1);
        assert_true(ctl_foreign_knob(&f, "enabled")->n_drift == 1);
        ctl_foreign_done(&f);
        assert_int_equal(f.write_source, WRITE_SOURCE_AUTO);

        /* At time 0 (a forged timestamp) it still counts, and the next of the same time wins. */
        f = (CtlForeign){};
        add(&f, write_source(0, WRITE_SOURCE_NONE));
        assert_int_equal(f.write_source, WRITE_SOURCE_NONE);
        add(&f, write_source(0, WRITE_SOURCE_BPF));
        assert_int_equal(f.write_source, WRITE_SOURCE_BPF);
        ctl_foreign_done(&f);
}

static void test_group_order(void **state) {
        CtlForeign f = {};

        /* Equal drift records: more fight warnings first, then the latest, then by name. */
        add(&f, drift(10, "enabled", "b", 1));
        add(&f, drift(10, "enabled", "a", 1));
        add(&f, drift(20, "enabled", "c", 1));
        add(&f, drift(5, "enabled", "d", 1));
        f.writers[3].n_fight = 1;
        ctl_foreign_sort(&f);
        assert_string_equal(f.writers[0].label, "d");
        assert_string_equal(f.writers[1].label, "c");
        assert_string_equal(f.writers[2].label, "a");
        assert_string_equal(f.writers[3].label, "b");
        ctl_foreign_done(&f);
}

static void test_caps(void **state) {
        CtlForeign f = {};
        char label[32], knob[KNOB_PATH_MAX];

        for (int i = 0; i < CTL_WRITERS_MAX + 10; i++) {
                snprintf(label, sizeof(label), "w%d", i);
                add(&f, drift(1000 + (uint64_t)i, "enabled", label, 1));
        }
        /* A writer already listed is still counted as itself. */
        add(&f, drift(5000, "defrag", "w0", 1));
        for (int i = 0; i < CTL_KNOB_WRITES_MAX + 5; i++) {
                snprintf(knob, sizeof(knob), "k%d", i);
                add(&f, drift(2000, knob, "many", 1));
        }
        ctl_foreign_sort(&f);
        assert_int_equal(f.n_writers, CTL_WRITERS_MAX);
        assert_string_equal(f.writers[0].label, "w0");
        assert_true(f.writers[0].n_drift == 2);
        /* "many" came after the list was full: it is in other, with the last 10 of w*. */
        assert_true(f.other.n_drift == 10 + CTL_KNOB_WRITES_MAX + 5);
        assert_int_equal(f.other.n_knobs, CTL_WRITER_KNOBS_MAX);
        assert_true(f.other.knobs_truncated);
        assert_int_equal(f.n_knobs, CTL_KNOB_WRITES_MAX);
        /* enabled, defrag, then k0..k61 fit; k62..k68 do not. */
        assert_true(f.n_knobs_dropped == 7);
        assert_true(f.n_drift == CTL_WRITERS_MAX + 10 + 1 + CTL_KNOB_WRITES_MAX + 5);
        ctl_foreign_done(&f);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_since_relative),
                cmocka_unit_test(test_since_absolute),
                cmocka_unit_test(test_since_bad),
                cmocka_unit_test(test_time),
                cmocka_unit_test(test_field_value),
                cmocka_unit_test(test_field_value_huge),
                cmocka_unit_test(test_record),
                cmocka_unit_test(test_refused),
                cmocka_unit_test(test_record_write_source),
                cmocka_unit_test(test_group),
                cmocka_unit_test(test_group_write_source),
                cmocka_unit_test(test_group_order),
                cmocka_unit_test(test_caps),
        };

        return cmocka_run_group_tests(tests, utc, NULL);
}
