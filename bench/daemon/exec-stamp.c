/* SPDX-License-Identifier: MIT */
/*
 * exec-stamp PROGRAM [ARG...]: says the CLOCK_MONOTONIC time
 * (X_THPGUARD_BENCH_EXEC_NS=<ns>) on stderr and, where NOTIFY_SOCKET is set
 * and not systemd's, to NOTIFY_SOCKET, then execs PROGRAM in its own place:
 * so exec -> READY=1 of a program a container runtime or systemd starts is
 * timed from the moment that program runs, not from the runtime's or
 * systemd's own setup before it (startup-pod.sh, startup-unit.sh). Linked
 * statically: it is bind-mounted into an image that has only thpguard's
 * own libraries.
 * CLOCK_MONOTONIC is the host's in a container without a time namespace
 * (podman makes none), so both ends read the same clock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char *argv[]) {
        const char *path = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct timespec ts;
        char msg[64];
        int fd, n;

        if (argc < 2 || (path && strlen(path) >= sizeof(sa.sun_path))) {
                fprintf(stderr, "usage: [NOTIFY_SOCKET=PATH] exec-stamp PROGRAM [ARG...]\n");
                return 2;
        }
        clock_gettime(CLOCK_MONOTONIC, &ts);
        n = snprintf(msg, sizeof(msg), "X_THPGUARD_BENCH_EXEC_NS=%llu",
                     (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
        fprintf(stderr, "exec-stamp: %s\n", msg);
        /* systemd's socket (under /run/systemd) takes the unit's timestamps itself. */
        if (path && strncmp(path, "/run/systemd/", 13) != 0) {
                strcpy(sa.sun_path, path);
                fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                if (fd < 0 || sendto(fd, msg, (size_t)n, 0, (struct sockaddr *)&sa, sizeof(sa)) != n) {
                        perror("exec-stamp: NOTIFY_SOCKET");
                        return 1;
                }
                close(fd);
        }
        execv(argv[1], argv + 1);
        perror(argv[1]);
        return 127;
}
