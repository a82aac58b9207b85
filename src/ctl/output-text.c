/* SPDX-License-Identifier: MIT */
/*
 * The text report. What it prints from /proc was made printable by the
 * parsers (escape_printable()), what it prints from sysfs are words the
 * parsers accepted, and the policy's diagnostics come escaped from diag.c;
 * the paths given on the command line are escaped here.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "bounded-read.h"
#include "ctl.h"
#include "thpguard/escape.h"
#include "thpguard/number.h"
#include "thpguard/writer.h"

/* "1234 kB", or "-" for a field this kernel did not print. */
static const char *kb(uint64_t v, char *buf, size_t size) {
        if (v == PROCFS_UNKNOWN)
                snprintf(buf, size, "-");
        else
                snprintf(buf, size, "%" PRIu64 " kB", v);
        return buf;
}

static const char *u64s(uint64_t v, char *buf, size_t size) {
        if (v == PROCFS_UNKNOWN)
                snprintf(buf, size, "-");
        else
                snprintf(buf, size, "%" PRIu64, v);
        return buf;
}

static void percent(uint64_t part, uint64_t whole, char *buf, size_t size) {
        if (part == PROCFS_UNKNOWN || whole == PROCFS_UNKNOWN || whole == 0)
                snprintf(buf, size, "-");
        else
                snprintf(buf, size, "%u%%", number_percent(part, whole));
}

static void print_policy(FILE *f, const CtlNode *n) {
        size_t managed = 0, unsupported = 0;

        if (!n->policy) {
                if (n->policy_error[0])
                        fprintf(f, "Policy %s: not loaded (%s); every knob shows as unmanaged\n",
                                n->policy_file, n->policy_error);
                else
                        fprintf(f, "Policy: none at %s; every knob is unmanaged\n", n->policy_file);
                return;
        }
        for (size_t i = 0; i < n->n_knobs; i++) {
                managed += n->knobs[i].policy != NULL;
                unsupported += n->knobs[i].state == CTL_KNOB_UNSUPPORTED;
        }
        fprintf(f, "Policy %s (%s): %zu managed knob(s), ", n->policy_file,
                policy_mode_to_string(n->policy->mode), managed);
        if (n->n_policy_drift == 0 && n->n_policy_error == 0 && unsupported == 0)
                fprintf(f, "all compliant\n");
        else
                fprintf(f, "%zu drift, %zu unsupported, %zu unreadable\n", n->n_policy_drift, unsupported,
                        n->n_policy_error);
}

static void print_knobs(FILE *f, const CtlNode *n) {
        fprintf(f, "\nKnobs (%s/%s)\n", n->sysfs_root, SYSFS_THP_DIR);
        fprintf(f, "  %-33s %-14s %-14s %-12s %s\n", "KNOB", "VALUE", "POLICY", "STATE", "OFFERED");
        for (size_t i = 0; i < n->n_knobs; i++) {
                const CtlKnob *k = &n->knobs[i];
                char offered[256] = "";

                if (k->read_error == 0 && k->spec->type == KNOB_CHOICE)
                        knob_value_offered_string(&k->value, offered, sizeof(offered));
                fprintf(f, "  %-33s %-14s %-14s %-12s %s", k->path,
                        k->read_error == 0 ? k->value.active : "-", k->policy ? k->policy->desired : "-",
                        ctl_knob_state_to_string(k->state), offered);
                if (k->reason[0])
                        fprintf(f, "%s(%s)", offered[0] ? " " : "", k->reason);
                fputc('\n', f);
        }
}

/* What tells thpguardd of a write, as its latest startup record says (thpguardd(8), --write-source). */
static void print_write_source(FILE *f, const CtlNode *n) {
        const CtlForeign *w = &n->foreign;
        char since[64];

        if (n->journal_error < 0)
                fprintf(f, "  write source: unknown (no journal to read it from)\n");
        else if (w->write_source == WRITE_SOURCE_AUTO)
                fprintf(f, "  write source: unknown (no startup record in the journal)\n");
        else
                fprintf(f, "  write source: %s (since %s)\n", write_source_to_string(w->write_source),
                        ctl_time_local(w->write_source_usec, since, sizeof(since)));
}

