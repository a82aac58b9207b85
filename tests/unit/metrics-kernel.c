/* SPDX-License-Identifier: MIT */
/*
 * The kernel's figures for the metrics file on a fake proc root: meminfo,
 * vmstat, memory pressure, and khugepaged's CPU time among impostors
 * (src/metrics-kernel.c).
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

#include "scratch-dir.h"

#include "thpguard/macro.h"
#include "thpguard/metrics.h"

#define SEC UINT64_C(1000000)

static void test_vmstat_filter(void **state) {
        assert_true(metrics_vmstat_is_exported("thp_fault_alloc"));
        assert_true(metrics_vmstat_is_exported("thp_split_pmd"));
        assert_true(metrics_vmstat_is_exported("compact_stall"));
        assert_false(metrics_vmstat_is_exported("compact_fail"));
        assert_false(metrics_vmstat_is_exported("nr_anon_transparent_hugepages"));
        assert_false(metrics_vmstat_is_exported("thp"));
}

static void test_read_kernel(void **state) {
        _cleanup_free_ char *dir = tmpdir();
        MetricsKernel k;

        write_text(dir, "meminfo",
                   "MemTotal:       24683620 kB\n"
                   "MemFree:        23515108 kB\n"
                   "AnonHugePages:     10240 kB\n"
                   "ShmemHugePages:     2048 kB\n"
                   "ShmemPmdMapped:        0 kB\n");
        write_text(dir, "vmstat",
                   "nr_free_pages 5878777\n"
                   "nr_anon_transparent_hugepages 5\n"
                   "compact_stall 7\n"
                   "compact_fail 2\n"
                   "thp_fault_alloc 100\n"
                   "thp_fault_fallback 3\n"
                   "thp_split_pmd 1\n");
        assert_int_equal(metrics_read_kernel(dir, &k), 0);
        assert_int_equal(k.anon_huge_pages_bytes, 10240 * 1024);
        assert_int_equal(k.shmem_huge_pages_bytes, 2048 * 1024);
        assert_int_equal(k.n_vmstat, 4);
        assert_string_equal(k.vmstat[0].name, "compact_stall");
        assert_int_equal(k.vmstat[0].value, 7);
        assert_string_equal(k.vmstat[1].name, "thp_fault_alloc");
        assert_int_equal(k.vmstat[1].value, 100);
        assert_string_equal(k.vmstat[3].name, "thp_split_pmd");

        /* An old kernel without ShmemHugePages: that one stays unknown. */
        write_text(dir, "meminfo", "MemTotal:       1000 kB\nAnonHugePages:     0 kB\n");
        assert_int_equal(metrics_read_kernel(dir, &k), 0);
        assert_int_equal(k.anon_huge_pages_bytes, 0);
        assert_int_equal(k.shmem_huge_pages_bytes, METRICS_UNKNOWN);

        /* A truncated read is refused, not half believed. */
        write_text(dir, "meminfo", "MemTotal:       1000 kB\nAnonHugePages:     0");
        assert_int_equal(metrics_read_kernel(dir, &k), -EBADMSG);
        assert_int_equal(k.anon_huge_pages_bytes, METRICS_UNKNOWN);
        assert_int_equal(k.n_vmstat, 4);
        remove_tree(dir);

        /* No such proc root: everything unknown, the first error returned. */
        assert_int_equal(metrics_read_kernel("/nonexistent-thpguard-proc", &k), -ENOENT);
        assert_int_equal(k.anon_huge_pages_bytes, METRICS_UNKNOWN);
        assert_int_equal(k.n_vmstat, 0);
}

