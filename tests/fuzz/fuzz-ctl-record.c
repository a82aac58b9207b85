/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for ctl_record_take() (src/ctl/foreign.c): thpguardctl
 * writers and status feed it every datum of a journal entry, and a forged
 * export or a journal directory from anywhere may hold any bytes there.
 *
 * One input is one entry: its first byte is the separator, the rest is
 * split at it into data ("FIELD=value"), so that any byte, NUL and newline
 * included, can be part of a datum. Each datum is handed over in a heap
 * block of exactly its length: a read past its end is caught. The write
 * source is checked against the three words spelled out here.
 */
#include "foreign.h"
#include "fuzz-common.h"
#include "thpguard/macro.h"
#include "thpguard/message-ids.h"
#include "thpguard/writer.h"

typedef struct Datum {
        const uint8_t *p;
        size_t len;
} Datum;

/* The value of d if it is field's ("FIELD=..."), as ctl_record_take() must see it. */
static bool datum_value(const Datum *d, const char *field, const uint8_t **ret, size_t *ret_len) {
        size_t n = strlen(field);

        if (d->len <= n || memcmp(d->p, field, n) != 0 || d->p[n] != '=')
                return false;
        *ret = d->p + n + 1;
        *ret_len = d->len - n - 1;
        return true;
}

/* The last datum of field; false if none. */
static bool last_value(const Datum *data, size_t n, const char *field, const uint8_t **ret,
                       size_t *ret_len) {
        bool found = false;

        for (size_t i = 0; i < n; i++)
                found = datum_value(&data[i], field, ret, ret_len) || found;
        return found;
}

/* What an entry's MESSAGE_ID says, from its last MESSAGE_ID datum: only our ids, byte for byte. */
static CtlRecordKind expected_kind(const Datum *data, size_t n) {
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
        const uint8_t *v;
        size_t len;

        if (!last_value(data, n, "MESSAGE_ID", &v, &len))
                return CTL_RECORD_NONE;
        for (size_t i = 0; i < ELEMENTSOF(ids); i++)
                if (len == strlen(ids[i].id) && memcmp(v, ids[i].id, len) == 0)
                        return ids[i].kind;
        return CTL_RECORD_NONE;
}

/*
 * What a write-source record says: every THPGUARD_WRITE_SOURCE datum the same
 * one of the three words, byte for byte; nothing for any other record.
 */
static WriteSource expected_write_source(const Datum *data, size_t n) {
        static const char *const words[] = { "bpf", "fanotify", "none" };
        static const WriteSource sources[] = { WRITE_SOURCE_BPF, WRITE_SOURCE_FANOTIFY, WRITE_SOURCE_NONE };
        WriteSource found = WRITE_SOURCE_AUTO;

        if (expected_kind(data, n) != CTL_RECORD_WRITE_SOURCE)
                return WRITE_SOURCE_AUTO;
        for (size_t i = 0; i < n; i++) {
                WriteSource this = WRITE_SOURCE_AUTO;
                const uint8_t *v;
                size_t len;

                if (!datum_value(&data[i], "THPGUARD_WRITE_SOURCE", &v, &len))
                        continue;
                for (size_t w = 0; w < ELEMENTSOF(words); w++)
                        if (len == strlen(words[w]) && memcmp(v, words[w], len) == 0)
                                this = sources[w];
                if (this == WRITE_SOURCE_AUTO || (found != WRITE_SOURCE_AUTO && found != this))
                        return WRITE_SOURCE_AUTO;
                found = this;
        }
        return found;
}