static void print_foreign(FILE *f, const CtlNode *n, const char *journal_dir) {
        const CtlForeign *w = &n->foreign;
        size_t rows = 0;

        if (n->journal_error < 0) {
                fprintf(f, "\nForeign writes: %s\n", n->journal_why);
                print_write_source(f, n);
                return;
        }
        fprintf(f, "\nForeign writes in the last %d h (journal%s%s; thpguardctl writers for more)\n",
                CTL_STATUS_WRITES_HOURS, journal_dir ? " " : "", journal_dir ? journal_dir : "");
        print_write_source(f, n);
        for (size_t i = 0; i < n->n_knobs; i++) {
                const CtlKnob *k = &n->knobs[i];
                const CtlKnobWrites *kw = ctl_foreign_knob(w, k->path);
                char last[64], writer[CTL_FIELD_MAX + 64];

                if (!k->policy && !kw)
                        continue;
                if (rows++ == 0)
                        fprintf(f, "  %-33s %6s %6s  %-19s  %s\n", "KNOB", "WRITES", "FIGHTS", "LAST",
                                "LAST WRITER");
                if (!kw || kw->n_drift == 0) {
                        fprintf(f, "  %-33s %6" PRIu64 " %6" PRIu64 "  %-19s  %s\n", k->path, (uint64_t)0,
                                kw ? kw->n_fight : 0, "-", "-");
                        continue;
                }
                fprintf(f, "  %-33s %6" PRIu64 " %6" PRIu64 "  %-19s  %s\n", k->path, kw->n_drift,
                        kw->n_fight, ctl_time_local(kw->last_usec, last, sizeof(last)),
                        writer_describe_as(WRITER_FORM_TABLE, kw->last_writer, kw->last_pid, kw->last_exited,
                                           "", writer, sizeof(writer)));
        }
        if (rows == 0)
                fprintf(f, "  no knob is managed, and none was written by another process\n");
        if (w->n_drift_unknown > 0)
                fprintf(f,
                        "  %" PRIu64 " of %" PRIu64
                        " writes without a writer (thpguardd without attribution)\n",
                        w->n_drift_unknown, w->n_drift);
}

static void print_cmdline(FILE *f, const CtlNode *n) {
        fprintf(f, "\nKernel command line (%s/cmdline)\n", n->proc_root);
        if (n->cmdline_error < 0) {
                fprintf(f, "  cannot read: %s\n", strerror(-n->cmdline_error));
                return;
        }
        for (ProcCmdlineParam p = 0; p < _PROC_CMDLINE_PARAM_MAX; p++)
                fprintf(f, "  %-28s %s\n", procfs_cmdline_param_name(p),
                        n->cmdline.set[p] ? n->cmdline.value[p] : "(not set)");
}

static void print_khugepaged(FILE *f, const CtlNode *n) {
        char a[32], b[32];

        fprintf(f, "\nkhugepaged\n  ");
        if (n->khugepaged.pid)
                fprintf(f, "running, pid %" PRIu64, n->khugepaged.pid);
        else
                fprintf(f, "not running");
        fprintf(f, "; pages_collapsed %s, full_scans %s\n",
                u64s(n->khugepaged.pages_collapsed, a, sizeof(a)),
                u64s(n->khugepaged.full_scans, b, sizeof(b)));
}

