/* SPDX-License-Identifier: MIT */
/*
 * thpguardctl watch off a terminal: one line an interval under a header
 * printed once (a pipe's reader parses columns; a header repeated every
 * screenful, as vmstat does, would be a line to skip), or one JSON object
 * a line. A value the kernel does not have is "-" (null in JSON), never 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "thpguard/escape.h"
#include "thpguard/json-util.h"
#include "thpguard/macro.h"
#include "watch.h"

const char *watch_rate_string(ThpRate r, double factor, char *buf, size_t size) {
        if (r.state == THP_RATE_ABSENT)
                snprintf(buf, size, "-");
        else
                snprintf(buf, size, "%.1f", r.per_sec * factor);
        return buf;
}

/* The rate columns, in the order of the line and of thpguardctl(1). */
static const struct {
        const char *name;
        ThpCounter counter;
        double factor; /* from per second of the counter's unit */
} rate_columns[] = {
        { "fault/s", THP_COUNTER_FAULT_ALLOC, 1 },
        { "fallback/s", THP_COUNTER_FAULT_FALLBACK, 1 },
        { "collapse/s", THP_COUNTER_COLLAPSE_ALLOC, 1 },
        { "collapse_fail/s", THP_COUNTER_COLLAPSE_ALLOC_FAILED, 1 },
        { "split/s", THP_COUNTER_SPLIT_PAGE, 1 },
        { "split_deferred/s", THP_COUNTER_DEFERRED_SPLIT_PAGE, 1 },
        { "split_underused/s", THP_COUNTER_UNDERUSED_SPLIT_PAGE, 1 },
        { "compact_stall/s", THP_COUNTER_COMPACT_STALL, 1 },
        { "compact_fail/s", THP_COUNTER_COMPACT_FAIL, 1 },
        { "compact_success/s", THP_COUNTER_COMPACT_SUCCESS, 1 },
        { "khugepaged_cpu%", THP_COUNTER_KHUGEPAGED_CPU_USEC, 1e-4 }, /* usec/s -> % */
        { "collapsed/s", THP_COUNTER_PAGES_COLLAPSED, 1 },
        { "full_scans/s", THP_COUNTER_FULL_SCANS, 1 },
        { "some_stall_ms/s", THP_COUNTER_PSI_SOME_USEC, 1e-3 },
        { "full_stall_ms/s", THP_COUNTER_PSI_FULL_USEC, 1e-3 },
};

/* Where the PSI averages go: before the stall times. */
#define PSI_AVG_AT 13

static void time_of_day(uint64_t usec, char *buf, size_t size) {
        time_t t = (time_t)(usec / 1000000);
        struct tm tm;

        if (!localtime_r(&t, &tm) || strftime(buf, size, "%H:%M:%S", &tm) == 0)
                snprintf(buf, size, "-");
}

static void col(FILE *f, const char *name, const char *value) {
        int w = (int)strlen(name);
        fprintf(f, " %*s", w < 6 ? 6 : w, value);
}

static void centi_string(uint64_t v, char *buf, size_t size) {
        if (v == PROCFS_UNKNOWN)
                snprintf(buf, size, "-");
        else
                snprintf(buf, size, "%" PRIu64 ".%02" PRIu64, v / 100, v % 100);
}

/* A size's fallback ratio as shown: "-" when unknown, else two decimals (0.00 to 1.00). */
const char *watch_ratio_string(const ThpSizeRates *z, char *buf, size_t size) {
        if (!z->fallback_ratio_known)
                snprintf(buf, size, "-");
        else
                snprintf(buf, size, "%.2f", z->fallback_ratio);
        return buf;
}

/* The columns of each size, in the order of the line and of thpguardctl(1): NkB_<name>. */
static const char *const size_columns[] = { "alloc/s", "fallback/s", "fallback_ratio", "split/s" };

static const char *size_value(const ThpSizeRates *z, size_t column, char *buf, size_t size) {
        switch (column) {
        case 0:
                return watch_rate_string(z->anon_fault_alloc, 1, buf, size);
        case 1:
                return watch_rate_string(z->anon_fault_fallback, 1, buf, size);
        case 2:
                return watch_ratio_string(z, buf, size);
        default:
                return watch_rate_string(z->split, 1, buf, size);
        }
}

