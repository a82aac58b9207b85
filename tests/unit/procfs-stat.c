/* SPDX-License-Identifier: MIT */
/*
 * The parsers behind the khugepaged and PSI metrics, on buffers: real reads
 * from this 6.18 machine, then truncated, overflowing and forged ones.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "thpguard/macro.h"
#include "thpguard/procfs.h"

#define LIT(s) s, sizeof(s) - 1

/* cat /proc/$(pgrep -x khugepaged)/stat on this machine. */
static const char stat_khugepaged[] =
    "18223 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 0 39 19 1 0 1034562 0 0 18446744073709551615 0 "
    "0 0 0 0 0 0 2147483647 0 1 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
/* cat /proc/self/stat: a user process, negative tpgid. */
static const char stat_cat[] =
    "19217 (cat) R 19212 19212 6352 0 -1 4194304 98 0 0 0 0 0 0 0 20 0 1 0 1135748 3133440 380 "
    "18446744073709551615 94915650707456 94915650727337 140732004473360 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 "
    "94915650743344 94915650744960 94915929817088 140732004477562 140732004477582 140732004477582 "
    "140732004478955 0\n";

static void test_stat_real(void **state) {
        ProcStat st;

        assert_int_equal(procfs_parse_stat(LIT(stat_khugepaged), &st), 0);
        assert_int_equal(st.pid, 18223);
        assert_string_equal(st.comm, "khugepaged");
        assert_int_equal(st.ppid, 2);
        assert_true(st.flags & PROCFS_PF_KTHREAD);
        assert_int_equal(st.utime_ticks, 7);
        assert_int_equal(st.stime_ticks, 3);
        assert_int_equal(st.processor, 0);

        assert_int_equal(procfs_parse_stat(LIT(stat_cat), &st), 0);
        assert_string_equal(st.comm, "cat");
        assert_int_equal(st.ppid, 19212);
        assert_false(st.flags & PROCFS_PF_KTHREAD);
        /* The oldest layout we meet (3.10) ends at fewer fields; stime is what we need. */
        assert_int_equal(procfs_parse_stat(LIT("7 (k) S 2 0 0 0 -1 2097216 0 0 0 0 5 6\n"), &st), 0);
        assert_int_equal(st.utime_ticks, 5);
        assert_int_equal(st.stime_ticks, 6);
        assert_int_equal(st.processor, -1);
        /* Field 39, the CPU it last ran on, 6.18's layout with another value there. */
        assert_int_equal(procfs_parse_stat(LIT("7 (k) S 2 0 0 0 -1 2097216 0 0 0 0 5 6 0 0 20 0 1 0 1 0 0 "
                                               "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0\n"),
                                           &st),
                         0);
        assert_int_equal(st.processor, 1);
}

/*
 * A comm is any 15 bytes a process chooses (prctl(PR_SET_NAME)): spaces,
 * ')' and newlines included. Only the last ')' ends it, so a comm that
 * spells out a forged "ppid 2" does not move the fields.
 */
static void test_stat_hostile_comm(void **state) {
        ProcStat st;

        assert_int_equal(
            procfs_parse_stat(LIT("400 (a) S 2 0 0 0 -1 2097216 0 0 0 0 99 99) S 1 400 400 0 -1 "
                                  "4194304 0 0 0 0 1 2 0 0 20 0 1 0 5 0 0\n"),
                              &st),
            0);
        assert_string_equal(st.comm, "a) S 2 0 0 0 -1 2097216 0 0 0 0 99 99");
        assert_int_equal(st.ppid, 1);
        assert_false(st.flags & PROCFS_PF_KTHREAD);
        assert_int_equal(st.utime_ticks, 1);

        /* A newline and control bytes in the comm: kept out of the string we hand back. */
        assert_int_equal(procfs_parse_stat(LIT("401 (x\n\x01y) S 1 0 0 0 -1 0 0 0 0 0 1 2 0 0\n"), &st), 0);
        assert_string_equal(st.comm, "x\\x0a\\x01y");
        /* Empty. */
        assert_int_equal(procfs_parse_stat(LIT("402 () S 1 0 0 0 -1 0 0 0 0 0 1 2\n"), &st), 0);
        assert_string_equal(st.comm, "");
}

