/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The foreign writes thpguardd logged, as thpguardctl reads them back from
 * the journal: one CtlRecord per entry, summed up by writer (`writers`) and
 * by knob (`status`). Pure: journal.c feeds the records, the unit test its
 * own. Every byte came from the journal, which a forged export or a
 * mounted directory from anywhere may fill: each value is cut to a bound
 * and made printable ASCII as it is parsed (escape_printable()), so what
 * is kept here can be printed and compared as it is.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "thpguard/knob.h"
#include "thpguard/write-source.h"

#define CTL_FIELD_MAX        256 /* a value as kept: escaped, cut at a whole character, NUL */
#define CTL_WRITERS_MAX      256 /* distinct writers kept; the records of any further one go to "other" */
#define CTL_WRITER_KNOBS_MAX 16  /* distinct knobs listed per writer */
#define CTL_KNOB_WRITES_MAX  64  /* distinct knobs summed up */

/* The field of thpguardd's startup record (THPGUARD_MESSAGE_WRITE_SOURCE): log_write_source(). */
#define CTL_JOURNAL_WRITE_SOURCE "THPGUARD_WRITE_SOURCE"

#define CTL_USEC_PER_HOUR (UINT64_C(3600) * UINT64_C(1000000))

/*
 * --since, as thpguardctl(1) documents it:
 *   YYYY-MM-DD, YYYY-MM-DD HH:MM or YYYY-MM-DD HH:MM:SS (or T for the
 *   blank), local time; or -N followed by s, sec, m, min, h, d or w: that
 *   long before now (clamped at the epoch). -EINVAL for anything else.
 */
int ctl_since_parse(const char *s, uint64_t now, uint64_t *ret_usec);

/* "YYYY-MM-DD HH:MM:SS" local time, or "YYYY-MM-DDTHH:MM:SSZ" UTC; buf on success, "-" if it fails. */
const char *ctl_time_local(uint64_t usec, char *buf, size_t size);
const char *ctl_time_utc(uint64_t usec, char *buf, size_t size);

/*
 * data[0..len) is one datum of a journal entry, "FIELD=value", as
 * sd_journal_enumerate_data() gives it (no NUL, any byte). If it is field's,
 * copies the value into buf printable and cut to size and returns 0;
 * -ENOENT if it is another field's.
 */
int ctl_field_value(const void *data, size_t len, const char *field, char *buf, size_t size);
/* The same for a decimal value: -EBADMSG unless it is digits only, without overflow. */
int ctl_field_u64(const void *data, size_t len, const char *field, uint64_t *ret);

typedef enum CtlRecordKind {
        CTL_RECORD_NONE,         /* no MESSAGE_ID of ours */
        CTL_RECORD_DRIFT,        /* CORRECTED, CORRECTION_FAILED, AUDIT_DRIFT: one foreign write */
        CTL_RECORD_FIGHT,        /* WRITER_FIGHT: a warning about writes already counted */
        CTL_RECORD_WRITE_SOURCE, /* WRITE_SOURCE: thpguardd started with this write source; no write */
        CTL_RECORD_REFUSED, /* WRITE_REFUSED: lock mode refused 1 + suppressed writes; none took effect */
} CtlRecordKind;

typedef struct CtlRecord {
        CtlRecordKind kind;
        uint64_t usec;                    /* realtime of the entry */
        char knob[KNOB_PATH_MAX];         /* THPGUARD_KNOB; "" if absent */
        char writer[CTL_FIELD_MAX];       /* THPGUARD_WRITER, the label; "" if unknown */
        uint64_t pid;                     /* THPGUARD_WRITER_PID; 0 if absent or not a number */
        bool exited;                      /* THPGUARD_WRITER_EXITED=1 */
        char comm[CTL_FIELD_MAX];         /* THPGUARD_WRITER_COMM */
        char exe[CTL_FIELD_MAX];          /* THPGUARD_WRITER_EXE */
        char unit[CTL_FIELD_MAX];         /* THPGUARD_WRITER_UNIT */
        char pod_uid[CTL_FIELD_MAX];      /* THPGUARD_WRITER_POD_UID */
        char container_id[CTL_FIELD_MAX]; /* THPGUARD_WRITER_CONTAINER_ID */
        /*
         * THPGUARD_WRITE_SOURCE: bpf, fanotify or none, byte for byte (the
         * daemon never logs auto); WRITE_SOURCE_AUTO while the entry has none.
         * write_source_bad: one was anything else, or two disagreed.
         */
        WriteSource write_source;
        bool write_source_bad;
        uint64_t
            suppressed; /* THPGUARD_SUPPRESSED of a refusal: its writer's refusals not logged before it */
} CtlRecord;

