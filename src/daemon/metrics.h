/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Prometheus metrics as a textfile (the node-exporter textfile collector
 * convention): no listening socket is added to a root daemon. The daemon
 * fills a MetricsSnapshot; metrics_render() turns it into the text
 * exposition format (version 0.0.4) with no I/O of its own, and
 * metrics_write_file() replaces the file atomically.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "thpguard/diag.h"
#include "thpguard/fanotify-gate.h"
#include "thpguard/metrics-kernel.h"
#include "thpguard/policy.h"
#include "thpguard/writer.h"
#include "trigger.h"

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
        const WriterTallies *writes;  /* foreign writes by writer; NULL when attribution is off */
        const WriterTallies *refused; /* lock mode: refused writes by writer; NULL outside it */
} MetricsKnob;

typedef struct MetricsSnapshot {
        bool up;
        unsigned recheck_interval_sec;
        const MetricsKnob *knobs;
        size_t n_knobs;
        uint64_t rechecks;
        uint64_t reloads_ok;
        uint64_t reloads_failed;
        uint64_t last_correction_usec; /* CLOCK_REALTIME; 0 if none since start */
        const MetricsKernel *kernel;   /* NULL: no kernel metrics */
        const char *write_source;      /* in force: "bpf", "fanotify", "none" (write-source.h); NULL: none */
        const char *write_source_hook; /* the probe's hook ("fexit", "syscall-exit"); "" if unknown */
        bool write_probe;              /* the BPF write probe is in force: its lost records are exported */
        uint64_t write_probe_lost;     /* records its ring had no room for, since startup */
        bool gate_up;                  /* the writer gate runs */
        const FanotifyGateCounters *gate; /* NULL: no writer gate ever ran */
        const char *lock; /* lock mode: what refuses writers ("fanotify", "none"); NULL outside it */
} MetricsSnapshot;

/* The whole exposition, every family with # HELP and # TYPE. Returns 0 or -EIO. */
int metrics_render(const MetricsSnapshot *s, FILE *f);

/* The same into a malloc()ed, NUL-terminated string. */
int metrics_render_string(const MetricsSnapshot *s, char **ret, size_t *ret_len);

/*
 * Renders s and replaces the file at path by it with write_file_atomic()
 * (fileio.h): a reader sees the old file or the new one, never a part, and
 * a directory another user may write is refused (-FILEIO_EUNSAFE_DIR;
 * fileio_strerror() says why).
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
/*
 * 0 if path is such a file, or none yet in a directory that
 * metrics_write_file() would write (open_kept_dir(), fileio.h); or -errno
 * with why filled in ("exists and does not start like a file thpguardd
 * wrote", or fileio_strerror()'s words for the directory). The daemon
 * calls it before it first writes the file, at every attempt until one
 * succeeds.
 */
int metrics_file_check_ours(const char *path, char *why, size_t size);

/*
 * The liveness check: 0 if the file at path (its directory resolved as
 * the daemon resolves it, open_kept_dir()) says thpguard_up 1 and was
 * written (mtime) within METRICS_ALIVE_INTERVALS recheck intervals (as the
 * file itself states) plus METRICS_ALIVE_GRACE_SEC, at now_usec
 * (CLOCK_REALTIME). Otherwise -ESTALE (stale, or up is 0), -ENOENT, or
 * another -errno, with the reason in why.
 */
int metrics_check_alive(const char *path, uint64_t now_usec, char *why, size_t size);

/*
 * --check-config's look at the metrics_file the policy names: a warning,
 * not an error, when the daemon could not write it now
 * (metrics_file_check_ours()): it would start and enforce all the same,
 * and write the file once the path is fixed.
 */
void metrics_check_policy_file(const Policy *p, Diag *diag);
