/* SPDX-License-Identifier: MIT */
/*
 * Confines itself with the daemon's own code, then shows what it can still do.
 *
 *   confine drop CMD [ARGS]          capability_drop_all() as the daemon calls it, read
 *                                    back (exit 3 if anything is left), then execv(CMD)
 *   confine sandbox POLICY SYSFS_ROOT METRICS_FILE VICTIM_PID
 *                                    the drop, then sandbox_confine_daemon() with the
 *                                    daemon's arguments, then tries, printing one line each:
 *                                    "write /proc/sys/kernel/hostname: <errno name or ok>",
 *                                    "kill VICTIM: ...", "write metrics dir: ...",
 *                                    "write policy dir: ...", "read policy: ...",
 *                                    "prlimit VICTIM: ...", "prlimit self 0: ...",
 *                                    "setpriority VICTIM: ...", "sched_setaffinity VICTIM: ...",
 *                                    "ioprio_set VICTIM: ..."
 *   confine try VICTIM_PID METRICS_FILE
 *                                    the same tries with no confinement at all (the control)
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "thpguard/capability.h"
#include "thpguard/sandbox.h"

/* strerrorname_np() is newer than the oldest glibc built on. */
static const char *result(int r) {
        switch (-r) {
        case 0:
                return "ok";
        case EACCES:
                return "EACCES";
        case EPERM:
                return "EPERM";
        case ENOENT:
                return "ENOENT";
        case EROFS:
                return "EROFS";
        case ESRCH:
                return "ESRCH";
        default:
                return strerror(-r);
        }
}

static int try_open(const char *path, int flags) {
        int fd = open(path, flags | O_CLOEXEC, 0644);

        if (fd < 0)
                return -errno;
        close(fd);
        return 0;
}

/*
 * sched_setattr(pid, SCHED_OTHER at our nice value): changes nothing for
 * us or for a child that inherited both.
 */
static int set_default_sched(pid_t pid) {
        /* struct sched_attr, 48 bytes: size, policy 0 (SCHED_OTHER), flags 0, nice, the rest 0 */
        uint32_t attr[12] = { sizeof(attr) };

        attr[4] = (uint32_t)getpriority(PRIO_PROCESS, 0);
        return syscall(SYS_sched_setattr, pid, attr, 0) < 0 ? -errno : 0;
}

/*
 * prlimit64(pid, RLIMIT_NOFILE) set to what it is: the raw call (glibc's
 * prlimit() is the same one), with the limit the caller has, which the
 * victim, started by the same shell, has too. Nothing changes where it is
 * allowed; the question is only whether it is.
 */
static int set_nofile(pid_t pid) {
        struct rlimit lim;

        if (getrlimit(RLIMIT_NOFILE, &lim) < 0)
                return -errno;
        return syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, &lim, NULL) < 0 ? -errno : 0;
}

/* setpriority(PRIO_PROCESS, pid) to the nice value it has: a change of nothing, if it is allowed. */
static int same_priority(pid_t pid) {
        int prio;

        errno = 0;
        prio = getpriority(PRIO_PROCESS, (id_t)pid);
        if (prio == -1 && errno != 0)
                return -errno;
        return setpriority(PRIO_PROCESS, (id_t)pid, prio) < 0 ? -errno : 0;
}

/* sched_setaffinity(pid) to every CPU it may run on already (ours: the same shell's). */
static int same_affinity(pid_t pid) {
        cpu_set_t set;

        if (sched_getaffinity(0, sizeof(set), &set) < 0)
                return -errno;
        return sched_setaffinity(pid, sizeof(set), &set) < 0 ? -errno : 0;
}

/* ioprio_set(IOPRIO_WHO_PROCESS, pid, best-effort level 4): the default a process without one gets. */
static int default_ioprio(pid_t pid) {
        const int who_process = 1, best_effort = 2 << 13 | 4;

        return syscall(SYS_ioprio_set, who_process, pid, best_effort) < 0 ? -errno : 0;
}

