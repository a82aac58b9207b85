/* SPDX-License-Identifier: MIT */
/*
 * thpguardctl watch: samples the node once an interval and turns two
 * samples into rates (thp-rates.c). Read-only, with the roots and the
 * policy of `status`. The counters are read every interval; the process
 * scan (one smaps_rollup a process) runs every interval when it fits in
 * CTL_WATCH_SCAN_BUDGET_PERMILLE of a CPU and less often when not, and the
 * frame says how often.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "thpguard/compliance.h"
#include "thpguard/event-util.h"
#include "thpguard/knob-value.h"
#include "thpguard/macro.h"
#include "thpguard/metrics-kernel.h"
#include "thpguard/number.h"
#include "thpguard/writer.h"
#include "watch.h"

/* All processes with huge pages are kept: one left out would grow by its total in the next scan. */
#define SCAN_PROCESSES_MAX 1000000

struct WatchSession {
        const CtlWatchOptions *o;
        CtlNode node; /* the startup collection: policy, sizes, journal */
        Sysfs *sysfs;
        ProcVmstat *vmstat;
        MetricsKhugepaged khugepaged;

        ThpSample prev;
        uint64_t prev_usec; /* CLOCK_MONOTONIC of prev */

        uint64_t ticks;
        unsigned scan_every;
        uint64_t scan_usec; /* CLOCK_MONOTONIC of the last scan */
        ThpProcSample *scan;
        size_t n_scan;
        ThpProcGrowth *top;

        uint64_t journal_read_usec; /* CLOCK_MONOTONIC of the last read */

        WatchFrame frame;
};

static void watch_session_free(WatchSession *w) {
        if (!w)
                return;
        ctl_node_done(&w->node);
        sysfs_free(w->sysfs);
        free(w->vmstat);
        free(w->scan);
        free(w->top);
        free(w);
}
DEFINE_TRIVIAL_CLEANUP_FUNC(WatchSession *, watch_session_free);

/* The vmstat counters, AnonHugePages and PSI; what cannot be read stays absent. */
static void sample_proc(WatchSession *w, ThpSample *s) {
        const char *root = w->o->status.proc_root;
        ProcMeminfo mi;
        ProcPressure pr;

        if (procfs_read_vmstat(root, w->vmstat) >= 0)
                thp_sample_take_vmstat(s, w->vmstat);
        if (procfs_read_meminfo(root, &mi) >= 0)
                s->anon_huge_pages_kb = mi.anon_huge_pages_kb;
        /* Before 4.20, or booted with psi=0: absent. */
        if (procfs_read_pressure(root, &pr) >= 0) {
                s->counters[THP_COUNTER_PSI_SOME_USEC] = pr.some_total_usec;
                s->counters[THP_COUNTER_PSI_FULL_USEC] = pr.full_total_usec;
                s->psi_some_avg10_centi = pr.some_avg10_centi;
                s->psi_full_avg10_centi = pr.full_avg10_centi;
        }
}

static void sample_khugepaged(WatchSession *w, ThpSample *s) {
        uint64_t usec;

        s->counters[THP_COUNTER_PAGES_COLLAPSED] = ctl_sysfs_u64(w->sysfs, "khugepaged/pages_collapsed");
        s->counters[THP_COUNTER_FULL_SCANS] = ctl_sysfs_u64(w->sysfs, "khugepaged/full_scans");
        if (metrics_read_khugepaged(w->o->status.proc_root, &w->khugepaged, now_usec(CLOCK_MONOTONIC),
                                    &usec) >= 0) {
                s->counters[THP_COUNTER_KHUGEPAGED_CPU_USEC] = usec;
                s->khugepaged_pid = w->khugepaged.pid;
        }
}