/* A PSI file next to meminfo and vmstat: its totals; without one (before 4.20): left out, no error. */
static void test_read_kernel_pressure(void **state) {
        _cleanup_free_ char *dir = tmpdir();
        char sub[512];
        MetricsKernel k;

        write_text(dir, "meminfo", "MemTotal:       1000 kB\nAnonHugePages:     0 kB\n");
        write_text(dir, "vmstat", "thp_fault_alloc 1\n");
        assert_int_equal(metrics_read_kernel(dir, &k), 0);
        assert_true(k.memory_some_stall_usec == METRICS_UNKNOWN);
        assert_true(k.memory_full_stall_usec == METRICS_UNKNOWN);
        assert_true(k.khugepaged_cpu_usec == METRICS_UNKNOWN);

        snprintf(sub, sizeof(sub), "%s/pressure", dir);
        assert_int_equal(mkdir(sub, 0755), 0);
        write_text(dir, "pressure/memory",
                   "some avg10=34.99 avg60=28.47 avg300=17.88 total=6819663209\n"
                   "full avg10=0.00 avg60=0.00 avg300=0.00 total=12\n");
        assert_int_equal(metrics_read_kernel(dir, &k), 0);
        assert_int_equal(k.memory_some_stall_usec, UINT64_C(6819663209));
        assert_int_equal(k.memory_full_stall_usec, 12);
        assert_int_equal(k.anon_huge_pages_bytes, 0);

        /* A truncated read: refused, reported, and the other figures still read. */
        write_text(dir, "pressure/memory", "some avg10=34.99 avg60=28.47 avg300=17.88 total=68196");
        assert_int_equal(metrics_read_kernel(dir, &k), -EBADMSG);
        assert_true(k.memory_some_stall_usec == METRICS_UNKNOWN);
        assert_int_equal(k.n_vmstat, 1);
        remove_tree(dir);
}

/* proc_root/PID/stat with the given text. */
static void write_stat(const char *proc, const char *pid, const char *text) {
        char d[512], rel[64];

        snprintf(d, sizeof(d), "%s/%s", proc, pid);
        (void)mkdir(d, 0555);
        snprintf(rel, sizeof(rel), "%s/stat", pid);
        write_text(proc, rel, text);
}

static uint64_t ticks_usec(uint64_t ticks) {
        long hz = sysconf(_SC_CLK_TCK);

        assert_true(hz > 0);
        return ticks * 1000000 / (uint64_t)hz;
}

/*
 * A fake proc root with impostors: user processes named khugepaged, one
 * whose comm forges the fields after it, one with parent 2 but no
 * PF_KTHREAD (a PID namespace), a stat naming another pid, a "007"
 * directory. Only the kernel thread counts; its pid is kept and re-checked.
 */
