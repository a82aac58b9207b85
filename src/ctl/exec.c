/* SPDX-License-Identifier: MIT */
/*
 * The tenant's fallback when the host's THP mode is wrong for a program and
 * the host cannot be changed: set the per-process mode, then become the
 * command. The kernel keeps the mode in the mm flags, which fork() copies and
 * execve() keeps, so the whole process tree below inherits it. The prctl()
 * and its read-back are thp-mode.c's, shared with the OCI runtime shims.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

int ctl_exec(ThpMode mode, char **argv) {
        char why[512];
        int r;

        if (thp_mode_apply(mode, NULL, why, sizeof(why)) < 0) {
                fprintf(stderr, "thpguardctl exec: %s\n", why);
                return CTL_EXIT_EXEC_FAILED;
        }
        execvp(argv[0], argv);
        /* Kept before printing: a failed write to a closed or full stderr sets errno too. */
        r = -errno;
        fprintf(stderr, "thpguardctl: %s: %s\n", argv[0], strerror(-r));
        return r == -ENOENT ? CTL_EXIT_EXEC_NOT_FOUND : CTL_EXIT_EXEC_CANNOT_RUN;
}
