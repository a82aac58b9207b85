/* SPDX-License-Identifier: MIT */
/*
 * open-loop MODE PATH N: ns per operation over N operations on PATH, one
 * line ("ns_per_op X ok Y failed Z"). lock-cost.sh runs it. MODE:
 *   read   open(O_RDONLY) and close(): what any reader of a file pays
 *   write  open(O_WRONLY), write() of the file's own first word, close():
 *          a knob write as a writer makes it (refused in lock mode at the open)
 * Libc only, no sanitizers: the loop is the figure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv) {
        char word[64] = "";
        long n, ok = 0, failed = 0;
        int write_mode;
        double t0;

        if (argc != 4 || (strcmp(argv[1], "read") != 0 && strcmp(argv[1], "write") != 0) ||
            (n = strtol(argv[3], NULL, 10)) <= 0) {
                fprintf(stderr, "usage: open-loop read|write PATH N\n");
                return 2;
        }
        write_mode = strcmp(argv[1], "write") == 0;
        if (write_mode) {
                /* The selected word of "always [madvise] never", or the whole first word. */
                char buf[256] = "";
                int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
                ssize_t k = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
                char *b = strchr(buf, '['), *e;

                if (fd >= 0)
                        close(fd);
                if (k <= 0)
                        return 2;
                if (b && (e = strchr(b, ']')))
                        snprintf(word, sizeof(word), "%.*s", (int)(e - b - 1), b + 1);
                else
                        snprintf(word, sizeof(word), "%.*s", (int)strcspn(buf, " \n"), buf);
        }
        t0 = now_ns();
        for (long i = 0; i < n; i++) {
                int fd = open(argv[2], (write_mode ? O_WRONLY : O_RDONLY) | O_CLOEXEC);

                if (fd < 0) {
                        failed++;
                        continue;
                }
                if (write_mode && write(fd, word, strlen(word)) < 0)
                        failed++;
                else
                        ok++;
                close(fd);
        }
        printf("ns_per_op %.0f ok %ld failed %ld\n", (now_ns() - t0) / (double)n, ok, failed);
        return 0;
}
