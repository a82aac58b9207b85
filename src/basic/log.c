/* SPDX-License-Identifier: MIT */
#include "thpguard/log.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

int log_target_from_string(const char *s, LogTarget *ret) {
        if (strcmp(s, "auto") == 0)
                *ret = LOG_TARGET_AUTO;
        else if (strcmp(s, "journal") == 0)
                *ret = LOG_TARGET_JOURNAL;
        else if (strcmp(s, "console") == 0)
                *ret = LOG_TARGET_CONSOLE;
        else
                return -EINVAL;
        return 0;
}

static bool journal_available(const char *socket) {
        return access(socket, F_OK) == 0;
}

void logger_init(Logger *l, LogTarget requested, const char *journal_socket, FILE *console) {
        l->journal_socket = journal_socket;
        l->console = console;
        l->target = requested;
        if (requested == LOG_TARGET_AUTO)
                l->target = journal_available(journal_socket) ? LOG_TARGET_JOURNAL : LOG_TARGET_CONSOLE;
}

static const char *level_name(int priority) {
        static const char *const names[] = { "emerg", "alert",  "crit", "error",
                                             "warn",  "notice", "info", "debug" };
        return names[priority & 7];
}

static bool needs_quotes(const char *v) {
        if (!*v)
                return true;
        for (; *v; v++)
                if (*v == ' ' || *v == '=' || *v == '"' || *v == '\\' || !isprint((unsigned char)*v))
                        return true;
        return false;
}

void logfmt_append(char *buf, size_t size, const char *key, const char *value) {
        size_t used = strlen(buf);
        bool quote = needs_quotes(value);

#define PUT(c)                                                                                              \
        do {                                                                                                \
                if (used + 1 < size)                                                                        \
                        buf[used++] = (c);                                                                  \
        } while (0)

        if (used > 0)
                PUT(' ');
        for (const char *k = key; *k; k++)
                PUT(*k);
        PUT('=');
        if (quote)
                PUT('"');
        for (const char *v = value; *v; v++) {
                if (*v == '"' || *v == '\\') {
                        PUT('\\');
                        PUT(*v);
                } else if (*v == '\n') {
                        PUT('\\');
                        PUT('n');
                } else if (!isprint((unsigned char)*v))
                        PUT('?');
                else
                        PUT(*v);
        }
        if (quote)
                PUT('"');
        buf[used] = '\0';
#undef PUT
}

/* "THPGUARD_KNOB" -> "knob", "MESSAGE_ID" -> "message_id". */
static void logfmt_key(const char *field, char *buf, size_t size) {
        size_t i = 0;

        if (strncmp(field, "THPGUARD_", STRLEN("THPGUARD_")) == 0)
                field += STRLEN("THPGUARD_");
        for (; *field && i + 1 < size; field++)
                buf[i++] = (char)tolower((unsigned char)*field);
        buf[i] = '\0';
}

/* logfmt_append() of a value cut at max bytes, "..." marking the cut. */
static void logfmt_append_cut(char *buf, size_t size, const char *key, const char *value, size_t max) {
        char cut[LOG_FREEFORM_MAX > LOG_MESSAGE_MAX ? LOG_FREEFORM_MAX : LOG_MESSAGE_MAX];
        size_t n = strlen(value);

        if (max > sizeof(cut))
                max = sizeof(cut);
        if (n <= max) {
                logfmt_append(buf, size, key, value);
                return;
        }
        snprintf(cut, sizeof(cut), "%.*s...", (int)(max - 4), value);
        logfmt_append(buf, size, key, cut);
}

static void log_console(const Logger *l, int priority, const char *message_id, const LogField *fields,
                        size_t n_fields, const char *msg) {
        char line[LOG_LINE_MAX] = "", key[64];

        logfmt_append(line, sizeof(line), "level", level_name(priority));
        logfmt_append_cut(line, sizeof(line), "msg", msg, LOG_MESSAGE_MAX);
        if (message_id)
                logfmt_append(line, sizeof(line), "message_id", message_id);
        /* Who and what first: a long value must not push them past the line's end. */
        for (int pass = 0; pass <= 1; pass++)
                for (size_t i = 0; i < n_fields; i++) {
                        bool long_value = fields[i].value && strlen(fields[i].value) > LOG_FREEFORM_MAX;

                        if (!fields[i].value || long_value != (pass == 1))
                                continue;
                        logfmt_key(fields[i].key, key, sizeof(key));
                        logfmt_append_cut(line, sizeof(line), key, fields[i].value, LOG_FREEFORM_MAX);
                }
        fprintf(l->console, "%s\n", line);
        fflush(l->console);
}

/* Every field, however many and however long: the journal is where the whole record is kept. */
static int log_journal(int priority, const char *message_id, const LogField *fields, size_t n_fields,
                       const char *msg) {
        char prio[32], id[64];
        struct iovec iov[n_fields + 4];
        _cleanup_free_ char *text = NULL;
        size_t n = 0, size = STRLEN("MESSAGE=") + strlen(msg) + 1, used = 0;
        int len;

        for (size_t i = 0; i < n_fields; i++)
                if (fields[i].value)
                        size += strlen(fields[i].key) + 1 + strlen(fields[i].value) + 1;
        text = malloc(size);
        if (!text)
                return -ENOMEM;

        snprintf(prio, sizeof(prio), "PRIORITY=%d", priority);
        iov[n++] = (struct iovec){ .iov_base = (char *)"SYSLOG_IDENTIFIER=thpguardd",
                                   .iov_len = STRLEN("SYSLOG_IDENTIFIER=thpguardd") };
        iov[n++] = (struct iovec){ .iov_base = prio, .iov_len = strlen(prio) };
        if (message_id) {
                snprintf(id, sizeof(id), "MESSAGE_ID=%s", message_id);
                iov[n++] = (struct iovec){ .iov_base = id, .iov_len = strlen(id) };
        }
        for (size_t i = 0; i < n_fields; i++) {
                if (!fields[i].value)
                        continue;
                len = snprintf(text + used, size - used, "%s=%s", fields[i].key, fields[i].value);
                iov[n++] = (struct iovec){ .iov_base = text + used, .iov_len = (size_t)len };
                used += (size_t)len + 1;
        }
        len = snprintf(text + used, size - used, "MESSAGE=%s", msg);
        iov[n++] = (struct iovec){ .iov_base = text + used, .iov_len = (size_t)len };
        return sd_journal_sendv(iov, (int)n);
}

void log_event(const Logger *l, int priority, const char *message_id, const LogField *fields,
               size_t n_fields, const char *fmt, ...) {
        char msg[LOG_LINE_MAX / 2];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);

        if (l->target == LOG_TARGET_JOURNAL && journal_available(l->journal_socket) &&
            log_journal(priority, message_id, fields, n_fields, msg) >= 0)
                return;
        log_console(l, priority, message_id, fields, n_fields, msg);
}

int log_error_errno(const Logger *l, int error, const char *fmt, ...) {
        char msg[LOG_LINE_MAX / 4], errno_str[16];
        LogField f[] = { { "THPGUARD_ERRNO", errno_str } };
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        snprintf(errno_str, sizeof(errno_str), "%d", error < 0 ? -error : error);
        log_event(l, LOG_ERR, NULL, f, ELEMENTSOF(f), "%s: %s", msg, strerror(error < 0 ? -error : error));
        return error;
}