/* Calls out(name, value) for each column; the header and the line are the same walk. */
static void columns(FILE *f, const WatchFrame *fr, bool header) {
        const ThpRates *r = &fr->rates;
        char v[64], name[64];

        time_of_day(fr->realtime_usec, v, sizeof(v));
        fprintf(f, "%8s", header ? "time" : v);
        fprintf(f, " %-13s", header ? "enabled" : fr->enabled[0] ? fr->enabled : "-");
        fprintf(f, " %-13s", header ? "defrag" : fr->defrag[0] ? fr->defrag : "-");
        fprintf(f, " %-9s", header ? "policy" : fr->policy_state);
        for (size_t i = 0; i < ELEMENTSOF(rate_columns); i++) {
                if (i == PSI_AVG_AT) {
                        centi_string(r->psi_some_avg10_centi, v, sizeof(v));
                        col(f, "psi_some_avg10", header ? "psi_some_avg10" : v);
                        centi_string(r->psi_full_avg10_centi, v, sizeof(v));
                        col(f, "psi_full_avg10", header ? "psi_full_avg10" : v);
                }
                watch_rate_string(r->counters[rate_columns[i].counter], rate_columns[i].factor, v,
                                  sizeof(v));
                col(f, rate_columns[i].name, header ? rate_columns[i].name : v);
        }
        if (r->anon_huge_pages_kb == PROCFS_UNKNOWN)
                snprintf(v, sizeof(v), "-");
        else
                snprintf(v, sizeof(v), "%" PRIu64, r->anon_huge_pages_kb / 1024);
        col(f, "anon_huge_MiB", header ? "anon_huge_MiB" : v);
        if (r->anon_huge_pages_change_known)
                snprintf(v, sizeof(v), "%+.1f", (double)r->anon_huge_pages_change_kb / 1024);
        else
                snprintf(v, sizeof(v), "-");
        col(f, "anon_huge_change_MiB", header ? "anon_huge_change_MiB" : v);
        for (size_t i = 0; i < r->n_sizes; i++)
                for (size_t c = 0; c < ELEMENTSOF(size_columns); c++) {
                        snprintf(name, sizeof(name), "%" PRIu64 "kB_%s", r->sizes[i].size_kb,
                                 size_columns[c]);
                        size_value(&r->sizes[i], c, v, sizeof(v));
                        col(f, name, header ? name : v);
                }
        /* The top grower; its name last, as it may hold blanks. */
        if (!header && fr->scanned && fr->n_top > 0)
                snprintf(v, sizeof(v), "%" PRIu64, fr->top[0].pid);
        else
                snprintf(v, sizeof(v), "-");
        col(f, "top_pid", header ? "top_pid" : v);
        if (!header && fr->scanned && fr->n_top > 0)
                snprintf(v, sizeof(v), "%.1f", (double)fr->top[0].growth_kb / 1024);
        else
                snprintf(v, sizeof(v), "-");
        col(f, "top_growth_MiB", header ? "top_growth_MiB" : v);
        fprintf(f, " %s\n",
                header                                               ? "top_name"
                : fr->scanned && fr->n_top > 0 && fr->top[0].name[0] ? fr->top[0].name
                                                                     : "-");
}

void watch_line_header(FILE *f, const WatchFrame *fr) {
        columns(f, fr, true);
}

void watch_line_print(FILE *f, const WatchFrame *fr) {
        char t[64];

        /* A new correction is a comment line: it has no place in the columns. */
        if (fr->correction_is_new && fr->have_last_correction) {
                ctl_time_local(fr->last_correction_usec, t, sizeof(t));
                fprintf(f, "# last correction: %s %s, written by %s\n", t, fr->last_correction_knob,
                        fr->last_correction_writer);
        }
        columns(f, fr, false);
}

/* ---- JSON ------------------------------------------------------------------ */

static void add(json_object *o, const char *key, json_object *v) {
        json_object_object_add(o, key, v);
}

/* Three decimals are more than the kernel's counters resolve over an interval. */
static json_object *number(double v) {
        return json_object_new_double(round(v * 1000) / 1000);
}

static json_object *rate_json(ThpRate r, double factor) {
        return r.state == THP_RATE_ABSENT ? NULL : number(r.per_sec * factor);
}

static json_object *centi_json(uint64_t v) {
        return v == PROCFS_UNKNOWN ? NULL : number((double)v / 100);
}

static json_object *str_or_null(const char *s) {
        return s[0] ? json_string_utf8(s) : NULL;
}

static json_object *rates_json(const ThpRates *r) {
        json_object *o = json_object_new_object();

        for (ThpCounter c = 0; c <= THP_COUNTER_COMPACT_SUCCESS; c++)
                add(o, thp_counter_name(c), rate_json(r->counters[c], 1));
        return o;
}

static json_object *resets_json(const ThpRates *r) {
        json_object *a = json_object_new_array();

        for (ThpCounter c = 0; c < _THP_COUNTER_MAX; c++)
                if (r->counters[c].state == THP_RATE_RESET)
                        json_object_array_add(a, json_object_new_string(thp_counter_name(c)));
        for (size_t i = 0; i < r->n_sizes; i++) {
                const struct {
                        const char *name;
                        ThpRate rate;
                } stats[] = {
                        { "anon_fault_alloc", r->sizes[i].anon_fault_alloc },
                        { "anon_fault_fallback", r->sizes[i].anon_fault_fallback },
                        { "split", r->sizes[i].split },
                };

                for (size_t j = 0; j < ELEMENTSOF(stats); j++) {
                        char name[64];

                        if (stats[j].rate.state != THP_RATE_RESET)
                                continue;
                        snprintf(name, sizeof(name), "hugepages-%" PRIu64 "kB/%s", r->sizes[i].size_kb,
                                 stats[j].name);
                        json_object_array_add(a, json_object_new_string(name));
                }
        }
        return a;
}

