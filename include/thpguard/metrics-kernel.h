/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The kernel's node-wide THP figures that the metrics file exports (and
 * thpguardctl watch turns into rates): meminfo, vmstat, memory pressure
 * and khugepaged's CPU time, read below a proc root with procfs.h's
 * readers. metrics.h renders them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "thpguard/procfs.h"

#define METRICS_UNKNOWN UINT64_MAX

/* Node-wide figures from the kernel; METRICS_UNKNOWN (or n_vmstat 0) when not read. */
typedef struct MetricsKernel {
        uint64_t anon_huge_pages_bytes;
        uint64_t shmem_huge_pages_bytes;
        size_t n_vmstat;
        ProcCounter vmstat[PROCFS_VMSTAT_MAX]; /* only those metrics_vmstat_is_exported() keeps */
        uint64_t khugepaged_cpu_usec;          /* user + system, metrics_read_khugepaged() */
        uint64_t memory_some_stall_usec;       /* PSI /proc/pressure/memory "some" total */
        uint64_t memory_full_stall_usec;       /* and "full" */
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
 * does: see below); returns 0, or the first error met. A kernel without PSI
 * (before 4.20: ENOENT; booted with psi=0: EOPNOTSUPP) is no error.
 */
int metrics_read_kernel(const char *proc_root, MetricsKernel *ret);

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