static void print_memory(FILE *f, const CtlNode *n) {
        const ProcMeminfo *m = &n->meminfo;
        char a[32], b[32], pct[16];

        fprintf(f, "\nMemory (%s/meminfo)\n", n->proc_root);
        if (n->meminfo_error < 0) {
                fprintf(f, "  cannot read: %s\n", strerror(-n->meminfo_error));
                return;
        }
        percent(m->anon_huge_pages_kb, m->anon_pages_kb, pct, sizeof(pct));
        fprintf(f, "  %-16s %14s  (%s of AnonPages %s)\n", "AnonHugePages",
                kb(m->anon_huge_pages_kb, a, sizeof(a)), pct, kb(m->anon_pages_kb, b, sizeof(b)));
        fprintf(f, "  %-16s %14s\n", "ShmemHugePages", kb(m->shmem_huge_pages_kb, a, sizeof(a)));
        fprintf(f, "  %-16s %14s\n", "ShmemPmdMapped", kb(m->shmem_pmd_mapped_kb, a, sizeof(a)));
        fprintf(f, "  %-16s %14s\n", "FileHugePages", kb(m->file_huge_pages_kb, a, sizeof(a)));
        fprintf(f, "  %-16s %14s\n", "FilePmdMapped", kb(m->file_pmd_mapped_kb, a, sizeof(a)));
}

static uint64_t size_stat(const CtlSizeStats *z, const char *name) {
        for (size_t i = 0; i < z->n_stats; i++)
                if (strcmp(z->stats[i].name, name) == 0)
                        return z->stats[i].value;
        return PROCFS_UNKNOWN;
}

static void print_sizes(FILE *f, const CtlNode *n) {
        static const char *const cols[] = { "anon_fault_alloc", "anon_fault_fallback",
                                            "nr_anon",          "split",
                                            "shmem_alloc",      "swpout" };
        bool any = false;

        for (size_t i = 0; i < n->n_sizes; i++)
                any |= n->sizes[i].n_stats > 0;
        if (!any)
                return;
        fprintf(f, "\nPer-size counters (hugepages-*kB/stats; all of them in --json)\n  %-18s", "SIZE");
        for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++)
                fprintf(f, " %s", cols[c]);
        fputc('\n', f);
        for (size_t i = 0; i < n->n_sizes; i++) {
                if (n->sizes[i].n_stats == 0)
                        continue;
                fprintf(f, "  %-18s", n->sizes[i].dir);
                for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
                        char v[32];
                        fprintf(f, " %*s", (int)strlen(cols[c]),
                                u64s(size_stat(&n->sizes[i], cols[c]), v, sizeof(v)));
                }
                fputc('\n', f);
        }
}

static void print_vmstat(FILE *f, const CtlNode *n) {
        fprintf(f, "\nCounters since boot (%s/vmstat)\n", n->proc_root);
        if (n->vmstat_error < 0) {
                fprintf(f, "  cannot read: %s\n", strerror(-n->vmstat_error));
                return;
        }
        for (size_t i = 0; i < n->vmstat->n_counters; i++)
                fprintf(f, "  %-34s %14" PRIu64 "%s", n->vmstat->counters[i].name,
                        n->vmstat->counters[i].value,
                        i % 2 == 1 || i + 1 == n->vmstat->n_counters ? "\n" : "  ");
}

static void print_procs(FILE *f, const CtlNode *n) {
        const CtlProcScan *s = &n->procs;

        fprintf(f,
                "\nTop processes by AnonHugePages (%s/PID/smaps_rollup: %zu processes, %zu measured, "
                "%zu kernel threads, gone or unreadable)\n",
                n->proc_root, s->n_scanned, s->n_measured, s->n_unreadable);
        if (s->n_skipped > 0) {
                fprintf(f,
                        "  skipped %zu process(es) whose /proc files did not answer within %d ms (their "
                        "memory lock held, e.g. through a FUSE page): pid",
                        s->n_skipped, CTL_BOUNDED_READ_DEADLINE_USEC / 1000);
                for (size_t i = 0; i < s->n_skipped && i < ELEMENTSOF(s->skipped); i++)
                        fprintf(f, "%s %" PRIu64, i ? "," : "", s->skipped[i]);
                fprintf(f, "%s\n", s->n_skipped > ELEMENTSOF(s->skipped) ? ", ..." : "");
        }
        if (s->n_top == 0) {
                fprintf(f, "  no process has AnonHugePages\n");
                return;
        }
        fprintf(f, "  %8s %-18s %12s %12s %14s %6s %s\n", "PID", "COMMAND", "RSS kB", "PSS kB",
                "ANONHUGE kB", "SHARE", "THP_enabled");
        for (size_t i = 0; i < s->n_top; i++) {
                const CtlProcess *p = &s->top[i];
                char pct[16];

                percent(p->rollup.anon_huge_pages_kb, p->rollup.rss_kb, pct, sizeof(pct));
                fprintf(f, "  %8" PRIu64 " %-18s %12" PRIu64 " %12" PRIu64 " %14" PRIu64 " %6s %s\n", p->pid,
                        p->name, p->rollup.rss_kb, p->rollup.pss_kb, p->rollup.anon_huge_pages_kb, pct,
                        p->thp_enabled < 0 ? "-"
                        : p->thp_enabled   ? "1"
                                           : "0 (prctl)");
        }
        if (s->n_with_thp > s->n_top)
                fprintf(f, "  ... and %zu more with AnonHugePages (--top N)\n", s->n_with_thp - s->n_top);
}

