/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Only what freep() calls; a user includes what it calls itself. The
 * cleanup helpers of file descriptors and directories are fileio.h's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define _cleanup_(f)   __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
/*
 * On the path from a knob's inotify event to its correction
 * (daemon-corrector.c). An isolated drift finds that path cold, and every
 * page of code it crosses is a TLB and cache miss, dear in a VM: the
 * compiler keeps these functions together (.text.hot), a page or two
 * instead of nine.
 */
#define _hot_ __attribute__((hot))

/* Defines a cleanup helper that calls func(*p) when *p is not NULL. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                                                             \
        static inline void func##p(type *p) {                                                               \
                if (*p)                                                                                     \
                        func(*p);                                                                           \
        }

static inline void freep(void *p) {
        free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

/* Hands ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p)                                                                                         \
        ({                                                                                                  \
                __typeof__(p) _p = (p);                                                                     \
                (p) = NULL;                                                                                 \
                _p;                                                                                         \
        })

#define STRLEN(s) (sizeof(s) - 1)

/*
 * Room for element n of the array *items (of *cap elements of size bytes):
 * nothing when n < *cap, else the array doubled (first elements the first
 * time), never past max (0: no limit). 0, or -ENOMEM (the product would
 * overflow, max is reached, or realloc() failed) with *items and *cap as
 * they were. items is the address of the array's pointer, whatever its
 * type: the one growth rule of the tree.
 */
static inline int array_grow(void *items, size_t *cap, size_t n, size_t size, size_t first, size_t max) {
        size_t c = *cap ? *cap * 2 : first;
        void *p;

        if (n < *cap)
                return 0;
        if (max && c > max)
                c = max;
        if (c <= n || c < *cap || c > SIZE_MAX / size)
                return -ENOMEM;
        p = realloc(*(void **)items, c * size);
        if (!p)
                return -ENOMEM;
        *(void **)items = p;
        *cap = c;
        return 0;
}
