/* SPDX-License-Identifier: MIT */
/*
 * unit-exec CMD [ARG...]: runs CMD as the shipped unit starts thpguardd,
 * as far as the fanotify groups go: it opens both (as the unit's
 * ExecStartPre= does), passes them at fds 3 and 4 with LISTEN_FDS,
 * LISTEN_PID (this pid, which CMD keeps through execvp()) and
 * LISTEN_FDNAMES, as systemd passes its fd store. The capabilities are
 * dropped by what CMD is (setpriv ... thpguardd). Exit 125 if the groups
 * cannot be opened (no CAP_SYS_ADMIN), 127 if CMD cannot be run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "thpguard/writer-groups.h"

int main(int argc, char **argv) {
        WriterGroups g;
        char pid[32];

        if (argc < 2) {
                fprintf(stderr, "usage: unit-exec CMD [ARG...]\n");
                return 2;
        }
        writer_groups_open(&g);
        if (g.write_fd < 0 || g.open_fd < 0) {
                fprintf(stderr, "unit-exec: cannot open the fanotify groups: %s\n",
                        strerror(-(g.write_fd < 0 ? g.write_fd : g.open_fd)));
                return 125;
        }
        /* Either may sit at 3 or 4 already: park both high first, then put them in place. */
        int write_fd = fcntl(g.write_fd, F_DUPFD, 10), open_fd = fcntl(g.open_fd, F_DUPFD, 10);

        close(g.write_fd);
        close(g.open_fd);
        if (write_fd < 0 || open_fd < 0 || dup2(write_fd, 3) != 3 || dup2(open_fd, 4) != 4) {
                perror("unit-exec: fds 3 and 4");
                return 125;
        }
        close(write_fd);
        close(open_fd);
        /* Passed without close-on-exec, as systemd passes them. */
        fcntl(3, F_SETFD, 0);
        fcntl(4, F_SETFD, 0);
        snprintf(pid, sizeof(pid), "%d", (int)getpid());
        setenv("LISTEN_FDS", "2", 1);
        setenv("LISTEN_PID", pid, 1);
        setenv("LISTEN_FDNAMES", WRITER_GROUP_FDNAME_WRITE ":" WRITER_GROUP_FDNAME_OPEN, 1);
        execvp(argv[1], argv + 1);
        fprintf(stderr, "unit-exec: %s: %s\n", argv[1], strerror(errno));
        return 127;
}
