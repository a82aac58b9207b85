/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * thpguardctl watch: what THP is doing on the node right now. watch.c
 * samples the node once an interval into a WatchFrame (the rates are
 * thp-rates.c's), and runs the line and JSON loop; watch-output.c prints
 * a frame as a line or a JSON object; watch-tui.c is the full-screen view
 * (ncurses) on a terminal.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl.h"
#include "thp-rates.h"

#define CTL_WATCH_INTERVAL_DEFAULT_USEC UINT64_C(1000000)
/* 0.1 s to 1 h; a shorter interval would measure our own reads. */
#define CTL_WATCH_INTERVAL_MIN_USEC UINT64_C(100000)
#define CTL_WATCH_INTERVAL_MAX_USEC (UINT64_C(3600) * 1000000)
/* The share of one CPU the process scan may take, in permille: the rest of the 5 % target is the counters'.
 */
#define CTL_WATCH_SCAN_BUDGET_PERMILLE 30
/* How often the journal is read again for the last correction. */
#define CTL_WATCH_JOURNAL_EVERY_USEC (UINT64_C(10) * 1000000)

typedef struct CtlWatchOptions {
        CtlStatusOptions status; /* config, roots, journal dir, top */
        uint64_t interval_usec;
        uint64_t count; /* intervals to show; 0: until stopped */
        bool json;
} CtlWatchOptions;

/* The `watch` command: returns its exit status. */
int ctl_watch_run(const CtlWatchOptions *o);

/* One interval, as every front end shows it. */
typedef struct WatchFrame {
        uint64_t realtime_usec;
        uint64_t interval_usec;       /* asked for */
        char enabled[KNOB_VALUE_MAX]; /* "" if unknown */
        char defrag[KNOB_VALUE_MAX];
        const char *policy_state; /* "compliant", "drift", "error" or "none" */
        size_t n_policy_knobs, n_policy_drift, n_policy_error;

        bool journal; /* the journal could be read */
        bool have_last_correction;
        bool correction_is_new;        /* first seen in this frame (or at startup, in the first) */
        uint64_t last_correction_usec; /* CLOCK_REALTIME */
        char last_correction_knob[KNOB_PATH_MAX];
        char last_correction_writer[CTL_FIELD_MAX + 64];

        ThpRates rates;

        unsigned scan_every; /* the processes are scanned every this many intervals */
        bool scanned;        /* a scan ended this interval */
        double growth_sec;   /* the top list's growth is over this long */
        size_t n_with_thp;   /* processes with AnonHugePages at the last scan */
        size_t n_top;
        const ThpProcGrowth *top;
} WatchFrame;

/* A rate as shown: "-" when absent, else "%.1f" scaled by factor (1 for per second). */
const char *watch_rate_string(ThpRate r, double factor, char *buf, size_t size);
/* A size's fallback ratio as shown: "-" when unknown, else "%.2f" (0.00 to 1.00). */
const char *watch_ratio_string(const ThpSizeRates *z, char *buf, size_t size);

/* The line mode: the header (the columns thpguardctl(1) documents), then one line a frame. */
void watch_line_header(FILE *f, const WatchFrame *fr);
void watch_line_print(FILE *f, const WatchFrame *fr);

/* One JSON object on one line. -ENOMEM or -EIO. */
int watch_json_print(FILE *f, const WatchFrame *fr);

/* The session that watch-tui.c drives; watch.c's. */
typedef struct WatchSession WatchSession;

/* Samples the node now and returns the frame since the previous sample; valid until the next call. */
int watch_session_tick(WatchSession *w, const WatchFrame **ret);

/*
 * The full-screen view until q, Ctrl-C or o->count intervals; returns the
 * exit status, or -ENOTTY when the terminal has no terminfo entry (then
 * nothing was drawn).
 */
int watch_tui_run(WatchSession *w, const CtlWatchOptions *o);
