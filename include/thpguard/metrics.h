/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Prometheus metrics as a textfile (the node-exporter textfile collector
 * convention): no listening socket is added to a root daemon. The daemon
 * fills a MetricsSnapshot; metrics_render() turns it into the text
 * exposition format (version 0.0.4) with no I/O of its own, and
 * metrics_write_file() replaces the file atomically.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "thpguard/procfs.h"
#include "thpguard/trigger.h"
#include "thpguard/writer-gate.h"
#include "thpguard/writer.h"

#define METRICS_UNKNOWN UINT64_MAX

/* liveness: the file must be younger than this many recheck intervals, plus the grace. */
#define METRICS_ALIVE_INTERVALS 2
#define METRICS_ALIVE_GRACE_SEC 10

typedef struct MetricsKnob {
        const char *knob; /* the knob path, as in logs: "enabled", "hugepages-64kB/enabled" */
        bool compliant;
        bool supported;
        uint64_t corrections[_TRIGGER_MAX];
        uint64_t failures;
        uint64_t fights;
        const WriterTallies *writes; /* foreign writes by writer; NULL when attribution is off */
} MetricsKnob;

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

typedef struct MetricsSnapshot {
        bool up;
        unsigned recheck_interval_sec;
        const MetricsKnob *knobs;
        size_t n_knobs;
        uint64_t rechecks;
        uint64_t reloads_ok;
        uint64_t reloads_failed;
        uint64_t last_correction_usec;  /* CLOCK_REALTIME; 0 if none since start */
        const MetricsKernel *kernel;    /* NULL: no kernel metrics */
        bool gate_up;                   /* the writer gate runs */
        const WriterGateCounters *gate; /* NULL: no writer gate ever ran */
} MetricsSnapshot;

/* The whole exposition, every family with # HELP and # TYPE. Returns 0 or -EIO. */
int metrics_render(const MetricsSnapshot *s, FILE *f);

/* The same into a malloc()ed, NUL-terminated string. */
int metrics_render_string(const MetricsSnapshot *s, char **ret, size_t *ret_len);

/*
 * Renders s into a temporary file next to path (".NAME.XXXXXX": the textfile
 * collector reads only *.prom), fsync()s it, makes it 0644 and renames it
 * over path. A reader sees the old file or the new one, never a part.
 *
 * path is absolute. Its directory is opened once, from /, following no
 * symlink (-ELOOP), and the temporary file is created (O_EXCL | O_NOFOLLOW)
 * and renamed relative to it: whoever owns a directory on the way, or may
 * write to the last one, cannot steer the write elsewhere. A directory that
 * another user than root (or than the one we run as) owns or may write is
 * refused with -METRICS_EUNSAFE_DIR, and nothing is written.
 */
int metrics_write_file(const char *path, const MetricsSnapshot *s);

/*
 * The daemon writes only a file it may call its own: named NAME.prom
 * (what the textfile collector reads; not hidden, so never one of our
 * temporary files), and, if it exists, a regular file, not a symlink,
 * owned by root (or by the user we run as), that starts with the line
 * every file the daemon writes starts with (METRICS_FIRST_LINE). Anything
 * else (a file in any root-owned directory the rename would replace) is
 * refused before anything is written.
 */
#define METRICS_FIRST_LINE "# HELP thpguard_up "
bool metrics_file_name_valid(const char *path);
/* 0, or -errno with why ("exists and is not a file thpguardd wrote: ...") filled in. */
int metrics_file_check_ours(const char *path, char *why, size_t size);
/* metrics_write_file()'s replacement of path by text, under the same rules: for any file thpguardd keeps. */
int metrics_replace_file(const char *path, const char *text, size_t len);

/* metrics_write_file()'s own errno for an unsafe directory (systemd's chase() says ENOLINK too). */
#define METRICS_EUNSAFE_DIR ENOLINK

/* strerror() for metrics_write_file()'s errors: says why a directory was refused; errnum > 0. */
const char *metrics_strerror(int errnum);

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
 * microseconds). khugepaged is the task below proc_root whose stat says
 * comm "khugepaged", parent 2 (kthreadd) and PF_KTHREAD: a user process
 * named so is not it. The pid in *cache is checked first (one file); only
 * when it is gone is proc_root scanned, and after a scan that found none,
 * not again before METRICS_KHUGEPAGED_RESCAN_USEC from now_usec
 * (CLOCK_MONOTONIC). Returns 0, -ENOENT if there is none (THP off, or a
 * /proc that does not show it), or another -errno.
 */
int metrics_read_khugepaged(const char *proc_root, MetricsKhugepaged *cache, uint64_t now_usec,
                            uint64_t *ret_usec);

/*
 * The liveness check: 0 if the file at path says thpguard_up 1 and was
 * written (mtime) within METRICS_ALIVE_INTERVALS recheck intervals (as the
 * file itself states) plus METRICS_ALIVE_GRACE_SEC, at now_usec
 * (CLOCK_REALTIME). Otherwise -ESTALE (stale, or up is 0), -ENOENT, or
 * another -errno, with the reason in why.
 */
int metrics_check_alive(const char *path, uint64_t now_usec, char *why, size_t size);