static void test_stat_hostile(void **state) {
        static const char *const bad[] = {
                "",
                "\n",
                /* truncated reads */
                "18223 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 0",
                "18223 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7\n",
                "18223 (khugepaged) S\n",
                "18223 (khugepaged)\n",
                "18223 (khugepa\n",
                /* shape */
                "(khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 0\n",
                "x18223 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 0\n",
                "18223 khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 0\n",
                "18223  (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 0\n",
                "18223 (khugepaged)S 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 0\n",
                "18223 (khugepaged) 5 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 0\n",
                "18223 (khugepaged) SS 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 0\n",
                "18223 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 0 \n",
                "18223 (khugepaged) S 2  0 0 0 -1 2097216 0 0 0 0 7 3 0 0\n",
                "18223 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 x\n",
                "18223 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 -\n",
                "18223 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 0\n\n",
                "18223 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 0\n18224 (x) S 2\n",
                /* negative or overflowing where we keep the field */
                "18223 (khugepaged) S -2 0 0 0 -1 2097216 0 0 0 0 7 3 0 0\n",
                "18223 (khugepaged) S 2 0 0 0 -1 -2097216 0 0 0 0 7 3 0 0\n",
                "18223 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 -7 3 0 0\n",
                "18223 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7 -3 0 0\n",
                "18223 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 18446744073709551616 3 0 0\n",
                "18223 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 99999999999999999999\n",
                "18446744073709551616 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 7 3 0 0\n",
                /* a comm longer than the kernel ever prints (64 bytes) */
                "1 (aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa) S 2 0 0 0 -1 0 0 0 0 "
                "0 "
                "1 2\n",
        };
        ProcStat st, poison;

        memset(&poison, 0xa5, sizeof(poison));
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                memcpy(&st, &poison, sizeof(st));
                if (procfs_parse_stat(bad[i], strlen(bad[i]), &st) != -EBADMSG)
                        fail_msg("accepted: %s", bad[i]);
                /* *ret is written only on success. */
                assert_memory_equal(&st, &poison, sizeof(st));
        }
        /* An embedded NUL, and no buffer at all. */
        assert_int_equal(procfs_parse_stat(LIT("1 (a\0b) S 2 0 0 0 -1 0 0 0 0 0 1 2\n"), &st), -EBADMSG);
        assert_int_equal(procfs_parse_stat(NULL, 0, &st), -EBADMSG);
        /* Exactly 64 bytes of comm is still one the kernel could print. */
        assert_int_equal(
            procfs_parse_stat(LIT("1 (aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa) S "
                                  "2 0 0 0 -1 0 0 0 0 0 1 2\n"),
                              &st),
            0);
        /* The largest tick counts parse; what to do with them is the caller's business. */
        assert_int_equal(procfs_parse_stat(LIT("1 (k) S 2 0 0 0 -1 0 0 0 0 0 18446744073709551615 "
                                               "18446744073709551615\n"),
                                           &st),
                         0);
        assert_true(st.utime_ticks == UINT64_MAX && st.stime_ticks == UINT64_MAX);
}

/* cat /proc/pressure/memory and /proc/pressure/io on this machine (6.18, psi=1). */
static const char pressure_memory[] = "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                                      "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
static const char pressure_io[] = "some avg10=0.26 avg60=0.33 avg300=2.14 total=828138668\n"
                                  "full avg10=0.07 avg60=0.20 avg300=1.52 total=243974335\n";

