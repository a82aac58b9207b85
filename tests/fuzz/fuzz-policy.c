/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the policy loader and validator: each input is a
 * whole policy file, handed to policy_parse() exactly as policy_load() would
 * after reading it (a buffer and a length, not NUL-terminated).
 *
 * Oracles beyond the sanitizers:
 *  - a refused policy leaves *ret alone and says why in diag;
 *  - an accepted policy only names knobs from the fixed table, under
 *    "hugepages-<digits>kB/" at most, each once, with a value the knob's
 *    type allows: nothing a hostile file says can reach another path;
 *  - policy_parse() never opens a file (libconfig's @include is refused).
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz-common.h"
#include "thpguard/diag.h"
#include "thpguard/knob.h"
#include "thpguard/policy.h"

#define FILE_NAME "fuzz.conf"

static bool in_parse;

/*
 * libconfig opens a file only to follow @include. Interposing fopen() here
 * (the executable's definition wins over libc's for libconfig.so too) turns
 * any include that slipped past the loader's check into a crash, and never
 * lets the fuzzer read a real file.
 */
FILE *fopen(const char *path, const char *mode) {
        static FILE *(*real_fopen)(const char *, const char *);

        if (in_parse) {
                fprintf(stderr, "policy_parse() tried to open \"%s\": an @include got through\n", path);
                abort();
        }
        if (!real_fopen)
                real_fopen = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
        FUZZ_ASSERT(real_fopen);
        return real_fopen(path, mode);
}

/*
 * True if a decimal or 0x literal somewhere in text[0..len) has the value v.
 * A policy that says 4294967326 must not be enforced as 30: whatever number
 * the daemon will write has to be written in the file.
 */
static bool literal_in(const char *text, size_t len, uint64_t v) {
        for (size_t i = 0; i < len;) {
                uint64_t x = 0;
                bool overflow = false, hex = false;
                size_t start;

                if (text[i] < '0' || text[i] > '9') {
                        i++;
                        continue;
                }
                if (text[i] == '0' && i + 2 < len && (text[i + 1] == 'x' || text[i + 1] == 'X')) {
                        hex = true;
                        i += 2;
                }
                start = i;
                for (; i < len; i++) {
                        char c = text[i];
                        unsigned d;

                        if (c >= '0' && c <= '9')
                                d = (unsigned)(c - '0');
                        else if (hex && c >= 'a' && c <= 'f')
                                d = (unsigned)(c - 'a' + 10);
                        else if (hex && c >= 'A' && c <= 'F')
                                d = (unsigned)(c - 'A' + 10);
                        else
                                break;
                        if (x > (UINT64_MAX - d) / (hex ? 16 : 10))
                                overflow = true;
                        x = x * (hex ? 16 : 10) + d;
                }
                if (i > start && !overflow && x == v)
                        return true;
        }
        return false;
}

/* Where line n (1-based) starts in text, or len if there are fewer lines. */
static size_t line_offset(const char *text, size_t len, unsigned n) {
        size_t off = 0;

        for (unsigned l = 1; l < n && off < len; l++) {
                const char *nl = memchr(text + off, '\n', len - off);
                if (!nl)
                        return len;
                off = (size_t)(nl - text) + 1;
        }
        return off;
}

static bool is_canonical_uint(const char *s, uint64_t min, uint64_t max) {
        uint64_t v = 0;
        size_t n = strnlen(s, KNOB_VALUE_MAX);

        if (n == 0 || n >= KNOB_VALUE_MAX || (s[0] == '0' && n > 1))
                return false;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9' || v > UINT64_MAX / 10)
                        return false;
                v = v * 10 + (uint64_t)(s[i] - '0');
        }
        return v >= min && v <= max;
}

/* Splits a knob path into its group and size; checks the spec is the one its name resolves to. */
static void check_knob_path(const PolicyKnob *k) {
        const char *slash;
        KnobGroup group;
        char size[KNOB_PATH_MAX] = "";
        const char *name;

        FUZZ_ASSERT(fuzz_terminated(k->path, sizeof(k->path)));
        FUZZ_ASSERT(!strstr(k->path, ".."));
        FUZZ_ASSERT(k->path[0] != '/');
        slash = strchr(k->path, '/');
        if (!slash) {
                group = KNOB_GROUP_TOP;
                name = k->path;
        } else {
                FUZZ_ASSERT(!strchr(slash + 1, '/'));
                name = slash + 1;
                if (strncmp(k->path, "khugepaged/", STRLEN("khugepaged/")) == 0)
                        group = KNOB_GROUP_KHUGEPAGED;
                else {
                        size_t n = (size_t)(slash - k->path);

                        FUZZ_ASSERT(strncmp(k->path, "hugepages-", STRLEN("hugepages-")) == 0);
                        n -= STRLEN("hugepages-");
                        memcpy(size, k->path + STRLEN("hugepages-"), n);
                        size[n] = '\0';
                        FUZZ_ASSERT(knob_size_is_valid(size));
                        group = KNOB_GROUP_SIZE;
                }
        }
        FUZZ_ASSERT(knob_spec_find(group, k->spec->name) == k->spec);
        FUZZ_ASSERT(strcmp(name, k->spec->name) == 0);
}