static void test_read_khugepaged(void **state) {
        _cleanup_free_ char *proc = tmpdir();
        MetricsKhugepaged cache = {};
        const uint64_t t0 = 1000 * SEC;
        uint64_t usec = 0;

        write_stat(proc, "1", "1 (systemd) S 0 1 1 0 -1 4194560 1 2 3 4 500 600 0 0 20 0 1 0 1 0 0\n");
        write_stat(proc, "2", "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 21 0 0 20 0 1 0 14 0 0\n");
        write_stat(proc, "50",
                   "50 (khugepaged) R 1 50 50 0 -1 4194304 0 0 0 0 9000 9000 0 0 20 0 1 0 5 0 0\n");
        write_stat(proc, "51",
                   "51 (khugepaged) S 2 0 0 0 -1 4194304 0 0 0 0 9000 9000 0 0 20 0 1 0 5 0 0\n");
        write_stat(
            proc, "52",
            "52 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 99) S 2 0 0 0 -1 2097216 0 0 0 0 9000 9000 0 "
            "0 20 0 1 0 5 0 0\n");
        write_stat(proc, "53",
                   "99 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 9000 9000 0 0 39 19 1 0 5 0 0\n");
        write_stat(proc, "007",
                   "7 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 9000 9000 0 0 39 19 1 0 5 0 0\n");
        write_stat(proc, "self",
                   "60 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 9000 9000 0 0 39 19 1 0 5 0 0\n");
        assert_int_equal(metrics_read_khugepaged(proc, &cache, t0, &usec), -ENOENT);
        assert_int_equal(usec, 0); /* written only on success */
        assert_int_equal(cache.pid, 0);

        /* Before the rescan interval has passed, a new khugepaged is not looked for ... */
        write_stat(proc, "60", "60 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 250 50 0 0 39 19 1 0 5 0 0\n");
        assert_int_equal(metrics_read_khugepaged(proc, &cache, t0 + SEC, &usec), -ENOENT);
        /* ... after it, it is found. */
        assert_int_equal(metrics_read_khugepaged(proc, &cache, t0 + METRICS_KHUGEPAGED_RESCAN_USEC, &usec),
                         0);
        assert_int_equal(cache.pid, 60);
        assert_int_equal(usec, ticks_usec(300));

        /* The kept pid is read first: another khugepaged in the tree is not even looked at. */
        write_stat(proc, "70", "70 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 1 1 0 0 39 19 1 0 5 0 0\n");
        write_stat(proc, "60", "60 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 350 50 0 0 39 19 1 0 5 0 0\n");
        assert_int_equal(metrics_read_khugepaged(proc, &cache, t0 + 2 * SEC, &usec), 0);
        assert_int_equal(usec, ticks_usec(400));
        assert_int_equal(cache.pid, 60);

        /* The kept pid now belongs to something else (THP off and on: a new khugepaged): found at once. */
        write_stat(proc, "60", "60 (bash) S 1 0 0 0 -1 4194304 0 0 0 0 350 50 0 0 20 0 1 0 5 0 0\n");
        assert_int_equal(metrics_read_khugepaged(proc, &cache, t0 + 3 * SEC, &usec), 0);
        assert_int_equal(cache.pid, 70);
        assert_int_equal(usec, ticks_usec(2));

        /* Ticks that overflow microseconds: no value rather than a wrong one. */
        write_stat(
            proc, "70",
            "70 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 18446744073709551615 1 0 0 39 19 1 0 5 0 0\n");
        usec = 0;
        assert_int_equal(metrics_read_khugepaged(proc, &cache, t0 + 4 * SEC, &usec), -EOVERFLOW);
        assert_int_equal(usec, 0);
        remove_tree(proc);
}

/*
 * A proc tree like an old or THP-less kernel's: meminfo and vmstat, no
 * pressure/ and no khugepaged. Both stay unknown, which the metrics file
 * leaves out (metrics.c's test_kernel_metrics_absent).
 */
static void test_kernel_metrics_absent(void **state) {
        _cleanup_free_ char *proc = tmpdir();
        MetricsKhugepaged cache = {};
        MetricsKernel k;

        write_text(proc, "meminfo", "MemTotal:       1000 kB\nAnonHugePages:     2048 kB\n");
        write_text(proc, "vmstat", "thp_fault_alloc 1\n");
        write_stat(proc, "1", "1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 500 600 0 0 20 0 1 0 1 0 0\n");
        write_stat(proc, "2", "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 21 0 0 20 0 1 0 14 0 0\n");
        assert_int_equal(metrics_read_kernel(proc, &k), 0);
        assert_int_equal(metrics_read_khugepaged(proc, &cache, SEC, &k.khugepaged_cpu_usec), -ENOENT);
        assert_int_equal(k.anon_huge_pages_bytes, 2097152);
        assert_true(k.khugepaged_cpu_usec == METRICS_UNKNOWN);
        assert_true(k.memory_some_stall_usec == METRICS_UNKNOWN);
        assert_true(k.memory_full_stall_usec == METRICS_UNKNOWN);
        remove_tree(proc);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_vmstat_filter),         cmocka_unit_test(test_read_kernel),
                cmocka_unit_test(test_read_kernel_pressure),  cmocka_unit_test(test_read_khugepaged),
                cmocka_unit_test(test_kernel_metrics_absent),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
