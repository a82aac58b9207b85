/* SPDX-License-Identifier: MIT */
/*
 * peak-rss CMD [ARGS...]: runs CMD, then prints "peak_rss_kb N" (the child's
 * ru_maxrss from wait4) and "elapsed_ms N" on stderr, and exits with CMD's
 * status (128 + signal if it was killed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
        struct timespec t0, t1;
        struct rusage ru;
        int status;
        pid_t pid;

        if (argc < 2) {
                fprintf(stderr, "usage: peak-rss CMD [ARGS...]\n");
                return 2;
        }
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pid = fork();
        if (pid < 0) {
                perror("fork");
                return 2;
        }
        if (pid == 0) {
                execvp(argv[1], argv + 1);
                perror(argv[1]);
                _exit(127);
        }
        if (wait4(pid, &status, 0, &ru) < 0) {
                perror("wait4");
                return 2;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        fprintf(stderr, "peak_rss_kb %ld\nelapsed_ms %lld\n", ru.ru_maxrss,
                (long long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return WEXITSTATUS(status);
}
