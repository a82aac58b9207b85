/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>

#include "thpguard/thp-mode.h"

#ifndef PR_SET_THP_DISABLE
#define PR_SET_THP_DISABLE 41
#define PR_GET_THP_DISABLE 42
#endif
/* include/uapi/linux/prctl.h, Linux 6.18; Debian 12's headers predate it. */
#ifndef PR_THP_DISABLE_EXCEPT_ADVISED
#define PR_THP_DISABLE_EXCEPT_ADVISED (1 << 1)
#endif

static const char *const mode_names[_THP_MODE_MAX] = {
        [THP_MODE_DISABLE] = "disable",
        [THP_MODE_ADVISED_ONLY] = "advised-only",
        [THP_MODE_INHERIT] = "inherit",
};

ThpMode thp_mode_from_string(const char *s) {
        for (int i = 0; i < _THP_MODE_MAX; i++)
                if (s && strcmp(s, mode_names[i]) == 0)
                        return (ThpMode)i;
        return _THP_MODE_INVALID;
}

const char *thp_mode_to_string(ThpMode mode) {
        return mode >= 0 && mode < _THP_MODE_MAX ? mode_names[mode] : NULL;
}

static int real_prctl(int option, unsigned long arg2, unsigned long arg3) {
        return prctl(option, arg2, arg3, 0UL, 0UL);
}

int thp_mode_apply(ThpMode mode, ThpPrctlFn prctl_fn, char *why, size_t why_size) {
        struct utsname u = {};
        unsigned long arg2, arg3;
        int want, got;

        if (!prctl_fn)
                prctl_fn = real_prctl;
        switch (mode) {
        case THP_MODE_DISABLE:
                arg2 = 1, arg3 = 0;
                break;
        case THP_MODE_ADVISED_ONLY:
                arg2 = 1, arg3 = PR_THP_DISABLE_EXCEPT_ADVISED;
                break;
        case THP_MODE_INHERIT:
                arg2 = 0, arg3 = 0; /* arg3 must be 0 when clearing */
                break;
        default:
                snprintf(why, why_size, "unknown THP mode %d", (int)mode);
                return -EINVAL;
        }
        want = (int)(arg2 | arg3);

        if (prctl_fn(PR_SET_THP_DISABLE, arg2, arg3) < 0) {
                int r = -errno;

                if (uname(&u) < 0)
                        snprintf(u.release, sizeof(u.release), "?");
                /* Before 6.18 any non-zero arg3 is EINVAL. Falling back to "disable" would take
                 * huge pages from the regions the program asked for: refuse instead. */
                if (mode == THP_MODE_ADVISED_ONLY && r == -EINVAL)
                        snprintf(why, why_size,
                                 "THP mode advised-only needs PR_THP_DISABLE_EXCEPT_ADVISED (Linux 6.18 or "
                                 "later); kernel %s refused it (EINVAL). Not falling back to another mode",
                                 u.release);
                else
                        snprintf(why, why_size,
                                 "prctl(PR_SET_THP_DISABLE, %lu, %s) for THP mode %s: %s (kernel %s)", arg2,
                                 arg3 ? "PR_THP_DISABLE_EXCEPT_ADVISED" : "0", mode_names[mode],
                                 strerror(-r), u.release);
                return r;
        }

        /* Read it back: a kernel (or filter) that took the call but not the flag must not go unnoticed. */
        got = prctl_fn(PR_GET_THP_DISABLE, 0, 0);
        if (got != want) {
                snprintf(why, why_size, "PR_GET_THP_DISABLE reads back %d after setting %d (THP mode %s)",
                         got, want, mode_names[mode]);
                return -EIO;
        }
        return 0;
}
