/* SPDX-License-Identifier: MIT */
#include "thpguard/number.h"

#include <errno.h>

int number_parse_u64(const char *s, size_t n, uint64_t *ret) {
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
