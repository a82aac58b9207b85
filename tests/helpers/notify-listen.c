/* SPDX-License-Identifier: MIT */
/*
 * notify-listen SOCKET_PATH
 *
 * A stand-in for systemd's NOTIFY_SOCKET: binds a datagram socket and prints
 * each sd_notify() message on one line, with its newlines shown as '|'.
 * Exits after a message containing STOPPING=1.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char buf[4096];
        int fd;

        if (argc != 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "usage: notify-listen SOCKET_PATH\n");
                return 2;
        }
        strcpy(sa.sun_path, argv[1]);
        unlink(argv[1]);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return perror("socket"), 2;
        for (;;) {
                ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
                if (n < 0)
                        return perror("recv"), 2;
                buf[n] = '\0';
                for (char *p = buf; *p; p++)
                        if (*p == '\n')
                                *p = '|';
                printf("%s\n", buf);
                fflush(stdout);
                if (strstr(buf, "STOPPING=1"))
                        return 0;
        }
}
