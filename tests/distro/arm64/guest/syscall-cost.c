/* SPDX-License-Identifier: MIT */
/*
 * What a system call of an unrelated process costs, for the Debian 11
 * arm64 run (tests/distro/arm64/run, in the booted image): nanoseconds per
 * getppid() and per 1-byte write() to /dev/null, the median of BATCHES
 * batches of CALLS calls each. Both calls reach no kernfs write, so only a
 * hook on every system call (the syscall-exit hook's raw tracepoints)
 * makes them dearer; a kprobe on the kernfs write does not run for them.
 *
 *   syscall-cost [CALLS [BATCHES]]      -> "getppid_ns N write_ns N"
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

static double median(double *v, int n) {
        qsort(v, (size_t)n, sizeof(*v), cmp);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
        long calls = argc > 1 ? atol(argv[1]) : 20000;
        int batches = argc > 2 ? atoi(argv[2]) : 9;
        double ppid[64], wr[64];
        int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

        if (fd < 0 || calls <= 0 || batches <= 0 || batches > 64) {
                fprintf(stderr, "usage: syscall-cost [CALLS [BATCHES<=64]] (and /dev/null writable)\n");
                return 2;
        }
        for (int b = 0; b < batches; b++) {
                double t = now_ns();

                for (long i = 0; i < calls; i++)
                        (void)syscall(SYS_getppid); /* the call itself, whatever libc caches */
                ppid[b] = (now_ns() - t) / (double)calls;
                t = now_ns();
                for (long i = 0; i < calls; i++)
                        if (write(fd, "x", 1) != 1)
                                return 1;
                wr[b] = (now_ns() - t) / (double)calls;
        }
        printf("getppid_ns %.0f write_ns %.0f\n", median(ppid, batches), median(wr, batches));
        return 0;
}