void ctl_status_print_text(FILE *f, const CtlNode *node) {
        char policy_file[4 * PATH_MAX], sysfs_root[4 * PATH_MAX], proc_root[4 * PATH_MAX],
            journal_dir[4 * PATH_MAX];
        CtlNode copy = *node, *n = &copy; /* shallow, with the paths escaped for printing */

        copy.policy_file = escape_str(node->policy_file, policy_file, sizeof(policy_file));
        copy.sysfs_root = escape_str(node->sysfs_root, sysfs_root, sizeof(sysfs_root));
        copy.proc_root = escape_str(node->proc_root, proc_root, sizeof(proc_root));
        fprintf(f, "%s\n", n->headline);
        if (n->kernel_release[0])
                fprintf(f, "Kernel %s. ", n->kernel_release);
        print_policy(f, n);
        for (size_t i = 0; i < n->n_notes; i++)
                fprintf(f, "  ! %s\n", n->notes[i].text);
        print_knobs(f, n);
        print_foreign(f, n,
                      node->journal_dir ? escape_str(node->journal_dir, journal_dir, sizeof(journal_dir))
                                        : NULL);
        print_cmdline(f, n);
        print_khugepaged(f, n);
        print_memory(f, n);
        print_sizes(f, n);
        print_vmstat(f, n);
        print_procs(f, n);
        fprintf(f, "\n");
        if (n->workloads_error < 0)
                fprintf(f, "Workloads: cannot list processes: %s\n", strerror(-n->workloads_error));
        else
                ctl_workloads_print_text(f, node->proc_root, &n->workloads, CTL_STATUS_WORKLOADS);
}

