/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The kernel's THP figures that the metrics file exports (and thpguardctl
 * watch turns into rates): meminfo, vmstat, memory pressure and
 * khugepaged's CPU time, read below a proc root with procfs.h's readers;
 * and the per-size counters of hugepages-<N>kB/stats/, read below a sysfs
 * root with fileio.h's. metrics.h renders them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "thpguard/procfs.h"

#define METRICS_UNKNOWN UINT64_MAX

/* The mTHP sizes kept: 9 on x86 (8 kB to 2 MiB), up to 19 on arm64 with 64 kB pages. */
#define METRICS_SIZES_MAX 24
/* The files of one hugepages-<N>kB/stats/ kept: 18 on 6.18; the rest of a longer one is left out. */
#define METRICS_SIZE_STATS_MAX 32
/* Entries looked at in one directory: a kernel's have fewer than 40; a forged one is cut there. */
#define METRICS_DIR_ENTRIES_MAX 1024
/* A stats file's content: a decimal counter and a newline. Longer is no counter. */
#define METRICS_SIZE_STAT_READ_MAX 32

/* One size's stats/ directory: the files that read as a number, by name. */
typedef struct MetricsSize {
        uint64_t size_kb; /* hugepages-<size_kb>kB */
        size_t n_stats;
        ProcCounter stats[METRICS_SIZE_STATS_MAX]; /* sorted by name */
} MetricsSize;

/* Node-wide figures from the kernel; METRICS_UNKNOWN (or n_vmstat, n_sizes 0) when not read. */
typedef struct MetricsKernel {
        uint64_t anon_huge_pages_bytes;
        uint64_t shmem_huge_pages_bytes;
        size_t n_vmstat;
        ProcCounter vmstat[PROCFS_VMSTAT_MAX]; /* only those metrics_vmstat_is_exported() keeps */
        uint64_t khugepaged_cpu_usec;          /* user + system, metrics_read_khugepaged() */
        uint64_t memory_some_stall_usec;       /* PSI /proc/pressure/memory "some" total */
        uint64_t memory_full_stall_usec;       /* and "full" */
        size_t n_sizes;                        /* metrics_read_sizes() */
        MetricsSize sizes[METRICS_SIZES_MAX];  /* ascending size_kb; only sizes with a stat */
} MetricsKernel;

/* What metrics_read_khugepaged() keeps between writes; zeroed before the first. */
typedef struct MetricsKhugepaged {
        uint64_t pid;            /* the khugepaged found last time; 0: none */
        uint64_t next_scan_usec; /* after a scan that found none, no other before this (CLOCK_MONOTONIC) */
} MetricsKhugepaged;

/* A node without khugepaged (THP off) is scanned for a new one at most this often. */
#define METRICS_KHUGEPAGED_RESCAN_USEC (UINT64_C(60) * 1000000)

/* The vmstat counters exported as thpguard_vmstat_total: thp_* and compact_stall. */
bool metrics_vmstat_is_exported(const char *name);

/*
 * Reads meminfo, vmstat and pressure/memory below proc_root ("/proc").
 * What cannot be read or parsed stays unknown (khugepaged_cpu_usec always
 * does: see below; the sizes are left none: metrics_read_sizes()); returns
 * 0, or the first error met. A kernel without PSI (before 4.20: ENOENT;
 * booted with psi=0: EOPNOTSUPP) is no error.
 */
int metrics_read_kernel(const char *proc_root, MetricsKernel *ret);

/*
 * A stats file the per-size families take: a name the kernel would give
 * (a lower-case letter, then lower-case letters, digits and '_', shorter
 * than PROCFS_COUNTER_NAME_MAX), so that an odd name in a forged tree can
 * neither break the file nor make a label nobody can select.
 */
bool metrics_size_stat_name_valid(const char *name);

/* nr_<kind>: a gauge (pages of that size now); every other stats file is a counter of events. */
bool metrics_size_stat_is_gauge(const char *name);

/*
 * Fills k->sizes from sysfs_root's transparent_hugepage/hugepages-<N>kB/stats/
 * (6.10 and later; more files in later kernels): every file there whose name
 * metrics_size_stat_name_valid() takes and that reads as a decimal number
 * (number.h), at most METRICS_SIZE_STATS_MAX a size and METRICS_SIZES_MAX
 * sizes (the smallest), each directory listed up to METRICS_DIR_ENTRIES_MAX
 * entries. Opened below the root as every sysfs file is (fileio.h): no
 * symbolic link is followed, only directories and regular files are
 * opened. A size without stats/, a file that cannot be read or does not
 * parse, is left out: a kernel before 6.10 has none. Returns 0, or -errno
 * when the THP directory itself cannot be listed (then k->n_sizes is 0).
 *
 * Every file is opened, read and closed at each call: for 155 files here,
 * 1.2 ms of CPU unconfined and about 1.8 ms in the daemon (bench/README.md,
 * "The metrics write"), at most once a second. Kept open they would cost a
 * tenth of that, but they would hold their
 * directories: a size directory that goes (a fixture tree, a swapped bind
 * mount) would keep its inotify watch, which the daemon relies on to see
 * it gone, and the old files would still be read.
 */
int metrics_read_sizes(const char *sysfs_root, MetricsKernel *k);

/*
 * khugepaged's CPU time (utime + stime of its /proc/PID/stat, in
 * microseconds). khugepaged is the task below proc_root that
 * procfs_stat_is_khugepaged() says is: a user process named so is not it.
 * The pid in *cache is checked first (one file); only when it is gone is
 * proc_root scanned, and after a scan that found none, not again before
 * METRICS_KHUGEPAGED_RESCAN_USEC from now_usec (CLOCK_MONOTONIC). Returns
 * 0, -ENOENT if there is none (THP off, or a /proc that does not show it),
 * or another -errno.
 */
int metrics_read_khugepaged(const char *proc_root, MetricsKhugepaged *cache, uint64_t now_usec,
                            uint64_t *ret_usec);
