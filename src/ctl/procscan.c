/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounded-read.h"
#include "ctl.h"
#include "thpguard/macro.h"
#include "thpguard/number.h"

static int cmp_by_anon_huge(const void *a, const void *b) {
        const CtlProcess *x = a, *y = b;

        if (x->rollup.anon_huge_pages_kb != y->rollup.anon_huge_pages_kb)
                return x->rollup.anon_huge_pages_kb < y->rollup.anon_huge_pages_kb ? 1 : -1;
        if (x->rollup.rss_kb != y->rollup.rss_kb)
                return x->rollup.rss_kb < y->rollup.rss_kb ? 1 : -1;
        return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* A process whose file did not answer in time: counted, and the first few named. */
static void note_skipped(CtlProcScan *s, uint64_t pid) {
        if (s->n_skipped < ELEMENTSOF(s->skipped))
                s->skipped[s->n_skipped] = pid;
        s->n_skipped++;
}

void ctl_proc_scan_done(CtlProcScan *s) {
        free(s->top);
        *s = (CtlProcScan){};
}

int ctl_proc_scan(const char *proc_root, size_t top_n, CtlProcScan *ret) {
        _cleanup_free_ uint64_t *pids = NULL;
        _cleanup_free_ CtlProcess *cand = NULL;
        _cleanup_(ctl_bounded_reader_freep) CtlBoundedReader *br = NULL;
        CtlProcScan s = {};
        size_t n_pids, n_cand = 0, cap_cand = 0;
        int r;

        r = procfs_list_pids(proc_root, &pids, &n_pids);
        if (r < 0)
                return r;
        r = ctl_bounded_reader_new(proc_root, CTL_BOUNDED_READ_DEADLINE_USEC, &br);
        if (r < 0)
                return r;

        /*
         * Only smaps_rollup for everyone: status is read for the top few
         * alone, so a node with thousands of processes costs one file each.
         */
        for (size_t i = 0; i < n_pids; i++) {
                uint64_t pid = pids[i];
                ProcSmapsRollup rollup;

                s.n_scanned++;
                r = ctl_bounded_read_smaps_rollup(br, pid, &rollup);
                if (r == -ETIMEDOUT) {
                        note_skipped(&s, pid);
                        continue;
                }
                if (r < 0) {
                        ProcStat st;

                        /* A kernel thread has no mm, so no smaps_rollup: khugepaged is among these. */
                        s.n_unreadable++;
                        if (s.khugepaged_pid == 0 && ctl_bounded_read_stat(br, pid, &st) >= 0 &&
                            procfs_stat_is_khugepaged(&st, pid))
                                s.khugepaged_pid = pid;
                        continue;
                }
                s.n_measured++;
                if (rollup.anon_huge_pages_kb == 0)
                        continue;
                s.n_with_thp++;
                if (array_grow(&cand, &cap_cand, n_cand, sizeof(*cand), 64, 0) < 0)
                        return -ENOMEM;
                cand[n_cand++] = (CtlProcess){ .pid = pid, .rollup = rollup, .thp_enabled = -1 };
        }

        if (n_cand > 0)
                qsort(cand, n_cand, sizeof(*cand), cmp_by_anon_huge);
        /* Compact the survivors in place: a process gone since its rollup is dropped, the next moves up. */
        for (size_t i = 0; i < n_cand && s.n_top < top_n; i++) {
                ProcStatus st;

                r = ctl_bounded_read_status(br, cand[i].pid, &st);
                if (r < 0) {
                        /* Gone since its rollup (unreadable), or stuck (skipped): not measured. */
                        s.n_measured--;
                        s.n_with_thp--;
                        if (r == -ETIMEDOUT)
                                note_skipped(&s, cand[i].pid);
                        else
                                s.n_unreadable++;
                        continue;
                }
                cand[s.n_top] = cand[i];
                snprintf(cand[s.n_top].name, sizeof(cand[s.n_top].name), "%s", st.name);
                cand[s.n_top].thp_enabled = st.thp_enabled;
                s.n_top++;
        }
        s.top = TAKE_PTR(cand);
        *ret = s;
        return 0;
}
