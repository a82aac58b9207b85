/* SPDX-License-Identifier: MIT */
/*
 * --json: the same facts as the text output, as one document built with
 * json-c. It escapes control characters but passes other bytes through, so
 * every string that is not a constant goes through json_string_utf8(): the
 * document is valid UTF-8 whatever a policy, /proc or sysfs held.
 * Sizes are in kB, as the kernel prints them, in fields named *_kb; a value
 * this kernel does not report is null.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <string.h>

#include "bounded-read.h"
#include "ctl.h"
#include "thpguard/escape.h"
#include "thpguard/json-util.h"
#include "thpguard/macro.h"
#include "thpguard/number.h"

static json_object *u64_or_null(uint64_t v) {
        return v == PROCFS_UNKNOWN ? NULL : json_new_uint64(v);
}

static json_object *str_or_null(const char *s) {
        return s && *s ? json_string_utf8(s) : NULL;
}

static json_object *tristate(int v) {
        return v < 0 ? NULL : json_object_new_boolean(v);
}

static void add(json_object *o, const char *key, json_object *v) {
        json_object_object_add(o, key, v);
}

static int print_doc(FILE *f, json_object *root) {
        const char *s = json_object_to_json_string_ext(
            root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
                return -ENOMEM;
        fprintf(f, "%s\n", s);
        return fflush(f) == 0 ? 0 : -errno;
}

static json_object *workloads_json(const char *proc_root, const CtlWorkloads *ws);

static json_object *time_json(uint64_t usec) {
        char buf[64];

        return usec ? json_object_new_string(ctl_time_utc(usec, buf, sizeof(buf))) : NULL;
}

/* A knob's foreign writes: null without a journal, zeros when none was logged. */
static json_object *knob_writes_json(const CtlNode *n, const char *knob) {
        const CtlKnobWrites *kw = ctl_foreign_knob(&n->foreign, knob);
        json_object *o;

        if (n->journal_error < 0)
                return NULL;
        o = json_object_new_object();
        if (!o)
                return NULL;
        add(o, "count", json_new_uint64(kw ? kw->n_drift : 0));
        add(o, "fight_warnings", json_new_uint64(kw ? kw->n_fight : 0));
        add(o, "last_usec", kw && kw->last_usec ? json_new_uint64(kw->last_usec) : NULL);
        add(o, "last", time_json(kw ? kw->last_usec : 0));
        add(o, "last_writer", kw && kw->last_usec ? str_or_null(kw->last_writer) : NULL);
        add(o, "last_writer_pid",
            kw && kw->last_usec && kw->last_pid ? json_new_uint64(kw->last_pid) : NULL);
        add(o, "last_writer_exited",
            kw && kw->last_usec && kw->last_writer[0] ? json_object_new_boolean(kw->last_exited) : NULL);
        return o;
}

static json_object *foreign_json(const CtlNode *n) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        add(o, "journal_dir", n->journal_dir ? json_string_utf8(n->journal_dir) : NULL);
        add(o, "available", json_object_new_boolean(n->journal_error >= 0));
        add(o, "error", n->journal_error < 0 ? json_string_utf8(n->journal_why) : NULL);
        add(o, "hours", json_object_new_int(CTL_STATUS_WRITES_HOURS));
        if (n->journal_error >= 0) {
                add(o, "since_usec", json_new_uint64(n->foreign.since_usec));
                add(o, "since", time_json(n->foreign.since_usec));
                add(o, "count", json_new_uint64(n->foreign.n_drift));
                add(o, "fight_warnings", json_new_uint64(n->foreign.n_fight));
                add(o, "writer_unknown", json_new_uint64(n->foreign.n_drift_unknown));
        }
        return o;
}

/* Which write source thpguardd has in force, as its latest startup record says; null without one. */
static void add_write_source(json_object *root, const CtlNode *n) {
        const CtlForeign *w = &n->foreign;
        bool known = n->journal_error >= 0 && w->write_source != WRITE_SOURCE_AUTO;

        add(root, "write_source",
            known ? json_object_new_string(write_source_to_string(w->write_source)) : NULL);
        add(root, "write_source_since_usec", known ? json_new_uint64(w->write_source_usec) : NULL);
        add(root, "write_source_since", known ? time_json(w->write_source_usec) : NULL);
}

