/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Only what freep() calls; a user includes what it calls itself. The
 * cleanup helpers of file descriptors and directories are fileio.h's.
 */
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
