/* SPDX-License-Identifier: MIT */
/*
 * thpguard-bench THPGUARDD [IDLE_SECONDS]
 *
 * Measures the daemon on this machine's real THP sysfs and prints figures;
 * it asserts nothing. Needs root; saves and restores `enabled` and `defrag`, and holds
 * the same lock as the real-sysfs tests.
 *
 *  - exec -> READY=1, through our own NOTIFY_SOCKET;
 *  - drift latency: 1000 foreign writes to `enabled`, each timed until the
 *    file reads the policy's value again (fight protection off);
 *  - CPU per full recheck, from /proc/PID/schedstat over 10 s of 1 s rechecks;
 *  - wakeups while idle (context switches over IDLE_SECONDS, default 60);
 *  - peak RSS (VmHWM);
 *  - a writer looping flat out for 10 s: daemon CPU and log lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THP     "/sys/kernel/mm/transparent_hugepage"
#define ENABLED THP "/enabled"
#define DRIFTS  1000

static char dir[] = "/tmp/thpguard-bench-XXXXXX";

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void write_word(const char *path, const char *w) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, w, strlen(w)) < 0) {
                perror(path);
                exit(1);
        }
        close(fd);
}

/* The bracketed word of a choice file, read through an open fd. */
static void read_active(int fd, char *out, size_t size) {
        char buf[256], *a, *b;
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        a = strchr(buf, '[');
        b = a ? strchr(a, ']') : NULL;
        if (!a || !b) {
                out[0] = '\0';
                return;
        }
        snprintf(out, size, "%.*s", (int)(b - a - 1), a + 1);
}

static void write_policy(const char *text) {
        char path[256];
        FILE *f;
        snprintf(path, sizeof(path), "%s/thpguard.conf", dir);
        f = fopen(path, "w");
        fputs(text, f);
        fclose(f);
        chmod(path, 0644);
}

static int notify_fd = -1;

static pid_t start_daemon(const char *bin, const char *logname, uint64_t *ret_ready_ns) {
        char conf[256], sock[100], log[256], buf[512];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        uint64_t t0;
        pid_t pid;

        snprintf(conf, sizeof(conf), "%s/thpguard.conf", dir);
        snprintf(sock, sizeof(sock), "%s/notify", dir);
        snprintf(log, sizeof(log), "%s/%s", dir, logname);
        if (notify_fd < 0) {
                snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
                notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                if (bind(notify_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                        perror("bind"), exit(1);
        }
        t0 = now_ns();
        pid = fork();
        if (pid == 0) {
                int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                dup2(fd, 2);
                setenv("NOTIFY_SOCKET", sock, 1);
                execl(bin, bin, "--config", conf, "--log-target=console", (char *)NULL);
                _exit(127);
        }
        for (;;) {
                ssize_t n = recv(notify_fd, buf, sizeof(buf) - 1, 0);
                if (n <= 0)
                        perror("recv"), exit(1);
                buf[n] = '\0';
                if (strstr(buf, "READY=1"))
                        break;
        }
        *ret_ready_ns = now_ns() - t0;
        return pid;
}

static void stop_daemon(pid_t pid) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
}

static uint64_t cpu_ns(pid_t pid) {
        char path[64];
        unsigned long long ns = 0;
        FILE *f;
        snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
        f = fopen(path, "r");
        if (f) {
                if (fscanf(f, "%llu", &ns) != 1)
                        ns = 0;
                fclose(f);
        }
        return ns;
}

static long status_field(pid_t pid, const char *key) {
        char path[64], line[256];
        long v = -1;
        FILE *f;
        snprintf(path, sizeof(path), "/proc/%d/status", pid);
        f = fopen(path, "r");
        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, key, strlen(key)) == 0)
                        v = strtol(line + strlen(key), NULL, 10);
        if (f)
                fclose(f);
        return v;
}