static int tries(pid_t victim, const char *metrics, const char *policy) {
        char beside[PATH_MAX];

        /* Opened for writing, never written: the host name stays. */
        printf("write /proc/sys/kernel/hostname: %s\n",
               result(try_open("/proc/sys/kernel/hostname", O_WRONLY)));
        /* Before the kill below, which ends the victim where it is allowed. */
        printf("sched_setattr %d: %s\n", (int)victim, result(set_default_sched(victim)));
        printf("sched_setattr self: %s\n", result(set_default_sched(0)));
        printf("prlimit %d: %s\n", (int)victim, result(set_nofile(victim)));
        printf("prlimit self 0: %s\n", result(set_nofile(0)));
        printf("prlimit self %d: %s\n", (int)getpid(), result(set_nofile(getpid())));
        printf("setpriority %d: %s\n", (int)victim, result(same_priority(victim)));
        printf("sched_setaffinity %d: %s\n", (int)victim, result(same_affinity(victim)));
        printf("ioprio_set %d: %s\n", (int)victim, result(default_ioprio(victim)));
        printf("kill %d: %s\n", (int)victim, result(kill(victim, SIGTERM) < 0 ? -errno : 0));
        snprintf(beside, sizeof(beside), "%s.confine-test", metrics);
        printf("write metrics dir: %s\n", result(try_open(beside, O_WRONLY | O_CREAT | O_TRUNC)));
        unlink(beside);
        if (policy) {
                snprintf(beside, sizeof(beside), "%s.confine-test", policy);
                printf("write policy dir: %s\n", result(try_open(beside, O_WRONLY | O_CREAT | O_TRUNC)));
                unlink(beside);
                printf("read policy: %s\n", result(try_open(policy, O_RDONLY)));
        }
        printf("kill self 0: %s\n", result(kill(getpid(), 0) < 0 ? -errno : 0));
        return 0;
}

static int drop(void) {
        char why[256];
        int r;

        r = capability_drop_all();
        if (r < 0) {
                fprintf(stderr, "confine: capability_drop_all: %s\n", strerror(-r));
                return 3;
        }
        if (capability_check_dropped(why, sizeof(why)) < 0) {
                fprintf(stderr, "confine: %s\n", why);
                return 3;
        }
        return 0;
}

int main(int argc, char **argv) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc >= 3 && strcmp(argv[1], "drop") == 0) {
                int r = drop();

                if (r)
                        return r;
                execv(argv[2], argv + 2);
                fprintf(stderr, "confine: execv %s: %s\n", argv[2], strerror(errno));
                return 4;
        }
        if (argc == 6 && strcmp(argv[1], "sandbox") == 0) {
                char thp[PATH_MAX];
                const char *written[] = { argv[4] };
                SandboxDaemon files = {
                        .proc_root = "/proc",
                        .policy_file = argv[2],
                        .knob_dir = thp,
                        .written_files = written,
                        .n_written_files = 1,
                };
                SandboxResult res;
                char what[128];
                int r = drop();

                if (r)
                        return r;
                snprintf(thp, sizeof(thp), "%s/kernel/mm/transparent_hugepage", argv[3]);
                r = sandbox_confine_daemon(&files, &res);
                if (r < 0) {
                        fprintf(stderr, "confine: sandbox_confine_daemon: %s\n", strerror(-r));
                        return 3;
                }
                sandbox_describe(&res, what, sizeof(what));
                printf("confined: %s\n", what);
                return tries((pid_t)atoi(argv[5]), argv[4], argv[2]);
        }
        if (argc == 4 && strcmp(argv[1], "try") == 0)
                return tries((pid_t)atoi(argv[2]), argv[3], NULL);
        fprintf(stderr, "usage: confine drop CMD [ARGS] | sandbox POLICY SYSFS_ROOT METRICS VICTIM | try "
                        "VICTIM METRICS\n");
        return 2;
}
