/* SPDX-License-Identifier: MIT */
/*
 * `thpguardctl workloads` and the workloads section of `status`: the node's
 * processes grouped by container (a Kubernetes pod's, podman's libpod-<id>),
 * else by systemd unit, else by cgroup, each with how many processes run
 * with THP disabled (/proc/PID/status THP_enabled: 0) and their
 * AnonHugePages (smaps_rollup).
 *
 * One process's /proc files can block their reader (a process holding its
 * own mmap lock: MACHINE-FACTS), so the reads run on a worker thread and the
 * collector waits for each process at most CTL_WORKLOADS_PID_TIMEOUT_MS. A
 * worker that overruns is abandoned where it is (smaps_rollup takes the
 * mmap lock killably: it dies with us at exit), the process is counted as
 * stalled, and a new worker goes on with the next one; after
 * CTL_WORKLOADS_STALLS_MAX of them the rest are left unread and counted.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl.h"
#include "thpguard/cgroup.h"
#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/number.h"

#define CTL_WORKLOADS_PID_TIMEOUT_MS 2000
/* After this many stalled processes the rest are not read: the whole command stays within seconds. */
#define CTL_WORKLOADS_STALLS_MAX ELEMENTSOF(((CtlWorkloads *)NULL)->stalled_pids)
#define STATUS_READ_MAX          8192
#define ROLLUP_READ_MAX          4096
#define CGROUP_READ_MAX          8192

typedef struct Sample {
        int error; /* 0: read; -errno: gone, kernel thread, unreadable */
        int thp_enabled;
        uint64_t anon_huge_pages_kb; /* PROCFS_UNKNOWN: no smaps_rollup */
        CgroupOwner owner;
        char cgroup[CTL_WORKLOAD_CGROUP_MAX];
} Sample;

/* One worker's share: freed by whichever of the worker and the collector lets go of it last. */
typedef struct Job {
        pthread_mutex_t lock;
        pthread_cond_t progress;
        const char *proc_root;
        size_t n_pids, next; /* next: the index the worker is reading (n_pids: done) */
        uint64_t *pids;
        Sample *samples;
        bool abandoned;
        int refs;
} Job;

static void job_unref(Job *j) {
        bool last;

        pthread_mutex_lock(&j->lock);
        last = --j->refs == 0;
        pthread_mutex_unlock(&j->lock);
        if (!last)
                return;
        pthread_mutex_destroy(&j->lock);
        pthread_cond_destroy(&j->progress);
        free(j->pids);
        free(j->samples);
        free(j);
}

static void sample_read(const char *proc_root, uint64_t pid, Sample *ret) {
        char buf[STATUS_READ_MAX], path[CGROUP_PATH_MAX];
        ProcSmapsRollup rollup;
        ProcStatus st;
        size_t len;
        int r;

        *ret = (Sample){ .anon_huge_pages_kb = PROCFS_UNKNOWN };
        r = read_pid_file(proc_root, pid, "status", buf, sizeof(buf), &len);
        if (r >= 0)
                r = procfs_parse_status(buf, len, &st);
        if (r < 0) {
                ret->error = r;
                return;
        }
        /* Kernel threads have no memory of their own and belong to no workload. */
        if (st.kthread == 1 || (st.kthread == -1 && (st.ppid == 2 || pid == 2))) {
                ret->error = -ESRCH;
                return;
        }
        ret->thp_enabled = st.thp_enabled;
        r = read_pid_file(proc_root, pid, "cgroup", buf, sizeof(buf), &len);
        if (r >= 0 && cgroup_path_from_proc(buf, len, path, sizeof(path)) >= 0) {
                cgroup_owner_from_path(path, &ret->owner);
                size_t n = strnlen(path, sizeof(ret->cgroup) - 1); /* a longer path is cut */

                memcpy(ret->cgroup, path, n);
                ret->cgroup[n] = '\0';
        }
        r = read_pid_file(proc_root, pid, "smaps_rollup", buf, ROLLUP_READ_MAX, &len);
        if (r >= 0 && procfs_parse_smaps_rollup(buf, len, &rollup) >= 0)
                ret->anon_huge_pages_kb = rollup.anon_huge_pages_kb;
}

static void *worker(void *userdata) {
        Job *j = userdata;

        for (;;) {
                Sample s;
                size_t i;

                pthread_mutex_lock(&j->lock);
                i = j->next;
                pthread_mutex_unlock(&j->lock);
                if (i >= j->n_pids)
                        break;
                sample_read(j->proc_root, j->pids[i], &s);
                pthread_mutex_lock(&j->lock);
                if (j->abandoned) {
                        pthread_mutex_unlock(&j->lock);
                        break;
                }
                j->samples[i] = s;
                j->next = i + 1;
                pthread_cond_signal(&j->progress);
                pthread_mutex_unlock(&j->lock);
        }
        job_unref(j);
        return NULL;
}

