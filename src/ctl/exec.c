/* SPDX-License-Identifier: MIT */
/*
 * The tenant's fallback when the host's THP mode is wrong for a program and
 * the host cannot be changed: set the per-process mode, then become the
 * command. The kernel keeps the mode in the mm flags, which fork() copies and
 * execve() keeps, so the whole process tree below inherits it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ctl.h"

#ifndef PR_SET_THP_DISABLE
#define PR_SET_THP_DISABLE 41
#define PR_GET_THP_DISABLE 42
#endif
/* include/uapi/linux/prctl.h, Linux 6.18; Debian 12's headers predate it. */
#ifndef PR_THP_DISABLE_EXCEPT_ADVISED
#define PR_THP_DISABLE_EXCEPT_ADVISED (1 << 1)
#endif

CtlThpMode ctl_thp_mode_from_string(const char *s) {
        static const char *const names[_CTL_THP_MODE_MAX] = {
                [CTL_THP_DISABLE] = "disable",
                [CTL_THP_ADVISED_ONLY] = "advised-only",
                [CTL_THP_INHERIT] = "inherit",
        };

        for (int i = 0; i < _CTL_THP_MODE_MAX; i++)
                if (strcmp(s, names[i]) == 0)
                        return (CtlThpMode)i;
        return _CTL_THP_MODE_INVALID;
}

static int set_mode(CtlThpMode mode) {
        struct utsname u = {};
        int want;

        switch (mode) {
        case CTL_THP_DISABLE:
                if (prctl(PR_SET_THP_DISABLE, 1UL, 0UL, 0UL, 0UL) < 0) {
                        int r = -errno;

                        fprintf(stderr, "thpguardctl: prctl(PR_SET_THP_DISABLE, 1): %s\n", strerror(-r));
                        return r;
                }
                want = 1;
                break;
        case CTL_THP_ADVISED_ONLY:
                if (prctl(PR_SET_THP_DISABLE, 1UL, (unsigned long)PR_THP_DISABLE_EXCEPT_ADVISED, 0UL, 0UL) <
                    0) {
                        int r = -errno;

                        /* Before 6.18 any non-zero arg3 is EINVAL. Falling back to "disable" would
                         * take huge pages from the regions the program asked for: refuse instead. */
                        uname(&u);
                        if (r == -EINVAL)
                                fprintf(
                                    stderr,
                                    "thpguardctl: --thp=advised-only needs PR_THP_DISABLE_EXCEPT_ADVISED "
                                    "(Linux 6.18 or later); kernel %s refused it (EINVAL). "
                                    "Not falling back; use --thp=disable to turn THP off entirely.\n",
                                    u.release);
                        else
                                fprintf(stderr,
                                        "thpguardctl: prctl(PR_SET_THP_DISABLE, 1, "
                                        "PR_THP_DISABLE_EXCEPT_ADVISED): %s\n",
                                        strerror(-r));
                        return r;
                }
                want = 1 | PR_THP_DISABLE_EXCEPT_ADVISED;
                break;
        case CTL_THP_INHERIT:
                /* arg3 must be 0 when clearing. */
                if (prctl(PR_SET_THP_DISABLE, 0UL, 0UL, 0UL, 0UL) < 0) {
                        int r = -errno;

                        fprintf(stderr, "thpguardctl: prctl(PR_SET_THP_DISABLE, 0): %s\n", strerror(-r));
                        return r;
                }
                want = 0;
                break;
        default:
                return -EINVAL;
        }

        /* Read it back: a kernel that took the call but not the flag must not go unnoticed. */
        if (prctl(PR_GET_THP_DISABLE, 0UL, 0UL, 0UL, 0UL) != want) {
                fprintf(stderr, "thpguardctl: PR_GET_THP_DISABLE does not read back %d after setting it\n",
                        want);
                return -EIO;
        }
        return 0;
}

int ctl_exec(CtlThpMode mode, char **argv) {
        int r;

        if (set_mode(mode) < 0)
                return CTL_EXIT_EXEC_FAILED;
        execvp(argv[0], argv);
        /* Kept before printing: a failed write to a closed or full stderr sets errno too. */
        r = -errno;
        fprintf(stderr, "thpguardctl: %s: %s\n", argv[0], strerror(-r));
        return r == -ENOENT ? CTL_EXIT_EXEC_NOT_FOUND : CTL_EXIT_EXEC_CANNOT_RUN;
}
