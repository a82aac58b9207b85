/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Shared by the harnesses. FUZZ_ASSERT aborts, which libFuzzer reports as a
 * crash with a reproducer and the replay driver reports as a failed test.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ASSERT(expr)                                                                                   \
        do {                                                                                                \
                if (!(expr)) {                                                                              \
                        fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #expr);      \
                        abort();                                                                            \
                }                                                                                           \
        } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* True if open word close (such as "[madvise]") occurs in data. */
static inline bool fuzz_memmem_word(const uint8_t *data, size_t size, const char *word, char open,
                                    char close) {
        size_t n = strlen(word);

        for (size_t i = 0; i + n + 2 <= size; i++)
                if (data[i] == open && memcmp(data + i + 1, word, n) == 0 && data[i + n + 1] == close)
                        return true;
        return false;
}

/* True if s is a NUL-terminated string within its first max bytes. */
static inline bool fuzz_terminated(const char *s, size_t max) {
        return memchr(s, '\0', max) != NULL;
}

/* True if s is NUL-terminated within max bytes and printable ASCII up to there. */
static inline bool fuzz_printable(const char *s, size_t max) {
        if (!fuzz_terminated(s, max))
                return false;
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
                        return false;
        return true;
}

/*
 * Fills *obj with a pattern before a parser call; a parser that fails must
 * leave it so (FUZZ_UNTOUCHED).
 */
#define FUZZ_POISON(obj) memset((obj), 0xa5, sizeof(*(obj)))
#define FUZZ_UNTOUCHED(obj)                                                                                 \
        ({                                                                                                  \
                const unsigned char *_b = (const unsigned char *)(obj);                                     \
                bool _ok = true;                                                                            \
                for (size_t _i = 0; _i < sizeof(*(obj)); _i++)                                              \
                        _ok = _ok && _b[_i] == 0xa5;                                                        \
                _ok;                                                                                        \
        })

/* Parser failures the procfs.h contract allows. */
#define FUZZ_PROCFS_ERROR(r) ((r) == -EBADMSG || (r) == -ENOMEM)