void ctl_pid_print_text(FILE *f, const CtlPid *p) {
        const ProcSmaps *m = p->smaps;
        char a[32], b[32], pct[16], why[CTL_PID_READ_ERROR_MAX];

        fprintf(f, "PID %" PRIu64 " (%s)%s%s\n", p->pid, p->status.name, p->exe[0] ? " " : "", p->exe);
        fprintf(f, "  %s\n", p->verdict);
        if (p->status.kthread == 1)
                return;
        if (p->rollup_error < 0)
                fprintf(f, "  smaps_rollup: cannot read: %s\n",
                        ctl_pid_read_error(p->rollup_error, why, sizeof(why)));
        else {
                fprintf(f, "  Rss %s, Pss %s", kb(p->rollup.rss_kb, a, sizeof(a)),
                        kb(p->rollup.pss_kb, b, sizeof(b)));
                if (p->rollup.rss_kb != PROCFS_UNKNOWN && p->rollup.pss_kb != PROCFS_UNKNOWN &&
                    p->rollup.rss_kb >= p->rollup.pss_kb)
                        fprintf(f, " (%" PRIu64 " kB of Rss is shared with other processes)",
                                p->rollup.rss_kb - p->rollup.pss_kb);
                percent(p->rollup.anon_huge_pages_kb, p->rollup.rss_kb, pct, sizeof(pct));
                fprintf(f, "\n  AnonHugePages %s, %s of Rss\n",
                        kb(p->rollup.anon_huge_pages_kb, a, sizeof(a)), pct);
        }
        fprintf(f, "  THP_enabled %s; system-wide enabled %s, defrag %s\n",
                p->status.thp_enabled < 0 ? "- (not reported)"
                : p->status.thp_enabled   ? "1"
                                          : "0 (prctl PR_SET_THP_DISABLE)",
                p->enabled[0] ? p->enabled : "-", p->defrag[0] ? p->defrag : "-");
        if (!m && p->rollup_error == -ETIMEDOUT) {
                fprintf(f, "  smaps: not read: it waits for the same lock as smaps_rollup\n");
        } else if (!m) {
                fprintf(f, "  smaps: cannot read: %s\n",
                        ctl_pid_read_error(p->smaps_error, why, sizeof(why)));
        } else {
                fprintf(f,
                        "  %zu mappings; %zu advised MADV_HUGEPAGE (%" PRIu64 " kB), %zu MADV_NOHUGEPAGE, "
                        "%zu THP-eligible\n",
                        m->n_mappings, m->n_advised_huge, m->advised_huge_kb, m->n_advised_nohuge,
                        m->n_thp_eligible);
                if (m->n_top > 0) {
                        fprintf(f, "\n  Largest AnonHugePages mappings (smaps)\n");
                        fprintf(f, "  %-33s %-5s %12s %12s %14s %-5s %s\n", "ADDRESS", "PERMS", "SIZE kB",
                                "RSS kB", "ANONHUGE kB", "ADV", "NAME");
                        for (size_t i = 0; i < m->n_top; i++) {
                                const ProcMapping *x = &m->top[i];
                                char addr[40];

                                snprintf(addr, sizeof(addr), "%" PRIx64 "-%" PRIx64, x->start, x->end);
                                fprintf(f, "  %-33s %-5s %12" PRIu64 " %12s %14" PRIu64 " %-5s %s\n", addr,
                                        x->perms, u64_sat_sub(x->end, x->start) / 1024,
                                        u64s(x->rss_kb, a, sizeof(a)), x->anon_huge_pages_kb,
                                        x->advised_huge     ? "hg"
                                        : x->advised_nohuge ? "nh"
                                                            : "-",
                                        x->name[0] ? x->name : "[anon]");
                        }
                }
        }
        fprintf(f, "\n  Runtime: %s\n  %s\n", ctl_language_runtime_to_string(p->language_runtime),
                p->compare_with);
}

static void print_writer(FILE *f, const CtlWriter *w, const char *label) {
        char first[64], last[64];

        fprintf(f, "\n%s: %" PRIu64 " write(s)", label, w->n_drift);
        if (w->n_fight > 0)
                fprintf(f, ", %" PRIu64 " fight warning(s)", w->n_fight);
        if (w->n_refused > 0)
                fprintf(f, ", %" PRIu64 " refused (lock mode)", w->n_refused);
        for (size_t i = 0; i < w->n_knobs; i++)
                fprintf(f, "%s%s", i == 0 ? "; knobs " : ", ", w->knobs[i]);
        fprintf(f, "%s\n", w->knobs_truncated ? ", ..." : "");
        fprintf(f, "  first %s, last %s", ctl_time_local(w->first_usec, first, sizeof(first)),
                ctl_time_local(w->last_usec, last, sizeof(last)));
        if (w->last_pid)
                fprintf(f, " by pid %" PRIu64 "%s", w->last_pid, w->last_exited ? " (exited)" : "");
        if (w->comm[0])
                fprintf(f, ", comm %s", w->comm);
        if (w->exe[0])
                fprintf(f, ", %s", w->exe);
        fputc('\n', f);
        if (w->unit[0])
                fprintf(f, "  unit %s\n", w->unit);
        if (w->pod_uid[0] || w->container_id[0])
                fprintf(f, "  pod %s, container %s\n", w->pod_uid[0] ? w->pod_uid : "-",
                        w->container_id[0] ? w->container_id : "-");
}

