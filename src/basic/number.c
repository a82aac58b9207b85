/* SPDX-License-Identifier: MIT */
#include "thpguard/number.h"

#include <errno.h>

#include "thpguard/macro.h"

_hot_ int number_parse_u64(const char *s, size_t n, uint64_t *ret) {
        uint64_t v = 0;

        if (n == 0)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++) {
                unsigned digit;

                if (s[i] < '0' || s[i] > '9')
                        return -EBADMSG;
                digit = (unsigned)(s[i] - '0');
                if (v > (UINT64_MAX - digit) / 10)
                        return -EBADMSG;
                v = v * 10 + digit;
        }
        *ret = v;
        return 0;
}

int number_parse_hex_u64(const char *s, size_t n, uint64_t *ret) {
        uint64_t v = 0;

        if (n == 0 || n > 16)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                unsigned digit;

                if (c >= '0' && c <= '9')
                        digit = (unsigned)(c - '0');
                else if (c >= 'a' && c <= 'f')
                        digit = (unsigned)(c - 'a' + 10);
                else
                        return -EBADMSG;
                v = v << 4 | digit;
        }
        *ret = v;
        return 0;
}

unsigned number_percent(uint64_t part, uint64_t whole) {
        uint64_t rest = 0;
        unsigned q = 0;

        if (whole == 0)
                return 0;
        if (part >= whole)
                return 100;
        /*
         * q = 100 * part / whole without the product, which may not fit:
         * add part a hundred times, modulo whole, counting the wraps.
         * Invariant: i * part == q * whole + rest, rest < whole.
         */
        for (int i = 0; i < 100; i++) {
                if (rest >= whole - part) {
                        rest -= whole - part;
                        q++;
                } else
                        rest += part;
        }
        return q;
}
