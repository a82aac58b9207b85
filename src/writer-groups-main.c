/* SPDX-License-Identifier: MIT */
/*
 * thpguard-writer-groups: run by thpguardd.service as ExecStartPre=-+, with
 * the privileges the daemon does not get. Loads the BPF write probe, or
 * where it cannot opens the writer attribution's two fanotify groups, and
 * leaves them in the service's file descriptor store, where systemd hands
 * them to thpguardd (thpguardd(8), WRITE SOURCES). Reads nothing but the
 * THP directory's listing (the probe's filter), takes no argument, and
 * never fails the start: without them the daemon still enforces the
 * policy, without naming writers.
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
        r = writer_groups_store(WRITE_SOURCE_AUTO, &g);
        if (r == 0 && g.probe_error == 0)
                return 0;
        if (g.probe_error < 0)
                fprintf(stderr,
                        "thpguard-writer-groups: no BPF write probe: %s; fanotify names writers instead\n",
                        g.probe_why);
        if (r == 0)
                return 0;
        if (g.probe_error == 0)
                fprintf(stderr, "thpguard-writer-groups: cannot pass the BPF write probe to thpguardd: %s\n",
                        strerror(-r));
        else if (g.write_fd < 0)
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