/* The per-size anon_fault_* and split of the sizes the startup collection found (they are fixed at boot). */
static void sample_sizes(WatchSession *w, ThpSample *s) {
        for (size_t i = 0; i < w->node.n_sizes && s->n_sizes < ELEMENTSOF(s->sizes); i++) {
                const CtlSizeStats *z = &w->node.sizes[i];
                char alloc[64], fallback[64], split[64];

                snprintf(alloc, sizeof(alloc), "%s/stats/anon_fault_alloc", z->dir);
                snprintf(fallback, sizeof(fallback), "%s/stats/anon_fault_fallback", z->dir);
                snprintf(split, sizeof(split), "%s/stats/split", z->dir);
                s->sizes[s->n_sizes++] = (ThpSizeSample){
                        .size_kb = z->size_kb,
                        .anon_fault_alloc = ctl_sysfs_u64(w->sysfs, alloc),
                        .anon_fault_fallback = ctl_sysfs_u64(w->sysfs, fallback),
                        .split = ctl_sysfs_u64(w->sysfs, split),
                };
        }
}

/* enabled and defrag as they read, and every knob of the policy against the kernel. */
static void sample_knobs(WatchSession *w, WatchFrame *fr) {
        static const struct {
                const char *name;
                size_t offset;
        } shown[] = {
                { "enabled", offsetof(WatchFrame, enabled) },
                { "defrag", offsetof(WatchFrame, defrag) },
        };
        const Policy *p = w->node.policy;

        for (size_t i = 0; i < ELEMENTSOF(shown); i++) {
                const KnobSpec *spec = knob_spec_find(KNOB_GROUP_TOP, shown[i].name);
                char *dst = (char *)fr + shown[i].offset, buf[KNOB_READ_MAX + 1];
                KnobValue v;
                size_t len;

                dst[0] = '\0';
                if (spec && sysfs_read(w->sysfs, shown[i].name, buf, sizeof(buf), &len) >= 0 &&
                    knob_value_parse(spec->type, buf, len, &v) >= 0)
                        snprintf(dst, KNOB_VALUE_MAX, "%s", v.active);
        }

        fr->n_policy_knobs = fr->n_policy_drift = fr->n_policy_error = 0;
        for (size_t i = 0; p && i < p->n_knobs; i++) {
                KnobStatus st;

                compliance_read(w->sysfs, &p->knobs[i], NULL, &st);
                fr->n_policy_knobs++;
                fr->n_policy_drift += st.state == KNOB_STATE_DRIFT;
                fr->n_policy_error += st.state == KNOB_STATE_ERROR;
        }
        fr->policy_state = !p                       ? "none"
                           : fr->n_policy_error > 0 ? "error"
                           : fr->n_policy_drift > 0 ? "drift"
                                                    : "compliant";
}

/* The latest foreign write thpguardd corrected (or, in audit mode, reported), from its journal records. */
static void last_correction(WatchSession *w, const CtlForeign *f) {
        const CtlKnobWrites *latest = NULL;
        WatchFrame *fr = &w->frame;

        for (size_t i = 0; i < f->n_knobs; i++)
                if (f->knobs[i].last_usec > 0 && (!latest || f->knobs[i].last_usec > latest->last_usec))
                        latest = &f->knobs[i];
        if (!latest || (fr->have_last_correction && latest->last_usec <= fr->last_correction_usec))
                return;
        fr->have_last_correction = true;
        fr->correction_is_new = true;
        fr->last_correction_usec = latest->last_usec;
        snprintf(fr->last_correction_knob, sizeof(fr->last_correction_knob), "%s", latest->knob);
        writer_describe_as(WRITER_FORM_TABLE, latest->last_writer, latest->last_pid, latest->last_exited, "",
                           fr->last_correction_writer, sizeof(fr->last_correction_writer));
}

static void sample_journal(WatchSession *w) {
        _cleanup_(ctl_foreign_done) CtlForeign f = {};
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        char why[1024];

        if (w->journal_read_usec != 0 && now - w->journal_read_usec < CTL_WATCH_JOURNAL_EVERY_USEC)
                return;
        w->journal_read_usec = now;
        /* From the last correction known (it is read again, harmlessly), or the last 24 h. */
        w->frame.journal =
            ctl_journal_read(
                &(CtlJournalSource){ w->o->status.journal_dir, w->o->status.machine_id,
                                     w->o->status.daemon_exe, false },
                w->frame.have_last_correction
                    ? w->frame.last_correction_usec
                    : u64_sat_sub(now_usec(CLOCK_REALTIME), CTL_STATUS_WRITES_HOURS * CTL_USEC_PER_HOUR),
                &f, why, sizeof(why)) >= 0;
        if (w->frame.journal)
                last_correction(w, &f);
}