static void test_pressure_real(void **state) {
        ProcPressure p;

        assert_int_equal(procfs_parse_pressure(LIT(pressure_memory), &p), 0);
        assert_int_equal(p.some_total_usec, 0);
        assert_int_equal(p.full_total_usec, 0);
        assert_int_equal(procfs_parse_pressure(LIT(pressure_io), &p), 0);
        assert_int_equal(p.some_total_usec, 828138668);
        assert_int_equal(p.full_total_usec, 243974335);
        assert_int_equal(p.some_avg10_centi, 26);
        assert_int_equal(p.full_avg10_centi, 7);
        /* /proc/pressure/cpu before 5.13: no "full" line. */
        assert_int_equal(procfs_parse_pressure(LIT("some avg10=1.00 avg60=0.50 avg300=0.10 total=42\n"), &p),
                         0);
        assert_int_equal(p.some_total_usec, 42);
        assert_int_equal(p.full_total_usec, PROCFS_UNKNOWN);
        assert_int_equal(p.some_avg10_centi, 100);
        assert_int_equal(p.full_avg10_centi, PROCFS_UNKNOWN);
        /* avg10 of another shape than the kernel's N.NN is unknown, not an error; so is a missing one. */
        assert_int_equal(procfs_parse_pressure(LIT("some avg10=1.5 total=1\nfull total=2\n"), &p), 0);
        assert_int_equal(p.some_avg10_centi, PROCFS_UNKNOWN);
        assert_int_equal(p.full_avg10_centi, PROCFS_UNKNOWN);
        assert_int_equal(procfs_parse_pressure(LIT("some avg10=100.00 total=1\n"), &p), 0);
        assert_int_equal(p.some_avg10_centi, 10000);
        /* A kind or a key a later kernel may add is checked and passed over. */
        assert_int_equal(procfs_parse_pressure(LIT("some avg10=0.00 total=5 avg3600=0.00\n"
                                                   "most avg10=0.00 total=9\n"
                                                   "full total=6\n"),
                                               &p),
                         0);
        assert_int_equal(p.some_total_usec, 5);
        assert_int_equal(p.full_total_usec, 6);
        /* The largest total there is. */
        assert_int_equal(procfs_parse_pressure(LIT("some total=18446744073709551615\n"), &p), 0);
        assert_true(p.some_total_usec == UINT64_MAX);
}

static void test_pressure_hostile(void **state) {
        static const char *const bad[] = {
                "",
                "\n",
                /* truncated reads */
                "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 "
                "total=0",
                "some avg10=0.00 avg60=0.00 avg300=0.00 total=\n",
                "some avg10=0.00 avg60=0.00 avg300=0.00 tot\n",
                "some avg10=0.00 avg60=0.00\n",
                "some\n",
                /* "some" is required, each kind once, total once */
                "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
                "some total=1\nsome total=2\n",
                "some total=1\nfull total=2\nfull total=3\n",
                "some total=1 total=2\n",
                /* shape */
                "some avg10=0.00 avg60=0.00 avg300=0.00 total=0 \n",
                "some  avg10=0.00 total=0\n",
                " some avg10=0.00 total=0\n",
                "some\tavg10=0.00 total=0\n",
                "Some avg10=0.00 total=0\n",
                "some avg10 total=0\n",
                "some =0.00 total=0\n",
                "some avg10= total=0\n",
                "some avg10=0,00 total=0\n",
                "some avg10=-1.00 total=0\n",
                "some TOTAL=0 total=1\n",
                "some total=-1\n",
                "some total=0x10\n",
                "some total=18446744073709551616\n",
                "some total=1\n\n",
                "some total=1\nfull total=2\ngarbage\n",
        };
        ProcPressure p, poison;

        memset(&poison, 0xa5, sizeof(poison));
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                memcpy(&p, &poison, sizeof(p));
                if (procfs_parse_pressure(bad[i], strlen(bad[i]), &p) != -EBADMSG)
                        fail_msg("accepted: %s", bad[i]);
                assert_memory_equal(&p, &poison, sizeof(p));
        }
        assert_int_equal(procfs_parse_pressure(LIT("some total=1\0\n"), &p), -EBADMSG);
        assert_int_equal(procfs_parse_pressure(NULL, 0, &p), -EBADMSG);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_stat_real),        cmocka_unit_test(test_stat_hostile_comm),
                cmocka_unit_test(test_stat_hostile),     cmocka_unit_test(test_pressure_real),
                cmocka_unit_test(test_pressure_hostile),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
