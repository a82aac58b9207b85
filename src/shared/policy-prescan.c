/* SPDX-License-Identifier: MIT */
#include "policy-prescan.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "thpguard/macro.h"
#include "thpguard/policy.h"

/*
 * libconfig would follow "@include" to any file and around our size limit;
 * a policy is one self-contained file.
 */
static bool refuse_include(const char *file, const char *buf, Diag *diag) {
        unsigned line = 1;
        bool found = false;

        for (const char *p = buf; *p; line++) {
                const char *eol = strchr(p, '\n');

                p += strspn(p, " \t");
                if (strncmp(p, "@include", STRLEN("@include")) == 0) {
                        diag_error(diag, file, line, "@include is not supported in a policy");
                        found = true;
                }
                if (!eol)
                        break;
                p = eol + 1;
        }
        return found;
}

/*
 * A pass over the text before libconfig sees it, with just enough of
 * libconfig's lexer (comments, strings, names, numbers) for three checks:
 *
 *  - libconfig 1.5 reads an integer literal without the L suffix with
 *    atoi(): 4296729655 silently becomes 1762359, a value nobody wrote,
 *    which would then be enforced. Each such literal is reported with what
 *    the user wrote, and its line returned so it is not reported twice.
 *  - libconfig's parse time grows with the square of the number of
 *    settings (100k keys: minutes, and the daemon is blocked meanwhile),
 *    so the settings (each '=' or ':') are counted for a cap.
 *  - libconfig 1.5 leaks the string token it discards on a syntax error:
 *    a 900 KB literal then an error cost 900 KB per reload. A literal
 *    longer than POLICY_STRING_MAX is refused here (-EINVAL, after the
 *    whole text is scanned, so each is reported), before libconfig sees it.
 */
static int lex(const char *file, const char *text, Diag *diag, unsigned **ret_lines, size_t *ret_n,
               size_t *ret_settings) {
        size_t settings = 0;
        _cleanup_free_ unsigned *lines = NULL;
        size_t n = 0;
        unsigned line = 1;
        bool too_long = false;

        for (const char *p = text; *p;) {
                if (*p == '\n') {
                        line++;
                        p++;
                } else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
                        p += strcspn(p, "\n");
                } else if (p[0] == '/' && p[1] == '*') {
                        for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
                                line += *p == '\n';
                        p += *p ? 2 : 0;
                } else if (*p == '"') {
                        const char *start = p + 1;
                        unsigned start_line = line;

                        for (p++; *p && *p != '"'; p++) {
                                if (*p == '\\' && p[1])
                                        p++;
                                line += *p == '\n';
                        }
                        if ((size_t)(p - start) > POLICY_STRING_MAX) {
                                diag_error(diag, file, start_line, "string literal longer than %d bytes",
                                           POLICY_STRING_MAX);
                                too_long = true;
                        }
                        p += *p ? 1 : 0;
                } else if (*p == '=' || *p == ':') {
                        settings++;
                        p++;
                } else if (isalpha((unsigned char)*p) || *p == '*' || *p == '_') {
                        p += strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_*-");
                } else if (isdigit((unsigned char)*p)) {
                        bool hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
                        bool negative = p > text && p[-1] == '-';
                        const char *start = p, *end;
                        uint64_t v = 0, limit;
                        bool overflow = false;

                        p += hex ? 2 : 0;
                        end = p + strspn(p, hex ? "0123456789abcdefABCDEF" : "0123456789");
                        if (!hex && (*end == '.' || *end == 'e' || *end == 'E')) {
                                p = end + strspn(end, "0123456789.eE+-"); /* a float */
                                continue;
                        }
                        for (; p < end; p++) {
                                unsigned d = isdigit((unsigned char)*p) ? (unsigned)(*p - '0')
                                                                        : (unsigned)(tolower(*p) - 'a' + 10);
                                if (v > (UINT64_MAX - d) / (hex ? 16 : 10))
                                        overflow = true;
                                else
                                        v = v * (hex ? 16 : 10) + d;
                        }
                        if (*p == 'L') {
                                p += p[1] == 'L' ? 2 : 1; /* int64: read with atoll(), fine */
                                continue;
                        }
                        limit = negative ? (uint64_t)INT32_MAX + 1 : (uint64_t)INT32_MAX;
                        if (overflow || v > limit) {
                                unsigned *nl = realloc(lines, (n + 1) * sizeof(*nl));
                                if (!nl)
                                        return -ENOMEM;
                                lines = nl;
                                lines[n++] = line;
                                diag_error(diag, file, line,
                                           "integer %s%.*s is too large for libconfig without the L suffix "
                                           "(write %s%.*sL)",
                                           negative ? "-" : "", (int)(end - start), start,
                                           negative ? "-" : "", (int)(end - start), start);
                        }
                } else
                        p++;
        }
        if (too_long)
                return -EINVAL;
        *ret_lines = TAKE_PTR(lines);
        *ret_n = n;
        *ret_settings = settings;
        return 0;
}

int policy_prescan(const char *file, const char *text, Diag *diag, PolicyPrescan *ret) {
        PolicyPrescan p = {};
        int r;

        if (refuse_include(file, text, diag))
                return -EINVAL;
        r = lex(file, text, diag, &p.wrapped_lines, &p.n_wrapped_lines, &p.n_settings);
        if (r < 0)
                return r;
        if (p.n_settings > POLICY_SETTINGS_MAX) {
                diag_error(diag, file, 0, "has %zu settings; a policy may have at most %d", p.n_settings,
                           POLICY_SETTINGS_MAX);
                policy_prescan_done(&p);
                return -E2BIG;
        }
        *ret = p;
        return 0;
}

void policy_prescan_done(PolicyPrescan *p) {
        free(p->wrapped_lines);
        *p = (PolicyPrescan){};
}