static uint64_t thread_cpu_usec(void) {
        return now_usec(CLOCK_THREAD_CPUTIME_ID);
}

/* One scan of the processes: everyone with AnonHugePages, by pid. */
static int scan_processes(WatchSession *w, ThpProcSample **ret, size_t *ret_n, size_t *ret_with_thp) {
        _cleanup_(ctl_proc_scan_done) CtlProcScan scan = {};
        _cleanup_free_ ThpProcSample *s = NULL;
        int r;

        r = ctl_proc_scan(w->o->status.proc_root, SCAN_PROCESSES_MAX, &scan);
        if (r < 0)
                return r;
        s = calloc(scan.n_top ? scan.n_top : 1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < scan.n_top; i++) {
                s[i].pid = scan.top[i].pid;
                s[i].anon_huge_pages_kb = scan.top[i].rollup.anon_huge_pages_kb;
                snprintf(s[i].name, sizeof(s[i].name), "%s", scan.top[i].name);
        }
        thp_proc_samples_sort(s, scan.n_top);
        *ret_n = scan.n_top;
        *ret_with_thp = scan.n_with_thp;
        *ret = TAKE_PTR(s);
        return 0;
}

/* Scans when it is due, and sets how often the next ones may run from what this one cost. */
static void sample_processes(WatchSession *w, uint64_t now) {
        _cleanup_free_ ThpProcSample *cur = NULL;
        WatchFrame *fr = &w->frame;
        size_t n_cur, with_thp;
        uint64_t cpu;

        fr->scanned = false;
        if (w->ticks % w->scan_every != 0)
                return;
        cpu = thread_cpu_usec();
        if (scan_processes(w, &cur, &n_cur, &with_thp) < 0)
                return; /* the proc root was checked at startup; a failure now is transient */
        cpu = thread_cpu_usec() - cpu;
        w->scan_every = thp_scan_every(cpu, w->o->interval_usec, CTL_WATCH_SCAN_BUDGET_PERMILLE);

        fr->n_top = thp_growth_top(w->scan, w->n_scan, cur, n_cur, w->o->status.top, w->top);
        fr->top = w->top;
        fr->n_with_thp = with_thp;
        fr->growth_sec = (double)(now - w->scan_usec) / 1e6;
        fr->scanned = true;
        free(w->scan);
        w->scan = TAKE_PTR(cur);
        w->n_scan = n_cur;
        w->scan_usec = now;
}

static void sample(WatchSession *w, ThpSample *s) {
        thp_sample_init(s);
        sample_proc(w, s);
        sample_khugepaged(w, s);
        sample_sizes(w, s);
}

int watch_session_tick(WatchSession *w, const WatchFrame **ret) {
        WatchFrame *fr = &w->frame;
        uint64_t now;
        ThpSample cur;
        int r;

        /* The startup's correction is new in the first frame. */
        if (w->ticks > 0)
                fr->correction_is_new = false;
        sample(w, &cur);
        now = now_usec(CLOCK_MONOTONIC);
        r = thp_rates_compute(&w->prev, &cur, now > w->prev_usec ? now - w->prev_usec : 1, &fr->rates);
        if (r < 0)
                return r;
        w->prev = cur;
        w->prev_usec = now;
        w->ticks++;

        fr->realtime_usec = now_usec(CLOCK_REALTIME);
        fr->interval_usec = w->o->interval_usec;
        sample_knobs(w, fr);
        sample_journal(w);
        sample_processes(w, now);
        fr->scan_every = w->scan_every;
        *ret = fr;
        return 0;
}

