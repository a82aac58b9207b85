/* SPDX-License-Identifier: MIT */
/*
 * The rates of `thpguardctl watch`, from fixture samples: two reads of
 * /proc/vmstat (the second from a kernel that went backwards on one counter
 * and lacks another), khugepaged, PSI and the per-size stats; then who grew,
 * and how often the process scan may run.
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

#include "thp-rates.h"
#include "thpguard/macro.h"
#include "thpguard/procfs.h"

#define LIT(s) s, sizeof(s) - 1

/* A 6.18 /proc/vmstat's THP and compaction lines, abridged. */
static const char vmstat_before[] = "nr_anon_transparent_hugepages 100\n"
                                    "compact_stall 50\n"
                                    "compact_fail 10\n"
                                    "compact_success 40\n"
                                    "thp_fault_alloc 1000\n"
                                    "thp_fault_fallback 20\n"
                                    "thp_collapse_alloc 7\n"
                                    "thp_collapse_alloc_failed 1\n"
                                    "thp_split_page 3\n"
                                    "thp_deferred_split_page 5\n"
                                    "thp_underused_split_page 0\n";
/* Two seconds later: compact_stall went backwards (a reset), thp_underused_split_page is gone. */
static const char vmstat_after[] = "nr_anon_transparent_hugepages 164\n"
                                   "compact_stall 8\n"
                                   "compact_fail 10\n"
                                   "compact_success 44\n"
                                   "thp_fault_alloc 1064\n"
                                   "thp_fault_fallback 20\n"
                                   "thp_collapse_alloc 9\n"
                                   "thp_collapse_alloc_failed 1\n"
                                   "thp_split_page 3\n"
                                   "thp_deferred_split_page 11\n";

static void sample_from(const char *vmstat, size_t len, ThpSample *ret) {
        ProcVmstat *v = malloc(sizeof(*v));

        assert_non_null(v);
        assert_int_equal(procfs_parse_vmstat(vmstat, len, v), 0);
        thp_sample_init(ret);
        thp_sample_take_vmstat(ret, v);
        free(v);
}

static void assert_rate(ThpRate r, ThpRateState state, double per_sec) {
        assert_int_equal(r.state, state);
        assert_true(r.per_sec >= 0);
        /* Relative: the largest counters are beyond a double's 53 bits. */
        assert_true(r.per_sec >= per_sec - per_sec * 1e-12 - 1e-9 &&
                    r.per_sec <= per_sec + per_sec * 1e-12 + 1e-9);
}

