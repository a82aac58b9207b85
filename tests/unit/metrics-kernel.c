/* SPDX-License-Identifier: MIT */
/*
 * The kernel's figures for the metrics file on a fake proc root: meminfo,
 * vmstat, memory pressure, and khugepaged's CPU time among impostors; and
 * the per-size stats on the 6.18 and 6.1 fixture trees and on a forged one
 * (src/shared/metrics-kernel.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch-dir.h"
#include "tree.h"

#include "metrics.h"
#include "thpguard/macro.h"

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

static const char *const stats_618[] = {
        "anon_fault_alloc",
        "anon_fault_declined",
        "anon_fault_fallback",
        "anon_fault_fallback_charge",
        "nr_anon",
        "nr_anon_partially_mapped",
        "shmem_alloc",
        "shmem_fallback",
        "shmem_fallback_charge",
        "split",
        "split_deferred",
        "split_failed",
        "swpin",
        "swpin_fallback",
        "swpin_fallback_charge",
        "swpout",
        "swpout_fallback",
        "zswpout",
};

static const ProcCounter *size_stat(const MetricsSize *z, const char *name) {
        for (size_t i = 0; i < z->n_stats; i++)
                if (strcmp(z->stats[i].name, name) == 0)
                        return &z->stats[i];
        return NULL;
}

static MetricsKernel *kernel_new(void) {
        MetricsKernel *k = malloc(sizeof(*k));

        assert_non_null(k);
        memset(k, 0xa5, sizeof(*k)); /* the reader must set what it reports */
        return k;
}

/*
 * The 6.18 fixture, a copy of this machine's tree: nine sizes, ascending;
 * every stats/ file of 16 kB to 2 MiB, by name; 8 kB's shorter stats/ (no
 * anon_* and no nr_*: the kernel has no 8 kB anonymous THP on x86).
 */
static void test_sizes_618(void **state) {
        static const uint64_t sizes[] = { 8, 16, 32, 64, 128, 256, 512, 1024, 2048 };
        _cleanup_free_ MetricsKernel *k = kernel_new();
        char root[4096];

        snprintf(root, sizeof(root), "%s/6.18", getenv("FIXTURES"));
        assert_int_equal(metrics_read_sizes(root, k), 0);
        assert_int_equal(k->n_sizes, ELEMENTSOF(sizes));
        for (size_t i = 0; i < ELEMENTSOF(sizes); i++)
                assert_int_equal(k->sizes[i].size_kb, sizes[i]);
        for (size_t i = 1; i < ELEMENTSOF(sizes); i++) {
                assert_int_equal(k->sizes[i].n_stats, ELEMENTSOF(stats_618));
                for (size_t j = 0; j < ELEMENTSOF(stats_618); j++) {
                        assert_string_equal(k->sizes[i].stats[j].name, stats_618[j]);
                        assert_int_equal(k->sizes[i].stats[j].value, 0);
                }
        }
        assert_int_equal(k->sizes[0].n_stats, 11);
        assert_null(size_stat(&k->sizes[0], "anon_fault_alloc"));
        assert_null(size_stat(&k->sizes[0], "nr_anon"));
        assert_non_null(size_stat(&k->sizes[0], "split"));
        assert_non_null(size_stat(&k->sizes[0], "zswpout"));
}

/* Kernels before 6.8 (the 6.1 and 5.15 fixtures, EL7's): no hugepages-*, no sizes, no error. */
static void test_sizes_absent(void **state) {
        static const char *const trees[] = { "6.1", "5.15", "el7-3.10" };
        _cleanup_free_ MetricsKernel *k = kernel_new();
        char root[4096];

        for (size_t i = 0; i < ELEMENTSOF(trees); i++) {
                snprintf(root, sizeof(root), "%s/%s", getenv("FIXTURES"), trees[i]);
                k->n_sizes = 99;
                assert_int_equal(metrics_read_sizes(root, k), 0);
                assert_int_equal(k->n_sizes, 0);
        }
        /* A root without a THP directory at all: said so, and none. */
        k->n_sizes = 99;
        assert_int_equal(metrics_read_sizes("/nonexistent-thpguard-sys", k), -ENOENT);
        assert_int_equal(k->n_sizes, 0);
}

static void tree_link(const Tree *t, const char *target, const char *rel) {
        char p[256];

        path_of(t, rel, p, sizeof(p));
        assert_int_equal(symlink(target, p), 0);
}

