/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The audit trail. Each event is one journal entry with structured fields
 * (THPGUARD_KNOB=, ...), or, where no journald runs (a pod), one logfmt line
 * on stderr with the same fields in lower case without the prefix:
 *
 *   level=notice msg="corrected enabled: always -> madvise (inotify)" knob=enabled observed=always ...
 */

#include <stddef.h>
#include <stdio.h>
#include <syslog.h>

#include "thpguard/macro.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

typedef enum LogTarget {
        LOG_TARGET_AUTO,
        LOG_TARGET_JOURNAL,
        LOG_TARGET_CONSOLE,
} LogTarget;

typedef struct LogField {
        const char *key; /* journal field name, e.g. "THPGUARD_KNOB" */
        const char *value;
} LogField;

/*
 * A logfmt line's most; the journal has no such limit and gets every field
 * whole. On the console a value longer than LOG_FREEFORM_MAX (a command
 * line, a deep cgroup path: what a writer chooses) comes after every other
 * field, cut with "...", so it cannot crowd out who wrote.
 */
#define LOG_LINE_MAX     2048
#define LOG_MESSAGE_MAX  512
#define LOG_FREEFORM_MAX 256

typedef struct Logger {
        LogTarget target; /* resolved: never LOG_TARGET_AUTO */
        const char *journal_socket;
        FILE *console;
} Logger;

int log_target_from_string(const char *s, LogTarget *ret);

/* Resolves auto: the journal when its socket exists, else the console. */
void logger_init(Logger *l, LogTarget requested, const char *journal_socket, FILE *console);

/*
 * Sends one event. message_id may be NULL; so may a field's value, which
 * leaves that field out. Every field reaches the journal, however many.
 * On the console: level, msg, message_id, then the fields in their order,
 * the long ones last. When the journal is the target
 * but its socket is gone, the event goes to the console instead:
 * sd_journal_send() returns 0 even when nothing was logged.
 */
void log_event(const Logger *l, int priority, const char *message_id, const LogField *fields,
               size_t n_fields, const char *fmt, ...) _printf_(6, 7);

#define log_plain(l, prio, ...) log_event(l, prio, NULL, NULL, 0, __VA_ARGS__)

/*
 * Logs "MESSAGE: strerror(-error)" at LOG_ERR with THPGUARD_ERRNO, and
 * returns error (a negative errno), as systemd's log_error_errno() does:
 *   return log_error_errno(&d->log, r, "cannot watch %s", dir);
 */
int log_error_errno(const Logger *l, int error, const char *fmt, ...) _printf_(3, 4);

/* Appends key=value to buf in logfmt, quoting where needed. */
void logfmt_append(char *buf, size_t size, const char *key, const char *value);
