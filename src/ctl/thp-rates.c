/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "thp-rates.h"
#include "thpguard/macro.h"

static const char *const counter_names[_THP_COUNTER_MAX] = {
        [THP_COUNTER_FAULT_ALLOC] = "thp_fault_alloc",
        [THP_COUNTER_FAULT_FALLBACK] = "thp_fault_fallback",
        [THP_COUNTER_COLLAPSE_ALLOC] = "thp_collapse_alloc",
        [THP_COUNTER_COLLAPSE_ALLOC_FAILED] = "thp_collapse_alloc_failed",
        [THP_COUNTER_SPLIT_PAGE] = "thp_split_page",
        [THP_COUNTER_DEFERRED_SPLIT_PAGE] = "thp_deferred_split_page",
        [THP_COUNTER_UNDERUSED_SPLIT_PAGE] = "thp_underused_split_page",
        [THP_COUNTER_COMPACT_STALL] = "compact_stall",
        [THP_COUNTER_COMPACT_FAIL] = "compact_fail",
        [THP_COUNTER_COMPACT_SUCCESS] = "compact_success",
        [THP_COUNTER_PAGES_COLLAPSED] = "pages_collapsed",
        [THP_COUNTER_FULL_SCANS] = "full_scans",
        [THP_COUNTER_KHUGEPAGED_CPU_USEC] = "khugepaged_cpu_usec",
        [THP_COUNTER_PSI_SOME_USEC] = "memory_some_stall_usec",
        [THP_COUNTER_PSI_FULL_USEC] = "memory_full_stall_usec",
};

/* The counters that come from /proc/vmstat: the first ones, up to compact_success. */
#define VMSTAT_COUNTERS (THP_COUNTER_COMPACT_SUCCESS + 1)

const char *thp_counter_name(ThpCounter c) {
        return (unsigned)c < _THP_COUNTER_MAX ? counter_names[c] : NULL;
}

void thp_sample_init(ThpSample *s) {
        *s = (ThpSample){
                .anon_huge_pages_kb = PROCFS_UNKNOWN,
                .psi_some_avg10_centi = PROCFS_UNKNOWN,
                .psi_full_avg10_centi = PROCFS_UNKNOWN,
        };
        for (size_t i = 0; i < _THP_COUNTER_MAX; i++)
                s->counters[i] = PROCFS_UNKNOWN;
}

void thp_sample_take_vmstat(ThpSample *s, const ProcVmstat *v) {
        for (size_t i = 0; i < VMSTAT_COUNTERS; i++)
                s->counters[i] = procfs_vmstat_get(v, counter_names[i]);
}

ThpRate thp_rate(uint64_t a, uint64_t b, uint64_t elapsed_usec) {
        double sec = (double)elapsed_usec / 1e6;

        if (a == PROCFS_UNKNOWN || b == PROCFS_UNKNOWN || elapsed_usec == 0)
                return (ThpRate){ .state = THP_RATE_ABSENT };
        if (b < a)
                return (ThpRate){ .state = THP_RATE_RESET, .per_sec = (double)b / sec };
        return (ThpRate){ .state = THP_RATE_OK, .per_sec = (double)(b - a) / sec };
}

static const ThpSizeSample *size_find(const ThpSample *s, uint64_t size_kb) {
        for (size_t i = 0; i < s->n_sizes; i++)
                if (s->sizes[i].size_kb == size_kb)
                        return &s->sizes[i];
        return NULL;
}

