/* SPDX-License-Identifier: MIT */
#include "thpguard/escape.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thpguard/macro.h"

bool escape_printable(const char *src, size_t len, char *buf, size_t size) {
        size_t used = 0;

        if (size == 0)
                return len == 0;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)src[i];
                /* A backslash doubled, so that a literal "\x1b" never reads as the escape of ESC. */
                size_t need = c == '\\' ? 2 : c >= 0x20 && c < 0x7f ? 1 : 4;

                if (used + need >= size) {
                        buf[used] = '\0';
                        return false;
                }
                if (c == '\\') {
                        buf[used++] = '\\';
                        buf[used++] = '\\';
                } else if (need == 1)
                        buf[used++] = (char)c;
                else {
                        snprintf(buf + used, size - used, "\\x%02x", c);
                        used += 4;
                }
        }
        buf[used] = '\0';
        return true;
}

const char *escape_str(const char *s, char *buf, size_t size) {
        escape_printable(s, strlen(s), buf, size);
        return buf;
}

/* The length of the well-formed UTF-8 sequence at s (1 to 4), or 0 if there is none. */
static size_t utf8_sequence(const unsigned char *s) {
        unsigned char lo = 0x80, hi = 0xbf;
        size_t n;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                n = 2;
        else if (s[0] >= 0xe0 && s[0] <= 0xef) {
                n = 3;
                lo = s[0] == 0xe0 ? 0xa0 : 0x80; /* no overlong form */
                hi = s[0] == 0xed ? 0x9f : 0xbf; /* no surrogate */
        } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
                n = 4;
                lo = s[0] == 0xf0 ? 0x90 : 0x80; /* no overlong form */
                hi = s[0] == 0xf4 ? 0x8f : 0xbf; /* nothing above U+10FFFF */
        } else
                return 0;
        /* Table 3-7 of the Unicode standard: only the second byte has a narrower range. */
        if (s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < n; i++)
                if (s[i] < 0x80 || s[i] > 0xbf)
                        return 0;
        return n;
}

char *utf8_sanitize(const char *s) {
        const unsigned char *p = (const unsigned char *)s;
        size_t len = strlen(s);
        char *out, *o;

        /* Each invalid byte grows to the 3 bytes of U+FFFD at most. */
        if (len > (SIZE_MAX - 1) / 3)
                return NULL;
        out = malloc(len * 3 + 1);
        if (!out)
                return NULL;
        o = out;
        while (*p) {
                size_t n = utf8_sequence(p);

                if (n == 0) {
                        memcpy(o, "\xef\xbf\xbd", 3);
                        o += 3;
                        p++;
                } else {
                        memcpy(o, p, n);
                        o += n;
                        p += n;
                }
        }
        *o = '\0';
        return out;
}

struct json_object *json_string_utf8(const char *s) {
        _cleanup_free_ char *safe = NULL;

        if (!s)
                return NULL;
        safe = utf8_sanitize(s);
        return safe ? json_object_new_string(safe) : NULL;
}