void ctl_writers_print_text(FILE *f, const CtlWritersOptions *o, const CtlForeign *w) {
        char since[64], dir[4 * PATH_MAX];
        size_t n = w->n_writers + (w->other.n_drift + w->other.n_fight + w->other.n_refused > 0);

        fprintf(f, "Foreign writes since %s (journal%s%s): ",
                ctl_time_local(w->since_usec, since, sizeof(since)), o->journal_dir ? " " : "",
                o->journal_dir ? escape_str(o->journal_dir, dir, sizeof(dir)) : "");
        if (n == 0) {
                fprintf(f, "none\n");
                fprintf(f, "Read: %s\n", w->source);
                return;
        }
        fprintf(f, "%" PRIu64 " by %zu writer(s)", w->n_drift, n);
        if (w->n_fight > 0)
                fprintf(f, ", %" PRIu64 " writer-fight warning(s)", w->n_fight);
        if (w->n_refused > 0)
                fprintf(f, ", %" PRIu64 " refused in lock mode", w->n_refused);
        fputc('\n', f);
        fprintf(f, "Read: %s\n", w->source);
        for (size_t i = 0; i < w->n_writers; i++)
                print_writer(f, &w->writers[i],
                             w->writers[i].label[0] ? w->writers[i].label
                                                    : "unknown writer (thpguardd without attribution)");
        if (w->other.n_drift + w->other.n_fight + w->other.n_refused > 0) {
                char label[64];

                snprintf(label, sizeof(label), "other writers (beyond the first %d)", CTL_WRITERS_MAX);
                print_writer(f, &w->other, label);
        }
}

/* ---- workloads ------------------------------------------------------------ */

static void workload_label(const CtlWorkload *w, char *buf, size_t size) {
        char cgroup[4 * CTL_WORKLOAD_CGROUP_MAX];

        switch (w->kind) {
        case CTL_WORKLOAD_CONTAINER:
                snprintf(buf, size, "container %s%s%s%s%s", w->owner.container_id,
                         w->owner.pod_uid[0] ? " pod " : "", w->owner.pod_uid,
                         w->owner.unit[0] ? " unit " : "", w->owner.unit);
                break;
        case CTL_WORKLOAD_UNIT:
                snprintf(buf, size, "%s", w->owner.unit);
                break;
        default:
                snprintf(buf, size, "cgroup %s", escape_str(w->cgroup, cgroup, sizeof(cgroup)));
                break;
        }
}

void ctl_workloads_print_text(FILE *f, const char *proc_root, const CtlWorkloads *ws, size_t limit) {
        char root[4 * PATH_MAX];
        size_t shown = limit && limit < ws->n ? limit : ws->n;

        fprintf(
            f,
            "Workloads by AnonHugePages (%s: %zu processes in %zu workloads; %zu kernel threads, gone or "
            "unreadable)\n",
            escape_str(proc_root, root, sizeof(root)), ws->n_scanned - ws->n_skipped - ws->n_stalled, ws->n,
            ws->n_skipped);
        if (ws->n_stalled) {
                fprintf(f, "  ! %zu process(es) did not answer within %d ms, not counted (PID",
                        ws->n_stalled, CTL_BOUNDED_READ_DEADLINE_USEC / 1000);
                for (size_t i = 0; i < ws->n_stalled; i++)
                        fprintf(f, " %" PRIu64, ws->stalled_pids[i]);
                fprintf(f, "): a process can block readers of its own /proc files\n");
        }
        if (ws->n_unread)
                fprintf(f, "  ! after %zu such processes the other %zu were not read\n", ws->n_stalled,
                        ws->n_unread);
        if (ws->n == 0)
                return;
        fprintf(f, "  %8s %8s %14s %-8s %s\n", "PROCS", "THP-OFF", "ANONHUGE kB", "MODE", "WORKLOAD");
        for (size_t i = 0; i < shown; i++) {
                const CtlWorkload *w = &ws->items[i];
                char label[1024];

                workload_label(w, label, sizeof(label));
                fprintf(f, "  %8zu %8zu %14" PRIu64 " %-8s %s\n", w->n_processes, w->n_thp_disabled,
                        w->anon_huge_pages_kb, ctl_workload_mode(w), label);
        }
        if (shown < ws->n)
                fprintf(f, "  ... and %zu more (thpguardctl workloads)\n", ws->n - shown);
}
