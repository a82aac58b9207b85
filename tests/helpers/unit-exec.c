/* SPDX-License-Identifier: MIT */
/*
 * unit-exec [--write-source=auto|fanotify] [--write-probe-hook=HOOK] CMD [ARG...]: runs CMD as the
 * shipped unit starts thpguardd, as far as its write source goes: it loads
 * the BPF write probe or, where it cannot (or with fanotify), opens both
 * fanotify groups, as the unit's ExecStartPre= does, and passes the fds
 * (the probe's three or four, or the two groups) from 3 on with LISTEN_FDS,
 * LISTEN_PID (this pid, which CMD keeps through execvp()) and
 * LISTEN_FDNAMES, as systemd passes its fd store. The
 * capabilities are dropped by what CMD is (setpriv ... thpguardd). Exit 125
 * if neither can be had (no CAP_SYS_ADMIN), 127 if CMD cannot be run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "thpguard/write-source-fds.h"

int main(int argc, char **argv) {
        WriteSourceWant want = { .source = WRITE_SOURCE_AUTO, .hook = WRITE_PROBE_HOOK_AUTO };
        const char *names;
        WriteSourceFds g;
        char pid[32], count[16];
        int fds[4], n;

        for (;;) {
                if (argc > 1 && strncmp(argv[1], "--write-source=", 15) == 0) {
                        if (write_source_from_string(argv[1] + 15, &want.source) < 0) {
                                fprintf(stderr, "unit-exec: %s: unknown write source\n", argv[1]);
                                return 2;
                        }
                } else if (argc > 1 && strncmp(argv[1], "--write-probe-hook=", 19) == 0) {
                        if (write_probe_hook_from_string(argv[1] + 19, &want.hook) < 0) {
                                fprintf(stderr, "unit-exec: %s: unknown hook\n", argv[1]);
                                return 2;
                        }
                } else
                        break;
                argv++;
                argc--;
        }
        if (argc < 2) {
                fprintf(stderr,
                        "usage: unit-exec [--write-source=auto|fanotify] [--write-probe-hook=HOOK] CMD "
                        "[ARG...]\n");
                return 2;
        }
        write_source_fds_open(&want, "/sys/kernel/mm/transparent_hugepage", &g);
        if (g.probe_error == 0) {
                fds[0] = g.probe.ring_fd;
                fds[1] = g.probe.link_fd;
                fds[2] = g.probe.config_fd;
                n = 3;
                names = WRITE_PROBE_FDNAME_RING ":" WRITE_PROBE_FDNAME_LINK ":" WRITE_PROBE_FDNAME_CONFIG;
                if (g.probe.enter_link_fd >= 0) {
                        fds[n++] = g.probe.enter_link_fd;
                        names =
                            WRITE_PROBE_FDNAME_RING ":" WRITE_PROBE_FDNAME_LINK ":" WRITE_PROBE_FDNAME_CONFIG
                                                    ":" WRITE_PROBE_FDNAME_ENTER;
                }
        } else if (g.write_fd >= 0 && g.open_fd >= 0) {
                fds[0] = g.write_fd;
                fds[1] = g.open_fd;
                n = 2;
                names = WRITE_SOURCE_FDNAME_WRITE ":" WRITE_SOURCE_FDNAME_OPEN;
        } else {
                fprintf(stderr,
                        "unit-exec: no BPF write probe (%s), and cannot open the fanotify groups: %s\n",
                        g.probe_why, strerror(-(g.write_fd < 0 ? g.write_fd : g.open_fd)));
                return 125;
        }
        /* Any may sit at 3 to 5 already: park them all high first, then put them in place. */
        for (int i = 0; i < n; i++) {
                int high = fcntl(fds[i], F_DUPFD, 10);

                close(fds[i]);
                fds[i] = high;
        }
        for (int i = 0; i < n; i++) {
                if (fds[i] < 0 || dup2(fds[i], 3 + i) != 3 + i) {
                        perror("unit-exec: fds 3 and up");
                        return 125;
                }
                close(fds[i]);
                /* Passed without close-on-exec, as systemd passes them. */
                fcntl(3 + i, F_SETFD, 0);
        }
        snprintf(pid, sizeof(pid), "%d", (int)getpid());
        snprintf(count, sizeof(count), "%d", n);
        setenv("LISTEN_FDS", count, 1);
        setenv("LISTEN_PID", pid, 1);
        setenv("LISTEN_FDNAMES", names, 1);
        execvp(argv[1], argv + 1);
        fprintf(stderr, "unit-exec: %s: %s\n", argv[1], strerror(errno));
        return 127;
}