static json_object *knobs_json(const CtlNode *n) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n->n_knobs; i++) {
                const CtlKnob *k = &n->knobs[i];
                json_object *o = json_object_new_object(), *offered = NULL;

                if (!o)
                        continue;
                add(o, "knob", json_string_utf8(k->path));
                add(o, "present", json_object_new_boolean(k->present));
                add(o, "value", k->read_error == 0 ? json_string_utf8(k->value.active) : NULL);
                if (k->read_error == 0 && k->spec->type == KNOB_CHOICE) {
                        offered = json_object_new_array();
                        for (size_t j = 0; offered && j < k->value.n_offered; j++)
                                json_object_array_add(offered, json_string_utf8(k->value.offered[j]));
                }
                add(o, "offered", offered);
                add(o, "desired", k->policy ? json_string_utf8(k->policy->desired) : NULL);
                add(o, "policy_line", k->policy ? json_object_new_int((int)k->policy->line) : NULL);
                add(o, "state", json_object_new_string(ctl_knob_state_to_string(k->state)));
                add(o, "reason", str_or_null(k->reason));
                add(o, "foreign_writes", knob_writes_json(n, k->path));
                json_object_array_add(a, o);
        }
        return a;
}

static json_object *policy_json(const CtlNode *n) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        add(o, "file", json_string_utf8(n->policy_file));
        add(o, "loaded", json_object_new_boolean(n->policy != NULL));
        add(o, "mode", n->policy ? json_object_new_string(policy_mode_to_string(n->policy->mode)) : NULL);
        add(o, "error", str_or_null(n->policy_error));
        add(o, "drift", json_new_uint64(n->n_policy_drift));
        add(o, "unreadable", json_new_uint64(n->n_policy_error));
        return o;
}

static json_object *cmdline_json(const CtlNode *n) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        add(o, "error", n->cmdline_error < 0 ? json_string_utf8(strerror(-n->cmdline_error)) : NULL);
        for (ProcCmdlineParam p = 0; p < _PROC_CMDLINE_PARAM_MAX; p++)
                add(o, procfs_cmdline_param_name(p),
                    n->cmdline_error >= 0 && n->cmdline.set[p] ? json_string_utf8(n->cmdline.value[p])
                                                               : NULL);
        return o;
}

static json_object *meminfo_json(const CtlNode *n) {
        const ProcMeminfo *m = &n->meminfo;
        json_object *o;

        if (n->meminfo_error < 0)
                return NULL;
        o = json_object_new_object();
        if (!o)
                return NULL;
        add(o, "MemTotal_kb", u64_or_null(m->mem_total_kb));
        add(o, "AnonPages_kb", u64_or_null(m->anon_pages_kb));
        add(o, "AnonHugePages_kb", u64_or_null(m->anon_huge_pages_kb));
        add(o, "ShmemHugePages_kb", u64_or_null(m->shmem_huge_pages_kb));
        add(o, "ShmemPmdMapped_kb", u64_or_null(m->shmem_pmd_mapped_kb));
        add(o, "FileHugePages_kb", u64_or_null(m->file_huge_pages_kb));
        add(o, "FilePmdMapped_kb", u64_or_null(m->file_pmd_mapped_kb));
        return o;
}

static json_object *counters_json(const ProcCounter *c, size_t n) {
        json_object *o = json_object_new_object();

        for (size_t i = 0; o && i < n; i++) {
                /* The names of hugepages-*kB/stats/ are whatever files that directory holds. */
                _cleanup_free_ char *key = utf8_sanitize(c[i].name);

                if (key)
                        add(o, key, json_new_uint64(c[i].value));
        }
        return o;
}

static json_object *sizes_json(const CtlNode *n) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n->n_sizes; i++) {
                json_object *o = json_object_new_object();

                if (!o)
                        continue;
                add(o, "dir", json_string_utf8(n->sizes[i].dir));
                add(o, "size_kb", json_new_uint64(n->sizes[i].size_kb));
                add(o, "stats", counters_json(n->sizes[i].stats, n->sizes[i].n_stats));
                json_object_array_add(a, o);
        }
        return a;
}

