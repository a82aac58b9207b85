/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Collected diagnostics for one policy load, as "file:line: message" lines.
 * A load reports every problem it finds in one run (OpenBSD style), so the
 * loader appends here instead of stopping at the first.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "thpguard/macro.h"

typedef enum DiagLevel {
        DIAG_WARNING,
        DIAG_ERROR,
} DiagLevel;

typedef struct DiagEntry {
        DiagLevel level;
        char *text; /* "file:line: message", or "file: message" when line is 0; printable ASCII */
} DiagEntry;

typedef struct Diag {
        DiagEntry *entries;
        size_t n_entries;
        size_t n_errors;
        size_t n_warnings;
} Diag;

void diag_add(Diag *d, DiagLevel level, const char *file, unsigned line, const char *fmt, ...)
    _printf_(5, 6);
#define diag_error(d, file, line, ...)   diag_add(d, DIAG_ERROR, file, line, __VA_ARGS__)
#define diag_warning(d, file, line, ...) diag_add(d, DIAG_WARNING, file, line, __VA_ARGS__)

/* Prints every entry, one line each; warnings carry "warning: ". */
void diag_print(const Diag *d, FILE *f);

/* The entries joined by "; ", for one log line. Caller frees. */
char *diag_join(const Diag *d, DiagLevel min_level);

void diag_done(Diag *d);
#define _cleanup_diag_ _cleanup_(diag_done)
