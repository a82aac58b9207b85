/* SPDX-License-Identifier: MIT */
/*
 * `thpguardctl workloads` and the workloads section of `status`: the node's
 * processes grouped by container (a Kubernetes pod's, podman's libpod-<id>),
 * else by systemd unit, else by cgroup, each with how many processes run
 * with THP disabled (/proc/PID/status THP_enabled: 0) and their
 * AnonHugePages (smaps_rollup).
 *
 * A process can make the reads of its smaps_rollup block (it holds its
 * own mmap lock: MACHINE-FACTS), so that read goes through the bounded
 * reader that status uses (bounded-read.h): a process that does not answer
 * within its deadline is counted as stalled, and after
 * CTL_WORKLOADS_STALLS_MAX of them the rest are left unread and counted.
 * status and cgroup take no lock of the process's and are read directly.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bounded-read.h"
#include "ctl.h"
#include "thpguard/cgroup.h"
#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/number.h"

/* After this many stalled processes the rest are not read: the whole command stays within seconds. */
#define CTL_WORKLOADS_STALLS_MAX ELEMENTSOF(((CtlWorkloads *)NULL)->stalled_pids)

typedef struct Sample {
        int error; /* 0: read; -errno: gone, kernel thread, unreadable */
        int thp_enabled;
        uint64_t anon_huge_pages_kb; /* PROCFS_UNKNOWN: no smaps_rollup */
        CgroupOwner owner;
        char cgroup[CTL_WORKLOAD_CGROUP_MAX];
} Sample;

/* -ETIMEDOUT: its smaps_rollup did not answer. */
static int sample_read(CtlBoundedReader *reader, const char *proc_root, uint64_t pid, Sample *ret) {
        char path[CGROUP_PATH_MAX];
        ProcSmapsRollup rollup;
        ProcStatus st;
        int r;

        *ret = (Sample){ .anon_huge_pages_kb = PROCFS_UNKNOWN };
        r = procfs_read_status(proc_root, pid, &st);
        if (r < 0) {
                ret->error = r;
                return 0;
        }
        /* Kernel threads have no memory of their own and belong to no workload. */
        if (st.kthread == 1 || (st.kthread == -1 && (st.ppid == 2 || pid == 2))) {
                ret->error = -ESRCH;
                return 0;
        }
        ret->thp_enabled = st.thp_enabled;
        if (cgroup_read_path(proc_root, pid, path, sizeof(path)) >= 0) {
                cgroup_owner_from_path(path, &ret->owner);
                size_t n = strnlen(path, sizeof(ret->cgroup) - 1); /* a longer path is cut */

                memcpy(ret->cgroup, path, n);
                ret->cgroup[n] = '\0';
        }
        r = ctl_bounded_read_smaps_rollup(reader, pid, &rollup);
        if (r == -ETIMEDOUT)
                return r;
        if (r >= 0)
                ret->anon_huge_pages_kb = rollup.anon_huge_pages_kb;
        return 0;
}

static CtlWorkloadKind kind_of(const Sample *s) {
        if (s->owner.container_id[0])
                return CTL_WORKLOAD_CONTAINER;
        if (s->owner.unit[0])
                return CTL_WORKLOAD_UNIT;
        return CTL_WORKLOAD_CGROUP;
}

static bool same_group(const CtlWorkload *w, const Sample *s) {
        if (w->kind != kind_of(s))
                return false;
        switch (w->kind) {
        case CTL_WORKLOAD_CONTAINER:
                return strcmp(w->owner.container_id, s->owner.container_id) == 0 &&
                       strcmp(w->owner.pod_uid, s->owner.pod_uid) == 0;
        case CTL_WORKLOAD_UNIT:
                return strcmp(w->owner.unit, s->owner.unit) == 0;
        default:
                return strcmp(w->cgroup, s->cgroup) == 0;
        }
}