static int job_start(const char *proc_root, const uint64_t *pids, size_t n_pids, Job **ret) {
        _cleanup_free_ Job *j = calloc(1, sizeof(*j));
        pthread_condattr_t cattr;
        pthread_attr_t attr;
        pthread_t t;
        int r;

        if (!j)
                return -ENOMEM;
        j->pids = malloc((n_pids ? n_pids : 1) * sizeof(*j->pids));
        j->samples = calloc(n_pids ? n_pids : 1, sizeof(*j->samples));
        if (!j->pids || !j->samples) {
                free(j->pids);
                free(j->samples);
                return -ENOMEM;
        }
        memcpy(j->pids, pids, n_pids * sizeof(*pids));
        j->n_pids = n_pids;
        j->proc_root = proc_root;
        j->refs = 2;
        pthread_mutex_init(&j->lock, NULL);
        /* CLOCK_MONOTONIC: a clock step must neither cut nor stretch the wait. */
        pthread_condattr_init(&cattr);
        pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
        pthread_cond_init(&j->progress, &cattr);
        pthread_condattr_destroy(&cattr);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        r = -pthread_create(&t, &attr, worker, j);
        pthread_attr_destroy(&attr);
        if (r < 0) {
                pthread_mutex_destroy(&j->lock);
                pthread_cond_destroy(&j->progress);
                free(j->pids);
                free(j->samples);
                return r;
        }
        *ret = TAKE_PTR(j);
        return 0;
}

/* Waits until the job is done, or has made no progress for the timeout; returns how far it got. */
static size_t job_wait(Job *j, bool *ret_stalled) {
        size_t seen, next;

        pthread_mutex_lock(&j->lock);
        for (;;) {
                struct timespec deadline;

                seen = j->next;
                if (seen >= j->n_pids)
                        break;
                clock_gettime(CLOCK_MONOTONIC, &deadline);
                deadline.tv_sec += CTL_WORKLOADS_PID_TIMEOUT_MS / 1000;
                deadline.tv_nsec += (CTL_WORKLOADS_PID_TIMEOUT_MS % 1000) * 1000000L;
                if (deadline.tv_nsec >= 1000000000L) {
                        deadline.tv_sec++;
                        deadline.tv_nsec -= 1000000000L;
                }
                while (j->next == seen)
                        if (pthread_cond_timedwait(&j->progress, &j->lock, &deadline) == ETIMEDOUT)
                                break;
                if (j->next == seen) {
                        j->abandoned = true; /* stuck in one process's files */
                        break;
                }
        }
        next = j->next;
        *ret_stalled = j->abandoned;
        pthread_mutex_unlock(&j->lock);
        return next;
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
                if (ws->n == *cap) {
                        size_t c = *cap ? *cap * 2 : 32;
                        CtlWorkload *p = realloc(ws->items, c * sizeof(*p));

                        if (!p)
                                return -ENOMEM;
                        ws->items = p;
                        *cap = c;
                }
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
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_free_ uint64_t *pids = NULL;
        _cleanup_(ctl_workloads_done) CtlWorkloads ws = {};
        size_t n_pids = 0, cap_pids = 0, cap = 0, done = 0;
        struct dirent *de;
        int r;

        d = opendir(proc_root);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                uint64_t pid;

                if (!procfs_pid_from_name(de->d_name, &pid))
                        continue;
                if (n_pids == cap_pids) {
                        size_t c = cap_pids ? cap_pids * 2 : 256;
                        uint64_t *p = realloc(pids, c * sizeof(*p));

                        if (!p)
                                return -ENOMEM;
                        pids = p;
                        cap_pids = c;
                }
                pids[n_pids++] = pid;
        }
        ws.n_scanned = n_pids;

        while (done < n_pids) {
                bool stalled;
                size_t got;
                Job *j;

                r = job_start(proc_root, pids + done, n_pids - done, &j);
                if (r < 0)
                        return r;
                got = job_wait(j, &stalled);
                for (size_t i = 0; i < got && r >= 0; i++) {
                        if (j->samples[i].error < 0)
                                ws.n_skipped++;
                        else
                                r = add_sample(&ws, &cap, &j->samples[i]);
                }
                if (stalled) {
                        ws.stalled_pids[ws.n_stalled++] = pids[done + got];
                        got++; /* the process it is stuck in */
                }
                job_unref(j);
                if (r < 0)
                        return r;
                done += got;
                if (ws.n_stalled >= CTL_WORKLOADS_STALLS_MAX) {
                        ws.n_unread = n_pids - done;
                        break;
                }
        }
        if (ws.n > 0)
                qsort(ws.items, ws.n, sizeof(*ws.items), cmp_workloads);
        *ret = ws;
        ws = (CtlWorkloads){};
        return 0;
}
