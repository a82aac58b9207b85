/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A process's own THP mode, prctl(PR_SET_THP_DISABLE): what `thpguardctl
 * exec` and the OCI runtime shims set before they exec. The kernel keeps it
 * in the mm flags, which fork() copies and execve() keeps, so everything
 * below the process inherits it.
 */

#include <stddef.h>

typedef enum ThpMode {
        THP_MODE_DISABLE,      /* PR_SET_THP_DISABLE 1: no huge pages at all */
        THP_MODE_ADVISED_ONLY, /* 1 | PR_THP_DISABLE_EXCEPT_ADVISED (6.18): only MADV_HUGEPAGE regions */
        THP_MODE_INHERIT,      /* 0: the node's mode */
        _THP_MODE_MAX,
        _THP_MODE_INVALID = -1,
} ThpMode;

/* "disable", "advised-only", "inherit"; _THP_MODE_INVALID for anything else. */
ThpMode thp_mode_from_string(const char *s);
const char *thp_mode_to_string(ThpMode mode);

/* The prctl() the mode is set and read through: the real one, or a test's. */
typedef int (*ThpPrctlFn)(int option, unsigned long arg2, unsigned long arg3);

/*
 * Sets mode through prctl_fn (NULL: the real prctl()) and reads it back with
 * PR_GET_THP_DISABLE. Returns 0, or -errno of the refused call (-EINVAL: the
 * kernel predates the mode), or -EIO when the call was taken but does not
 * read back. Never falls back to another mode. On failure why holds one line
 * saying so (kernel release included); nothing is printed.
 */
int thp_mode_apply(ThpMode mode, ThpPrctlFn prctl_fn, char *why, size_t why_size);