static long wakeups(pid_t pid) {
        return status_field(pid, "voluntary_ctxt_switches:") +
               status_field(pid, "nonvoluntary_ctxt_switches:");
}

/* What one timer wakeup with no work costs this process here: the floor under a recheck. */
static double bare_wakeup_cpu_us(void) {
        uint64_t c0 = cpu_ns(getpid()), c1;
        for (int i = 0; i < 20; i++)
                usleep(50000);
        c1 = cpu_ns(getpid());
        return (double)(c1 - c0) / 20 / 1e3;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

static long count_lines(const char *logname) {
        char path[256];
        long n = 0;
        int c;
        FILE *f;
        snprintf(path, sizeof(path), "%s/%s", dir, logname);
        f = fopen(path, "r");
        while (f && (c = fgetc(f)) != EOF)
                n += c == '\n';
        if (f)
                fclose(f);
        return n;
}

static char saved[32], saved_defrag[32];
static void restore(void) {
        if (saved[0])
                write_word(ENABLED, saved);
        if (saved_defrag[0])
                write_word(THP "/defrag", saved_defrag);
}

static void print_machine(void) {
        struct utsname u;
        char line[256], model[256] = "unknown";
        FILE *f = fopen("/proc/cpuinfo", "r");
        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, "model name", 10) == 0) {
                        snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
                        model[strcspn(model, "\n")] = '\0';
                        break;
                }
        if (f)
                fclose(f);
        uname(&u);
        printf("machine: %s %s, %ld CPUs, %s\n", u.sysname, u.release, sysconf(_SC_NPROCESSORS_ONLN), model);
}

