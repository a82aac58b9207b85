/* SPDX-License-Identifier: MIT */
/*
 * min-corrector KNOB WORD
 *
 * The floor of thpguard-bench's drift latency: the least a corrector can
 * do. It blocks on an inotify watch (IN_MODIFY) on the one knob file, and on
 * each wakeup pread()s it and pwrite()s WORD when the bracketed word
 * differs. Nothing else: no logging, no parsing beyond the brackets, no
 * library but libc. The only extra is READY=1 on $NOTIFY_SOCKET once the
 * watch is in place, so the bench starts it as it starts thpguardd; that is
 * before the loop and never on the corrector's path.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void notify_ready(void) {
        const char *sock = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        if (!sock || strlen(sock) >= sizeof(sa.sun_path))
                return;
        strcpy(sa.sun_path, sock);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd >= 0)
                (void)!sendto(fd, "READY=1", 7, 0, (struct sockaddr *)&sa, sizeof(sa));
        close(fd);
}

int main(int argc, char **argv) {
        char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        char buf[256];
        size_t len;
        int fd, ino;

        if (argc != 3)
                return 2;
        len = strlen(argv[2]);
        fd = open(argv[1], O_RDWR | O_CLOEXEC);
        ino = inotify_init1(IN_CLOEXEC);
        if (fd < 0 || ino < 0 || inotify_add_watch(ino, argv[1], IN_MODIFY) < 0)
                return 1;
        notify_ready();
        for (;;) {
                const char *a, *b;
                ssize_t n;

                if (read(ino, events, sizeof(events)) <= 0)
                        return 1;
                n = pread(fd, buf, sizeof(buf) - 1, 0);
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                a = strchr(buf, '[');
                b = a ? strchr(a, ']') : NULL;
                if (b && ((size_t)(b - a - 1) != len || memcmp(a + 1, argv[2], len) != 0))
                        (void)!pwrite(fd, argv[2], len, 0);
        }
}
