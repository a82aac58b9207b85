/* SPDX-License-Identifier: MIT */
#include "foreign.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "thpguard/escape.h"
#include "thpguard/event-util.h"
#include "thpguard/macro.h"
#include "thpguard/message-ids.h"
#include "thpguard/number.h"
#include "thpguard/writer.h"

/* Exactly n digits at *p, advancing it. */
static int digits(const char **p, size_t n, int *ret) {
        uint64_t v;

        if (strnlen(*p, n) < n || number_parse_u64(*p, n, &v) < 0)
                return -EINVAL;
        *p += n;
        *ret = (int)v;
        return 0;
}

static int since_absolute(const char *s, uint64_t *ret_usec) {
        struct tm tm = { .tm_isdst = -1 };
        int year, month, day, hour = 0, min = 0, sec = 0;
        const char *p = s;
        time_t t;

        if (digits(&p, 4, &year) < 0 || *p++ != '-' || digits(&p, 2, &month) < 0 || *p++ != '-' ||
            digits(&p, 2, &day) < 0)
                return -EINVAL;
        if (*p == ' ' || *p == 'T') {
                p++;
                if (digits(&p, 2, &hour) < 0 || *p++ != ':' || digits(&p, 2, &min) < 0)
                        return -EINVAL;
                if (*p == ':' && (p++, digits(&p, 2, &sec) < 0))
                        return -EINVAL;
        }
        if (*p || year < 1970 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || min > 59 ||
            sec > 59)
                return -EINVAL;
        tm.tm_year = year - 1900;
        tm.tm_mon = month - 1;
        tm.tm_mday = day;
        tm.tm_hour = hour;
        tm.tm_min = min;
        tm.tm_sec = sec;
        t = mktime(&tm);
        /* mktime() moves 2025-02-30 to March: a day the month does not have is refused. */
        if (t == (time_t)-1 || t < 0 || tm.tm_mday != day || tm.tm_mon != month - 1)
                return -EINVAL;
        *ret_usec = (uint64_t)t * USEC_PER_SEC;
        return 0;
}

static int since_relative(const char *s, uint64_t now, uint64_t *ret_usec) {
        static const struct {
                const char *suffix;
                uint64_t sec;
        } units[] = {
                { "s", 1 },    { "sec", 1 },   { "m", 60 },        { "min", 60 },
                { "h", 3600 }, { "d", 86400 }, { "w", 7 * 86400 },
        };
        size_t n = strspn(s, "0123456789");
        uint64_t v, usec;

        if (number_parse_u64(s, n, &v) < 0)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                if (strcmp(s + n, units[i].suffix) != 0)
                        continue;
                if (__builtin_mul_overflow(v, units[i].sec * USEC_PER_SEC, &usec))
                        return -EINVAL;
                *ret_usec = u64_sat_sub(now, usec);
                return 0;
        }
        return -EINVAL;
}

int ctl_since_parse(const char *s, uint64_t now, uint64_t *ret_usec) {
        if (!s)
                return -EINVAL;
        if (s[0] == '-')
                return since_relative(s + 1, now, ret_usec);
        return since_absolute(s, ret_usec);
}

