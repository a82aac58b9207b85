/* SPDX-License-Identifier: MIT */
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "thpguard/event-util.h"
#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/number.h"
#include "thpguard/path.h"

/* Our own file: a few lines per knob. */
#define METRICS_FILE_MAX (1024 * 1024)

/*
 * Text format 0.0.4's escaping: backslash and newline in HELP text, and
 * the double quote too in a label value (quote).
 */
static void put_escaped(FILE *f, const char *s, bool quote) {
        for (; *s; s++) {
                if (*s == '\\')
                        fputs("\\\\", f);
                else if (*s == '\n')
                        fputs("\\n", f);
                else if (quote && *s == '"')
                        fputs("\\\"", f);
                else
                        fputc(*s, f);
        }
}

static void family(FILE *f, const char *name, const char *type, const char *help) {
        fprintf(f, "# HELP %s ", name);
        put_escaped(f, help, false);
        fprintf(f, "\n# TYPE %s %s\n", name, type);
}

/* name{k1="v1",k2="v2"} value; a NULL key ends the labels. */
static void sample_begin(FILE *f, const char *name, const char *k1, const char *v1, const char *k2,
                         const char *v2) {
        fputs(name, f);
        if (k1) {
                fprintf(f, "{%s=\"", k1);
                put_escaped(f, v1, true);
                fputc('"', f);
                if (k2) {
                        fprintf(f, ",%s=\"", k2);
                        put_escaped(f, v2, true);
                        fputc('"', f);
                }
                fputc('}', f);
        }
        fputc(' ', f);
}

static void sample(FILE *f, const char *name, const char *k1, const char *v1, const char *k2, const char *v2,
                   uint64_t value) {
        sample_begin(f, name, k1, v1, k2, v2);
        fprintf(f, "%" PRIu64 "\n", value);
}

/* A value in microseconds as seconds, with all six decimals. */
static void sample_usec(FILE *f, const char *name, const char *k1, const char *v1, uint64_t usec) {
        sample_begin(f, name, k1, v1, NULL, NULL);
        fprintf(f, "%" PRIu64 ".%06" PRIu64 "\n", usec / USEC_PER_SEC, usec % USEC_PER_SEC);
}

/* A family of one sample per knob: the member of s->knobs[] that holds its value. */
#define KNOB_SAMPLES(f, s, name, type, help, member)                                                        \
        do {                                                                                                \
                family(f, name, type, help);                                                                \
                for (size_t i_ = 0; i_ < (s)->n_knobs; i_++)                                                \
                        sample(f, name, "knob", (s)->knobs[i_].knob, NULL, NULL, (s)->knobs[i_].member);    \
        } while (0)

/* A family's samples by knob and writer: each knob's writes, or lock mode's refusals (NULL: none kept). */
static void tally_samples(FILE *f, const MetricsSnapshot *s, const char *name, bool refused) {
        for (size_t i = 0; i < s->n_knobs; i++) {
                const WriterTallies *w = refused ? s->knobs[i].refused : s->knobs[i].writes;

                for (size_t j = 0; w && j < w->n; j++)
                        sample(f, name, "knob", s->knobs[i].knob, "writer", w->top[j].label,
                               w->top[j].writes);
                if (w && w->other)
                        sample(f, name, "knob", s->knobs[i].knob, "writer", WRITER_TALLY_OTHER, w->other);
        }
}