int main(int argc, char **argv) {
        uint64_t lat[DRIFTS], lat_ret[DRIFTS], ready_ns, c0, c1;
        int idle_seconds = argc > 2 ? atoi(argv[2]) : 60, lock, fd;
        char cur[32];
        long w0, w1, lines;
        pid_t pid;

        if (argc < 2) {
                fprintf(stderr, "usage: thpguard-bench THPGUARDD [IDLE_SECONDS]\n");
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (!mkdtemp(dir))
                return perror("mkdtemp"), 1;
        lock = open("/tmp/thpguard-real-sysfs.lock", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        flock(lock, LOCK_EX);
        fd = open(ENABLED, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return perror(ENABLED), 1;
        read_active(fd, saved, sizeof(saved));
        {
                int dfd = open(THP "/defrag", O_RDONLY | O_CLOEXEC);
                if (dfd >= 0) {
                        read_active(dfd, saved_defrag, sizeof(saved_defrag));
                        close(dfd);
                }
        }
        atexit(restore);
        print_machine();

        /* Latency: fight protection off, or 1000 drifts would be a fight. */
        write_word(ENABLED, "madvise");
        write_word(THP "/defrag", "madvise");
        write_policy("recheck_interval = 30; fight_threshold = 0;\nthp = { enabled = \"madvise\"; defrag = "
                     "\"madvise\"; };\n");
        pid = start_daemon(argv[1], "latency.log", &ready_ns);
        printf("exec -> READY=1: %.2f ms\n", (double)ready_ns / 1e6);
        /*
         * Two knobs: `enabled` (the kernel's own write path is slow: it recomputes
         * min_free_kbytes, so both the foreign write and ours cost ~100 us) and
         * `defrag` (a plain flag). The foreign value keeps khugepaged running
         * (always), so no kthread start/stop is timed.
         */
        static const struct {
                const char *path, *foreign, *desired;
        } drift[] = { { ENABLED, "always", "madvise" }, { THP "/defrag", "always", "madvise" } };
        for (size_t k = 0; k < 2; k++) {
                int kfd = open(drift[k].path, O_RDONLY | O_CLOEXEC);
                for (int i = 0; i < DRIFTS; i++) {
                        /*
                         * Timed from the write() call: the daemon wakes inside the
                         * foreign write syscall (fsnotify) and may finish before it
                         * returns to us. From the return is printed too.
                         */
                        uint64_t t0 = now_ns(), t1, t2;
                        write_word(drift[k].path, drift[k].foreign);
                        t1 = now_ns();
                        do
                                read_active(kfd, cur, sizeof(cur));
                        while (strcmp(cur, drift[k].desired) != 0 && now_ns() - t0 < 1000000000u);
                        t2 = now_ns();
                        lat[i] = t2 - t0;
                        lat_ret[i] = t2 - t1;
                        usleep(200); /* a drift, not a flood: keep below the inotify rate limit */
                }
                close(kfd);
                qsort(lat, DRIFTS, sizeof(lat[0]), cmp_u64);
                qsort(lat_ret, DRIFTS, sizeof(lat_ret[0]), cmp_u64);
                printf("drift latency of %s over %d drifts, until the file reads the policy again:\n"
                       "  from the foreign write() call:   min %.1f us, median %.1f us, p99 %.1f us, max "
                       "%.1f us\n"
                       "  from its return:                 min %.1f us, median %.1f us, p99 %.1f us, max "
                       "%.1f us\n",
                       strrchr(drift[k].path, '/') + 1, DRIFTS, lat[0] / 1e3, lat[DRIFTS / 2] / 1e3,
                       lat[DRIFTS * 99 / 100] / 1e3, lat[DRIFTS - 1] / 1e3, lat_ret[0] / 1e3,
                       lat_ret[DRIFTS / 2] / 1e3, lat_ret[DRIFTS * 99 / 100] / 1e3,
                       lat_ret[DRIFTS - 1] / 1e3);
        }
        stop_daemon(pid);

        /* Recheck cost: 1 s rechecks of a policy managing every top-level and khugepaged knob. */
        write_policy("recheck_interval = 1;\nthp = { enabled = \"madvise\"; defrag = \"madvise\";\n"
                     "  khugepaged = { defrag = true; pages_to_scan = 4096; max_ptes_none = 511; }; };\n");
        pid = start_daemon(argv[1], "recheck.log", &ready_ns);
        c0 = cpu_ns(pid);
        sleep(10);
        c1 = cpu_ns(pid);
        printf("CPU per full recheck (5 knobs, incl. timer wakeup): %.1f us (10 rechecks); "
               "a bare timer wakeup with no work costs %.1f us here\n",
               (c1 - c0) / 10 / 1e3, bare_wakeup_cpu_us());
        printf("peak RSS (VmHWM): %ld kB\n", status_field(pid, "VmHWM:"));
        stop_daemon(pid);

        /* Idle: only the recheck timer should wake us. */
        write_policy("recheck_interval = 30;\nthp = { enabled = \"madvise\"; };\n");
        pid = start_daemon(argv[1], "idle.log", &ready_ns);
        w0 = wakeups(pid);
        sleep((unsigned)idle_seconds);
        w1 = wakeups(pid);
        printf("wakeups while idle over %d s (recheck_interval = 30): %ld\n", idle_seconds, w1 - w0);
        stop_daemon(pid);

        /* Fight: default protection (5 corrections in 10 s), a writer looping flat out for 10 s. */
        write_policy("recheck_interval = 30;\nthp = { enabled = \"madvise\"; };\n");
        pid = start_daemon(argv[1], "fight.log", &ready_ns);
        c0 = cpu_ns(pid);
        long writes = 0;
        for (uint64_t t0 = now_ns(); now_ns() - t0 < 10000000000u; writes++)
                write_word(ENABLED, "always");
        c1 = cpu_ns(pid);
        lines = count_lines("fight.log");
        printf("writer fight, 10 s flat out (%ld foreign writes): daemon CPU %.2f%% of one core, %ld log "
               "lines\n",
               writes, (c1 - c0) / 1e7 / 10, lines - 1);
        stop_daemon(pid);
        printf("daemon logs in %s\n", dir);
        return 0;
}