static const char *time_format(uint64_t usec, bool utc, char *buf, size_t size) {
        time_t t = (time_t)(usec / USEC_PER_SEC);
        struct tm tm;

        if ((utc ? gmtime_r(&t, &tm) : localtime_r(&t, &tm)) &&
            strftime(buf, size, utc ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%d %H:%M:%S", &tm) > 0)
                return buf;
        snprintf(buf, size, "-");
        return buf;
}

const char *ctl_time_local(uint64_t usec, char *buf, size_t size) {
        return time_format(usec, false, buf, size);
}

const char *ctl_time_utc(uint64_t usec, char *buf, size_t size) {
        return time_format(usec, true, buf, size);
}

/* The value of data if it is field's; NULL otherwise. */
static const char *field_value(const void *data, size_t len, const char *field, size_t *ret_len) {
        size_t n = strlen(field);

        if (len <= n || memcmp(data, field, n) != 0 || ((const char *)data)[n] != '=')
                return NULL;
        *ret_len = len - n - 1;
        return (const char *)data + n + 1;
}

int ctl_field_value(const void *data, size_t len, const char *field, char *buf, size_t size) {
        const char *v;
        size_t n;

        v = field_value(data, len, field, &n);
        if (!v)
                return -ENOENT;
        /* Stops when buf is full: the work is bounded by size, not by len. */
        escape_printable(v, n, buf, size);
        return 0;
}

int ctl_field_u64(const void *data, size_t len, const char *field, uint64_t *ret) {
        const char *v;
        size_t n;

        v = field_value(data, len, field, &n);
        if (!v)
                return -ENOENT;
        return number_parse_u64(v, n, ret);
}

/* CTL_JOURNAL_WRITE_SOURCE's value: -EBADMSG unless it is one of the words the daemon logs, exactly. */
static int field_write_source(const void *data, size_t len, WriteSource *ret) {
        static const WriteSource known[] = { WRITE_SOURCE_BPF, WRITE_SOURCE_FANOTIFY, WRITE_SOURCE_NONE };
        const char *v;
        size_t n;

        v = field_value(data, len, CTL_JOURNAL_WRITE_SOURCE, &n);
        if (!v)
                return -ENOENT;
        for (size_t i = 0; i < ELEMENTSOF(known); i++) {
                const char *word = write_source_to_string(known[i]);

                if (n == strlen(word) && memcmp(v, word, n) == 0) {
                        *ret = known[i];
                        return 0;
                }
        }
        return -EBADMSG;
}

void ctl_record_take(CtlRecord *r, const void *data, size_t len) {
        static const struct {
                const char *id;
                CtlRecordKind kind;
        } ids[] = {
                { THPGUARD_MESSAGE_CORRECTED, CTL_RECORD_DRIFT },
                { THPGUARD_MESSAGE_CORRECTION_FAILED, CTL_RECORD_DRIFT },
                { THPGUARD_MESSAGE_AUDIT_DRIFT, CTL_RECORD_DRIFT },
                { THPGUARD_MESSAGE_WRITER_FIGHT, CTL_RECORD_FIGHT },
                { THPGUARD_MESSAGE_WRITE_SOURCE, CTL_RECORD_WRITE_SOURCE },
                { THPGUARD_MESSAGE_WRITE_REFUSED, CTL_RECORD_REFUSED },
        };
        const struct {
                const char *field;
                char *buf;
                size_t size;
        } strings[] = {
                { "THPGUARD_KNOB", r->knob, sizeof(r->knob) },
                { WRITER_JOURNAL_LABEL, r->writer, sizeof(r->writer) },
                { WRITER_JOURNAL_COMM, r->comm, sizeof(r->comm) },
                { WRITER_JOURNAL_EXE, r->exe, sizeof(r->exe) },
                { WRITER_JOURNAL_UNIT, r->unit, sizeof(r->unit) },
                { WRITER_JOURNAL_POD_UID, r->pod_uid, sizeof(r->pod_uid) },
                { WRITER_JOURNAL_CONTAINER_ID, r->container_id, sizeof(r->container_id) },
        };
        char id[64]; /* longer than an id: one with more characters is not cut to ours */
        WriteSource ws;
        uint64_t v;
        int k;

        if (ctl_field_value(data, len, "MESSAGE_ID", id, sizeof(id)) == 0) {
                r->kind = CTL_RECORD_NONE;
                for (size_t i = 0; i < ELEMENTSOF(ids); i++)
                        if (strcmp(id, ids[i].id) == 0)
                                r->kind = ids[i].kind;
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(strings); i++)
                if (ctl_field_value(data, len, strings[i].field, strings[i].buf, strings[i].size) == 0)
                        return;
        k = ctl_field_u64(data, len, WRITER_JOURNAL_PID, &v);
        if (k != -ENOENT) {
                r->pid = k == 0 ? v : 0;
                return;
        }
        k = ctl_field_u64(data, len, WRITER_JOURNAL_EXITED, &v);
        if (k != -ENOENT) {
                r->exited = k == 0 && v == 1;
                return;
        }
        k = ctl_field_u64(data, len, "THPGUARD_SUPPRESSED", &v);
        if (k != -ENOENT) {
                r->suppressed = k == 0 ? v : 0;
                return;
        }
        k = field_write_source(data, len, &ws);
        if (k == -ENOENT)
                return;
        /* A forged entry may say it twice: only one word, however often, counts. */
        if (k < 0 || (r->write_source != WRITE_SOURCE_AUTO && r->write_source != ws))
                r->write_source_bad = true;
        else
                r->write_source = ws;
}

WriteSource ctl_record_write_source(const CtlRecord *r) {
        if (r->kind != CTL_RECORD_WRITE_SOURCE || r->write_source_bad)
                return WRITE_SOURCE_AUTO;
        return r->write_source;
}

static void copy_if_set(char *dst, const char *src, size_t size) {
        if (src[0])
                snprintf(dst, size, "%s", src);
}

static void writer_add_knob(CtlWriter *w, const char *knob) {
        if (!knob[0])
                return;
        for (size_t i = 0; i < w->n_knobs; i++)
                if (strcmp(w->knobs[i], knob) == 0)
                        return;
        if (w->n_knobs == CTL_WRITER_KNOBS_MAX) {
                w->knobs_truncated = true;
                return;
        }
        snprintf(w->knobs[w->n_knobs++], KNOB_PATH_MAX, "%s", knob);
}

/* What one refusal record stands for: itself and the refusals it says were not logged (saturated). */
static uint64_t refusals(const CtlRecord *r) {
        return r->suppressed == UINT64_MAX ? UINT64_MAX : r->suppressed + 1;
}

static void writer_add(CtlWriter *w, const CtlRecord *r) {
        if (r->kind == CTL_RECORD_DRIFT)
                w->n_drift++;
        else if (r->kind == CTL_RECORD_REFUSED)
                w->n_refused = u64_sat_add(w->n_refused, refusals(r));
        else
                w->n_fight++;
        if (w->first_usec == 0 || r->usec < w->first_usec)
                w->first_usec = r->usec;
        if (r->usec >= w->last_usec) {
                w->last_usec = r->usec;
                w->last_pid = r->pid;
                w->last_exited = r->exited;
                snprintf(w->comm, sizeof(w->comm), "%s", r->comm);
                snprintf(w->exe, sizeof(w->exe), "%s", r->exe);
                copy_if_set(w->unit, r->unit, sizeof(w->unit));
                copy_if_set(w->pod_uid, r->pod_uid, sizeof(w->pod_uid));
                copy_if_set(w->container_id, r->container_id, sizeof(w->container_id));
        }
        writer_add_knob(w, r->knob);
}

/* The writer of this label: found, appended, or NULL when the list is full. */
static int writer_find(CtlForeign *f, const char *label, CtlWriter **ret) {
        CtlWriter *w;

        for (size_t i = 0; i < f->n_writers; i++)
                if (strcmp(f->writers[i].label, label) == 0) {
                        *ret = &f->writers[i];
                        return 0;
                }
        if (f->n_writers == CTL_WRITERS_MAX) {
                *ret = NULL;
                return 0;
        }
        if (array_grow(&f->writers, &f->n_allocated, f->n_writers, sizeof(*f->writers), 8, CTL_WRITERS_MAX) <
            0)
                return -ENOMEM;
        w = &f->writers[f->n_writers++];
        *w = (CtlWriter){};
        snprintf(w->label, sizeof(w->label), "%s", label);
        *ret = w;
        return 0;
}

/* The index of knob's summary, or n_knobs if there is none. */
static size_t knob_index(const CtlForeign *f, const char *knob) {
        size_t i = 0;

        while (i < f->n_knobs && strcmp(f->knobs[i].knob, knob) != 0)
                i++;
        return i;
}

static void knob_writes_add(CtlForeign *f, const CtlRecord *r) {
        size_t i = knob_index(f, r->knob);
        CtlKnobWrites *k = &f->knobs[i];

        if (!r->knob[0])
                return;
        if (i == f->n_knobs) {
                if (f->n_knobs == CTL_KNOB_WRITES_MAX) {
                        f->n_knobs_dropped++;
                        return;
                }
                f->n_knobs++;
                *k = (CtlKnobWrites){};
                snprintf(k->knob, sizeof(k->knob), "%s", r->knob);
        }
        if (r->kind == CTL_RECORD_FIGHT) {
                k->n_fight++;
                return;
        }
        if (r->kind == CTL_RECORD_REFUSED)
                return; /* no write took effect: the knob's summary counts those that did */
        k->n_drift++;
        if (r->usec >= k->last_usec) {
                k->last_usec = r->usec;
                snprintf(k->last_writer, sizeof(k->last_writer), "%s", r->writer);
                k->last_pid = r->pid;
                k->last_exited = r->exited;
        }
}

int ctl_foreign_add(CtlForeign *f, const CtlRecord *r) {
        WriteSource ws = ctl_record_write_source(r);
        CtlWriter *w;
        int ret;

        if (r->kind == CTL_RECORD_WRITE_SOURCE) {
                /* Before since_usec too (the daemon logs one when it starts): the latest wins. */
                if (ws != WRITE_SOURCE_AUTO &&
                    (f->write_source == WRITE_SOURCE_AUTO || r->usec >= f->write_source_usec)) {
                        f->write_source = ws;
                        f->write_source_usec = r->usec;
                }
                return 0;
        }
        if (r->kind == CTL_RECORD_NONE || r->usec < f->since_usec)
                return 0;
        ret = writer_find(f, r->writer, &w);
        if (ret < 0)
                return ret;
        if (!w) {
                w = &f->other;
                snprintf(w->label, sizeof(w->label), "other");
        }
        writer_add(w, r);
        knob_writes_add(f, r);
        if (r->kind == CTL_RECORD_DRIFT) {
                f->n_drift++;
                f->n_drift_unknown += !r->writer[0];
        } else if (r->kind == CTL_RECORD_REFUSED)
                f->n_refused = u64_sat_add(f->n_refused, refusals(r));
        else
                f->n_fight++;
        return 0;
}

static int cmp_writer(const void *a, const void *b) {
        const CtlWriter *x = a, *y = b;

        if (x->n_drift != y->n_drift)
                return x->n_drift > y->n_drift ? -1 : 1;
        if (x->n_fight != y->n_fight)
                return x->n_fight > y->n_fight ? -1 : 1;
        if (x->n_refused != y->n_refused)
                return x->n_refused > y->n_refused ? -1 : 1;
        if (x->last_usec != y->last_usec)
                return x->last_usec > y->last_usec ? -1 : 1;
        return strcmp(x->label, y->label);
}

static int cmp_knob_path(const void *a, const void *b) {
        return strcmp(a, b);
}

void ctl_foreign_sort(CtlForeign *f) {
        if (f->n_writers > 0)
                qsort(f->writers, f->n_writers, sizeof(f->writers[0]), cmp_writer);
        for (size_t i = 0; i < f->n_writers; i++)
                qsort(f->writers[i].knobs, f->writers[i].n_knobs, KNOB_PATH_MAX, cmp_knob_path);
        qsort(f->other.knobs, f->other.n_knobs, KNOB_PATH_MAX, cmp_knob_path);
}

const CtlKnobWrites *ctl_foreign_knob(const CtlForeign *f, const char *knob) {
        size_t i = knob_index(f, knob);

        return i < f->n_knobs ? &f->knobs[i] : NULL;
}

void ctl_foreign_done(CtlForeign *f) {
        free(f->writers);
        *f = (CtlForeign){};
}