static void render_knobs(const MetricsSnapshot *s, FILE *f) {
        KNOB_SAMPLES(f, s, "thpguard_knob_compliant", "gauge",
                     "1 if the knob held the policy's value at its last check; 0 if it drifted (audit mode, "
                     "a failed correction, a writer fight), is unsupported or unreadable.",
                     compliant);

        KNOB_SAMPLES(f, s, "thpguard_knob_supported", "gauge",
                     "1 if this kernel has the knob and offers the policy's value; 0 if it is skipped.",
                     supported);

        family(
            f, "thpguard_corrections_total", "counter",
            "Drifts corrected since thpguardd started, by knob and by what found them: startup, "
            "inotify, recheck, reload or bpf (the BPF write probe: a write through another sysfs mount).");
        for (size_t i = 0; i < s->n_knobs; i++)
                for (Trigger t = 0; t < _TRIGGER_MAX; t++)
                        sample(f, "thpguard_corrections_total", "knob", s->knobs[i].knob, "trigger",
                               trigger_to_string(t), s->knobs[i].corrections[t]);

        KNOB_SAMPLES(f, s, "thpguard_correction_failures_total", "counter",
                     "Corrections that failed: the write was refused or the value did not stick.", failures);

        KNOB_SAMPLES(f, s, "thpguard_writer_fights_total", "counter",
                     "Writer fights: another writer kept resetting the knob, and thpguardd backed off.",
                     fights);

        family(f, "thpguard_foreign_writes_total", "counter",
               "Writes to the knob by other processes, by writer: its systemd unit, else its comm. "
               "The first 16 writers of a knob have their own series, the rest count as \"other\". "
               "Back-to-back writes by one process may count once. Absent when attribution is off.");
        tally_samples(f, s, "thpguard_foreign_writes_total", false);
        if (s->lock) {
                family(f, "thpguard_lock", "gauge",
                       "Lock mode: 1 for what refuses other writers' opens of the knobs: fanotify (through "
                       "this sysfs mount), or none (enforced as in mode enforce; the log says why).");
                sample(f, "thpguard_lock", "mechanism", s->lock, NULL, NULL, 1);
                family(f, "thpguard_refused_writes_total", "counter",
                       "Lock mode: opens of the knob for writing refused, by writer (as "
                       "thpguard_foreign_writes_total names them).");
                tally_samples(f, s, "thpguard_refused_writes_total", true);
        }
        if (!s->gate)
                return;
        family(f, "thpguard_writer_gate_up", "gauge",
               "Is the writer gate running? 0 once it was lost (killed when stopped or stuck, or exited): "
               "one-shot writers are then named by pid only.");
        sample(f, "thpguard_writer_gate_up", NULL, NULL, NULL, NULL, s->gate_up);
        family(f, "thpguard_writer_gate_opens_total", "counter",
               "Opens of the knob files the writer gate held and let go on.");
        sample(f, "thpguard_writer_gate_opens_total", NULL, NULL, NULL, NULL, s->gate->opens);
        family(
            f, "thpguard_writer_lookups_total", "counter",
            "Processes the writer gate looked up in /proc: one per process while it lives, not per open.");
        sample(f, "thpguard_writer_lookups_total", NULL, NULL, NULL, NULL, s->gate->lookups);
        family(f, "thpguard_writer_lookups_abandoned_total", "counter",
               "Command-line reads given up as stuck: the process held its own memory lock (hostile, "
               "or faulting on a FUSE file). Its writes are named without the command line.");
        sample(f, "thpguard_writer_lookups_abandoned_total", NULL, NULL, NULL, NULL,
               s->gate->cmdline_abandoned);
        family(f, "thpguard_writer_gate_floods_total", "counter",
               "Times the gate lifted its mark from a knob file for 10 s because one writer opened it more "
               "than 200 times a second.");
        sample(f, "thpguard_writer_gate_floods_total", NULL, NULL, NULL, NULL, s->gate->floods);
}

/* The samples of one per-size family: the gauges (nr_<kind>) or the counters, sizes ascending, files by
 * name. */
static void size_samples(const MetricsKernel *k, FILE *f, const char *name, bool gauges) {
        for (size_t i = 0; i < k->n_sizes; i++) {
                char size[32];

                snprintf(size, sizeof(size), "%" PRIu64 "kB", k->sizes[i].size_kb);
                for (size_t j = 0; j < k->sizes[i].n_stats; j++) {
                        const ProcCounter *c = &k->sizes[i].stats[j];

                        if (metrics_size_stat_is_gauge(c->name) != gauges)
                                continue;
                        if (gauges)
                                sample(f, name, "size", size, "kind", c->name + STRLEN("nr_"), c->value);
                        else
                                sample(f, name, "size", size, "counter", c->name, c->value);
                }
        }
}