static int add_sample(CtlWorkloads *ws, size_t *cap, const Sample *s) {
        CtlWorkload *w = NULL;

        for (size_t i = 0; i < ws->n && !w; i++)
                if (same_group(&ws->items[i], s))
                        w = &ws->items[i];
        if (!w) {
                if (array_grow(&ws->items, cap, ws->n, sizeof(*ws->items), 32, 0) < 0)
                        return -ENOMEM;
                w = &ws->items[ws->n++];
                *w = (CtlWorkload){ .kind = kind_of(s), .owner = s->owner };
                /* A container in a unit (libpod-<id>.scope) keeps its unit; a group by cgroup needs its
                 * path. */
                snprintf(w->cgroup, sizeof(w->cgroup), "%s", s->cgroup[0] ? s->cgroup : "?");
        }
        w->n_processes++;
        if (s->thp_enabled == 0)
                w->n_thp_disabled++;
        else if (s->thp_enabled < 0)
                w->n_thp_unknown++;
        if (s->anon_huge_pages_kb == PROCFS_UNKNOWN)
                w->n_unmeasured++;
        else
                w->anon_huge_pages_kb = u64_sat_add(w->anon_huge_pages_kb, s->anon_huge_pages_kb);
        return 0;
}

static int cmp_workloads(const void *a, const void *b) {
        const CtlWorkload *x = a, *y = b;

        if (x->anon_huge_pages_kb != y->anon_huge_pages_kb)
                return x->anon_huge_pages_kb < y->anon_huge_pages_kb ? 1 : -1;
        if (x->n_processes != y->n_processes)
                return x->n_processes < y->n_processes ? 1 : -1;
        return strcmp(x->cgroup, y->cgroup);
}

const char *ctl_workload_kind_to_string(CtlWorkloadKind k) {
        static const char *const names[] = {
                [CTL_WORKLOAD_CONTAINER] = "container",
                [CTL_WORKLOAD_UNIT] = "unit",
                [CTL_WORKLOAD_CGROUP] = "cgroup",
        };

        return k >= 0 && (size_t)k < ELEMENTSOF(names) ? names[k] : "?";
}

const char *ctl_workload_mode(const CtlWorkload *w) {
        if (w->n_thp_unknown == w->n_processes)
                return "unknown"; /* before 5.0: no THP_enabled: line */
        if (w->n_thp_disabled == w->n_processes)
                return "disable";
        if (w->n_thp_disabled == 0)
                return "inherit";
        return "mixed";
}

void ctl_workloads_done(CtlWorkloads *ws) {
        free(ws->items);
        *ws = (CtlWorkloads){};
}

int ctl_workloads_collect(const char *proc_root, CtlWorkloads *ret) {
        _cleanup_free_ uint64_t *pids = NULL;
        _cleanup_(ctl_workloads_done) CtlWorkloads ws = {};
        _cleanup_(ctl_bounded_reader_freep) CtlBoundedReader *reader = NULL;
        size_t n_pids, cap = 0, done = 0;
        int r;

        r = procfs_list_pids(proc_root, &pids, &n_pids);
        if (r < 0)
                return r;
        ws.n_scanned = n_pids;

        r = ctl_bounded_reader_new(proc_root, CTL_BOUNDED_READ_DEADLINE_USEC, &reader);
        if (r < 0)
                return r;
        for (; done < n_pids; done++) {
                Sample s;

                if (ws.n_stalled >= CTL_WORKLOADS_STALLS_MAX) {
                        ws.n_unread = n_pids - done;
                        break;
                }
                if (sample_read(reader, proc_root, pids[done], &s) == -ETIMEDOUT) {
                        ws.stalled_pids[ws.n_stalled++] = pids[done];
                        continue;
                }
                if (s.error < 0) {
                        ws.n_skipped++;
                        continue;
                }
                r = add_sample(&ws, &cap, &s);
                if (r < 0)
                        return r;
        }
        if (ws.n > 0)
                qsort(ws.items, ws.n, sizeof(*ws.items), cmp_workloads);
        *ret = ws;
        ws = (CtlWorkloads){};
        return 0;
}