/*
 * A forged tree: the values are read; what the kernel never names so (a
 * name with a capital, a blank, a quote, a dot, too long), what is no
 * number (a sign, a letter, too long, empty, two lines), what is no regular
 * file (a FIFO: never opened, so never waited on; a directory; a symbolic
 * link, to a file or as the stats/ directory or the size's directory
 * itself) and what is no size's directory (a leading zero, no digits, 11
 * digits) is left out; a 6.8-style size (stats/ with anon_* only) and a
 * size without stats/ (a kernel that has the knobs but not the stats).
 */
static void test_sizes_forged(void **state) {
        _cleanup_free_ MetricsKernel *k = kernel_new();
        Tree *t = tree_new("sizes");
        char rel[160], p[256], longname[80];
        const MetricsSize *z;
        struct timespec t0, t1;

        make_dir(t, THP "/hugepages-2048kB");
        make_dir(t, THP "/hugepages-2048kB/stats");
        put(t, THP "/hugepages-2048kB/stats/anon_fault_alloc", "123456789012\n");
        put(t, THP "/hugepages-2048kB/stats/anon_fault_fallback", "7\n");
        put(t, THP "/hugepages-2048kB/stats/nr_anon", "3\n");
        put(t, THP "/hugepages-2048kB/stats/split", "18446744073709551615\n");
        put(t, THP "/hugepages-2048kB/stats/Anon_fault_alloc", "1\n");
        put(t, THP "/hugepages-2048kB/stats/anon fault", "1\n");
        put(t, THP "/hugepages-2048kB/stats/a\"b", "1\n");
        put(t, THP "/hugepages-2048kB/stats/a.b", "1\n");
        put(t, THP "/hugepages-2048kB/stats/.hidden", "1\n");
        put(t, THP "/hugepages-2048kB/stats/_under", "1\n");
        memset(longname, 'a', 70);
        longname[70] = '\0';
        snprintf(rel, sizeof(rel), THP "/hugepages-2048kB/stats/%s", longname);
        put(t, rel, "1\n");
        put(t, THP "/hugepages-2048kB/stats/negative", "-1\n");
        put(t, THP "/hugepages-2048kB/stats/letters", "12abc\n");
        put(t, THP "/hugepages-2048kB/stats/overflow", "18446744073709551616\n");
        put(t, THP "/hugepages-2048kB/stats/empty", "");
        put(t, THP "/hugepages-2048kB/stats/two_lines", "1\n2\n");
        put(t, THP "/hugepages-2048kB/stats/too_long", "000000000000000000000000000000000001\n");
        put(t, "elsewhere", "5\n");
        tree_link(t, "../../../../../elsewhere", THP "/hugepages-2048kB/stats/linked");
        path_of(t, THP "/hugepages-2048kB/stats/fifo", p, sizeof(p));
        assert_int_equal(mkfifo(p, 0644), 0);
        make_dir(t, THP "/hugepages-2048kB/stats/subdir");

        /* 6.8: anon_* only. */
        make_dir(t, THP "/hugepages-64kB");
        make_dir(t, THP "/hugepages-64kB/stats");
        put(t, THP "/hugepages-64kB/stats/anon_fault_alloc", "1\n");
        put(t, THP "/hugepages-64kB/stats/anon_fault_fallback", "2\n");
        /* Knobs, no stats/. */
        make_dir(t, THP "/hugepages-128kB");
        put(t, THP "/hugepages-128kB/enabled", "always inherit madvise [never]\n");
        /* stats/ as a link, and a size's directory as one: neither followed. */
        make_dir(t, THP "/hugepages-256kB");
        make_dir(t, "statsdir");
        put(t, "statsdir/anon_fault_alloc", "9\n");
        tree_link(t, "../../../../statsdir", THP "/hugepages-256kB/stats");
        tree_link(t, "hugepages-2048kB", THP "/hugepages-512kB");
        /* Not a size's directory. */
        make_dir(t, THP "/hugepages-016kB");
        make_dir(t, THP "/hugepages-016kB/stats");
        put(t, THP "/hugepages-016kB/stats/split", "1\n");
        make_dir(t, THP "/hugepages-kB");
        make_dir(t, THP "/hugepages-12345678901kB");
        make_dir(t, THP "/hugepages-32KB");
        put(t, THP "/hugepages-16kB", "a file\n");

        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(metrics_read_sizes(t->root, k), 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        assert_true(t1.tv_sec - t0.tv_sec < 2); /* the FIFO was not waited on */
        assert_int_equal(k->n_sizes, 2);

        z = &k->sizes[0];
        assert_int_equal(z->size_kb, 64);
        assert_int_equal(z->n_stats, 2);
        assert_string_equal(z->stats[0].name, "anon_fault_alloc");
        assert_int_equal(z->stats[0].value, 1);
        assert_string_equal(z->stats[1].name, "anon_fault_fallback");
        assert_int_equal(z->stats[1].value, 2);

        z = &k->sizes[1];
        assert_int_equal(z->size_kb, 2048);
        assert_int_equal(z->n_stats, 4);
        assert_string_equal(z->stats[0].name, "anon_fault_alloc");
        assert_int_equal(z->stats[0].value, UINT64_C(123456789012));
        assert_string_equal(z->stats[1].name, "anon_fault_fallback");
        assert_int_equal(z->stats[1].value, 7);
        assert_string_equal(z->stats[2].name, "nr_anon");
        assert_int_equal(z->stats[2].value, 3);
        assert_string_equal(z->stats[3].name, "split");
        assert_true(z->stats[3].value == UINT64_MAX);
        tree_free(t);
}

/* More than the bounds: the first METRICS_SIZE_STATS_MAX files a size, the smallest METRICS_SIZES_MAX sizes.
 */
static void test_sizes_bounded(void **state) {
        _cleanup_free_ MetricsKernel *k = kernel_new();
        Tree *t = tree_new("sizes-bounded");
        char p[128];

        /* Twice as many sizes as are kept, made largest first (readdir() gives the directory's order). */
        for (unsigned i = 2 * METRICS_SIZES_MAX; i > 0; i--) {
                snprintf(p, sizeof(p), THP "/hugepages-%ukB", 8 * i);
                make_dir(t, p);
                snprintf(p, sizeof(p), THP "/hugepages-%ukB/stats", 8 * i);
                make_dir(t, p);
                snprintf(p, sizeof(p), THP "/hugepages-%ukB/stats/split", 8 * i);
                put(t, p, "1\n");
        }
        for (unsigned i = 0; i < 2 * METRICS_SIZE_STATS_MAX; i++) {
                snprintf(p, sizeof(p), THP "/hugepages-8kB/stats/s%02u", i);
                put(t, p, "1\n");
        }
        assert_int_equal(metrics_read_sizes(t->root, k), 0);
        assert_int_equal(k->n_sizes, METRICS_SIZES_MAX);
        for (size_t i = 0; i < k->n_sizes; i++)
                assert_int_equal(k->sizes[i].size_kb, 8 * (i + 1));
        assert_int_equal(k->sizes[0].n_stats, METRICS_SIZE_STATS_MAX);
        for (size_t i = 1; i < k->sizes[0].n_stats; i++)
                assert_true(strcmp(k->sizes[0].stats[i - 1].name, k->sizes[0].stats[i].name) < 0);
        tree_free(t);
}

/* The names the per-size families take, and which of them are gauges. */
static void test_size_stat_names(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(stats_618); i++)
                assert_true(metrics_size_stat_name_valid(stats_618[i]));
        assert_false(metrics_size_stat_name_valid(""));
        assert_false(metrics_size_stat_name_valid("_x"));
        assert_false(metrics_size_stat_name_valid("9x"));
        assert_false(metrics_size_stat_name_valid("X"));
        assert_false(metrics_size_stat_name_valid("a-b"));
        assert_false(metrics_size_stat_name_valid("a\\b"));
        assert_false(metrics_size_stat_name_valid("a\nb"));
        assert_false(metrics_size_stat_name_valid("\xc3\xa9"));
        assert_true(metrics_size_stat_name_valid("a12_"));

        assert_true(metrics_size_stat_is_gauge("nr_anon"));
        assert_true(metrics_size_stat_is_gauge("nr_anon_partially_mapped"));
        assert_false(metrics_size_stat_is_gauge("nr_"));
        assert_false(metrics_size_stat_is_gauge("anon_fault_alloc"));
        assert_false(metrics_size_stat_is_gauge("snr_x"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_vmstat_filter),         cmocka_unit_test(test_read_kernel),
                cmocka_unit_test(test_read_kernel_pressure),  cmocka_unit_test(test_read_khugepaged),
                cmocka_unit_test(test_kernel_metrics_absent), cmocka_unit_test(test_sizes_618),
                cmocka_unit_test(test_sizes_absent),          cmocka_unit_test(test_sizes_forged),
                cmocka_unit_test(test_sizes_bounded),         cmocka_unit_test(test_size_stat_names),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