/* hugepages-<N>kB/stats/: the nr_* files as one gauge family, every other file as one counter family. */
static void render_sizes(const MetricsKernel *k, FILE *f) {
        bool gauges = false, counters = false;

        for (size_t i = 0; i < k->n_sizes; i++)
                for (size_t j = 0; j < k->sizes[i].n_stats; j++) {
                        if (metrics_size_stat_is_gauge(k->sizes[i].stats[j].name))
                                gauges = true;
                        else
                                counters = true;
                }
        if (counters) {
                family(f, "thpguard_thp_size_events_total", "counter",
                       "The kernel's per-size THP event counters, node-wide, by size and counter: "
                       "transparent_hugepage/hugepages-<size>/stats/<counter> (6.10+; only the files this "
                       "kernel has). anon_fault_alloc: anonymous faults that got a huge page of that size; "
                       "anon_fault_fallback: those that fell back to a smaller one (_charge: for the memory "
                       "cgroup's limit); shmem_alloc and shmem_fallback(_charge) the same for shmem and "
                       "tmpfs; split, split_failed, split_deferred: huge pages of that size split; swpout, "
                       "zswpout, swpin and their fallbacks: whole huge pages swapped.");
                size_samples(k, f, "thpguard_thp_size_events_total", false);
        }
        if (gauges) {
                family(f, "thpguard_thp_size_pages", "gauge",
                       "Huge pages of one size that exist now, node-wide, by size and kind: "
                       "transparent_hugepage/hugepages-<size>/stats/nr_<kind>. anon: anonymous huge pages "
                       "of that size; anon_partially_mapped: those partly unmapped, queued to be split. A "
                       "count of pages of that size, not bytes.");
                size_samples(k, f, "thpguard_thp_size_pages", true);
        }
}

/* A gauge family of one sample with no label, left out when the kernel did not say (METRICS_UNKNOWN). */
static void single_gauge(FILE *f, const char *name, const char *help, uint64_t value) {
        if (value == METRICS_UNKNOWN)
                return;
        family(f, name, "gauge", help);
        sample(f, name, NULL, NULL, NULL, NULL, value);
}

static void render_kernel(const MetricsKernel *k, FILE *f) {
        single_gauge(f, "thpguard_anon_huge_pages_bytes",
                     "Anonymous memory mapped with transparent huge pages, node-wide (meminfo "
                     "AnonHugePages).",
                     k->anon_huge_pages_bytes);
        single_gauge(f, "thpguard_shmem_huge_pages_bytes",
                     "Shmem and tmpfs memory allocated with huge pages, node-wide (meminfo "
                     "ShmemHugePages).",
                     k->shmem_huge_pages_bytes);
        if (k->n_vmstat > 0) {
                family(f, "thpguard_vmstat_total", "counter",
                       "The kernel's THP and compaction event counters (vmstat thp_* and compact_stall), "
                       "node-wide, by counter name.");
                for (size_t i = 0; i < k->n_vmstat; i++)
                        sample(f, "thpguard_vmstat_total", "counter", k->vmstat[i].name, NULL, NULL,
                               k->vmstat[i].value);
        }
        if (k->khugepaged_cpu_usec != METRICS_UNKNOWN) {
                family(f, "thpguard_khugepaged_cpu_seconds_total", "counter",
                       "CPU time (user and system) the khugepaged kernel thread has used, from its "
                       "/proc/PID/stat; from 0 again when THP is turned off and on (a new khugepaged).");
                sample_usec(f, "thpguard_khugepaged_cpu_seconds_total", NULL, NULL, k->khugepaged_cpu_usec);
        }
        if (k->memory_some_stall_usec != METRICS_UNKNOWN) {
                family(f, "thpguard_memory_pressure_stalled_seconds_total", "counter",
                       "Time in which some (kind=\"some\") or all (kind=\"full\") non-idle tasks were "
                       "stalled waiting for memory, node-wide (PSI, /proc/pressure/memory).");
                sample_usec(f, "thpguard_memory_pressure_stalled_seconds_total", "kind", "some",
                            k->memory_some_stall_usec);
                if (k->memory_full_stall_usec != METRICS_UNKNOWN)
                        sample_usec(f, "thpguard_memory_pressure_stalled_seconds_total", "kind", "full",
                                    k->memory_full_stall_usec);
        }
        render_sizes(k, f);
}

