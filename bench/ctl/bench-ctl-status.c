/* SPDX-License-Identifier: MIT */
/*
 * How long `thpguardctl status` takes on a node with many processes.
 *
 *   bench-ctl-status THPGUARDCTL [PROCS [RUNS]]      (default 2000 and 20)
 *
 * Two measurements, each RUNS times, wall clock of the whole command
 * (fork, exec, scan, JSON output to /dev/null):
 *   real     PROCS extra real processes (forked, 1 MiB touched each, paused)
 *            and the machine's /proc;
 *   fixture  a generated --proc-root tree of PROCS pid directories, 10% of
 *            them with AnonHugePages, so the cost of the scan itself shows
 *            without the kernel's smaps_rollup walk.
 * It prints the figures and the machine; it asserts nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-common.h"

static double now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

/* Runs thpguardctl status --json [--proc-root root] with stdout to out; returns ms or -1. */
static double run_status(const char *ctl, const char *proc_root, const char *out) {
        double t0 = now_ms();
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return -1;
        if (pid == 0) {
                int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

                if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
                        _exit(126);
                if (proc_root)
                        execl(ctl, ctl, "status", "--json", "--proc-root", proc_root, (char *)NULL);
                else
                        execl(ctl, ctl, "status", "--json", (char *)NULL);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -1;
        return now_ms() - t0;
}

/* The "scanned" figure from the JSON document, to show the processes were seen. */
static long scanned(const char *out) {
        char buf[1 << 16];
        FILE *f = fopen(out, "re");
        size_t n;
        char *p;

        if (!f)
                return -1;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        p = strstr(buf, "\"scanned\": ");
        return p ? strtol(p + strlen("\"scanned\": "), NULL, 10) : -1;
}

static int measure(const char *label, const char *ctl, const char *proc_root, int runs, const char *out) {
        double *t = calloc((size_t)runs, sizeof(*t)), sum = 0;

        if (!t)
                return -ENOMEM;
        for (int i = 0; i < runs; i++) {
                t[i] = run_status(ctl, proc_root, out);
                if (t[i] < 0) {
                        fprintf(stderr, "%s: thpguardctl status failed\n", label);
                        free(t);
                        return -EIO;
                }
                sum += t[i];
        }
        qsort(t, (size_t)runs, sizeof(*t), cmp_double);
        printf("%-8s processes scanned %ld, %d runs: min %.1f ms, median %.1f ms, p90 %.1f ms, max %.1f ms, "
               "mean %.1f ms\n",
               label, scanned(out), runs, t[0], t[runs / 2],
               t[(runs * 9) / 10 < runs ? (runs * 9) / 10 : runs - 1], t[runs - 1], sum / runs);
        free(t);
        return 0;
}

static int write_file(const char *dir, const char *name, const char *content) {
        char path[1024];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        if (!f)
                return -errno;
        fputs(content, f);
        return fclose(f) == 0 ? 0 : -errno;
}

static int make_fixture(const char *root, int procs) {
        char dir[512], buf[2048];

        for (int i = 0; i < procs; i++) {
                int pid = 1000 + i;
                unsigned ahp = i % 10 == 0 ? 2048u * (unsigned)(i % 7 + 1) : 0;

                snprintf(dir, sizeof(dir), "%s/%d", root, pid);
                if (mkdir(dir, 0755) < 0)
                        return -errno;
                snprintf(
                    buf, sizeof(buf),
                    "Name:\tproc%d\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\nPPid:\t1\n"
                    "Kthread:\t0\nVmRSS:\t    %u kB\nRssAnon:\t    %u kB\nTHP_enabled:\t1\nThreads:\t1\n",
                    i, pid, pid, 4096 + ahp, 1024 + ahp);
                if (write_file(dir, "status", buf) < 0)
                        return -errno;
                snprintf(
                    buf, sizeof(buf),
                    "5601318bb000-7ffc595bd000 ---p 00000000 00:00 0                          [rollup]\n"
                    "Rss:            %8u kB\nPss:            %8u kB\nPss_Dirty:           112 kB\n"
                    "Pss_Anon:            112 kB\nPss_File:            366 kB\nPss_Shmem:             0 kB\n"
                    "Shared_Clean:       1532 kB\nShared_Dirty:          0 kB\nPrivate_Clean:        72 kB\n"
                    "Private_Dirty:       112 kB\nReferenced:         1716 kB\nAnonymous:           112 kB\n"
                    "KSM:                   0 kB\nLazyFree:              0 kB\nAnonHugePages:  %8u kB\n"
                    "ShmemPmdMapped:        0 kB\nFilePmdMapped:         0 kB\nShared_Hugetlb:        0 kB\n"
                    "Private_Hugetlb:       0 kB\nSwap:                  0 kB\nSwapPss:               0 kB\n"
                    "Locked:                0 kB\n",
                    4096 + ahp, 2048 + ahp, ahp);
                if (write_file(dir, "smaps_rollup", buf) < 0)
                        return -errno;
        }
        /* The node-wide files status reads, from this machine. */
        for (const char *const *f = (const char *const[]){ "meminfo", "vmstat", "cmdline", NULL }; *f; f++) {
                char src[64], cmd[1024];

                snprintf(src, sizeof(src), "/proc/%s", *f);
                snprintf(cmd, sizeof(cmd), "cat %s > %s/%s", src, root, *f);
                if (system(cmd) != 0)
                        return -EIO;
        }
        return 0;
}

int main(int argc, char **argv) {
        int procs = argc > 2 ? atoi(argv[2]) : 2000, runs = argc > 3 ? atoi(argv[3]) : 20, r = 0;
        char tmp[] = "/tmp/bench-ctl-XXXXXX", out[64], cmd[128];
        pid_t *kids;

        if (argc < 2 || procs <= 0 || runs <= 0) {
                fprintf(stderr, "usage: bench-ctl-status THPGUARDCTL [PROCS [RUNS]]\n");
                return 2;
        }
        if (!mkdtemp(tmp)) {
                perror("mkdtemp");
                return 1;
        }
        snprintf(out, sizeof(out), "%s/out.json", tmp);
        print_machine();
        printf("command: %s status --json >/dev/null, wall clock including fork and exec\n", argv[1]);

        kids = sleepers_start(&procs);
        usleep(200 * 1000);
        printf("real: %d extra processes started\n", procs);
        r = measure("real", argv[1], NULL, runs, out);
        sleepers_stop(kids, procs);

        if (r >= 0) {
                char root[64];

                snprintf(root, sizeof(root), "%s/proc", tmp);
                if (mkdir(root, 0755) < 0 || make_fixture(root, procs) < 0) {
                        fprintf(stderr, "cannot build the fixture tree in %s\n", root);
                        r = -EIO;
                } else
                        r = measure("fixture", argv[1], root, runs, out);
        }
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", tmp);
        return r < 0 ? 1 : 0;
}
