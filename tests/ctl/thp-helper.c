/* SPDX-License-Identifier: MIT */
/*
 * Test helper for thpguardctl.
 *
 *   thp-helper probe [EXIT]      print PR_GET_THP_DISABLE and the THP_enabled:
 *                                line of /proc/self/status, then exit EXIT
 *   thp-helper probe-child       probe in this process, then in a forked child
 *                                (as "child: " lines); exits 0
 *   thp-helper hog MIB MODE      map MIB MiB of anonymous memory per region,
 *                                2 MiB aligned, MODE advise|plain|both (one
 *                                region with MADV_HUGEPAGE, one without, or
 *                                both), touch every page, print "ready" and
 *                                the regions, then wait for a signal
 *   thp-helper grow MIB          print "ready", then until a signal: map MIB
 *                                MiB with MADV_HUGEPAGE and fault it in 2 MiB
 *                                every 20 ms (about 100 MiB/s of huge page
 *                                faults), unmap it, start again
 *   thp-helper pause             a pod sandbox's pause process: sleep until
 *                                SIGTERM or SIGINT, then exit 0 (as PID 1 of
 *                                its namespace it gets no default action)
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define PMD_SIZE (2UL * 1024 * 1024)

static int probe(int exit_code, const char *prefix) {
        char line[256];
        FILE *f;

        printf("%sprctl_thp_disable=%d\n", prefix, prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0));
        f = fopen("/proc/self/status", "re");
        if (!f) {
                perror("/proc/self/status");
                return 1;
        }
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, "THP_enabled:", 12) == 0)
                        printf("%s%s", prefix, line);
        fclose(f);
        fflush(stdout);
        return exit_code;
}

static void on_stop(int sig) {
        (void)sig;
        _exit(0);
}

static void *map_region(size_t size, bool advise) {
        uint8_t *p = mmap(NULL, size + PMD_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        uint8_t *aligned;

        if (p == MAP_FAILED) {
                perror("mmap");
                exit(1);
        }
        /* A huge page needs a 2 MiB aligned 2 MiB range inside the mapping. */
        aligned = (uint8_t *)(((uintptr_t)p + PMD_SIZE - 1) & ~(PMD_SIZE - 1));
        if (advise && madvise(aligned, size, MADV_HUGEPAGE) < 0) {
                perror("madvise(MADV_HUGEPAGE)");
                exit(1);
        }
        if (!advise)
                (void)madvise(aligned, size, MADV_NORMAL);
        for (size_t off = 0; off < size; off += 4096)
                aligned[off] = 1;
        return aligned;
}

int main(int argc, char **argv) {
        if (argc >= 2 && strcmp(argv[1], "probe") == 0)
                return probe(argc >= 3 ? atoi(argv[2]) : 0, "");
        if (argc == 2 && strcmp(argv[1], "probe-child") == 0) {
                pid_t child;
                int status;

                probe(0, "");
                child = fork();
                if (child < 0) {
                        perror("fork");
                        return 1;
                }
                if (child == 0) {
                        _exit(probe(0, "child: "));
                }
                if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status))
                        return 1;
                return WEXITSTATUS(status);
        }
        if (argc == 4 && strcmp(argv[1], "hog") == 0) {
                size_t size = strtoul(argv[2], NULL, 10) * 1024 * 1024;
                const char *mode = argv[3];

                if (size == 0 || size % PMD_SIZE != 0) {
                        fprintf(stderr, "hog: MIB must be a positive multiple of 2\n");
                        return 2;
                }
                if (strcmp(mode, "advise") == 0 || strcmp(mode, "both") == 0) {
                        void *p = map_region(size, true);
                        printf("advised %" PRIxPTR "-%" PRIxPTR "\n", (uintptr_t)p, (uintptr_t)p + size);
                }
                if (strcmp(mode, "plain") == 0 || strcmp(mode, "both") == 0) {
                        void *p = map_region(size, false);
                        printf("plain %" PRIxPTR "-%" PRIxPTR "\n", (uintptr_t)p, (uintptr_t)p + size);
                }
                printf("ready\n");
                fflush(stdout);
                for (;;)
                        pause();
        }
        if (argc == 3 && strcmp(argv[1], "grow") == 0) {
                size_t size = strtoul(argv[2], NULL, 10) * 1024 * 1024;

                if (size == 0 || size % PMD_SIZE != 0) {
                        fprintf(stderr, "grow: MIB must be a positive multiple of 2\n");
                        return 2;
                }
                printf("ready\n");
                fflush(stdout);
                for (;;) {
                        uint8_t *p = mmap(NULL, size + PMD_SIZE, PROT_READ | PROT_WRITE,
                                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                        uint8_t *aligned;

                        if (p == MAP_FAILED) {
                                perror("mmap");
                                return 1;
                        }
                        aligned = (uint8_t *)(((uintptr_t)p + PMD_SIZE - 1) & ~(PMD_SIZE - 1));
                        if (madvise(aligned, size, MADV_HUGEPAGE) < 0) {
                                perror("madvise(MADV_HUGEPAGE)");
                                return 1;
                        }
                        /* One write per 2 MiB: with THP, one huge page fault each. */
                        for (size_t off = 0; off < size; off += PMD_SIZE) {
                                aligned[off] = 1;
                                usleep(20000);
                        }
                        munmap(p, size + PMD_SIZE);
                }
        }
        if (argc == 2 && strcmp(argv[1], "pause") == 0) {
                signal(SIGTERM, on_stop);
                signal(SIGINT, on_stop);
                for (;;)
                        pause();
        }
        fprintf(
            stderr,
            "usage: thp-helper probe [EXIT] | probe-child | hog MIB advise|plain|both | grow MIB | pause\n");
        return 2;
}