int metrics_render(const MetricsSnapshot *s, FILE *f) {
        /* The first line, METRICS_FIRST_LINE: how the daemon knows a file as its own. */
        family(f, "thpguard_up", "gauge",
               "1 while thpguardd runs and keeps this file current; 0 after a clean stop.");
        sample(f, "thpguard_up", NULL, NULL, NULL, NULL, s->up);

        family(f, "thpguard_recheck_interval_seconds", "gauge",
               "Seconds between full rechecks; while thpguardd runs, this file is rewritten at least "
               "that often.");
        sample(f, "thpguard_recheck_interval_seconds", NULL, NULL, NULL, NULL, s->recheck_interval_sec);

        render_knobs(s, f);

        family(f, "thpguard_last_correction_timestamp_seconds", "gauge",
               "Unix time of the last correction since thpguardd started; 0 if none.");
        sample_usec(f, "thpguard_last_correction_timestamp_seconds", NULL, NULL, s->last_correction_usec);

        family(f, "thpguard_policy_reloads_total", "counter",
               "Policy reloads, by result: ok, or failed (the last good policy was kept).");
        sample(f, "thpguard_policy_reloads_total", "result", "ok", NULL, NULL, s->reloads_ok);
        sample(f, "thpguard_policy_reloads_total", "result", "failed", NULL, NULL, s->reloads_failed);

        family(f, "thpguard_rechecks_total", "counter",
               "Full rechecks of every managed knob: the periodic timer and inotify queue overflows.");
        sample(f, "thpguard_rechecks_total", NULL, NULL, NULL, NULL, s->rechecks);

        if (s->write_source) {
                family(
                    f, "thpguard_write_source", "gauge",
                    "1 for the write source in force: bpf (the BPF write probe: writes through every sysfs "
                    "mount, the writer named), fanotify (this sysfs mount only), or none; hook: how the "
                    "probe is attached.");
                sample(f, "thpguard_write_source", "source", s->write_source, "hook",
                       s->write_source_hook ? s->write_source_hook : "", 1);
        }
        if (s->write_probe) {
                family(
                    f, "thpguard_write_probe_lost_records_total", "counter",
                    "Writes the BPF write probe saw but had no room to record: its ring was full, writes "
                    "came "
                    "faster than it is read. Their writers are not named; their drifts are still corrected. "
                    "Present while the probe is the write source.");
                sample(f, "thpguard_write_probe_lost_records_total", NULL, NULL, NULL, NULL,
                       s->write_probe_lost);
        }

        if (s->kernel)
                render_kernel(s->kernel, f);

        return ferror(f) ? -EIO : 0;
}

int metrics_render_string(const MetricsSnapshot *s, char **ret, size_t *ret_len) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f;
        int r;

        f = open_memstream(&buf, &len);
        if (!f)
                return -errno;
        r = metrics_render(s, f);
        if (fclose(f) != 0 && r >= 0)
                r = -errno;
        if (r < 0) {
                free(buf);
                return r;
        }
        *ret = buf;
        if (ret_len)
                *ret_len = len;
        return 0;
}

int metrics_file_check_ours(const char *path, char *why, size_t size) {
        _cleanup_close_ int dirfd = -EBADF, fd = -EBADF;
        char head[STRLEN(METRICS_FIRST_LINE)];
        const char *name;
        struct stat st;
        ssize_t n;
        int r;

        if (!path_is_textfile_name(path)) {
                snprintf(why, size, "is not a NAME.prom file");
                return -EINVAL;
        }
        /* The directory the write would go to, by the same rules (fileio.h). */
        dirfd = open_kept_dir(path, &name);
        if (dirfd < 0) {
                snprintf(why, size, "%s", fileio_strerror(-dirfd));
                return dirfd;
        }
        /* The name in it, following no symlink, a regular file only. */
        fd = open_beneath(dirfd, name, O_RDONLY);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0) {
                snprintf(why, size, "cannot be checked: %s", fileio_strerror(-fd));
                return fd;
        }
        if (fstat(fd, &st) < 0) {
                r = -errno;
                snprintf(why, size, "cannot be checked: %s", strerror(-r));
                return r;
        }
        if (st.st_uid != 0 && st.st_uid != geteuid()) {
                snprintf(why, size, "exists and belongs to uid %u: not a file thpguardd wrote",
                         (unsigned)st.st_uid);
                return -EPERM;
        }
        /* A regular file: one read returns the whole line unless the file is shorter. */
        n = read(fd, head, sizeof(head));
        if (n < 0) {
                r = -errno;
                snprintf(why, size, "cannot be read: %s", strerror(-r));
                return r;
        }
        if ((size_t)n < sizeof(head) || memcmp(head, METRICS_FIRST_LINE, sizeof(head)) != 0) {
                snprintf(why, size, "exists and does not start like a file thpguardd wrote");
                return -EPERM;
        }
        return 0;
}