static void test_rates_fixture(void **state) {
        ThpSample a, b;
        ThpRates r;

        sample_from(LIT(vmstat_before), &a);
        sample_from(LIT(vmstat_after), &b);
        a.counters[THP_COUNTER_PAGES_COLLAPSED] = 100;
        b.counters[THP_COUNTER_PAGES_COLLAPSED] = 102;
        a.counters[THP_COUNTER_FULL_SCANS] = 4;
        b.counters[THP_COUNTER_FULL_SCANS] = 5;
        a.khugepaged_pid = b.khugepaged_pid = 61;
        a.counters[THP_COUNTER_KHUGEPAGED_CPU_USEC] = 1000000;
        b.counters[THP_COUNTER_KHUGEPAGED_CPU_USEC] = 1100000; /* 0.1 s of 2 s: 5 % */
        a.counters[THP_COUNTER_PSI_SOME_USEC] = 500;
        b.counters[THP_COUNTER_PSI_SOME_USEC] = 4500;
        /* This kernel's PSI has no "full" line (the second sample); the first had one. */
        a.counters[THP_COUNTER_PSI_FULL_USEC] = 100;
        b.psi_some_avg10_centi = 26;
        a.anon_huge_pages_kb = 204800;
        b.anon_huge_pages_kb = 200704;
        a.n_sizes = b.n_sizes = 4;
        a.sizes[0] = (ThpSizeSample){ 64, 10, 4, 7 };
        b.sizes[0] = (ThpSizeSample){ 64, 30, 2, 13 }; /* fallback went backwards */
        a.sizes[1] = (ThpSizeSample){ 2048, 5, PROCFS_UNKNOWN, PROCFS_UNKNOWN };
        b.sizes[1] = (ThpSizeSample){ 2048, 9, PROCFS_UNKNOWN, PROCFS_UNKNOWN };
        /* 16 kB: 6 faults in 2 s, 2 of them fallbacks. And 32 kB, which took no fault. */
        a.sizes[2] = (ThpSizeSample){ 16, 100, 50, 0 };
        b.sizes[2] = (ThpSizeSample){ 16, 104, 52, 0 };
        a.sizes[3] = (ThpSizeSample){ 32, 8, 8, 8 };
        b.sizes[3] = (ThpSizeSample){ 32, 8, 8, 8 };

        assert_int_equal(thp_rates_compute(&a, &b, 2000000, &r), 0);
        assert_true(r.elapsed_sec == 2.0);
        assert_rate(r.counters[THP_COUNTER_FAULT_ALLOC], THP_RATE_OK, 32);
        assert_rate(r.counters[THP_COUNTER_FAULT_FALLBACK], THP_RATE_OK, 0);
        assert_rate(r.counters[THP_COUNTER_COLLAPSE_ALLOC], THP_RATE_OK, 1);
        assert_rate(r.counters[THP_COUNTER_DEFERRED_SPLIT_PAGE], THP_RATE_OK, 3);
        /* The counter that decreased: no negative rate, counted from 0 as after a reset. */
        assert_rate(r.counters[THP_COUNTER_COMPACT_STALL], THP_RATE_RESET, 4);
        assert_rate(r.counters[THP_COUNTER_COMPACT_SUCCESS], THP_RATE_OK, 2);
        /* A counter the kernel lacks is absent, not 0. */
        assert_rate(r.counters[THP_COUNTER_UNDERUSED_SPLIT_PAGE], THP_RATE_ABSENT, 0);
        assert_rate(r.counters[THP_COUNTER_PAGES_COLLAPSED], THP_RATE_OK, 1);
        assert_rate(r.counters[THP_COUNTER_FULL_SCANS], THP_RATE_OK, 0.5);
        assert_rate(r.counters[THP_COUNTER_KHUGEPAGED_CPU_USEC], THP_RATE_OK, 50000);
        assert_rate(r.counters[THP_COUNTER_PSI_SOME_USEC], THP_RATE_OK, 2000);
        assert_rate(r.counters[THP_COUNTER_PSI_FULL_USEC], THP_RATE_ABSENT, 0);
        assert_int_equal(r.psi_some_avg10_centi, 26);
        assert_int_equal(r.psi_full_avg10_centi, PROCFS_UNKNOWN);
        assert_true(r.anon_huge_pages_change_known);
        assert_int_equal(r.anon_huge_pages_change_kb, -4096);
        assert_int_equal(r.anon_huge_pages_kb, 200704);
        assert_int_equal(r.n_sizes, 4);
        assert_int_equal(r.sizes[0].size_kb, 64);
        assert_rate(r.sizes[0].anon_fault_alloc, THP_RATE_OK, 10);
        assert_rate(r.sizes[0].anon_fault_fallback, THP_RATE_RESET, 1);
        assert_rate(r.sizes[0].split, THP_RATE_OK, 3);
        /* From the rates, a reset's too: 1 of 11 a second. */
        assert_true(r.sizes[0].fallback_ratio_known);
        assert_true(r.sizes[0].fallback_ratio == 1.0 / 11);
        assert_rate(r.sizes[1].anon_fault_alloc, THP_RATE_OK, 2);
        assert_rate(r.sizes[1].anon_fault_fallback, THP_RATE_ABSENT, 0);
        assert_rate(r.sizes[1].split, THP_RATE_ABSENT, 0);
        /* A fallback counter the kernel lacks: no ratio, not 0. */
        assert_false(r.sizes[1].fallback_ratio_known);
        assert_true(r.sizes[2].fallback_ratio_known);
        assert_true(r.sizes[2].fallback_ratio == 2.0 / 6);
        assert_rate(r.sizes[2].split, THP_RATE_OK, 0);
        /* No fault of that size in the interval: 0 / 0 is no ratio. */
        assert_rate(r.sizes[3].anon_fault_alloc, THP_RATE_OK, 0);
        assert_false(r.sizes[3].fallback_ratio_known);

        /* Every rate of every pair of these samples, either way round, is >= 0. */
        assert_int_equal(thp_rates_compute(&b, &a, 1000000, &r), 0);
        for (size_t i = 0; i < _THP_COUNTER_MAX; i++)
                assert_true(r.counters[i].per_sec >= 0);
        assert_rate(r.counters[THP_COUNTER_FAULT_ALLOC], THP_RATE_RESET, 1000);
        assert_rate(r.counters[THP_COUNTER_UNDERUSED_SPLIT_PAGE], THP_RATE_ABSENT, 0);

        assert_int_equal(thp_rates_compute(&a, &b, 0, &r), -EINVAL);
}

static void test_rates_absent(void **state) {
        ThpSample a, b;
        ThpRates r;

        /* A kernel with no THP lines in vmstat at all, no khugepaged, no PSI, no sizes. */
        sample_from(LIT("nr_free_pages 1\n"), &a);
        sample_from(LIT("nr_free_pages 1\n"), &b);
        assert_int_equal(thp_rates_compute(&a, &b, 1000000, &r), 0);
        for (size_t i = 0; i < _THP_COUNTER_MAX; i++) {
                assert_int_equal(r.counters[i].state, THP_RATE_ABSENT);
                assert_true(r.counters[i].per_sec == 0);
                assert_non_null(thp_counter_name((ThpCounter)i));
        }
        assert_false(r.anon_huge_pages_change_known);
        assert_int_equal(r.anon_huge_pages_kb, PROCFS_UNKNOWN);
        assert_int_equal(r.n_sizes, 0);
        assert_null(thp_counter_name(_THP_COUNTER_MAX));

        /* A size only the second sample has is absent for this interval. */
        b.n_sizes = 1;
        b.sizes[0] = (ThpSizeSample){ 16, 3, 3, 3 };
        assert_int_equal(thp_rates_compute(&a, &b, 1000000, &r), 0);
        assert_int_equal(r.n_sizes, 1);
        assert_int_equal(r.sizes[0].anon_fault_alloc.state, THP_RATE_ABSENT);
        assert_int_equal(r.sizes[0].split.state, THP_RATE_ABSENT);
        assert_false(r.sizes[0].fallback_ratio_known);
}

