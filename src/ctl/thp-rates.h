/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What THP is doing right now, as rates: two samples of the kernel's
 * counters (vmstat, khugepaged, PSI, the per-size mTHP stats) and the time
 * between them give per-second rates, and two scans of the processes give
 * who grew. Pure: `thpguardctl watch` fills the samples from the node,
 * the unit tests from fixtures.
 *
 * The two rules every rate follows:
 *   - a counter the kernel lacks (in either sample) is THP_RATE_ABSENT,
 *     never 0;
 *   - a counter that went backwards (a reset: a new khugepaged after THP
 *     was turned off and on; a wrap) is THP_RATE_RESET and counts from 0,
 *     as Prometheus' rate() does: its rate is the new value over the
 *     interval, never negative.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "thpguard/procfs.h"

typedef enum ThpCounter {
        THP_COUNTER_FAULT_ALLOC,           /* vmstat thp_fault_alloc */
        THP_COUNTER_FAULT_FALLBACK,        /* thp_fault_fallback */
        THP_COUNTER_COLLAPSE_ALLOC,        /* thp_collapse_alloc: khugepaged collapsed */
        THP_COUNTER_COLLAPSE_ALLOC_FAILED, /* thp_collapse_alloc_failed */
        THP_COUNTER_SPLIT_PAGE,            /* thp_split_page */
        THP_COUNTER_DEFERRED_SPLIT_PAGE,   /* thp_deferred_split_page */
        THP_COUNTER_UNDERUSED_SPLIT_PAGE,  /* thp_underused_split_page (6.12+) */
        THP_COUNTER_COMPACT_STALL,         /* compact_stall */
        THP_COUNTER_COMPACT_FAIL,          /* compact_fail */
        THP_COUNTER_COMPACT_SUCCESS,       /* compact_success */
        THP_COUNTER_PAGES_COLLAPSED,       /* sysfs khugepaged/pages_collapsed */
        THP_COUNTER_FULL_SCANS,            /* sysfs khugepaged/full_scans */
        THP_COUNTER_KHUGEPAGED_CPU_USEC,   /* khugepaged's utime + stime */
        THP_COUNTER_PSI_SOME_USEC,         /* /proc/pressure/memory some total */
        THP_COUNTER_PSI_FULL_USEC,         /* and full total */
        _THP_COUNTER_MAX,
} ThpCounter;

/* The counter's name as the kernel spells it ("thp_fault_alloc"), or ours ("khugepaged_cpu_usec"). */
const char *thp_counter_name(ThpCounter c);

/* The mTHP sizes a kernel has: 8 kB to 2 MiB on x86 (9), up to 16 GiB on arm64 with 64 kB pages (19). */
#define THP_SIZES_MAX 24

typedef struct ThpSizeSample {
        uint64_t size_kb;
        uint64_t anon_fault_alloc;    /* hugepages-NkB/stats/anon_fault_alloc; PROCFS_UNKNOWN: absent */
        uint64_t anon_fault_fallback; /* .../anon_fault_fallback */
        uint64_t split;               /* .../split: huge pages of this size split (not on every kernel) */
} ThpSizeSample;

typedef struct ThpSample {
        uint64_t counters[_THP_COUNTER_MAX]; /* PROCFS_UNKNOWN: absent */
        uint64_t khugepaged_pid;             /* 0: none; another pid than last time resets its CPU */
        uint64_t anon_huge_pages_kb;         /* meminfo AnonHugePages; PROCFS_UNKNOWN: absent */
        uint64_t psi_some_avg10_centi;       /* hundredths of a percent; PROCFS_UNKNOWN: absent */
        uint64_t psi_full_avg10_centi;
        size_t n_sizes;
        ThpSizeSample sizes[THP_SIZES_MAX]; /* ascending size */
} ThpSample;

/* Everything absent. */
void thp_sample_init(ThpSample *s);

/* Takes the vmstat counters above from a parsed /proc/vmstat; the others are left as they are. */
void thp_sample_take_vmstat(ThpSample *s, const ProcVmstat *v);

typedef enum ThpRateState {
        THP_RATE_ABSENT, /* the kernel lacks the counter */
        THP_RATE_OK,
        THP_RATE_RESET, /* it went backwards: counted from 0 */
} ThpRateState;

typedef struct ThpRate {
        ThpRateState state;
        double per_sec; /* >= 0; 0 when absent */
} ThpRate;

typedef struct ThpSizeRates {
        uint64_t size_kb;
        ThpRate anon_fault_alloc, anon_fault_fallback, split;
        /*
         * The share of this size's anonymous huge page faults in the interval
         * that fell back to a smaller size: fallback / (alloc + fallback) of
         * the two rates above, 0 to 1. Unknown where either is absent, or
         * where the size took no fault in the interval (0 / 0).
         */
        bool fallback_ratio_known;
        double fallback_ratio;
} ThpSizeRates;

typedef struct ThpRates {
        double elapsed_sec;
        ThpRate counters[_THP_COUNTER_MAX];
        uint64_t anon_huge_pages_kb;       /* the second sample's; PROCFS_UNKNOWN: absent */
        bool anon_huge_pages_change_known; /* both samples have it */
        int64_t anon_huge_pages_change_kb; /* a gauge: may be negative */
        uint64_t psi_some_avg10_centi;     /* the second sample's */
        uint64_t psi_full_avg10_centi;
        size_t n_sizes; /* the second sample's sizes */
        ThpSizeRates sizes[THP_SIZES_MAX];
} ThpRates;

/* The rate of one counter from a to b over elapsed_usec (> 0). */
ThpRate thp_rate(uint64_t a, uint64_t b, uint64_t elapsed_usec);

/* Rates from prev to cur, elapsed_usec apart. -EINVAL if elapsed_usec is 0. */
int thp_rates_compute(const ThpSample *prev, const ThpSample *cur, uint64_t elapsed_usec, ThpRates *ret);

/* ---- who grew --------------------------------------------------------------- */

typedef struct ThpProcSample {
        uint64_t pid;
        uint64_t anon_huge_pages_kb;
        char name[PROCFS_NAME_MAX];
} ThpProcSample;

typedef struct ThpProcGrowth {
        uint64_t pid;
        char name[PROCFS_NAME_MAX];
        uint64_t anon_huge_pages_kb; /* now */
        uint64_t growth_kb;          /* since the previous scan; > 0 */
} ThpProcGrowth;

/* Sorts a scan by pid, as thp_growth_top() wants its previous scan. */
void thp_proc_samples_sort(ThpProcSample *s, size_t n);

/*
 * The processes of cur whose AnonHugePages grew since prev (sorted by pid;
 * a process only in cur, or whose pid now has another name, grew from 0),
 * most first, at most top_n of them into ret (room for top_n). Returns how
 * many.
 */
size_t thp_growth_top(const ThpProcSample *prev, size_t n_prev, const ThpProcSample *cur, size_t n_cur,
                      size_t top_n, ThpProcGrowth *ret);

/* ---- how often the processes are scanned ------------------------------------ */

/* The longest gap between two process scans, in intervals. */
#define THP_SCAN_EVERY_MAX 60

/*
 * Every how many intervals a process scan that cost scan_cpu_usec may run
 * so that it takes at most budget_permille of one CPU at interval_usec: 1
 * when it fits every interval, at most THP_SCAN_EVERY_MAX.
 */
unsigned thp_scan_every(uint64_t scan_cpu_usec, uint64_t interval_usec, unsigned budget_permille);
