/* SPDX-License-Identifier: MIT */
/*
 * thpguard-writer-groups: run by thpguardd.service as ExecStartPre=-+, with
 * the privileges the daemon does not get. Opens the writer attribution's two
 * fanotify groups and leaves them in the service's file descriptor store,
 * where systemd hands them to thpguardd (thpguardd(8), WRITER ATTRIBUTION).
 * Reads nothing, takes no argument, and never fails the start: without the
 * groups the daemon still enforces the policy, without naming writers.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "thpguard/writer-groups.h"

int main(int argc, char **argv) {
        WriterGroups g;
        int r;

        (void)argv;
        if (argc > 1) {
                fprintf(stderr, "usage: thpguard-writer-groups (run by thpguardd.service, no arguments)\n");
                return 2;
        }
        r = writer_groups_store(&g);
        if (r == 0)
                return 0;
        if (g.write_fd < 0)
                fprintf(
                    stderr,
                    "thpguard-writer-groups: no write group for thpguardd: %s; writer attribution is off\n",
                    strerror(-g.write_fd));
        else
                fprintf(
                    stderr,
                    "thpguard-writer-groups: no open group for thpguardd: %s; one-shot writers are named by "
                    "pid only\n",
                    strerror(-g.open_fd));
        /* ENOTCONN: not run by systemd; nothing was left anywhere. */
        return r == -ENOTCONN ? 1 : 0;
}