static json_object *khugepaged_json(const ThpRates *r) {
        json_object *o = json_object_new_object();

        add(o, "cpu_percent", rate_json(r->counters[THP_COUNTER_KHUGEPAGED_CPU_USEC], 1e-4));
        add(o, "pages_collapsed_per_s", rate_json(r->counters[THP_COUNTER_PAGES_COLLAPSED], 1));
        add(o, "full_scans_per_s", rate_json(r->counters[THP_COUNTER_FULL_SCANS], 1));
        return o;
}

static json_object *pressure_json(const ThpRates *r) {
        json_object *o = json_object_new_object();

        add(o, "some_avg10", centi_json(r->psi_some_avg10_centi));
        add(o, "full_avg10", centi_json(r->psi_full_avg10_centi));
        add(o, "some_stall_ms_per_s", rate_json(r->counters[THP_COUNTER_PSI_SOME_USEC], 1e-3));
        add(o, "full_stall_ms_per_s", rate_json(r->counters[THP_COUNTER_PSI_FULL_USEC], 1e-3));
        return o;
}

static json_object *sizes_json(const ThpRates *r) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; i < r->n_sizes; i++) {
                json_object *o = json_object_new_object();

                add(o, "size_kb", json_new_uint64(r->sizes[i].size_kb));
                add(o, "anon_fault_alloc_per_s", rate_json(r->sizes[i].anon_fault_alloc, 1));
                add(o, "anon_fault_fallback_per_s", rate_json(r->sizes[i].anon_fault_fallback, 1));
                add(o, "anon_fault_fallback_ratio",
                    r->sizes[i].fallback_ratio_known ? number(r->sizes[i].fallback_ratio) : NULL);
                add(o, "split_per_s", rate_json(r->sizes[i].split, 1));
                json_object_array_add(a, o);
        }
        return a;
}

static json_object *processes_json(const WatchFrame *fr) {
        json_object *o = json_object_new_object(), *top = json_object_new_array();

        add(o, "scanned", json_object_new_boolean(fr->scanned));
        add(o, "scan_every_s", number((double)fr->scan_every * (double)fr->interval_usec / 1e6));
        add(o, "growth_over_s", number(fr->growth_sec));
        add(o, "with_thp", json_new_uint64(fr->n_with_thp));
        for (size_t i = 0; i < fr->n_top; i++) {
                json_object *p = json_object_new_object();

                add(p, "pid", json_new_uint64(fr->top[i].pid));
                add(p, "name", json_string_utf8(fr->top[i].name));
                add(p, "anon_huge_pages_kb", json_new_uint64(fr->top[i].anon_huge_pages_kb));
                add(p, "growth_kb", json_new_uint64(fr->top[i].growth_kb));
                json_object_array_add(top, p);
        }
        add(o, "top", top);
        return o;
}

static json_object *policy_json(const WatchFrame *fr) {
        json_object *o = json_object_new_object();

        add(o, "state", json_object_new_string(fr->policy_state));
        add(o, "knobs", json_new_uint64(fr->n_policy_knobs));
        add(o, "drift", json_new_uint64(fr->n_policy_drift));
        add(o, "error", json_new_uint64(fr->n_policy_error));
        return o;
}

static json_object *correction_json(const WatchFrame *fr) {
        json_object *o;
        char t[64];

        if (!fr->have_last_correction)
                return NULL;
        o = json_object_new_object();
        add(o, "time", json_object_new_string(ctl_time_utc(fr->last_correction_usec, t, sizeof(t))));
        add(o, "knob", str_or_null(fr->last_correction_knob));
        add(o, "writer", str_or_null(fr->last_correction_writer));
        return o;
}

int watch_json_print(FILE *f, const WatchFrame *fr) {
        _cleanup_(json_object_putp) json_object *root = json_object_new_object();
        const ThpRates *r = &fr->rates;
        const char *s;
        char t[64];

        if (!root)
                return -ENOMEM;
        add(root, "time", json_object_new_string(ctl_time_utc(fr->realtime_usec, t, sizeof(t))));
        add(root, "interval_s", number((double)fr->interval_usec / 1e6));
        add(root, "elapsed_s", number(r->elapsed_sec));
        add(root, "enabled", str_or_null(fr->enabled));
        add(root, "defrag", str_or_null(fr->defrag));
        add(root, "policy", policy_json(fr));
        add(root, "journal", json_object_new_boolean(fr->journal));
        add(root, "last_correction", correction_json(fr));
        add(root, "rates", rates_json(r));
        add(root, "resets", resets_json(r));
        add(root, "khugepaged", khugepaged_json(r));
        add(root, "memory_pressure", pressure_json(r));
        add(root, "anon_huge_pages_kb",
            r->anon_huge_pages_kb == PROCFS_UNKNOWN ? NULL : json_new_uint64(r->anon_huge_pages_kb));
        add(root, "anon_huge_pages_change_kb",
            r->anon_huge_pages_change_known ? json_object_new_int64(r->anon_huge_pages_change_kb) : NULL);
        add(root, "sizes", sizes_json(r));
        add(root, "processes", processes_json(fr));
        s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
                return -ENOMEM;
        return fprintf(f, "%s\n", s) < 0 ? -EIO : 0;
}