/* Takes one datum of an entry into r if it is MESSAGE_ID or one of the fields above; ignores others. */
void ctl_record_take(CtlRecord *r, const void *data, size_t len);
/* The write source r says is in force: only from a write-source record with one good value; AUTO if none. */
WriteSource ctl_record_write_source(const CtlRecord *r);

typedef struct CtlWriter {
        char label[CTL_FIELD_MAX]; /* "" for the records without a writer */
        uint64_t n_drift, n_fight;
        uint64_t n_refused; /* lock mode's refusals of it, the unlogged ones counted in */
        uint64_t first_usec, last_usec;
        /* From the latest record; unit, pod and container from the latest that had them. */
        uint64_t last_pid; /* 0: unknown */
        bool last_exited;
        char comm[CTL_FIELD_MAX], exe[CTL_FIELD_MAX], unit[CTL_FIELD_MAX], pod_uid[CTL_FIELD_MAX],
            container_id[CTL_FIELD_MAX];
        size_t n_knobs;
        char knobs[CTL_WRITER_KNOBS_MAX][KNOB_PATH_MAX];
        bool knobs_truncated; /* it touched more than CTL_WRITER_KNOBS_MAX */
} CtlWriter;

typedef struct CtlKnobWrites {
        char knob[KNOB_PATH_MAX];
        uint64_t n_drift, n_fight;
        uint64_t last_usec; /* of the latest drift record; 0: none */
        char last_writer[CTL_FIELD_MAX];
        uint64_t last_pid;
        bool last_exited;
} CtlKnobWrites;

typedef struct CtlForeign {
        uint64_t since_usec; /* records before it are left out */
        uint64_t n_drift, n_fight;
        uint64_t n_refused;       /* lock mode's refused writes, the unlogged ones counted in */
        uint64_t n_drift_unknown; /* drift records without a writer */
        size_t n_writers, n_allocated;
        CtlWriter *writers; /* by drift records, most first, after ctl_foreign_sort() */
        CtlWriter other;    /* the writers beyond CTL_WRITERS_MAX, together; n_drift + n_fight > 0 if any */
        size_t n_knobs;
        CtlKnobWrites knobs[CTL_KNOB_WRITES_MAX];
        uint64_t n_knobs_dropped; /* records of knobs beyond CTL_KNOB_WRITES_MAX */
        char source[2048];        /* which records were read, and from where (journal.c) */
        /* From the latest write-source record, whatever its time; WRITE_SOURCE_AUTO: none was read. */
        WriteSource write_source;
        uint64_t write_source_usec;
} CtlForeign;

/*
 * Counts a drift or fight record of since_usec or later in; others are
 * ignored. A write-source record counts as no write: it only replaces
 * write_source if it is the latest so far, before since_usec too (thpguardd
 * logs it once, when it starts). -ENOMEM only.
 */
int ctl_foreign_add(CtlForeign *f, const CtlRecord *r);
/* Writers by drift records, then fight warnings, then latest first; each one's knobs by name. */
void ctl_foreign_sort(CtlForeign *f);
/* The summary of one knob; NULL if no record named it. */
const CtlKnobWrites *ctl_foreign_knob(const CtlForeign *f, const char *knob);
void ctl_foreign_done(CtlForeign *f);
