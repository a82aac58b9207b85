/* SPDX-License-Identifier: MIT */
#include "thpguard/knob-value.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "thpguard/macro.h"
#include "thpguard/number.h"

/*
 * What the kernel prints (6.18, this is a real read):
 *
 *   $ cat /sys/kernel/mm/transparent_hugepage/enabled
 *   always [madvise] never
 *   $ cat /sys/kernel/mm/transparent_hugepage/shmem_enabled
 *   always within_size advise [never] deny force
 *   $ cat /sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled
 *   always [inherit] madvise never
 *   $ cat /sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_none
 *   511
 *
 * Words are separated by single spaces and the line ends in one newline.
 * We accept any run of spaces between words, and nothing else.
 */

/* Strips the one trailing newline sysfs adds; rejects NULs anywhere. */
_hot_ static int trim_line(const char *buf, size_t len, size_t *ret_len) {
        if (len == 0 || len > KNOB_READ_MAX || memchr(buf, '\0', len))
                return -EBADMSG;
        if (buf[len - 1] == '\n')
                len--;
        if (len == 0)
                return -EBADMSG;
        *ret_len = len;
        return 0;
}

_hot_ static bool is_word_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-';
}

int knob_value_parse_u64(const char *buf, size_t len, uint64_t *ret) {
        size_t n;
        int r;

        r = trim_line(buf, len, &n);
        if (r < 0)
                return r;
        return number_parse_u64(buf, n, ret);
}

_hot_ static int parse_choices(const char *buf, size_t len, KnobValue *ret) {
        KnobValue v = { .n_offered = 0 };
        bool have_active = false;
        size_t n, i = 0;
        int r;

        r = trim_line(buf, len, &n);
        if (r < 0)
                return r;

        while (i < n) {
                bool bracketed = false;
                size_t start, wlen;

                while (i < n && buf[i] == ' ')
                        i++;
                if (i == n)
                        break;
                if (buf[i] == '[') {
                        bracketed = true;
                        i++;
                }
                start = i;
                while (i < n && is_word_char(buf[i]))
                        i++;
                wlen = i - start;
                if (wlen == 0 || wlen >= KNOB_VALUE_MAX)
                        return -EBADMSG;
                if (bracketed) {
                        if (i == n || buf[i] != ']' || have_active)
                                return -EBADMSG;
                        i++;
                }
                if (i < n && buf[i] != ' ')
                        return -EBADMSG;
                if (v.n_offered == KNOB_OFFERED_MAX)
                        return -EBADMSG;

                memcpy(v.offered[v.n_offered], buf + start, wlen);
                v.offered[v.n_offered][wlen] = '\0';
                if (bracketed) {
                        memcpy(v.active, buf + start, wlen);
                        v.active[wlen] = '\0';
                        have_active = true;
                }
                v.n_offered++;
        }
        if (!have_active)
                return -EBADMSG;

        *ret = v;
        return 0;
}

_hot_ int knob_value_parse(KnobType type, const char *buf, size_t len, KnobValue *ret) {
        KnobValue v = { .n_offered = 0 };
        uint64_t u;
        int r;

        if (type == KNOB_CHOICE)
                return parse_choices(buf, len, ret);

        r = knob_value_parse_u64(buf, len, &u);
        if (r < 0)
                return r;
        if (type == KNOB_BOOL && u > 1)
                return -EBADMSG;
        snprintf(v.active, sizeof(v.active), "%" PRIu64, u);
        *ret = v;
        return 0;
}

_hot_ bool knob_value_offers(const KnobValue *value, const char *word) {
        for (size_t i = 0; i < value->n_offered; i++)
                if (strcmp(value->offered[i], word) == 0)
                        return true;
        return false;
}

void knob_value_offered_string(const KnobValue *value, char *buf, size_t size) {
        size_t used = 0;

        if (size == 0)
                return;
        buf[0] = '\0';
        for (size_t i = 0; i < value->n_offered; i++) {
                int r = snprintf(buf + used, size - used, "%s%s", i ? " " : "", value->offered[i]);
                if (r < 0 || (size_t)r >= size - used)
                        return;
                used += (size_t)r;
        }
}

_hot_ bool knob_value_write_sets(KnobType type, const char *buf, size_t len, const char *word) {
        uint64_t written, wanted;
        size_t n;

        if (trim_line(buf, len, &n) < 0)
                return false;
        if (type == KNOB_CHOICE)
                return n == strlen(word) && memcmp(buf, word, n) == 0;
        /* kstrtoul() takes a leading '+' too: "+0" sets khugepaged/defrag as "0" does. */
        if (buf[0] == '+') {
                buf++;
                n--;
        }
        return number_parse_u64(buf, n, &written) == 0 &&
               number_parse_u64(word, strlen(word), &wanted) == 0 && written == wanted;
}
