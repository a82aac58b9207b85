/* SPDX-License-Identifier: MIT */
/*
 * inotify-count DIR... -- COMMAND [ARGS...]
 *
 * Runs COMMAND with IN_MODIFY watches on each DIR and prints one line per
 * modified file ("modified NAME"), then "total N". A test uses it to prove
 * that a command wrote nothing (or only what it should) to real sysfs:
 * every user-space write to a THP file raises IN_MODIFY, even of an
 * unchanged value. Exits with COMMAND's status.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
        char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
        char *dirs[64];
        int n_dirs = 0, i, fd, status, total = 0;
        pid_t pid;

        for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
                if (n_dirs < 64)
                        dirs[n_dirs++] = argv[i];
        if (i >= argc - 1 || n_dirs == 0) {
                fprintf(stderr, "usage: inotify-count DIR... -- COMMAND [ARGS...]\n");
                return 2;
        }
        fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (fd < 0)
                return perror("inotify_init1"), 2;
        for (int d = 0; d < n_dirs; d++)
                if (inotify_add_watch(fd, dirs[d], IN_MODIFY) < 0)
                        return fprintf(stderr, "watch %s: %s\n", dirs[d], strerror(errno)), 2;

        pid = fork();
        if (pid < 0)
                return perror("fork"), 2;
        if (pid == 0) {
                execvp(argv[i + 1], argv + i + 1);
                perror("execvp");
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return perror("waitpid"), 2;

        /* Events are queued within microseconds of the write; allow 100 ms. */
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t n;

                if (poll(&p, 1, 100) <= 0)
                        break;
                n = read(fd, buf, sizeof(buf));
                if (n <= 0)
                        break;
                for (char *ptr = buf; ptr < buf + n;) {
                        struct inotify_event *ev = (struct inotify_event *)ptr;
                        if (ev->mask & IN_MODIFY) {
                                printf("modified %s\n", ev->len ? ev->name : "?");
                                total++;
                        }
                        ptr += sizeof(*ev) + ev->len;
                }
        }
        printf("total %d\n", total);
        fflush(stdout);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