static int watch_session_new(const CtlWatchOptions *o, WatchSession **ret) {
        _cleanup_(watch_session_freep) WatchSession *w = NULL;
        CtlStatusOptions startup = o->status;
        size_t with_thp;
        uint64_t cpu;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->o = o;
        /* The roots, the policy and the sizes as status checks and finds them; it prints why it fails. */
        startup.top = 0;
        r = ctl_node_collect(&startup, &w->node);
        if (r < 0)
                return r;
        r = sysfs_new(o->status.sysfs_root, &w->sysfs);
        if (r < 0)
                return r;
        w->vmstat = malloc(sizeof(*w->vmstat));
        w->top = calloc(o->status.top ? o->status.top : 1, sizeof(*w->top));
        if (!w->vmstat || !w->top)
                return -ENOMEM;

        /* The baseline: the first interval's rates and growth are measured from here. */
        last_correction(w, &w->node.foreign);
        w->frame.journal = w->node.journal_error >= 0;
        w->journal_read_usec = now_usec(CLOCK_MONOTONIC);
        cpu = thread_cpu_usec();
        r = scan_processes(w, &w->scan, &w->n_scan, &with_thp);
        if (r < 0) {
                fprintf(stderr, "thpguardctl: --proc-root %s: cannot list processes: %s\n",
                        o->status.proc_root, strerror(-r));
                return r;
        }
        w->scan_every =
            thp_scan_every(thread_cpu_usec() - cpu, o->interval_usec, CTL_WATCH_SCAN_BUDGET_PERMILLE);
        w->scan_usec = now_usec(CLOCK_MONOTONIC);
        sample(w, &w->prev);
        w->prev_usec = now_usec(CLOCK_MONOTONIC);
        *ret = TAKE_PTR(w);
        return 0;
}

/* Sleeps until deadline (CLOCK_MONOTONIC, usec), whatever signals come in between. */
static void sleep_until(uint64_t deadline) {
        struct timespec ts = { .tv_sec = (time_t)(deadline / USEC_PER_SEC),
                               .tv_nsec = (long)(deadline % USEC_PER_SEC * 1000) };

        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
}

/* Not a terminal: a line (or a JSON object) an interval, on a fixed schedule that does not drift. */
static int run_lines(WatchSession *w, const CtlWatchOptions *o) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC);

        for (uint64_t i = 0; o->count == 0 || i < o->count; i++) {
                const WatchFrame *fr;
                int r;

                deadline += o->interval_usec;
                sleep_until(deadline);
                r = watch_session_tick(w, &fr);
                if (r < 0) {
                        fprintf(stderr, "thpguardctl watch: %s\n", strerror(-r));
                        return CTL_EXIT_FAILURE;
                }
                if (o->json)
                        r = watch_json_print(stdout, fr);
                else {
                        if (i == 0)
                                watch_line_header(stdout, fr);
                        watch_line_print(stdout, fr);
                }
                /* A reader that went away (head, a closed pipe) ends the watch. */
                if (r < 0 || fflush(stdout) != 0 || ferror(stdout))
                        return CTL_EXIT_FAILURE;
                /* Behind by more than an interval (suspended, a slow scan): start the schedule again. */
                if (now_usec(CLOCK_MONOTONIC) > deadline + o->interval_usec)
                        deadline = now_usec(CLOCK_MONOTONIC);
        }
        return CTL_EXIT_OK;
}

int ctl_watch_run(const CtlWatchOptions *o) {
        _cleanup_(watch_session_freep) WatchSession *w = NULL;
        int r;

        r = watch_session_new(o, &w);
        if (r == -ENOMEM)
                fprintf(stderr, "thpguardctl watch: out of memory\n");
        if (r < 0)
                return CTL_EXIT_FAILURE;
        if (!o->json && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO)) {
                r = watch_tui_run(w, o);
                if (r != -ENOTTY)
                        return r;
                fprintf(stderr,
                        "thpguardctl watch: no terminfo entry for TERM=%s: one line an interval instead\n",
                        getenv("TERM") ?: "");
        }
        return run_lines(w, o);
}
