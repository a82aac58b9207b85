/* SPDX-License-Identifier: MIT */
/*
 * What `thpguardctl watch` costs to leave running on a node with many
 * processes: the CPU time (user + system, from wait4()) of one refresh.
 *
 *   bench-ctl-watch THPGUARDCTL [PROCS [INTERVALS]]      (default 2000 and 10)
 *
 * PROCS extra real processes (forked, 1 MiB touched each, paused), then
 * `thpguardctl watch --json --interval 1 --top 10` twice: with --count 1
 * and with --count 1+INTERVALS. The difference over INTERVALS is one
 * refresh without the startup (which collects as status does and scans
 * once); over the 1 s interval it is the share of one CPU. The last
 * frame's scan_every_s says whether the process scan had to run less often
 * than every interval. It prints the figures and the machine; it asserts
 * nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-common.h"

static double tv_ms(struct timeval tv) {
        return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

/* Runs watch for count intervals with stdout to out; its CPU time in ms, or -1. */
static double run_watch(const char *ctl, int count, const char *out) {
        struct rusage ru;
        char n[32];
        int status;
        pid_t pid;

        snprintf(n, sizeof(n), "%d", count);
        pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

                if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
                        _exit(126);
                execl(ctl, ctl, "watch", "--json", "--interval", "1", "--top", "10", "--count", n,
                      (char *)NULL);
                _exit(127);
        }
        if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -1;
        return tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime);
}

/* A number after "key": in the last line of the file; -1 if none. */
static double last_field(const char *out, const char *key) {
        char line[1 << 16], last[1 << 16] = "", pattern[64];
        FILE *f = fopen(out, "re");
        char *p;

        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                memcpy(last, line, sizeof(last));
        fclose(f);
        snprintf(pattern, sizeof(pattern), "\"%s\":", key);
        p = strstr(last, pattern);
        return p ? strtod(p + strlen(pattern), NULL) : -1;
}

int main(int argc, char **argv) {
        int procs = argc > 2 ? atoi(argv[2]) : 2000, intervals = argc > 3 ? atoi(argv[3]) : 10;
        char out[] = "/tmp/bench-ctl-watch-XXXXXX";
        double base, full, per;
        pid_t *kids;
        int fd;

        if (argc < 2 || procs <= 0 || intervals <= 0) {
                fprintf(stderr, "usage: bench-ctl-watch THPGUARDCTL [PROCS [INTERVALS]]\n");
                return 2;
        }
        fd = mkstemp(out);
        if (fd < 0) {
                perror("mkstemp");
                return 1;
        }
        close(fd);
        print_machine();
        printf("command: %s watch --json --interval 1 --top 10 --count N >file\n", argv[1]);

        kids = sleepers_start(&procs);
        usleep(200 * 1000);
        printf("%d extra processes started\n", procs);
        base = run_watch(argv[1], 1, out);
        full = base < 0 ? -1 : run_watch(argv[1], 1 + intervals, out);
        sleepers_stop(kids, procs);
        if (base < 0 || full < 0) {
                fprintf(stderr, "thpguardctl watch failed\n");
                unlink(out);
                return 1;
        }
        per = (full - base) / intervals;
        printf("CPU: --count 1 %.1f ms (startup and one refresh), --count %d %.1f ms\n", base, 1 + intervals,
               full);
        printf("one refresh: %.2f ms of CPU, %.2f %% of one CPU at 1 s; process scan every %.0f s, "
               "%.0f processes with THP\n",
               per, per / 10.0, last_field(out, "scan_every_s"), last_field(out, "with_thp"));
        unlink(out);
        return 0;
}