static json_object *khugepaged_json(const CtlNode *n) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        add(o, "running", json_object_new_boolean(n->khugepaged.pid != 0));
        add(o, "pid", n->khugepaged.pid ? json_new_uint64(n->khugepaged.pid) : NULL);
        add(o, "pages_collapsed", u64_or_null(n->khugepaged.pages_collapsed));
        add(o, "full_scans", u64_or_null(n->khugepaged.full_scans));
        return o;
}

static json_object *rollup_fields(json_object *o, const ProcSmapsRollup *r) {
        add(o, "rss_kb", u64_or_null(r->rss_kb));
        add(o, "pss_kb", u64_or_null(r->pss_kb));
        add(o, "anon_huge_pages_kb", u64_or_null(r->anon_huge_pages_kb));
        /* At most 1, as the text's percentage: a part above the whole counts as all of it. */
        add(o, "anon_huge_share",
            r->rss_kb && r->rss_kb != PROCFS_UNKNOWN && r->anon_huge_pages_kb != PROCFS_UNKNOWN
                ? json_object_new_double(r->anon_huge_pages_kb >= r->rss_kb
                                             ? 1.0
                                             : (double)r->anon_huge_pages_kb / (double)r->rss_kb)
                : NULL);
        return o;
}

static json_object *procs_json(const CtlNode *n) {
        const CtlProcScan *s = &n->procs;
        json_object *o = json_object_new_object(), *top = json_object_new_array();

        if (!o || !top) {
                json_object_put(o);
                json_object_put(top);
                return NULL;
        }
        add(o, "scanned", json_new_uint64(s->n_scanned));
        add(o, "measured", json_new_uint64(s->n_measured));
        add(o, "skipped", json_new_uint64(s->n_unreadable));
        add(o, "timed_out", json_new_uint64(s->n_skipped));
        {
                json_object *pids = json_object_new_array();

                for (size_t i = 0; pids && i < s->n_skipped && i < ELEMENTSOF(s->skipped); i++)
                        json_object_array_add(pids, json_new_uint64(s->skipped[i]));
                add(o, "timed_out_pids", pids);
        }
        add(o, "with_anon_huge_pages", json_new_uint64(s->n_with_thp));
        for (size_t i = 0; i < s->n_top; i++) {
                json_object *p = json_object_new_object();

                if (!p)
                        continue;
                add(p, "pid", json_new_uint64(s->top[i].pid));
                add(p, "command", json_string_utf8(s->top[i].name));
                rollup_fields(p, &s->top[i].rollup);
                add(p, "thp_enabled", tristate(s->top[i].thp_enabled));
                json_object_array_add(top, p);
        }
        add(o, "top", top);
        return o;
}

int ctl_status_print_json(FILE *f, const CtlNode *n) {
        _cleanup_(json_object_putp) json_object *root = json_object_new_object();
        json_object *notes = json_object_new_array();

        if (!root || !notes) {
                json_object_put(notes);
                return -ENOMEM;
        }
        add(root, "headline", json_string_utf8(n->headline));
        for (size_t i = 0; i < n->n_notes; i++)
                json_object_array_add(notes, json_string_utf8(n->notes[i].text));
        add(root, "notes", notes);
        add(root, "kernel", str_or_null(n->kernel_release));
        add(root, "sysfs_root", json_string_utf8(n->sysfs_root));
        add(root, "proc_root", json_string_utf8(n->proc_root));
        add(root, "policy", policy_json(n));
        add(root, "knobs", knobs_json(n));
        add(root, "foreign_writes", foreign_json(n));
        add_write_source(root, n);
        add(root, "cmdline", cmdline_json(n));
        add(root, "khugepaged", khugepaged_json(n));
        add(root, "meminfo", meminfo_json(n));
        add(root, "sizes", sizes_json(n));
        add(root, "vmstat",
            n->vmstat_error < 0 ? NULL : counters_json(n->vmstat->counters, n->vmstat->n_counters));
        add(root, "processes", procs_json(n));
        add(root, "workloads", n->workloads_error < 0 ? NULL : workloads_json(n->proc_root, &n->workloads));
        return print_doc(f, root);
}

