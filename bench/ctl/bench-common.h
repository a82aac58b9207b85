/* SPDX-License-Identifier: MIT */
#pragma once

/* What the thpguardctl benchmarks share: the machine line, and many sleeping processes to scan. */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void print_machine(void) {
        char line[256], model[256] = "unknown";
        struct utsname u;
        FILE *f;

        uname(&u);
        f = fopen("/proc/cpuinfo", "re");
        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, "model name", 10) == 0) {
                        char *colon = strchr(line, ':');
                        snprintf(model, sizeof(model), "%s", colon ? colon + 2 : line);
                        model[strcspn(model, "\n")] = '\0';
                        break;
                }
        if (f)
                fclose(f);
        printf("machine: %s %s %s %s, %ld CPUs (%s)\n", u.sysname, u.nodename, u.release, u.machine,
               sysconf(_SC_NPROCESSORS_ONLN), model);
}

/*
 * Forks *procs processes that each touch 1 MiB (a real mm with something
 * in it, like a small service) and pause; *procs becomes how many started.
 */
static inline pid_t *sleepers_start(int *procs) {
        pid_t *kids = calloc((size_t)*procs, sizeof(*kids));

        for (int i = 0; kids && i < *procs; i++) {
                kids[i] = fork();
                if (kids[i] == 0) {
                        char *p =
                            mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                        if (p != MAP_FAILED)
                                memset(p, 1, 1 << 20);
                        for (;;)
                                pause();
                }
                if (kids[i] < 0) {
                        fprintf(stderr, "fork %d: %s\n", i, strerror(errno));
                        *procs = i;
                        break;
                }
        }
        return kids;
}

static inline void sleepers_stop(pid_t *kids, int procs) {
        for (int i = 0; kids && i < procs; i++)
                kill(kids[i], SIGKILL);
        for (int i = 0; kids && i < procs; i++)
                waitpid(kids[i], NULL, 0);
        free(kids);
}
