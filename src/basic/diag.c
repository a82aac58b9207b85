/* SPDX-License-Identifier: MIT */
#include "thpguard/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thpguard/escape.h"

/* A runaway policy (100k bad lines) must not make us hold 100k messages. */
#define DIAG_MAX 100

void diag_add(Diag *d, DiagLevel level, const char *file, unsigned line, const char *fmt, ...) {
        _cleanup_free_ char *raw = NULL;
        char msg[512], *text;
        DiagEntry *e;
        size_t len;
        va_list ap;
        int r;

        if (level == DIAG_ERROR)
                d->n_errors++;
        else
                d->n_warnings++;
        if (d->n_entries >= DIAG_MAX)
                return;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);

        if (line > 0)
                r = asprintf(&raw, "%s:%u: %s%s", file, line, level == DIAG_WARNING ? "warning: " : "", msg);
        else
                r = asprintf(&raw, "%s: %s%s", file, level == DIAG_WARNING ? "warning: " : "", msg);
        if (r < 0)
                return;
        /*
         * The values quoted come from the policy, the file name from anywhere:
         * every entry is printable ASCII before it reaches a terminal, a log or
         * a JSON document. Each byte grows to 4 at most.
         */
        len = (size_t)r;
        text = malloc(len * 4 + 1);
        if (!text)
                return;
        escape_printable(raw, len, text, len * 4 + 1);

        e = realloc(d->entries, (d->n_entries + 1) * sizeof(*e));
        if (!e) {
                free(text);
                return;
        }
        d->entries = e;
        d->entries[d->n_entries++] = (DiagEntry){ .level = level, .text = text };
}

void diag_print(const Diag *d, FILE *f) {
        size_t shown = 0;

        for (size_t i = 0; i < d->n_entries; i++, shown++)
                fprintf(f, "%s\n", d->entries[i].text);
        if (d->n_errors + d->n_warnings > shown)
                fprintf(f, "... and %zu more\n", d->n_errors + d->n_warnings - shown);
}

char *diag_join(const Diag *d, DiagLevel min_level) {
        size_t len = 1;
        char *s;

        for (size_t i = 0; i < d->n_entries; i++)
                if (d->entries[i].level >= min_level)
                        len += strlen(d->entries[i].text) + 2;
        s = malloc(len);
        if (!s)
                return NULL;
        s[0] = '\0';
        for (size_t i = 0; i < d->n_entries; i++) {
                if (d->entries[i].level < min_level)
                        continue;
                if (s[0])
                        strcat(s, "; ");
                strcat(s, d->entries[i].text);
        }
        return s;
}

void diag_done(Diag *d) {
        for (size_t i = 0; i < d->n_entries; i++)
                free(d->entries[i].text);
        free(d->entries);
        *d = (Diag){ 0 };
}