static void test_rates_khugepaged_restart(void **state) {
        ThpSample a, b;
        ThpRates r;

        thp_sample_init(&a);
        thp_sample_init(&b);
        /* THP turned off and on: another khugepaged, which has used 0.2 s already, more than the old one. */
        a.khugepaged_pid = 61;
        a.counters[THP_COUNTER_KHUGEPAGED_CPU_USEC] = 100000;
        b.khugepaged_pid = 4242;
        b.counters[THP_COUNTER_KHUGEPAGED_CPU_USEC] = 200000;
        assert_int_equal(thp_rates_compute(&a, &b, 1000000, &r), 0);
        assert_rate(r.counters[THP_COUNTER_KHUGEPAGED_CPU_USEC], THP_RATE_RESET, 200000);
        /* The largest counter there is going to 0 is a reset, not a huge negative number. */
        assert_rate(thp_rate(UINT64_MAX - 1, 0, 1000000), THP_RATE_RESET, 0);
        assert_rate(thp_rate(0, UINT64_MAX - 1, 1000000), THP_RATE_OK, (double)(UINT64_MAX - 1));
        assert_rate(thp_rate(PROCFS_UNKNOWN, 5, 1000000), THP_RATE_ABSENT, 0);
}

static void test_growth(void **state) {
        ThpProcSample prev[] = {
                { 300, 4096, "redis-server" },
                { 100, 2048, "java" },
                { 200, 8192, "postgres" },
                { 500, 2048, "old-name" },
        };
        ThpProcSample cur[] = {
                { 100, 10240, "java" },        /* +8192 */
                { 200, 8192, "postgres" },     /* no change: not listed */
                { 300, 2048, "redis-server" }, /* shrank: not listed */
                { 400, 4096, "go-service" },   /* new: from 0 */
                { 500, 4096, "new-name" },     /* pid reused: from 0 */
                { 600, 6144, "ruby" },         /* new */
        };
        ThpProcGrowth top[3];
        size_t n;

        thp_proc_samples_sort(prev, ELEMENTSOF(prev));
        assert_int_equal(prev[0].pid, 100);
        assert_int_equal(prev[3].pid, 500);
        n = thp_growth_top(prev, ELEMENTSOF(prev), cur, ELEMENTSOF(cur), 3, top);
        assert_int_equal(n, 3);
        assert_int_equal(top[0].pid, 100);
        assert_int_equal(top[0].growth_kb, 8192);
        assert_int_equal(top[0].anon_huge_pages_kb, 10240);
        assert_string_equal(top[0].name, "java");
        assert_int_equal(top[1].pid, 600);
        assert_int_equal(top[1].growth_kb, 6144);
        /* 400 and 500 both grew 4096 from 0, now 4096: the lower pid first. */
        assert_int_equal(top[2].pid, 400);

        n = thp_growth_top(prev, ELEMENTSOF(prev), cur, ELEMENTSOF(cur), 10, (ThpProcGrowth[10]){});
        assert_int_equal(n, 4);
        assert_int_equal(thp_growth_top(prev, ELEMENTSOF(prev), cur, ELEMENTSOF(cur), 0, top), 0);
        /* No previous scan: everyone grew from 0. */
        n = thp_growth_top(NULL, 0, cur, ELEMENTSOF(cur), 3, top);
        assert_int_equal(n, 3);
        assert_int_equal(top[0].pid, 100);
        assert_int_equal(top[1].pid, 200);
        /* Nobody grew. */
        assert_int_equal(thp_growth_top(cur, ELEMENTSOF(cur), cur, ELEMENTSOF(cur), 3, top), 0);
}

static void test_scan_every(void **state) {
        /* 30 ms of CPU at 1 s with 3 %: every interval. */
        assert_int_equal(thp_scan_every(30000, 1000000, 30), 1);
        assert_int_equal(thp_scan_every(0, 1000000, 30), 1);
        /* 31 ms: every second interval. */
        assert_int_equal(thp_scan_every(31000, 1000000, 30), 2);
        assert_int_equal(thp_scan_every(90000, 1000000, 30), 3);
        /* Slower than any budget: capped. */
        assert_int_equal(thp_scan_every(UINT64_MAX, 1000000, 30), THP_SCAN_EVERY_MAX);
        assert_int_equal(thp_scan_every(1000, 0, 30), THP_SCAN_EVERY_MAX);
        assert_int_equal(thp_scan_every(1000, 100, 30), THP_SCAN_EVERY_MAX);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rates_fixture),
                cmocka_unit_test(test_rates_absent),
                cmocka_unit_test(test_rates_khugepaged_restart),
                cmocka_unit_test(test_growth),
                cmocka_unit_test(test_scan_every),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