int ctl_pid_print_json(FILE *f, const CtlPid *p) {
        _cleanup_(json_object_putp) json_object *root = json_object_new_object();
        const ProcSmaps *m = p->smaps;
        char why[CTL_PID_READ_ERROR_MAX];

        if (!root)
                return -ENOMEM;
        add(root, "pid", json_new_uint64(p->pid));
        add(root, "command", json_string_utf8(p->status.name));
        add(root, "exe", str_or_null(p->exe));
        add(root, "kernel_thread", tristate(p->status.kthread));
        add(root, "thp_enabled", tristate(p->status.thp_enabled));
        add(root, "enabled", str_or_null(p->enabled));
        add(root, "defrag", str_or_null(p->defrag));
        add(root, "verdict", json_string_utf8(p->verdict));
        add(root, "stalled", json_object_new_boolean(p->stalled));
        if (p->rollup_error >= 0)
                rollup_fields(root, &p->rollup);
        else
                add(root, "smaps_rollup_error",
                    json_string_utf8(ctl_pid_read_error(p->rollup_error, why, sizeof(why))));
        add(root, "vm_rss_kb", u64_or_null(p->status.vm_rss_kb));
        add(root, "runtime", json_object_new_string(ctl_language_runtime_to_string(p->language_runtime)));
        add(root, "compare_with", json_string_utf8(p->compare_with));
        if (m) {
                json_object *s = json_object_new_object(), *top = json_object_new_array();

                if (s && top) {
                        add(s, "mappings", json_new_uint64(m->n_mappings));
                        add(s, "anon_huge_pages_kb", json_new_uint64(m->anon_huge_pages_kb));
                        add(s, "advised_huge", json_new_uint64(m->n_advised_huge));
                        add(s, "advised_huge_kb", json_new_uint64(m->advised_huge_kb));
                        add(s, "advised_nohuge", json_new_uint64(m->n_advised_nohuge));
                        add(s, "thp_eligible", json_new_uint64(m->n_thp_eligible));
                        for (size_t i = 0; i < m->n_top; i++) {
                                const ProcMapping *x = &m->top[i];
                                json_object *o = json_object_new_object();
                                char addr[40];

                                if (!o)
                                        continue;
                                snprintf(addr, sizeof(addr), "%" PRIx64 "-%" PRIx64, x->start, x->end);
                                add(o, "address", json_object_new_string(addr));
                                add(o, "perms", json_string_utf8(x->perms));
                                add(o, "size_kb", json_new_uint64(u64_sat_sub(x->end, x->start) / 1024));
                                add(o, "rss_kb", u64_or_null(x->rss_kb));
                                add(o, "anon_huge_pages_kb", json_new_uint64(x->anon_huge_pages_kb));
                                add(o, "madv_hugepage", json_object_new_boolean(x->advised_huge));
                                add(o, "madv_nohugepage", json_object_new_boolean(x->advised_nohuge));
                                add(o, "thp_eligible", tristate(x->thp_eligible));
                                add(o, "name", str_or_null(x->name));
                                json_object_array_add(top, o);
                        }
                        add(s, "top", top);
                        add(root, "smaps", s);
                } else {
                        json_object_put(s);
                        json_object_put(top);
                }
        } else
                add(root, "smaps_error",
                    json_string_utf8(ctl_pid_read_error(p->smaps_error, why, sizeof(why))));
        return print_doc(f, root);
}

static json_object *writer_json(const CtlWriter *w, bool other) {
        json_object *o = json_object_new_object(), *knobs = json_object_new_array();

        if (!o || !knobs) {
                json_object_put(o);
                json_object_put(knobs);
                return NULL;
        }
        add(o, "writer", other ? NULL : str_or_null(w->label));
        add(o, "count", json_new_uint64(w->n_drift));
        add(o, "fight_warnings", json_new_uint64(w->n_fight));
        add(o, "refused", json_new_uint64(w->n_refused));
        for (size_t i = 0; i < w->n_knobs; i++)
                json_object_array_add(knobs, json_string_utf8(w->knobs[i]));
        add(o, "knobs", knobs);
        add(o, "knobs_truncated", json_object_new_boolean(w->knobs_truncated));
        add(o, "first_usec", json_new_uint64(w->first_usec));
        add(o, "first", time_json(w->first_usec));
        add(o, "last_usec", json_new_uint64(w->last_usec));
        add(o, "last", time_json(w->last_usec));
        add(o, "last_pid", w->last_pid ? json_new_uint64(w->last_pid) : NULL);
        add(o, "last_exited", json_object_new_boolean(w->last_exited));
        add(o, "comm", str_or_null(w->comm));
        add(o, "exe", str_or_null(w->exe));
        add(o, "unit", str_or_null(w->unit));
        add(o, "pod_uid", str_or_null(w->pod_uid));
        add(o, "container_id", str_or_null(w->container_id));
        return o;
}