int thp_rates_compute(const ThpSample *prev, const ThpSample *cur, uint64_t elapsed_usec, ThpRates *ret) {
        ThpRates r = {
                .elapsed_sec = (double)elapsed_usec / 1e6,
                .anon_huge_pages_kb = cur->anon_huge_pages_kb,
                .psi_some_avg10_centi = cur->psi_some_avg10_centi,
                .psi_full_avg10_centi = cur->psi_full_avg10_centi,
        };

        if (elapsed_usec == 0)
                return -EINVAL;
        for (size_t i = 0; i < _THP_COUNTER_MAX; i++)
                r.counters[i] = thp_rate(prev->counters[i], cur->counters[i], elapsed_usec);
        /* Another khugepaged (THP turned off and on) counts its CPU from 0, whatever the figures say. */
        if (r.counters[THP_COUNTER_KHUGEPAGED_CPU_USEC].state == THP_RATE_OK &&
            prev->khugepaged_pid != cur->khugepaged_pid)
                r.counters[THP_COUNTER_KHUGEPAGED_CPU_USEC] =
                    (ThpRate){ .state = THP_RATE_RESET,
                               .per_sec =
                                   (double)cur->counters[THP_COUNTER_KHUGEPAGED_CPU_USEC] / r.elapsed_sec };

        if (prev->anon_huge_pages_kb != PROCFS_UNKNOWN && cur->anon_huge_pages_kb != PROCFS_UNKNOWN &&
            prev->anon_huge_pages_kb <= INT64_MAX && cur->anon_huge_pages_kb <= INT64_MAX) {
                r.anon_huge_pages_change_known = true;
                r.anon_huge_pages_change_kb =
                    (int64_t)cur->anon_huge_pages_kb - (int64_t)prev->anon_huge_pages_kb;
        }

        for (size_t i = 0; i < cur->n_sizes && i < ELEMENTSOF(r.sizes); i++) {
                const ThpSizeSample *c = &cur->sizes[i], *p = size_find(prev, c->size_kb);
                ThpSizeRates *z = &r.sizes[r.n_sizes++];

                z->size_kb = c->size_kb;
                z->anon_fault_alloc = p ? thp_rate(p->anon_fault_alloc, c->anon_fault_alloc, elapsed_usec)
                                        : (ThpRate){ .state = THP_RATE_ABSENT };
                z->anon_fault_fallback =
                    p ? thp_rate(p->anon_fault_fallback, c->anon_fault_fallback, elapsed_usec)
                      : (ThpRate){ .state = THP_RATE_ABSENT };
                z->split =
                    p ? thp_rate(p->split, c->split, elapsed_usec) : (ThpRate){ .state = THP_RATE_ABSENT };
                z->fallback_ratio_known = z->anon_fault_alloc.state != THP_RATE_ABSENT &&
                                          z->anon_fault_fallback.state != THP_RATE_ABSENT &&
                                          z->anon_fault_alloc.per_sec + z->anon_fault_fallback.per_sec > 0;
                if (z->fallback_ratio_known)
                        z->fallback_ratio = z->anon_fault_fallback.per_sec /
                                            (z->anon_fault_alloc.per_sec + z->anon_fault_fallback.per_sec);
        }
        *ret = r;
        return 0;
}

static int cmp_pid(const void *a, const void *b) {
        const ThpProcSample *x = a, *y = b;
        return (x->pid > y->pid) - (x->pid < y->pid);
}

void thp_proc_samples_sort(ThpProcSample *s, size_t n) {
        if (n > 0)
                qsort(s, n, sizeof(*s), cmp_pid);
}

/* Most growth first; then the larger now, then the lower pid, so equal figures list the same way each time.
 */
static bool grew_more(const ThpProcGrowth *x, const ThpProcGrowth *y) {
        if (x->growth_kb != y->growth_kb)
                return x->growth_kb > y->growth_kb;
        if (x->anon_huge_pages_kb != y->anon_huge_pages_kb)
                return x->anon_huge_pages_kb > y->anon_huge_pages_kb;
        return x->pid < y->pid;
}

size_t thp_growth_top(const ThpProcSample *prev, size_t n_prev, const ThpProcSample *cur, size_t n_cur,
                      size_t top_n, ThpProcGrowth *ret) {
        size_t n = 0;

        for (size_t i = 0; i < n_cur && top_n > 0; i++) {
                const ThpProcSample *c = &cur[i], *p = NULL;
                uint64_t before = 0;
                ThpProcGrowth g;
                size_t at;

                if (n_prev > 0)
                        p = bsearch(c, prev, n_prev, sizeof(*prev), cmp_pid);
                /* A pid that now has another name is another process: it grew from 0. */
                if (p && strcmp(p->name, c->name) == 0)
                        before = p->anon_huge_pages_kb;
                if (c->anon_huge_pages_kb <= before)
                        continue;
                g = (ThpProcGrowth){ .pid = c->pid,
                                     .anon_huge_pages_kb = c->anon_huge_pages_kb,
                                     .growth_kb = c->anon_huge_pages_kb - before };
                memcpy(g.name, c->name, sizeof(g.name));
                g.name[sizeof(g.name) - 1] = '\0';

                /* Insertion into the sorted top_n: a few entries, read every interval. */
                if (n == top_n && !grew_more(&g, &ret[n - 1]))
                        continue;
                at = n < top_n ? n++ : n - 1;
                while (at > 0 && grew_more(&g, &ret[at - 1])) {
                        ret[at] = ret[at - 1];
                        at--;
                }
                ret[at] = g;
        }
        return n;
}

unsigned thp_scan_every(uint64_t scan_cpu_usec, uint64_t interval_usec, unsigned budget_permille) {
        uint64_t budget_usec, every;

        if (interval_usec == 0 || budget_permille == 0)
                return THP_SCAN_EVERY_MAX;
        budget_usec = interval_usec / 1000 * budget_permille;
        if (budget_usec == 0)
                return THP_SCAN_EVERY_MAX;
        every = scan_cpu_usec / budget_usec + (scan_cpu_usec % budget_usec != 0);
        if (every < 1)
                return 1;
        return every > THP_SCAN_EVERY_MAX ? THP_SCAN_EVERY_MAX : (unsigned)every;
}