int metrics_write_file(const char *path, const MetricsSnapshot *s) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r;

        r = metrics_render_string(s, &text, &len);
        if (r < 0)
                return r;
        return write_file_atomic(path, text, len);
}

/* The value of an unlabelled sample "name value" in our own file. */
static bool find_value(const char *text, const char *name, uint64_t *ret) {
        size_t n = strlen(name);
        const char *line = text;

        while (*line) {
                const char *nl = strchr(line, '\n');

                if (strncmp(line, name, n) == 0 && line[n] == ' ')
                        return number_parse_u64(line + n + 1, strcspn(line + n + 1, "\n"), ret) >= 0;
                if (!nl)
                        break;
                line = nl + 1;
        }
        return false;
}

int metrics_check_alive(const char *path, uint64_t now_usec, char *why, size_t size) {
        _cleanup_close_ int dirfd = -EBADF, fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        const char *name;
        uint64_t up, interval, mtime_usec, max_age_usec;
        struct stat st;
        size_t len;
        int r;

        /* Where the daemon writes it, resolved as it does. */
        dirfd = open_kept_dir(path, &name);
        fd = dirfd < 0 ? dirfd : open_beneath(dirfd, name, O_RDONLY);
        r = fd < 0 ? fd : read_fd_alloc(fd, METRICS_FILE_MAX, &text, &len);
        if (r >= 0 && fstat(fd, &st) < 0)
                r = -errno;
        if (r < 0) {
                snprintf(why, size, "cannot read %s: %s", path, fileio_strerror(-r));
                return r;
        }
        if (!find_value(text, "thpguard_up", &up) ||
            !find_value(text, "thpguard_recheck_interval_seconds", &interval)) {
                snprintf(why, size, "%s is not a thpguardd metrics file", path);
                return -EBADMSG;
        }
        if (up != 1) {
                snprintf(why, size, "%s says thpguard_up %" PRIu64 ": thpguardd has stopped", path, up);
                return -ESTALE;
        }
        mtime_usec = (uint64_t)st.st_mtim.tv_sec * USEC_PER_SEC + (uint64_t)st.st_mtim.tv_nsec / 1000;
        max_age_usec = (METRICS_ALIVE_INTERVALS * interval + METRICS_ALIVE_GRACE_SEC) * USEC_PER_SEC;
        /* A clock that went back makes the file look new: alive, not a false kill. */
        if (now_usec > mtime_usec && now_usec - mtime_usec > max_age_usec) {
                snprintf(why, size,
                         "%s was last written %" PRIu64 "s ago, more than %" PRIu64
                         "s (%d recheck intervals of %" PRIu64 "s, plus %ds): the event loop is stuck",
                         path, (now_usec - mtime_usec) / USEC_PER_SEC, max_age_usec / USEC_PER_SEC,
                         METRICS_ALIVE_INTERVALS, interval, METRICS_ALIVE_GRACE_SEC);
                return -ESTALE;
        }
        snprintf(why, size, "%s was written %" PRIu64 "s ago; thpguardd is alive", path,
                 now_usec > mtime_usec ? (now_usec - mtime_usec) / USEC_PER_SEC : 0);
        return 0;
}

void metrics_check_policy_file(const Policy *p, Diag *diag) {
        char why[128];

        if (p->metrics_file && metrics_file_check_ours(p->metrics_file, why, sizeof(why)) < 0)
                diag_warning(diag, p->file, p->metrics_file_line,
                             "metrics_file: \"%s\" cannot be written now: %s; thpguardd would still start "
                             "and enforce, and write it once that is fixed",
                             p->metrics_file, why);
}