int ctl_writers_print_json(FILE *f, const CtlWritersOptions *opts, const CtlForeign *w) {
        _cleanup_(json_object_putp) json_object *root = json_object_new_object();
        json_object *writers = json_object_new_array();

        if (!root || !writers) {
                json_object_put(writers);
                return -ENOMEM;
        }
        add(root, "journal_dir", opts->journal_dir ? json_string_utf8(opts->journal_dir) : NULL);
        add(root, "source", json_string_utf8(w->source));
        add(root, "since_usec", json_new_uint64(w->since_usec));
        add(root, "since", time_json(w->since_usec));
        add(root, "count", json_new_uint64(w->n_drift));
        add(root, "fight_warnings", json_new_uint64(w->n_fight));
        add(root, "refused", json_new_uint64(w->n_refused));
        add(root, "writer_unknown", json_new_uint64(w->n_drift_unknown));
        for (size_t i = 0; i < w->n_writers; i++)
                json_object_array_add(writers, writer_json(&w->writers[i], false));
        add(root, "writers", writers);
        add(root, "other",
            w->other.n_drift + w->other.n_fight + w->other.n_refused > 0 ? writer_json(&w->other, true)
                                                                         : NULL);
        return print_doc(f, root);
}

/* ---- workloads ------------------------------------------------------------ */

static json_object *workloads_json(const char *proc_root, const CtlWorkloads *ws) {
        json_object *o = json_object_new_object(), *items = json_object_new_array(),
                    *stalled = json_object_new_array();

        if (!o || !items || !stalled) {
                json_object_put(o);
                json_object_put(items);
                json_object_put(stalled);
                return NULL;
        }
        add(o, "proc_root", json_string_utf8(proc_root));
        add(o, "scanned", json_new_uint64(ws->n_scanned));
        add(o, "skipped", json_new_uint64(ws->n_skipped));
        add(o, "stalled", json_new_uint64(ws->n_stalled));
        if (stalled)
                for (size_t i = 0; i < ws->n_stalled; i++)
                        json_object_array_add(stalled, json_new_uint64(ws->stalled_pids[i]));
        add(o, "stalled_pids", stalled);
        add(o, "unread", json_new_uint64(ws->n_unread));
        for (size_t i = 0; i < ws->n; i++) {
                const CtlWorkload *w = &ws->items[i];
                json_object *p = json_object_new_object();

                if (!p)
                        continue;
                add(p, "kind", json_object_new_string(ctl_workload_kind_to_string(w->kind)));
                add(p, "unit", str_or_null(w->owner.unit));
                add(p, "pod_uid", str_or_null(w->owner.pod_uid));
                add(p, "container_id", str_or_null(w->owner.container_id));
                add(p, "cgroup", json_string_utf8(w->cgroup));
                add(p, "processes", json_new_uint64(w->n_processes));
                add(p, "thp_disabled", json_new_uint64(w->n_thp_disabled));
                add(p, "thp_unknown", json_new_uint64(w->n_thp_unknown));
                add(p, "unmeasured", json_new_uint64(w->n_unmeasured));
                add(p, "anon_huge_pages_kb", json_new_uint64(w->anon_huge_pages_kb));
                add(p, "mode", json_object_new_string(ctl_workload_mode(w)));
                json_object_array_add(items, p);
        }
        add(o, "workloads", items);
        return o;
}

int ctl_workloads_print_json(FILE *f, const char *proc_root, const CtlWorkloads *ws) {
        _cleanup_(json_object_putp) json_object *root = workloads_json(proc_root, ws);

        return root ? print_doc(f, root) : -ENOMEM;
}