static void check_policy(const Policy *p, const char *text, size_t len) {
        FUZZ_ASSERT(p->file && strcmp(p->file, FILE_NAME) == 0);
        FUZZ_ASSERT(p->mode == POLICY_MODE_ENFORCE || p->mode == POLICY_MODE_AUDIT);
        FUZZ_ASSERT(p->recheck_interval_sec >= POLICY_RECHECK_MIN &&
                    p->recheck_interval_sec <= POLICY_RECHECK_MAX);
        FUZZ_ASSERT(p->fight_threshold <= POLICY_FIGHT_THRESHOLD_MAX);
        FUZZ_ASSERT(p->fight_window_sec >= 1 && p->fight_window_sec <= POLICY_RECHECK_MAX);
        FUZZ_ASSERT(!p->metrics_file || p->metrics_file[0] == '/');
        /* Values other than the defaults were written in the file. */
        FUZZ_ASSERT(p->recheck_interval_sec == POLICY_RECHECK_DEFAULT ||
                    literal_in(text, len, p->recheck_interval_sec));
        FUZZ_ASSERT(p->fight_threshold == POLICY_FIGHT_THRESHOLD_DEFAULT ||
                    literal_in(text, len, p->fight_threshold));
        FUZZ_ASSERT(p->fight_window_sec == POLICY_FIGHT_WINDOW_DEFAULT ||
                    literal_in(text, len, p->fight_window_sec));
        FUZZ_ASSERT(p->n_knobs == 0 || p->knobs);

        for (size_t i = 0; i < p->n_knobs; i++) {
                const PolicyKnob *k = &p->knobs[i];

                FUZZ_ASSERT(k->spec);
                FUZZ_ASSERT(k->line > 0);
                check_knob_path(k);
                FUZZ_ASSERT(fuzz_terminated(k->desired, sizeof(k->desired)));
                switch (k->spec->type) {
                case KNOB_CHOICE:
                        FUZZ_ASSERT(knob_spec_accepts_word(k->spec, k->desired));
                        break;
                case KNOB_BOOL:
                        FUZZ_ASSERT(strcmp(k->desired, "0") == 0 || strcmp(k->desired, "1") == 0);
                        break;
                case KNOB_UINT: {
                        size_t from = line_offset(text, len, k->line);

                        FUZZ_ASSERT(is_canonical_uint(k->desired, k->spec->min, UINT_KNOB_MAX));
                        /* The setting's name is on k->line; its value comes after. */
                        FUZZ_ASSERT(literal_in(text + from, len - from, strtoull(k->desired, NULL, 10)));
                        break;
                }
                default:
                        FUZZ_ASSERT(!"unknown knob type");
                }
                /* Two entries for one file would make the daemon fight itself. */
                for (size_t j = 0; j < i; j++)
                        FUZZ_ASSERT(strcmp(p->knobs[j].path, k->path) != 0);
        }
}

static void check_diag(const Diag *d) {
        static FILE *null;
        char *joined;

        FUZZ_ASSERT(d->n_entries <= d->n_errors + d->n_warnings);
        for (size_t i = 0; i < d->n_entries; i++) {
                FUZZ_ASSERT(d->entries[i].text);
                FUZZ_ASSERT(strncmp(d->entries[i].text, FILE_NAME ":", STRLEN(FILE_NAME ":")) == 0);
        }
        if (!null)
                null = fopen("/dev/null", "we");
        FUZZ_ASSERT(null);
        diag_print(d, null);
        joined = diag_join(d, DIAG_WARNING);
        FUZZ_ASSERT(joined);
        free(joined);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static Policy sentinel_storage;
        Policy *sentinel = &sentinel_storage, *p = sentinel;
        _cleanup_diag_ Diag d = { 0 };
        int r;

        /* policy_load() refuses more than POLICY_SIZE_MAX before parsing; so does policy_parse(). */
        in_parse = true;
        r = policy_parse(FILE_NAME, (const char *)data, size, &d, &p);
        in_parse = false;

        if (r < 0) {
                FUZZ_ASSERT(r == -EINVAL || r == -EFBIG || r == -ENOMEM);
                FUZZ_ASSERT(p == sentinel);
                FUZZ_ASSERT(r == -ENOMEM || d.n_errors > 0);
        } else {
                FUZZ_ASSERT(r == 0);
                FUZZ_ASSERT(p && p != sentinel);
                FUZZ_ASSERT(d.n_errors == 0);
                check_policy(p, (const char *)data, size);
                policy_free(p);
        }
        check_diag(&d);
        return 0;
}