static int hex(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * kept is what a field was given: printable ASCII that reads back one way
 * ("\\" a backslash, "\xNN" any other byte) to a prefix of the value, the
 * whole value unless the buffer (size) was full.
 */
static void check_kept(const char *kept, size_t size, const uint8_t *v, size_t len) {
        size_t i = 0, k = 0;

        FUZZ_ASSERT(fuzz_printable(kept, size));
        while (kept[k]) {
                uint8_t b;

                if (kept[k] != '\\')
                        b = (uint8_t)kept[k++];
                else if (kept[k + 1] == '\\')
                        b = '\\', k += 2;
                else {
                        FUZZ_ASSERT(kept[k + 1] == 'x' && hex(kept[k + 2]) >= 0 && hex(kept[k + 3]) >= 0);
                        b = (uint8_t)(hex(kept[k + 2]) * 16 + hex(kept[k + 3]));
                        /* Only a byte that is not printable is written as \xNN. */
                        FUZZ_ASSERT(b < 0x20 || b >= 0x7f);
                        k += 4;
                }
                FUZZ_ASSERT(i < len && v[i] == b);
                i++;
        }
        /* Cut only where the next character ("\xNN" at most) would not have fitted. */
        FUZZ_ASSERT(i == len || k + 4 >= size);
}

static void check_string(const char *kept, size_t size, const Datum *data, size_t n, const char *field) {
        const uint8_t *v;
        size_t len;

        if (!last_value(data, n, field, &v, &len)) {
                FUZZ_ASSERT(kept[0] == '\0');
                return;
        }
        check_kept(kept, size, v, len);
}

/* A decimal datum: digits only, without overflow; false otherwise. */
static bool decimal(const uint8_t *v, size_t len, uint64_t *ret) {
        uint64_t x = 0;

        if (len == 0)
                return false;
        for (size_t i = 0; i < len; i++)
                if (v[i] < '0' || v[i] > '9' || __builtin_mul_overflow(x, 10, &x) ||
                    __builtin_add_overflow(x, (uint64_t)(v[i] - '0'), &x))
                        return false;
        *ret = x;
        return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Datum datums[256];
        size_t n = 0, start = 1;
        CtlRecord r = {};
        const uint8_t *v;
        uint64_t want;
        size_t len;
        uint8_t sep;

        if (size == 0)
                return 0;
        sep = data[0];
        for (size_t i = 1; i <= size && n < ELEMENTSOF(datums); i++)
                if (i == size || data[i] == sep) {
                        datums[n++] = (Datum){ data + start, i - start };
                        start = i + 1;
                }

        for (size_t i = 0; i < n; i++) {
                /* An exact-size copy (malloc(0) may be NULL: one byte then, never read). */
                uint8_t *copy = malloc(datums[i].len ? datums[i].len : 1);

                FUZZ_ASSERT(copy);
                memcpy(copy, datums[i].p, datums[i].len);
                ctl_record_take(&r, copy, datums[i].len);
                free(copy);
        }

        FUZZ_ASSERT(r.kind == expected_kind(datums, n));
        FUZZ_ASSERT(ctl_record_write_source(&r) == expected_write_source(datums, n));
        FUZZ_ASSERT(r.usec == 0); /* the journal's timestamp, never a datum's */
        check_string(r.knob, sizeof(r.knob), datums, n, "THPGUARD_KNOB");
        check_string(r.writer, sizeof(r.writer), datums, n, WRITER_JOURNAL_LABEL);
        check_string(r.comm, sizeof(r.comm), datums, n, WRITER_JOURNAL_COMM);
        check_string(r.exe, sizeof(r.exe), datums, n, WRITER_JOURNAL_EXE);
        check_string(r.unit, sizeof(r.unit), datums, n, WRITER_JOURNAL_UNIT);
        check_string(r.pod_uid, sizeof(r.pod_uid), datums, n, WRITER_JOURNAL_POD_UID);
        check_string(r.container_id, sizeof(r.container_id), datums, n, WRITER_JOURNAL_CONTAINER_ID);
        /* A pid or exit flag that is not a plain decimal is no pid and no exit. */
        if (last_value(datums, n, WRITER_JOURNAL_PID, &v, &len))
                FUZZ_ASSERT(r.pid == (decimal(v, len, &want) ? want : 0));
        else
                FUZZ_ASSERT(r.pid == 0);
        if (last_value(datums, n, WRITER_JOURNAL_EXITED, &v, &len))
                FUZZ_ASSERT(r.exited == (decimal(v, len, &want) && want == 1));
        else
                FUZZ_ASSERT(!r.exited);
        return 0;
}
