/* SPDX-License-Identifier: MIT */
/*
 * thpguard-bench THPGUARDD [IDLE_SECONDS [--idle-only]]
 * thpguard-bench THPGUARDD --drift-only GAP_USEC
 * thpguard-bench THPGUARDD --syscall-only
 * thpguard-bench THPGUARDD --metrics-only
 *
 * Measures the daemon on this machine's real THP sysfs and prints figures;
 * it asserts nothing. Needs root; saves and restores every knob its policies
 * manage, and holds the same lock as the real-sysfs tests.
 *
 *  - exec -> READY=1 over 20 starts, through our own NOTIFY_SOCKET, beside
 *    the floor: this program re-executed to do nothing but send READY=1;
 *  - drift latency: 3000 foreign writes per knob and corrector, each timed
 *    until the file reads the policy's value again (fight protection off),
 *    for five correctors in turn on the same knob, interleaved in rounds,
 *    and, on more drifts timed apart, the CPU each ran on: the floor
 *    (min-corrector, beside this program), the floor beside a bare open
 *    gate (what holding a writer's open() costs, whoever holds it),
 *    thpguardd --write-source=none without CAP_SYS_ADMIN (writer
 *    attribution off), thpguardd --write-source=fanotify as root
 *    (attribution on: the fanotify groups and the writer gate) and
 *    thpguardd --write-source=bpf as root (the BPF write probe, no gate),
 *    each checked for the source its log says is in force; the median and
 *    p99 of each as ratios to the floor's; then, in the same rounds,
 *    ONE_SHOT drifts by one-shot writers (a new process per drift that
 *    exits at once, seen by an observer on each CPU), a second table; in
 *    both, where tracefs has syscall events, when the corrector's own
 *    write returned, from the kernel's clock, beside what the observers
 *    saw;
 *  - a write through another sysfs mount (a writer in a mount and network
 *    namespace of its own, with its own sysfs): the bpf probe against the
 *    floor and the probe with a writer on the host's /sys
 *    (compare_other_mount());
 *  - CPU per full recheck: the work alone (10,000 rechecks in this process
 *    through the daemon's own read-and-compare), and per recheck wakeup of
 *    the daemon from /proc/PID/schedstat, beside the floor: an sd-event
 *    loop whose 1 s timer does nothing;
 *  - wakeups while idle (context switches over IDLE_SECONDS, default 60),
 *    of the main thread as the other figures count them, and of every
 *    thread of the daemon and of its writer gate; --idle-only measures
 *    this alone;
 *  - what the daemon costs every other process (getppid(), a 1-byte
 *    write()) with no daemon, at its defaults and with each probe hook
 *    forced, and the probe's own cost per knob write (syscall-cost, beside
 *    this program, run with this program's lock);
 *  - the metrics write: its reads in this process through the daemon's own
 *    functions (the per-size stats of /sys, the node-wide figures of
 *    /proc) and the render and replace of the file, METRICS_IN_PROCESS
 *    times each; and the daemon's CPU per second at a 1 s recheck with
 *    and without --metrics-file; --metrics-only measures this alone;
 *  - peak RSS (VmHWM), the default write source and fanotify;
 *  - a writer looping flat out for 10 s: daemon CPU and log lines.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "metrics.h"
#include "thpguard/compliance.h"
#include "thpguard/diag.h"
#include "thpguard/event-util.h"
#include "thpguard/fileio.h"
#include "thpguard/policy.h"
#include "thpguard/procfs.h"
#include "thpguard/sysfs.h"

#define THP     "/sys/kernel/mm/transparent_hugepage"
#define ENABLED THP "/enabled"
/* -DDRIFTS=600 -DROUNDS=20 for a quick look; the README's figures use these. */
#ifndef DRIFTS
#define DRIFTS 3000
#endif
#ifndef ROUNDS
#define ROUNDS 60 /* per corrector and knob, of DRIFTS / ROUNDS drifts each */
#endif
#define WARMUP 10 /* drifts at the start of each round, not counted */
#define PLACED 10 /* drifts at the end of each round, timed apart: see Placement */
#ifndef ONE_SHOT
#define ONE_SHOT (DRIFTS / 3) /* drifts by one-shot writers per corrector, knob and gap */
#endif
#define STARTS              20
#define RECHECKS_IN_PROCESS 10000
#define METRICS_IN_PROCESS  1000
#define METRICS_DAEMON_SEC  10

/* The policy's directory: not under /tmp, which thpguardd as root refuses (mode 1777). */
static char dir[] = "/run/thpguard-bench-XXXXXX";

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

/* The bracketed word of a choice file, or the number in a numeric one, read through an open fd. */
static void read_active(int fd, char *out, size_t size) {
        char buf[256], *a, *b;
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        a = strchr(buf, '[');
        b = a ? strchr(a, ']') : NULL;
        if (!a) {
                snprintf(out, size, "%.*s", (int)strcspn(buf, "\n"), buf);
                return;
        }
        if (!b) {
                out[0] = '\0';
                return;
        }
        snprintf(out, size, "%.*s", (int)(b - a - 1), a + 1);
}

static void read_knob(const char *path, char *out, size_t size) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                perror(path), exit(1);
        read_active(fd, out, size);
        close(fd);
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
/* The real-sysfs tests' lock, held for the whole run (main()). */
static int lock_fd = -1;

/*
 * Drops CAP_SYS_ADMIN for good before an exec as root: from the bounding set,
 * so that the exec cannot grant it again, and from the effective, permitted
 * and inheritable sets. Then checks that it is gone.
 */
static int drop_sys_admin(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
        unsigned i = CAP_TO_INDEX(CAP_SYS_ADMIN);

        if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) < 0 || syscall(SYS_capget, &h, d) < 0)
                return -errno;
        d[i].effective &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
        d[i].permitted &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
        d[i].inheritable &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
        if (syscall(SYS_capset, &h, d) < 0 || syscall(SYS_capget, &h, d) < 0)
                return -errno;
        if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 0 ||
            ((d[i].effective | d[i].permitted | d[i].inheritable) & CAP_TO_MASK(CAP_SYS_ADMIN)))
                return -EPERM;
        return 0;
}

/*
 * Starts argv with stderr to DIR/logname, without CAP_SYS_ADMIN if asked,
 * and waits for its READY=1 on our NOTIFY_SOCKET.
 */
static pid_t start_argv_caps(char *const argv[], const char *logname, bool no_sys_admin,
                             uint64_t *ret_ready_ns) {
        char sock[100], log[256], buf[512];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        uint64_t t0;
        pid_t pid;

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
                if (no_sys_admin && drop_sys_admin() < 0) {
                        perror("dropping CAP_SYS_ADMIN");
                        _exit(126);
                }
                execv(argv[0], argv);
                _exit(127);
        }
        for (;;) {
                struct pollfd pfd = { .fd = notify_fd, .events = POLLIN };
                ssize_t n;

                /* A child that dies before READY=1 (a refused policy, a failed exec) stops the bench. */
                if (poll(&pfd, 1, 1000) == 0) {
                        if (waitpid(pid, NULL, WNOHANG) == pid)
                                fprintf(stderr, "%s exited before READY=1, see %s\n", argv[0], log), exit(1);
                        continue;
                }
                n = recv(notify_fd, buf, sizeof(buf) - 1, 0);
                if (n <= 0)
                        perror("recv"), exit(1);
                buf[n] = '\0';
                if (strstr(buf, "READY=1"))
                        break;
        }
        *ret_ready_ns = now_ns() - t0;
        return pid;
}

static pid_t start_argv(char *const argv[], const char *logname, uint64_t *ret_ready_ns) {
        return start_argv_caps(argv, logname, false, ret_ready_ns);
}

static pid_t start_daemon(const char *bin, const char *logname, uint64_t *ret_ready_ns) {
        char conf[256];

        snprintf(conf, sizeof(conf), "%s/thpguard.conf", dir);
        return start_argv((char *const[]){ (char *)bin, "--config", conf, "--log-target=console", NULL },
                          logname, ret_ready_ns);
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

/* The context switches of every thread of pid and of its children (the writer gate). */
static long wakeups_all(pid_t pid) {
        DIR *procs = opendir("/proc");
        struct dirent *e, *t;
        long n = 0;

        while (procs && (e = readdir(procs))) {
                char path[300], line[512], *paren;
                pid_t p = (pid_t)atoi(e->d_name), ppid = 0;
                DIR *tasks;
                FILE *f;

                if (p <= 0)
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/stat", p);
                f = fopen(path, "r");
                if (!f)
                        continue;
                /* pid (comm) state ppid ...: the comm may hold spaces and parentheses */
                if (fgets(line, sizeof(line), f) && (paren = strrchr(line, ')')))
                        ppid = (pid_t)strtol(paren + 4, NULL, 10);
                fclose(f);
                if (p != pid && ppid != pid)
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/task", p);
                tasks = opendir(path);
                while (tasks && (t = readdir(tasks))) {
                        if (t->d_name[0] == '.')
                                continue;
                        snprintf(path, sizeof(path), "/proc/%d/task/%s/status", p, t->d_name);
                        f = fopen(path, "r");
                        while (f && fgets(line, sizeof(line), f))
                                if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0 ||
                                    strncmp(line, "nonvoluntary_ctxt_switches:", 27) == 0)
                                        n += strtol(strchr(line, ':') + 1, NULL, 10);
                        if (f)
                                fclose(f);
                }
                if (tasks)
                        closedir(tasks);
        }
        if (procs)
                closedir(procs);
        return n;
}

/* Idle: only the recheck timer should wake us (and nothing of the writer gate's). */
static void measure_idle(const char *bin, int idle_seconds) {
        uint64_t ready_ns;
        long w0, w1, a0, a1;
        pid_t pid;

        write_policy("recheck_interval = 30;\nthp = { enabled = \"madvise\"; };\n");
        pid = start_daemon(bin, "idle.log", &ready_ns);
        sleep(1); /* the gate forked and settled */
        w0 = wakeups(pid), a0 = wakeups_all(pid);
        sleep((unsigned)idle_seconds);
        w1 = wakeups(pid), a1 = wakeups_all(pid);
        printf(
            "wakeups while idle over %d s (recheck_interval = 30): %ld; every thread of the daemon and its "
            "writer gate: %ld\n",
            idle_seconds, w1 - w0, a1 - a0);
        stop_daemon(pid);
}

/* The floors, run as this program re-executed: what the daemon costs at least here. */
static int on_floor_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        event_source_set_time_relative(s, 1000000);
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int run_floor(const char *what) {
        sd_event *e = NULL;

        if (strcmp(what, "--floor-ready") == 0) {
                sd_notify(0, "READY=1");
                pause();
                return 0;
        }
        /* --floor-timer: the daemon's recheck timer (1 s, 100 ms accuracy) with no recheck in it. */
        if (sd_event_default(&e) < 0 ||
            event_add_time_relative(e, NULL, CLOCK_MONOTONIC, 1000000, 100000, on_floor_timer, NULL) < 0)
                return 1;
        sd_notify(0, "READY=1");
        return sd_event_loop(e) < 0;
}

/*
 * The work of one full recheck without the wakeup around it: every knob of
 * the policy read through a kept-open handle and compared, as on_recheck
 * does through check_knob() when nothing drifted.
 */
static double recheck_work_us(const char *conf) {
        _cleanup_diag_ Diag diag = {};
        _cleanup_policy_ Policy *p = NULL;
        _cleanup_sysfs_ Sysfs *s = NULL;
        SysfsHandle h[16];
        struct timespec a, b;

        if (policy_load(conf, &diag, &p) < 0 || p->n_knobs > 16 || sysfs_new("/sys", &s) < 0) {
                diag_print(&diag, stderr);
                return -1;
        }
        for (size_t i = 0; i < p->n_knobs; i++)
                h[i] = SYSFS_HANDLE_CLOSED;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        for (int n = 0; n < RECHECKS_IN_PROCESS; n++)
                for (size_t i = 0; i < p->n_knobs; i++) {
                        KnobStatus st;
                        compliance_read(s, &p->knobs[i], &h[i], &st);
                        if (st.state != KNOB_STATE_OK)
                                fprintf(stderr, "recheck: %s is %s\n", p->knobs[i].path,
                                        knob_state_to_string(st.state)),
                                    exit(1);
                }
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        for (size_t i = 0; i < p->n_knobs; i++)
                sysfs_handle_close(&h[i]);
        return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) /
               RECHECKS_IN_PROCESS / 1e3;
}

/* CPU (this process's) and wall time of a stretch of work, per repetition, in microseconds. */
typedef struct Timing {
        struct timespec cpu, wall;
        double cpu_us, wall_us;
} Timing;

static void timing_start(Timing *t) {
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t->cpu);
        clock_gettime(CLOCK_MONOTONIC, &t->wall);
}

static void timing_end(Timing *t, int reps) {
        struct timespec cpu, wall;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
        clock_gettime(CLOCK_MONOTONIC, &wall);
        t->cpu_us = ((double)(cpu.tv_sec - t->cpu.tv_sec) * 1e9 + (double)(cpu.tv_nsec - t->cpu.tv_nsec)) /
                    1e3 / reps;
        t->wall_us =
            ((double)(wall.tv_sec - t->wall.tv_sec) * 1e9 + (double)(wall.tv_nsec - t->wall.tv_nsec)) / 1e3 /
            reps;
}

/*
 * The alternative metrics_read_sizes() does not take, for comparison: the
 * same files (k's, of /sys) opened once and read with pread() at offset
 * 0, as the knob handles are, METRICS_IN_PROCESS times.
 */
static Timing kept_files_read(const MetricsKernel *k) {
        static int fds[METRICS_SIZES_MAX * METRICS_SIZE_STATS_MAX];
        char buf[64], path[PATH_MAX];
        size_t n = 0;
        Timing t;

        for (size_t i = 0; i < k->n_sizes; i++)
                for (size_t j = 0; j < k->sizes[i].n_stats; j++) {
                        snprintf(path, sizeof(path), THP "/hugepages-%llukB/stats/%s",
                                 (unsigned long long)k->sizes[i].size_kb, k->sizes[i].stats[j].name);
                        fds[n] = open(path, O_RDONLY | O_CLOEXEC);
                        if (fds[n] < 0)
                                perror(path), exit(1);
                        n++;
                }
        timing_start(&t);
        for (int r = 0; r < METRICS_IN_PROCESS; r++)
                for (size_t i = 0; i < n; i++)
                        if (pread(fds[i], buf, sizeof(buf) - 1, 0) <= 0)
                                perror("pread"), exit(1);
        timing_end(&t, METRICS_IN_PROCESS);
        for (size_t i = 0; i < n; i++)
                close(fds[i]);
        return t;
}

/*
 * What one metrics write costs: in this process through the daemon's own
 * functions, METRICS_IN_PROCESS times each, the per-size stats of the real
 * /sys (metrics_read_sizes(): every hugepages-*kB/stats/ file listed,
 * opened below the root, read and closed, as at every write; beside it,
 * the same files kept open and read with pread(), which the daemon does
 * not do), the node-wide figures of /proc (metrics_read_kernel()), and the
 * render and atomic replace of a file with both (metrics_write_file():
 * fsync() and rename()); CPU and wall time. Then the daemon itself,
 * recheck_interval = 1, METRICS_DAEMON_SEC with and without
 * --metrics-file, twice in turn: its main thread's CPU per second, a
 * recheck and (with the file) a metrics write each.
 */
static void measure_metrics_write(const char *thpguardd) {
        static MetricsKernel k, sizes;
        MetricsSnapshot snap = { .up = true, .recheck_interval_sec = 1, .kernel = &k };
        Timing listing, kept, proc, write;
        char conf[256], mdir[256], mfile[300];
        double per_sec[2][2] = {}, wakeups_per_sec[2][2] = {};
        size_t n_files = 0;
        struct stat st;

        snprintf(conf, sizeof(conf), "%s/thpguard.conf", dir);
        snprintf(mdir, sizeof(mdir), "%s/metrics", dir);
        snprintf(mfile, sizeof(mfile), "%s/thpguard.prom", mdir);
        if (mkdir(mdir, 0755) < 0 && errno != EEXIST)
                perror(mdir), exit(1);

        timing_start(&listing);
        for (int n = 0; n < METRICS_IN_PROCESS; n++)
                if (metrics_read_sizes("/sys", &sizes) < 0)
                        fprintf(stderr, "metrics_read_sizes(/sys) failed\n"), exit(1);
        timing_end(&listing, METRICS_IN_PROCESS);
        for (size_t i = 0; i < sizes.n_sizes; i++)
                n_files += sizes.sizes[i].n_stats;
        kept = kept_files_read(&sizes);

        timing_start(&proc);
        for (int n = 0; n < METRICS_IN_PROCESS; n++)
                (void)metrics_read_kernel("/proc", &k);
        timing_end(&proc, METRICS_IN_PROCESS);
        (void)metrics_read_sizes("/sys", &k); /* metrics_read_kernel() leaves none */

        timing_start(&write);
        for (int n = 0; n < METRICS_IN_PROCESS; n++)
                if (metrics_write_file(mfile, &snap) < 0)
                        fprintf(stderr, "metrics_write_file(%s) failed\n", mfile), exit(1);
        timing_end(&write, METRICS_IN_PROCESS);
        if (stat(mfile, &st) < 0)
                perror(mfile), exit(1);

        printf(
            "metrics write, the work alone (%d times each, in process): the per-size stats, %zu files in "
            "%zu "
            "sizes, listed, opened, read and closed: %.1f us CPU, %.1f us wall (the same files kept open "
            "and "
            "read with pread(), which the daemon does not do: %.1f us CPU, %.1f us wall); /proc's meminfo, "
            "vmstat and PSI: %.1f us CPU, %.1f us wall; render and replace (fsync, rename) of the %lld-byte "
            "file: %.1f us CPU, %.1f us wall\n",
            METRICS_IN_PROCESS, n_files, sizes.n_sizes, listing.cpu_us, listing.wall_us, kept.cpu_us,
            kept.wall_us, proc.cpu_us, proc.wall_us, (long long)st.st_size, write.cpu_us, write.wall_us);

        /* The daemon: the same 1 s recheck, with the file and without, twice in turn; CPU per second. */
        write_policy("recheck_interval = 1;\nthp = { enabled = \"madvise\"; };\n");
        for (int run = 0; run < 2; run++)
                for (int with = 0; with <= 1; with++) {
                        char *argv[] = { (char *)thpguardd,
                                         "--config",
                                         conf,
                                         "--log-target=console",
                                         with ? "--metrics-file" : NULL,
                                         mfile,
                                         NULL };
                        uint64_t ready_ns, c_a, c_b;
                        long w_a, w_b;
                        pid_t pid;

                        unlink(mfile);
                        pid = start_argv(argv, with ? "metrics-with.log" : "metrics-without.log", &ready_ns);
                        sleep(2); /* the startup's work done, the first file written */
                        c_a = cpu_ns(pid), w_a = wakeups(pid);
                        sleep(METRICS_DAEMON_SEC);
                        c_b = cpu_ns(pid), w_b = wakeups(pid);
                        stop_daemon(pid);
                        per_sec[run][with] = (double)(c_b - c_a) / METRICS_DAEMON_SEC / 1e3;
                        wakeups_per_sec[run][with] = (double)(w_b - w_a) / METRICS_DAEMON_SEC;
                        if (with && stat(mfile, &st) < 0)
                                fprintf(stderr, "the daemon wrote no %s\n", mfile), exit(1);
                }
        for (int run = 0; run < 2; run++)
                printf(
                    "  the daemon, recheck_interval = 1 (a recheck and a metrics write a second), run %d: "
                    "CPU %.1f us/s without a metrics file (%.1f wakeups/s), %.1f us/s with one (%.1f "
                    "wakeups/s): +%.1f us a write\n",
                    run + 1, per_sec[run][0], wakeups_per_sec[run][0], per_sec[run][1],
                    wakeups_per_sec[run][1], per_sec[run][1] - per_sec[run][0]);
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* exec -> READY=1 over STARTS starts of argv, sorted into ret (ns). */
static void ready_times(char *const argv[], uint64_t ret[STARTS]) {
        for (int i = 0; i < STARTS; i++) {
                pid_t pid = start_argv(argv, "ready.log", &ret[i]);
                stop_daemon(pid);
        }
        qsort(ret, STARTS, sizeof(ret[0]), cmp_u64);
}

static void drain(int ino) {
        char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

        while (read(ino, events, sizeof(events)) > 0)
                ;
}

/* Blocks until the file may have changed (our own watch, so the observer never competes for a CPU). */
static void wait_modify(int ino, uint64_t t0) {
        char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        uint64_t elapsed_ms = (now_ns() - t0) / 1000000u;
        struct pollfd pfd = { .fd = ino, .events = POLLIN };

        if (elapsed_ms < 1000 && poll(&pfd, 1, (int)(1000 - elapsed_ms)) > 0)
                (void)!read(ino, events, sizeof(events));
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

/* The lines of DIR/logname that hold a, and b if given. */
static long count_lines_with(const char *logname, const char *a, const char *b) {
        char path[256], line[4096];
        long n = 0;
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, logname);
        f = fopen(path, "r");
        while (f && fgets(line, sizeof(line), f))
                n += strstr(line, a) && (!b || strstr(line, b));
        if (f)
                fclose(f);
        return n;
}

/* A capability mask of /proc/PID/status ("CapEff:", "CapBnd:"), or 0 if unread. */
static unsigned long long status_caps(pid_t pid, const char *key) {
        char path[64], line[256];
        unsigned long long v = 0;
        FILE *f;
        snprintf(path, sizeof(path), "/proc/%d/status", pid);
        f = fopen(path, "r");
        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, key, strlen(key)) == 0)
                        v = strtoull(line + strlen(key), NULL, 16);
        if (f)
                fclose(f);
        return v;
}

#define HAS_SYS_ADMIN(caps) (((caps) >> CAP_SYS_ADMIN) & 1)

/* Whether pid holds a fanotify group: the one sign that writer attribution is on. */
static bool holds_fanotify(pid_t pid) {
        char path[64], target[64];
        struct dirent *de;
        bool found = false;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%d/fd", pid);
        d = opendir(path);
        while (d && !found && (de = readdir(d))) {
                ssize_t n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
                target[n > 0 ? n : 0] = '\0';
                found = strcmp(target, "anon_inode:[fanotify]") == 0;
        }
        if (d)
                closedir(d);
        return found;
}

/*
 * The line of DIR/logname that says the write source in force, from
 * "write source:" on (the daemon logs it before READY=1), or else the first
 * that mentions writer attribution, or "".
 */
static void log_line_about_attribution(const char *logname, char *out, size_t size) {
        char path[256], line[512], *ws;
        FILE *f;
        snprintf(path, sizeof(path), "%s/%s", dir, logname);
        out[0] = '\0';
        f = fopen(path, "r");
        while (f && fgets(line, sizeof(line), f)) {
                if ((ws = strstr(line, "write source:"))) {
                        snprintf(out, size, "%.*s", (int)strcspn(ws, "\n\""), ws);
                        break;
                }
                if (!out[0] && (strstr(line, "attribution") || strstr(line, "fanotify")))
                        snprintf(out, size, "%.*s", (int)strcspn(line, "\n"), line);
        }
        if (f)
                fclose(f);
}

/* "bpf (syscall-exit)" of a write source line (log_line_about_attribution()), or what the line says. */
static const char *source_in_force(char *line) {
        char *end;

        if (strncmp(line, "write source: ", 14) != 0)
                return line[0] ? line : "no write source line";
        line += 14;
        end = strstr(line, "): ");
        if (end)
                end[1] = '\0';
        else
                line[strcspn(line, ":")] = '\0';
        return line;
}

static void print_loadavg(const char *when) {
        char a[16], b[16], c[16];
        FILE *f = fopen("/proc/loadavg", "r");

        if (f && fscanf(f, "%15s %15s %15s", a, b, c) == 3)
                printf("load average %s: %s %s %s\n", when, a, b, c);
        if (f)
                fclose(f);
}

/* The CPU pid last ran on, from /proc/PID/stat, or -1. */
static int last_cpu(pid_t pid) {
        ProcStat st;

        if (procfs_read_stat("/proc", (uint64_t)pid, &st) < 0)
                return -1;
        return (int)st.processor;
}

/*
 * The task that corrects: thpguardd's corrector thread (named
 * thpguardd-corr), or pid itself for a single-threaded corrector.
 */
static pid_t corrector_task(pid_t pid) {
        char path[64], comm[32];
        pid_t found = pid;
        struct dirent *e;
        DIR *tasks;

        snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
        tasks = opendir(path);
        while (tasks && (e = readdir(tasks))) {
                int tid = atoi(e->d_name);
                FILE *f;

                if (tid <= 0)
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, tid);
                f = fopen(path, "r");
                if (f && fgets(comm, sizeof(comm), f) && strcmp(comm, "thpguardd-corr\n") == 0)
                        found = (pid_t)tid;
                if (f)
                        fclose(f);
        }
        if (tasks)
                closedir(tasks);
        return found;
}

/*
 * When the corrector's write returned, from the kernel's own clock: a
 * tracefs instance of our own records the sys_exit_pwrite64 of the
 * corrector's tasks (both correctors write with pwrite()), stamped with
 * trace_clock "mono", CLOCK_MONOTONIC's clock. No observer has to wake for
 * it, so it says when the knob was back whatever the CPUs were doing; the
 * observers' figures say when a reader could see it. The stamps are
 * printed to the microsecond. Every syscall takes the traced path while the
 * event is on, which costs the correctors that make more syscalls a little
 * more: it errs against thpguardd.
 */
#define TRACEFS "/sys/kernel/tracing"
typedef struct CorrectionTrace {
        char dir[128]; /* the instance; "" when tracing is not available */
        int pipe_fd;   /* its trace_pipe, non-blocking */
        bool mounted;  /* tracefs was mounted by us */
} CorrectionTrace;

static bool trace_write(const CorrectionTrace *t, const char *file, const char *text) {
        char path[256];
        int fd;
        bool ok;

        snprintf(path, sizeof(path), "%s/%s", t->dir, file);
        fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
        if (fd >= 0)
                close(fd);
        return ok;
}

/* Starts tracing the pwrite64 exits of every task of pid; false if this kernel or machine cannot. */
static bool trace_start(CorrectionTrace *t, pid_t pid) {
        char filter[1024] = "", path[64], pipe_path[sizeof(t->dir) + sizeof("/trace_pipe")];
        struct dirent *e;
        DIR *tasks;
        size_t len = 0;

        *t = (CorrectionTrace){ .pipe_fd = -1 };
        if (access(TRACEFS "/instances", F_OK) < 0) {
                if (mount("nodev", TRACEFS, "tracefs", 0, NULL) < 0)
                        return false;
                t->mounted = true;
        }
        snprintf(t->dir, sizeof(t->dir), TRACEFS "/instances/thpguard-bench-%d", (int)getpid());
        snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
        tasks = opendir(path);
        while (tasks && (e = readdir(tasks)))
                if (atoi(e->d_name) > 0 && len + 40 < sizeof(filter))
                        len += (size_t)snprintf(filter + len, sizeof(filter) - len, "%scommon_pid == %s",
                                                len ? " || " : "", e->d_name);
        if (tasks)
                closedir(tasks);
        if (!len || mkdir(t->dir, 0700) < 0 || !trace_write(t, "trace_clock", "mono") ||
            !trace_write(t, "events/syscalls/sys_exit_pwrite64/filter", filter) ||
            !trace_write(t, "events/syscalls/sys_exit_pwrite64/enable", "1")) {
                if (t->dir[0])
                        rmdir(t->dir);
                t->dir[0] = '\0';
                return false;
        }
        snprintf(pipe_path, sizeof(pipe_path), "%s/trace_pipe", t->dir);
        t->pipe_fd = open(pipe_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        return t->pipe_fd >= 0;
}

/*
 * The first traced write that returned at or after after_ns (CLOCK_MONOTONIC),
 * in ns, consuming every event read; 0 if none. Lines read
 * "  <comm>-<pid>  [cpu] <flags>  <sec>.<usec>: sys_pwrite64 -> 0x<ret>".
 */
static uint64_t trace_first_write_after(CorrectionTrace *t, uint64_t after_ns) {
        char buf[8192];
        uint64_t first = 0;
        size_t have = 0;
        ssize_t n;

        if (t->pipe_fd < 0)
                return 0;
        while ((n = read(t->pipe_fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
                char *line = buf, *nl;

                have += (size_t)n;
                buf[have] = '\0';
                while ((nl = strchr(line, '\n'))) {
                        char *colon = strstr(line, ": sys_pwrite64");
                        unsigned long long sec, usec;

                        *nl = '\0';
                        if (colon && colon < nl) {
                                char *stamp = colon;

                                while (stamp > line && stamp[-1] != ' ')
                                        stamp--;
                                if (sscanf(stamp, "%llu.%llu:", &sec, &usec) == 2) {
                                        uint64_t ns = (uint64_t)sec * 1000000000u + (uint64_t)usec * 1000u;

                                        /* The stamp is cut to the microsecond: within one, it is after. */
                                        if (!first && ns + 1000u > after_ns)
                                                first = ns > after_ns ? ns : after_ns;
                                }
                        }
                        line = nl + 1;
                }
                have = strlen(line);
                memmove(buf, line, have);
        }
        return first;
}

static void trace_stop(CorrectionTrace *t) {
        if (t->pipe_fd >= 0)
                close(t->pipe_fd);
        if (t->dir[0]) {
                trace_write(t, "events/syscalls/sys_exit_pwrite64/enable", "0");
                rmdir(t->dir);
        }
        if (t->mounted)
                umount(TRACEFS);
        *t = (CorrectionTrace){ .pipe_fd = -1 };
}

/*
 * Where the corrector ran: on the CPU the foreign write was made from (so
 * it waited for this program to block, and woke us on its own CPU), or on
 * the other one (woken there by an IPI, maybe from idle). The two take
 * different times, and the share of each differs by corrector. Taken on
 * PLACED drifts of each round apart from the timed ones: reading
 * /proc/PID/stat after each drift, outside its timing, still lowered
 * thpguardd's median against the floor's by some 0.1x here.
 */
typedef struct Placement {
        uint64_t lat[2][ROUNDS * PLACED]; /* [0] another CPU, [1] the writer's */
        int n[2];
} Placement;

/* Where drifts() puts each drift's times (ns); a NULL array is not wanted. */
typedef struct DriftTimes {
        uint64_t *from_call;   /* from the foreign write() call until the observer read desired */
        uint64_t *from_return; /* the same, from its return */
        uint64_t *open;        /* the writer's open() beforehand */
        uint64_t *back;        /* from the call until the corrector's write returned, traced; 0 if not */
} DriftTimes;

/*
 * n drifts of path to foreign, each timed until the file reads desired again,
 * by an observer that sleeps on its own inotify watch between reads; into
 * times, and, if where is given, by the CPU the corrector ran on (read after
 * the timing).
 */
static void drifts(const char *path, const char *foreign, const char *desired, int n, unsigned gap_usec,
                   const DriftTimes *times, CorrectionTrace *trace, pid_t corrector, Placement *where) {
        int kfd = open(path, O_RDONLY | O_CLOEXEC);
        int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        char cur[32];

        if (kfd < 0 || ino < 0 || inotify_add_watch(ino, THP, IN_MODIFY) < 0)
                perror(path), exit(1);
        for (int i = 0; i < n; i++) {
                /*
                 * Timed from the write() call: the daemon wakes inside the
                 * foreign write syscall (fsnotify) and may finish before it
                 * returns to us. From the return is printed too.
                 *
                 * The observer sleeps on its own inotify watch between reads
                 * instead of spinning: a spinning reader on the daemon's CPU
                 * holds it for a whole scheduler slice (1-5 ms here), which
                 * would time the observer, not the daemon. Its own wakeup is
                 * counted in, so the figure errs high.
                 */
                /*
                 * The open() comes first and apart: with writer attribution
                 * the writer gate holds every open of a knob until it has
                 * looked the opener up, before any drift exists. What that
                 * costs the writer is timed on its own (times->open).
                 */
                int writer_cpu = where ? sched_getcpu() : -1;
                uint64_t to = now_ns(), t0, t1, t2;
                int wfd = open(path, O_WRONLY | O_CLOEXEC);

                t0 = now_ns();
                if (wfd < 0 || write(wfd, foreign, strlen(foreign)) < 0)
                        perror(path), exit(1);
                t1 = now_ns();
                for (;;) {
                        read_active(kfd, cur, sizeof(cur));
                        if (strcmp(cur, desired) == 0 || now_ns() - t0 >= 1000000000u)
                                break;
                        wait_modify(ino, t0);
                }
                t2 = now_ns();
                close(wfd);
                times->from_call[i] = t2 - t0;
                times->from_return[i] = t2 - t1;
                if (times->open)
                        times->open[i] = t0 - to;
                if (times->back) {
                        uint64_t back = trace_first_write_after(trace, t0);

                        times->back[i] = back ? back - t0 : 0;
                }
                if (where) {
                        int on_writer_cpu = writer_cpu >= 0 && last_cpu(corrector) == writer_cpu;

                        where->lat[on_writer_cpu][where->n[on_writer_cpu]++] = t2 - t0;
                }
                /*
                 * Real drifts are isolated: an idle CPU takes tens of
                 * microseconds to wake, so the gap is part of what is measured.
                 */
                usleep(gap_usec);
                drain(ino); /* the events of this drift's two writes */
        }
        close(ino);
        close(kfd);
}

/*
 * n drifts as they come in real life, by one-shot writers: each a new
 * process (forked) that opens the knob, writes foreign and exits at once,
 * on whichever CPU the kernel gives it, reaped at once by this thread, as a
 * shell reaps its child. The writer says through shared memory when it
 * called write(); into lat, from that call until the first observer saw the
 * file read desired again.
 *
 * One observer per CPU, each pinned there and asleep on its own inotify
 * watch: a single observer is woken by the drift on the writer's CPU and
 * then waits behind the writer's exit (100-170 us for a fork of this
 * program, in a sched trace), so it timed the writer's exit, not the
 * correction. An observer on a CPU the writer is not on sees the knob come
 * back whatever the writer does next. A read that follows an event of the
 * drift's own write cannot predate the drift, so the first such read of
 * desired is the correction, whether or not write() has returned yet.
 */
typedef struct OneShotClock {
        _Atomic uint64_t write_ns; /* when the writer called write(); 0 before */
} OneShotClock;

typedef struct Observer {
        pthread_t thread;
        int cpu;
        int ino;     /* its own watch on the knob's directory */
        int kfd;     /* the knob, read after each event */
        int arm_fd;  /* eventfd: 1 arms it for a drift, 2 stops it */
        int done_fd; /* eventfd shared by all: one count per armed and per finished observer */
        const char *desired;
        _Atomic uint64_t seen_ns; /* when it read desired after the drift's event; 0 if never */
} Observer;

static void *observe(void *userdata) {
        Observer *o = userdata;
        cpu_set_t one;
        uint64_t cmd, one_count = 1;
        char cur[32];

        CPU_ZERO(&one);
        CPU_SET(o->cpu, &one);
        if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0)
                fprintf(stderr, "observer: cannot pin to CPU %d\n", o->cpu);
        while (read(o->arm_fd, &cmd, sizeof(cmd)) == sizeof(cmd) && cmd == 1) {
                struct pollfd pfd = { .fd = o->ino, .events = POLLIN };
                uint64_t armed = now_ns();

                drain(o->ino); /* the events of the last drift's two writes */
                atomic_store(&o->seen_ns, 0);
                (void)!write(o->done_fd, &one_count, sizeof(one_count));
                while (now_ns() - armed < 1000000000u && poll(&pfd, 1, 1000) > 0) {
                        drain(o->ino);
                        read_active(o->kfd, cur, sizeof(cur));
                        if (strcmp(cur, o->desired) == 0) {
                                atomic_store(&o->seen_ns, now_ns());
                                break;
                        }
                }
                (void)!write(o->done_fd, &one_count, sizeof(one_count));
        }
        return NULL;
}

/* Blocks until the observers have written count more times to done_fd, or 2 s. */
static void wait_observers(int done_fd, int count) {
        struct pollfd pfd = { .fd = done_fd, .events = POLLIN };
        uint64_t got, t0 = now_ns();

        for (int seen = 0; seen < count && now_ns() - t0 < 2000000000u;)
                if (poll(&pfd, 1, 100) > 0 && read(done_fd, &got, sizeof(got)) == sizeof(got))
                        seen += (int)got;
}

/*
 * A writer kept for a whole table, in a process of its own, set up once: it
 * opens the knob once, through the host's /sys or (other_mount) through a
 * sysfs of its own, mounted on DIR/sysfs in a new mount and network
 * namespace, as a privileged pod's own /sys is: another superblock, whose
 * writes raise no inotify event on the host's inode. Then, for each byte it
 * reads from go_fd, it stamps write_ns in clk, writes foreign and answers a
 * byte on done_fd once write() has returned.
 */
typedef struct KeptWriter {
        pid_t pid;
        int go_fd;   /* ours: a byte asks for one write */
        int done_fd; /* ours: a byte per write made */
        OneShotClock *clk;
        dev_t dev; /* the superblock the writer's knob is on */
} KeptWriter;

static void kept_writer_start(KeptWriter *w, const char *path, const char *foreign, bool other_mount) {
        int go[2], done[2];
        char mnt[128];

        *w = (KeptWriter){ .pid = -1 };
        w->clk = mmap(NULL, sizeof(*w->clk), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        snprintf(mnt, sizeof(mnt), "%s/sysfs", dir);
        if (w->clk == MAP_FAILED || pipe2(go, O_CLOEXEC) < 0 || pipe2(done, O_CLOEXEC) < 0 ||
            (other_mount && mkdir(mnt, 0700) < 0 && errno != EEXIST))
                perror("kept writer"), exit(1);
        w->pid = fork();
        if (w->pid < 0)
                perror("fork"), exit(1);
        if (w->pid == 0) {
                char knob[PATH_MAX], c;
                struct stat st;
                int fd;

                close(go[1]);
                close(done[0]);
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                        _exit(1);
                /* Private propagation first, so that the sysfs mounted here never reaches the host. */
                if (other_mount && (unshare(CLONE_NEWNS | CLONE_NEWNET) < 0 ||
                                    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                                    mount("sysfs", mnt, "sysfs", 0, NULL) < 0)) {
                        perror("the other sysfs mount");
                        _exit(1);
                }
                snprintf(knob, sizeof(knob), "%s%s", other_mount ? mnt : "/sys", path + strlen("/sys"));
                fd = open(knob, O_WRONLY | O_CLOEXEC);
                if (fd < 0 || fstat(fd, &st) < 0 ||
                    write(done[1], &st.st_dev, sizeof(st.st_dev)) != (ssize_t)sizeof(st.st_dev))
                        _exit(1);
                while (read(go[0], &c, 1) == 1) {
                        atomic_store(&w->clk->write_ns, now_ns());
                        if (write(fd, foreign, strlen(foreign)) < 0 || write(done[1], &c, 1) != 1)
                                _exit(1);
                }
                _exit(0);
        }
        close(go[0]);
        close(done[1]);
        w->go_fd = go[1];
        w->done_fd = done[0];
        if (read(w->done_fd, &w->dev, sizeof(w->dev)) != (ssize_t)sizeof(w->dev))
                fprintf(stderr, "the writer through %s could not open %s\n",
                        other_mount ? "another sysfs mount" : "/sys", path),
                    exit(1);
}

/* One write by w, returned; the bench stops if the writer does not answer within 2 s. */
static void kept_writer_write(const KeptWriter *w) {
        struct pollfd pfd = { .fd = w->done_fd, .events = POLLIN };
        char c = 'w';

        if (write(w->go_fd, &c, 1) != 1 || poll(&pfd, 1, 2000) <= 0 || read(w->done_fd, &c, 1) != 1)
                fprintf(stderr, "kept writer %d: no answer\n", (int)w->pid), exit(1);
}

static void kept_writer_stop(KeptWriter *w) {
        kill(w->pid, SIGKILL);
        waitpid(w->pid, NULL, 0);
        close(w->go_fd);
        close(w->done_fd);
        munmap(w->clk, sizeof(*w->clk));
        *w = (KeptWriter){ .pid = -1 };
}

/*
 * n drifts seen by the observers: by one-shot writers, or, if kept is
 * given, each one write by that writer. Returns how many were not seen
 * corrected within 1 s (lat 1 s, the knob then set back to desired before
 * the next); after 3 in a row, the rest are not made and count as such.
 */
static int observed_drifts(const char *path, const char *foreign, const char *desired, int n,
                           unsigned gap_usec, uint64_t *lat, CorrectionTrace *trace, uint64_t *lat_back,
                           const KeptWriter *kept) {
        OneShotClock *clk =
            kept ? kept->clk
                 : mmap(NULL, sizeof(*clk), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        int done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), n_obs = 0, missed = 0, in_a_row = 0;
        static Observer obs[CPU_SETSIZE];
        cpu_set_t cpus;
        uint64_t one = 1, stop = 2;

        if (clk == MAP_FAILED || done_fd < 0 || sched_getaffinity(0, sizeof(cpus), &cpus) < 0)
                perror("one-shot drifts"), exit(1);
        for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
                Observer *o = &obs[n_obs];

                if (!CPU_ISSET(cpu, &cpus))
                        continue;
                *o = (Observer){ .cpu = cpu, .done_fd = done_fd, .desired = desired };
                o->kfd = open(path, O_RDONLY | O_CLOEXEC);
                o->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
                o->arm_fd = eventfd(0, EFD_CLOEXEC);
                if (o->kfd < 0 || o->ino < 0 || o->arm_fd < 0 ||
                    inotify_add_watch(o->ino, THP, IN_MODIFY) < 0 ||
                    pthread_create(&o->thread, NULL, observe, o) != 0)
                        perror("observer"), exit(1);
                n_obs++;
        }
        for (int i = 0; i < n; i++) {
                uint64_t first = 0, write_ns;
                pid_t pid;

                if (in_a_row >= 3) {
                        lat[i] = 1000000000u, lat_back[i] = 0, missed++;
                        continue;
                }
                atomic_store(&clk->write_ns, 0);
                for (int j = 0; j < n_obs; j++)
                        (void)!write(obs[j].arm_fd, &one, sizeof(one));
                wait_observers(done_fd, n_obs); /* all armed, their watches drained */
                if (kept)
                        kept_writer_write(kept);
                else {
                        pid = fork();
                        if (pid < 0)
                                perror("fork"), exit(1);
                        if (pid == 0) {
                                int wfd = open(path, O_WRONLY | O_CLOEXEC);

                                atomic_store(&clk->write_ns, now_ns());
                                if (wfd < 0 || write(wfd, foreign, strlen(foreign)) < 0)
                                        _exit(1);
                                _exit(0);
                        }
                        if (waitpid(pid, NULL, 0) != pid)
                                perror("waitpid"), exit(1);
                }
                wait_observers(done_fd, n_obs);
                for (int j = 0; j < n_obs; j++) {
                        uint64_t seen = atomic_load(&obs[j].seen_ns);

                        if (seen && (!first || seen < first))
                                first = seen;
                }
                write_ns = atomic_load(&clk->write_ns);
                if (!first || !write_ns) {
                        missed++, in_a_row++;
                        write_word(path, desired);
                } else
                        in_a_row = 0;
                lat[i] = first && write_ns && first > write_ns ? first - write_ns : 1000000000u;
                if (write_ns) {
                        uint64_t back = trace_first_write_after(trace, write_ns);

                        lat_back[i] = back ? back - write_ns : 0;
                }
                usleep(gap_usec);
        }
        for (int j = 0; j < n_obs; j++) {
                (void)!write(obs[j].arm_fd, &stop, sizeof(stop));
                pthread_join(obs[j].thread, NULL);
                close(obs[j].arm_fd);
                close(obs[j].ino);
                close(obs[j].kfd);
        }
        close(done_fd);
        if (!kept)
                munmap(clk, sizeof(*clk));
        return missed;
}

/*
 * The correctors compared on one knob, interleaved. Each thpguardd is given
 * its write source: with auto, root without CAP_SYS_ADMIN still loads the
 * BPF write probe (CAP_BPF and CAP_PERFMON are enough), so "off" would not
 * be off.
 */
enum {
        FLOOR,
        FLOOR_OPEN_GATE,
        FLOOR_SYSCALL_HOOK,
        ATTRIBUTION_OFF,
        ATTRIBUTION_ON,
        BPF_PROBE,
        N_CORRECTORS
};
static const char *const corrector_name[N_CORRECTORS] = {
        "floor (min-corrector)",
        "floor + bare open gate (min-corrector --open-gate)",
        "floor + empty sys_exit hook (min-corrector --syscall-exit-hook)",
        "thpguardd, attribution off (none)",
        "thpguardd, attribution on (fanotify)",
        "thpguardd, bpf probe"
};
static const char *const corrector_source[N_CORRECTORS] = { [ATTRIBUTION_OFF] = "--write-source=none",
                                                            [ATTRIBUTION_ON] = "--write-source=fanotify",
                                                            [BPF_PROBE] = "--write-source=bpf" };
/* What the log's write source line starts with when the mode asked for is in force. */
static const char *const corrector_source_line[N_CORRECTORS] = { [ATTRIBUTION_OFF] = "write source: none",
                                                                 [ATTRIBUTION_ON] = "write source: fanotify",
                                                                 [BPF_PROBE] = "write source: bpf" };
#define IS_FLOOR(c) ((c) == FLOOR || (c) == FLOOR_OPEN_GATE || (c) == FLOOR_SYSCALL_HOOK)

/*
 * The probe's hook in the "bpf probe" columns: THPGUARD_BENCH_PROBE_HOOK,
 * default auto (fexit, else a kprobe). Where the kernel gives neither (this
 * development VM), THPGUARD_BENCH_PROBE_HOOK=syscall-exit measures the hook
 * that is left, which only a user who names it gets.
 */
static char *probe_hook_option(void) {
        static char option[64];
        const char *hook = getenv("THPGUARD_BENCH_PROBE_HOOK");

        snprintf(option, sizeof(option), "--write-probe-hook=%s", hook && *hook ? hook : "auto");
        return option;
}

/* Whether a corrector's state (corrector_state()) says that the mode it was asked for is in force. */
static bool mode_in_force(int c, const char *state) {
        if (IS_FLOOR(c))
                return true;
        if (!strstr(state, corrector_source_line[c]))
                return false;
        /* fanotify: its groups held; the probe and none: no gate, nobody held. */
        return c == ATTRIBUTION_ON ? strstr(state, "group held") != NULL
                                   : strstr(state, "group none") != NULL;
}

/*
 * ", joined 1.6 ms after startup" taken out of a write source line: the
 * time differs from start to start, and the rounds' lines are compared to
 * tell that every round ran in the same mode.
 */
static void drop_join_time(char *line) {
        char *join = strstr(line, ", joined "), *end = join ? strstr(join, " after startup") : NULL;

        if (end)
                memmove(join, end + strlen(" after startup"), strlen(end + strlen(" after startup")) + 1);
}

/*
 * What a corrector runs as, read once it is READY=1 and before its round:
 * its effective capabilities, whether it holds a fanotify group, and the
 * line its log has about the write source. Starts with '!' if attribution
 * off is not off (CAP_SYS_ADMIN, a fanotify group or the BPF probe): the
 * bench stops. Whether the other modes got what they asked for is said
 * with the figures (mode_in_force()).
 */
static void corrector_state(int c, pid_t pid, const char *logname, char *out, size_t size) {
        unsigned long long eff = status_caps(pid, "CapEff:"), bnd = status_caps(pid, "CapBnd:");
        bool fan = holds_fanotify(pid);
        char line[256];

        if (IS_FLOOR(c)) {
                snprintf(out, size, "CapEff %016llx", eff);
                return;
        }
        /*
         * READY=1 comes once the policy is applied; the write source joins
         * after it (within about a millisecond here): its line is waited
         * for, up to 2 s, not taken as missing.
         */
        for (int tries = 0; tries < 200; tries++) {
                log_line_about_attribution(logname, line, sizeof(line));
                if (strstr(line, "write source:"))
                        break;
                usleep(10000);
        }
        drop_join_time(line);
        fan = holds_fanotify(pid);
        snprintf(out, size,
                 "%sCapEff %016llx (CAP_SYS_ADMIN %s, in bounding set %s), fanotify group %s; log: %s",
                 c == ATTRIBUTION_OFF && (HAS_SYS_ADMIN(eff) || HAS_SYS_ADMIN(bnd) || fan ||
                                          strstr(line, "write source: bpf"))
                     ? "!"
                     : "",
                 eff, HAS_SYS_ADMIN(eff) ? "yes" : "no", HAS_SYS_ADMIN(bnd) ? "yes" : "no",
                 fan ? "held" : "none", line[0] ? line : "no line about attribution");
}

static void print_drift_lines(const char *knob, const char *who, uint64_t *lat, uint64_t *lat_ret) {
        printf("drift latency of %s over %d drifts, %s, until the file reads the policy again:\n"
               "  from the foreign write() call:   min %.1f us, median %.1f us, p99 %.1f us, max %.1f us\n"
               "  from its return:                 min %.1f us, median %.1f us, p99 %.1f us, max %.1f us\n",
               knob, DRIFTS, who, lat[0] / 1e3, lat[DRIFTS / 2] / 1e3, lat[DRIFTS * 99 / 100] / 1e3,
               lat[DRIFTS - 1] / 1e3, lat_ret[0] / 1e3, lat_ret[DRIFTS / 2] / 1e3,
               lat_ret[DRIFTS * 99 / 100] / 1e3, lat_ret[DRIFTS - 1] / 1e3);
}

/*
 * The median of the traced times among n sorted ones, the drifts with no
 * traced write (0, sorted first) left out; 0 if none was traced.
 */
static uint64_t traced_median(const uint64_t *sorted, int n) {
        int zeros = 0;

        while (zeros < n && sorted[zeros] == 0)
                zeros++;
        return zeros < n ? sorted[zeros + (n - zeros) / 2] : 0;
}

/* "median us | ratio to the floor's" for the traced times, or a dash if not traced. */
static void format_traced(const uint64_t *sorted, const uint64_t *floor_sorted, int n, char *out,
                          size_t size) {
        uint64_t median = traced_median(sorted, n), floor_median = traced_median(floor_sorted, n);

        if (median && floor_median)
                snprintf(out, size, "%.1f | %.2fx", median / 1e3, (double)median / (double)floor_median);
        else
                snprintf(out, size, "- | -");
}

/* The one-shot writers' table: the same correctors, the same rounds, a new writer process per drift. */
static void print_one_shot_table(const char *knob, unsigned gap_usec, uint64_t lat[N_CORRECTORS][ONE_SHOT],
                                 uint64_t back[N_CORRECTORS][ONE_SHOT], int n, const bool *in_force) {
        if (n < 2)
                return;
        printf("drift latency of %s against the floor, one-shot writers (a new process per drift, exited "
               "at once), %.1f ms apart: %d per corrector over the same rounds; from the writer's write() "
               "call until an observer read the policy's value, and until the corrector's write returned "
               "(traced), us\n\n"
               "| corrector | min | median | p99 | max | median / floor | write returned, median | "
               "/ floor |\n"
               "|---|---|---|---|---|---|---|---|\n",
               knob, gap_usec / 1e3, n);
        for (int c = 0; c < N_CORRECTORS; c++) {
                char traced[64];

                format_traced(back[c], back[FLOOR], n, traced, sizeof(traced));
                printf("| %s%s | %.1f | %.1f | %.1f | %.1f | %.2fx | %s |\n", corrector_name[c],
                       in_force[c] ? "" : " (NOT IN FORCE)", lat[c][0] / 1e3, lat[c][n / 2] / 1e3,
                       lat[c][n * 99 / 100] / 1e3, lat[c][n - 1] / 1e3,
                       (double)lat[c][n / 2] / (double)lat[FLOOR][n / 2], traced);
        }
        printf("\n");
}

/*
 * Drift latency of one knob for the four correctors, interleaved: ROUNDS
 * rounds, each of which runs every corrector in turn (the first one rotating
 * from round to round) for WARMUP + DRIFTS / ROUNDS drifts. Only one
 * corrector runs at a time: each is started for its round and stopped after
 * it, so no other corrector's watch is on the knob during a round.
 */
static void compare_correctors(const char *thpguardd, const char *floor_bin, const char *path,
                               const char *foreign, const char *desired, unsigned gap_usec) {
        static const char *const logname[N_CORRECTORS] = {
                "floor.log",           "floor-open-gate.log", "floor-syscall-hook.log",
                "attribution-off.log", "attribution-on.log",  "bpf-probe.log"
        };
        static uint64_t lat[N_CORRECTORS][DRIFTS], lat_ret[N_CORRECTORS][DRIFTS],
            lat_open[N_CORRECTORS][DRIFTS], lat_back[N_CORRECTORS][DRIFTS], one_shot[N_CORRECTORS][ONE_SHOT],
            one_shot_back[N_CORRECTORS][ONE_SHOT];
        bool traced = false, in_force[N_CORRECTORS];
        int one_shot_per_round = ONE_SHOT / ROUNDS;
        uint64_t warm[WARMUP], warm_ret[WARMUP], placed[PLACED], placed_ret[PLACED], ready_ns;
        const char *knob = strrchr(path, '/') + 1;
        char conf[256], state[N_CORRECTORS][768], now[768], cur[32];
        int same[N_CORRECTORS] = { 0 }, one_shot_missed[N_CORRECTORS] = { 0 }, per_round = DRIFTS / ROUNDS;
        static Placement where[N_CORRECTORS];
        CorrectionTrace trace;

        memset(where, 0, sizeof(where));
        memset(lat_back, 0, sizeof(lat_back));
        memset(one_shot_back, 0, sizeof(one_shot_back));

        snprintf(conf, sizeof(conf), "%s/thpguard.conf", dir);
        for (int r = 0; r < ROUNDS; r++)
                for (int j = 0; j < N_CORRECTORS; j++) {
                        int c = (r + j) % N_CORRECTORS, kfd = open(path, O_RDONLY | O_CLOEXEC);
                        char *daemon_argv[] = { (char *)thpguardd,
                                                "--config",
                                                conf,
                                                "--log-target=console",
                                                (char *)corrector_source[c],
                                                c == BPF_PROBE ? probe_hook_option() : NULL,
                                                NULL };
                        char *floor_argv[] = { (char *)floor_bin, (char *)path, (char *)desired,
                                               c == FLOOR_OPEN_GATE      ? "--open-gate"
                                               : c == FLOOR_SYSCALL_HOOK ? "--syscall-exit-hook"
                                                                         : NULL,
                                               NULL };
                        pid_t pid;

                        /* Each round starts from the policy's value, with nothing running. */
                        read_active(kfd, cur, sizeof(cur));
                        close(kfd);
                        if (strcmp(cur, desired) != 0)
                                write_word(path, desired);
                        pid = start_argv_caps(IS_FLOOR(c) ? floor_argv : daemon_argv, logname[c],
                                              c == ATTRIBUTION_OFF, &ready_ns);
                        corrector_state(c, pid, logname[c], now, sizeof(now));
                        if (r == 0)
                                snprintf(state[c], sizeof(state[c]), "%s", now);
                        if (strcmp(now, state[c]) == 0)
                                same[c]++;
                        else
                                printf("  %s, %s, round %d: %s\n", knob, corrector_name[c], r + 1, now);
                        if (now[0] == '!')
                                fprintf(stderr, "%s is not running as asked, stopping\n", corrector_name[c]),
                                    exit(1);
                        if (trace_start(&trace, pid))
                                traced = true;
                        drifts(path, foreign, desired, WARMUP, gap_usec,
                               &(DriftTimes){ .from_call = warm, .from_return = warm_ret }, &trace, pid,
                               NULL);
                        drifts(path, foreign, desired, per_round, gap_usec,
                               &(DriftTimes){ .from_call = lat[c] + r * per_round,
                                              .from_return = lat_ret[c] + r * per_round,
                                              .open = lat_open[c] + r * per_round,
                                              .back = lat_back[c] + r * per_round },
                               &trace, pid, NULL);
                        drifts(path, foreign, desired, PLACED, gap_usec,
                               &(DriftTimes){ .from_call = placed, .from_return = placed_ret }, &trace,
                               corrector_task(pid), &where[c]);
                        one_shot_missed[c] +=
                            observed_drifts(path, foreign, desired, one_shot_per_round, gap_usec,
                                            one_shot[c] + r * one_shot_per_round, &trace,
                                            one_shot_back[c] + r * one_shot_per_round, NULL);
                        trace_stop(&trace);
                        stop_daemon(pid);
                }
        for (int c = 0; c < N_CORRECTORS; c++) {
                in_force[c] = same[c] == ROUNDS && mode_in_force(c, state[c]);
                printf("%s, %s, before each round: %s (%d of %d rounds)%s\n", knob, corrector_name[c],
                       state[c], same[c], ROUNDS,
                       in_force[c]           ? ""
                       : c == ATTRIBUTION_ON ? "; NOT IN FORCE: no fanotify group or no fanotify write "
                                               "source in every round, so attribution is not on"
                       : c == BPF_PROBE      ? "; NOT IN FORCE: the log does not say \"write source: bpf\" "
                                               "in every round, or a fanotify group is held: this "
                                               "thpguardd ran without the probe"
                       : same[c] != ROUNDS   ? "; not the same in every round, see above"
                                             : "; not the write source asked for");
                if (one_shot_missed[c])
                        printf("  %s, %s: %d of %d one-shot drifts not seen corrected within 1 s\n", knob,
                               corrector_name[c], one_shot_missed[c], one_shot_per_round * ROUNDS);
                qsort(lat[c], DRIFTS, sizeof(lat[c][0]), cmp_u64);
                qsort(lat_ret[c], DRIFTS, sizeof(lat_ret[c][0]), cmp_u64);
                qsort(lat_open[c], DRIFTS, sizeof(lat_open[c][0]), cmp_u64);
                qsort(lat_back[c], DRIFTS, sizeof(lat_back[c][0]), cmp_u64);
                qsort(one_shot[c], (size_t)(one_shot_per_round * ROUNDS), sizeof(one_shot[c][0]), cmp_u64);
                qsort(one_shot_back[c], (size_t)(one_shot_per_round * ROUNDS), sizeof(one_shot_back[c][0]),
                      cmp_u64);
        }
        for (int c = 0; c < N_CORRECTORS; c++) {
                print_drift_lines(knob, corrector_name[c], lat[c], lat_ret[c]);
                printf("  the writer's open() of %s beforehand:  median %.1f us, p99 %.1f us\n", knob,
                       lat_open[c][DRIFTS / 2] / 1e3, lat_open[c][DRIFTS * 99 / 100] / 1e3);
        }
        for (int c = 0; c < N_CORRECTORS; c++) {
                Placement *w = &where[c];

                for (int on = 0; on < 2; on++)
                        qsort(w->lat[on], (size_t)w->n[on], sizeof(w->lat[on][0]), cmp_u64);
                printf("  %s ran on the writer's CPU for %d of %d drifts timed apart (median %.1f us), on "
                       "the other for %d (median %.1f us)\n",
                       corrector_name[c], w->n[1], w->n[0] + w->n[1],
                       w->n[1] ? w->lat[1][w->n[1] / 2] / 1e3 : 0.0, w->n[0],
                       w->n[0] ? w->lat[0][w->n[0] / 2] / 1e3 : 0.0);
        }
        printf("\ndrift latency of %s against the floor, drifts %.1f ms apart: %d rounds of %d drifts per "
               "corrector, interleaved, %d warm-up drifts per round not counted; from the foreign write() "
               "call, us\n\n"
               "| corrector | min | median | p99 | max | median / floor | p99 / floor | target | "
               "write returned, median | / floor |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n",
               knob, gap_usec / 1e3, ROUNDS, per_round, WARMUP);
        for (int c = 0; c < N_CORRECTORS; c++) {
                double median = (double)lat[c][DRIFTS / 2], p99 = (double)lat[c][DRIFTS * 99 / 100];
                double rm = median / (double)lat[FLOOR][DRIFTS / 2];
                double rp = p99 / (double)lat[FLOOR][DRIFTS * 99 / 100];
                char back[64], target[160];

                format_traced(lat_back[c], lat_back[FLOOR], DRIFTS, back, sizeof(back));
                snprintf(target, sizeof(target), "%s",
                         c == FLOOR                ? ""
                         : c == FLOOR_OPEN_GATE    ? "(what holding the opener costs any corrector)"
                         : c == FLOOR_SYSCALL_HOOK ? "(what the probe's sys_exit hook costs any corrector)"
                         : rm <= 1.2               ? "median <= 1.2x floor: met"
                                                   : "median <= 1.2x floor: missed");
                /* The probe on sys_exit pays the hook wherever it runs: its own share, apart. */
                if (c == BPF_PROBE)
                        snprintf(target + strlen(target), sizeof(target) - strlen(target),
                                 "; %.2fx the floor + empty sys_exit hook",
                                 median / (double)lat[FLOOR_SYSCALL_HOOK][DRIFTS / 2]);
                printf("| %s%s | %.1f | %.1f | %.1f | %.1f | %.2fx | %.2fx | %s | %s |\n", corrector_name[c],
                       in_force[c] ? "" : " (NOT IN FORCE)", lat[c][0] / 1e3, median / 1e3, p99 / 1e3,
                       lat[c][DRIFTS - 1] / 1e3, rm, rp, target, back);
        }
        printf("\n%s",
               traced ? "" : "(no tracefs sys_exit_pwrite64 here: the corrector's write is not timed)\n\n");
        print_one_shot_table(knob, gap_usec, one_shot, one_shot_back, one_shot_per_round * ROUNDS, in_force);
}

/*
 * A write through another sysfs mount: drift latency of thpguardd with the
 * BPF probe when the writer writes through a sysfs of its own (another
 * network namespace: another superblock), against the floor and the probe
 * with the same kind of writer on the host's /sys. Every drift is one write
 * by a kept writer (kept_writer_start(), set up once for the table), timed
 * from its write() call by the observers on the host's /sys: their inotify
 * watch hears nothing of the other mount's write, so the first event after
 * they are armed is the correction's own write, and the first read of the
 * policy's value after an event is the correction, as for one-shot writers.
 * In rounds, the three cells interleaved. fanotify and the floor cannot see
 * such a write: for fanotify one drift checks that it is still there 1 s
 * later (the recheck corrects it, 30 s here), and none is timed.
 */
#ifndef OTHER_MOUNT
#define OTHER_MOUNT (DRIFTS / 3) /* timed drifts per cell, knob and gap */
#endif
#define OTHER_MOUNT_WARMUP 5 /* per round and cell, not counted */
enum { OM_FLOOR_HOST, OM_BPF_HOST, OM_BPF_OTHER, N_OM };

static void compare_other_mount(const char *thpguardd, const char *floor_bin, const char *path,
                                const char *foreign, const char *desired, unsigned gap_usec) {
        static const char *const name[N_OM] = { "host /sys, floor (min-corrector)",
                                                "host /sys, thpguardd, bpf probe",
                                                "another sysfs mount (new netns), thpguardd, bpf probe" };
        static const char *const logname[N_OM] = { "other-mount-floor.log", "other-mount-bpf-host.log",
                                                   "other-mount-bpf-other.log" };
        static uint64_t lat[N_OM][OTHER_MOUNT], back[N_OM][OTHER_MOUNT];
        long corrected = 0, by_probe = 0;
        uint64_t warm[OTHER_MOUNT_WARMUP], warm_back[OTHER_MOUNT_WARMUP], ready_ns;
        int per_round = OTHER_MOUNT / ROUNDS, n = per_round * ROUNDS, missed[N_OM] = { 0 };
        const char *knob = strrchr(path, '/') + 1;
        char conf[256], now[768], cur[32], fan_says[128];
        KeptWriter writer[2]; /* [0] on the host's /sys, [1] through the other mount */
        CorrectionTrace trace;
        struct stat host;
        pid_t pid;

        if (n < 2)
                return;
        memset(back, 0, sizeof(back));
        snprintf(conf, sizeof(conf), "%s/thpguard.conf", dir);
        char *daemon_argv[] = {
                (char *)thpguardd, "--config", conf, "--log-target=console", NULL, NULL, NULL
        };
        char *floor_argv[] = { (char *)floor_bin, (char *)path, (char *)desired, NULL };
        kept_writer_start(&writer[0], path, foreign, false);
        kept_writer_start(&writer[1], path, foreign, true);
        if (stat(path, &host) < 0)
                perror(path), exit(1);
        printf(
            "%s through another sysfs mount: the writer's knob is on device %u:%u, the host's on %u:%u%s\n",
            knob, major(writer[1].dev), minor(writer[1].dev), major(host.st_dev), minor(host.st_dev),
            writer[1].dev == host.st_dev ? ": the same superblock, so this is not another mount's write"
                                         : "");
        for (int r = 0; r < ROUNDS; r++)
                for (int j = 0; j < N_OM; j++) {
                        int c = (r + j) % N_OM;
                        const KeptWriter *w = &writer[c == OM_BPF_OTHER];

                        read_knob(path, cur, sizeof(cur));
                        if (strcmp(cur, desired) != 0)
                                write_word(path, desired);
                        daemon_argv[4] = "--write-source=bpf";
                        daemon_argv[5] = probe_hook_option();
                        pid =
                            start_argv(c == OM_FLOOR_HOST ? floor_argv : daemon_argv, logname[c], &ready_ns);
                        if (c != OM_FLOOR_HOST) {
                                corrector_state(BPF_PROBE, pid, logname[c], now, sizeof(now));
                                if (!mode_in_force(BPF_PROBE, now)) {
                                        printf(
                                            "%s through another sysfs mount: the bpf probe is NOT IN FORCE "
                                            "(%s); no figures\n\n",
                                            knob, now);
                                        stop_daemon(pid);
                                        kept_writer_stop(&writer[0]);
                                        kept_writer_stop(&writer[1]);
                                        return;
                                }
                        }
                        trace_start(&trace, pid);
                        observed_drifts(path, foreign, desired, OTHER_MOUNT_WARMUP, gap_usec, warm, &trace,
                                        warm_back, w);
                        missed[c] +=
                            observed_drifts(path, foreign, desired, per_round, gap_usec,
                                            lat[c] + r * per_round, &trace, back[c] + r * per_round, w);
                        trace_stop(&trace);
                        stop_daemon(pid);
                        if (c == OM_BPF_OTHER) {
                                corrected += count_lines_with(logname[c], "result=corrected", NULL);
                                by_probe += count_lines_with(logname[c], "result=corrected", "trigger=bpf");
                        }
                }
        printf("%s through another sysfs mount: %ld corrections in the bpf probe's logs, %ld of them "
               "trigger=bpf\n",
               knob, corrected, by_probe);

        /* fanotify: one write through the other mount, and the knob read 1 s later. */
        read_knob(path, cur, sizeof(cur));
        if (strcmp(cur, desired) != 0)
                write_word(path, desired);
        daemon_argv[4] = "--write-source=fanotify";
        daemon_argv[5] = NULL;
        pid = start_argv(daemon_argv, "other-mount-fanotify.log", &ready_ns);
        corrector_state(ATTRIBUTION_ON, pid, "other-mount-fanotify.log", now, sizeof(now));
        kept_writer_write(&writer[1]);
        usleep(1000000);
        read_knob(path, cur, sizeof(cur));
        snprintf(fan_says, sizeof(fan_says), "%s%s 1 s later%s",
                 strcmp(cur, desired) == 0 ? "corrected: " : "not seen: still ", cur,
                 mode_in_force(ATTRIBUTION_ON, now) ? "" : " (NOT IN FORCE)");
        stop_daemon(pid);
        write_word(path, desired);
        kept_writer_stop(&writer[0]);
        kept_writer_stop(&writer[1]);

        for (int c = 0; c < N_OM; c++) {
                qsort(lat[c], (size_t)n, sizeof(lat[c][0]), cmp_u64);
                qsort(back[c], (size_t)n, sizeof(back[c][0]), cmp_u64);
        }
        printf(
            "drift latency of %s through another sysfs mount against the floor on the host's, drifts %.1f "
            "ms apart: %d per cell over %d rounds, interleaved, %d warm-up drifts per round not counted; a "
            "writer process kept for the table (the knob opened once), from its write() call until an "
            "observer on the host's /sys read the policy's value, and until the corrector's write "
            "returned (traced), us\n\n"
            "| writer's mount, corrector | min | median | p99 | max | median / floor | p99 / floor | "
            "not corrected within 1 s | write returned, median | / floor |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n",
            knob, gap_usec / 1e3, n, ROUNDS, OTHER_MOUNT_WARMUP);
        for (int c = 0; c < N_OM; c++) {
                char traced[64];

                format_traced(back[c], back[OM_FLOOR_HOST], n, traced, sizeof(traced));
                printf("| %s | %.1f | %.1f | %.1f | %.1f | %.2fx | %.2fx | %d | %s |\n", name[c],
                       lat[c][0] / 1e3, lat[c][n / 2] / 1e3, lat[c][n * 99 / 100] / 1e3, lat[c][n - 1] / 1e3,
                       (double)lat[c][n / 2] / (double)lat[OM_FLOOR_HOST][n / 2],
                       (double)lat[c][n * 99 / 100] / (double)lat[OM_FLOOR_HOST][n * 99 / 100], missed[c],
                       traced);
        }
        printf(
            "| another sysfs mount, thpguardd, attribution on (fanotify) | not timed: fanotify and inotify "
            "on the host's /sys hear nothing of it; %s, corrected at the recheck (recheck_interval = 30 s) "
            "|\n"
            "| another sysfs mount, floor (min-corrector) | not timed: its inotify watch hears nothing of "
            "it, "
            "and it has no recheck |\n\n",
            fan_says);
}

/*
 * What the daemon costs every other process, and the probe's own cost per
 * knob write: syscall-cost (beside this program) run on this bench's
 * policy, with the lock this bench holds handed down (--lock-fd), so its
 * table is in this run's output. It times its own getppid() and 1-byte
 * write() to /dev/null with no daemon, thpguardd at its defaults and each
 * probe hook forced, the modes alternating over SYSCALL_ROUNDS rounds, and
 * reads the probe programs' BPF run-time statistics over knob writes.
 */
#define SYSCALL_ROUNDS "6"

static void measure_syscall_cost(const char *thpguardd, const char *cost_bin) {
        char conf[256], lock_arg[32];
        int status = 0;
        pid_t pid;

        snprintf(conf, sizeof(conf), "%s/thpguard.conf", dir);
        snprintf(lock_arg, sizeof(lock_arg), "--lock-fd=%d", lock_fd);
        write_policy("recheck_interval = 30;\nthp = { enabled = \"madvise\"; };\n");
        printf("syscall cost to every other process (%s):\n", cost_bin);
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
                /* The same open lock: its flock() returns at once. */
                if (fcntl(lock_fd, F_SETFD, 0) < 0)
                        _exit(126);
                execl(cost_bin, cost_bin, lock_arg, thpguardd, conf, SYSCALL_ROUNDS, (char *)NULL);
                _exit(127);
        }
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                printf("  syscall-cost failed (status %d): no figures\n", status);
}

/* Every knob a policy below manages, saved at start and written back at exit. */
static const char *const touched[] = { ENABLED, THP "/defrag", THP "/khugepaged/defrag",
                                       THP "/khugepaged/pages_to_scan", THP "/khugepaged/max_ptes_none" };
static char saved[sizeof(touched) / sizeof(touched[0])][32];

static void save(void) {
        for (size_t i = 0; i < sizeof(touched) / sizeof(touched[0]); i++) {
                int fd = open(touched[i], O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        perror(touched[i]), exit(1);
                read_active(fd, saved[i], sizeof(saved[i]));
                close(fd);
        }
}

static void restore(void) {
        for (size_t i = 0; i < sizeof(touched) / sizeof(touched[0]); i++)
                if (saved[i][0])
                        write_word(touched[i], saved[i]);
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
        uint64_t ready[STARTS], fan_ready[STARTS], floor_ready[STARTS], ready_ns, c0, c1, f0, f1;
        int idle_seconds = argc > 2 ? atoi(argv[2]) : 60;
        bool drift_only = argc > 2 && strcmp(argv[2], "--drift-only") == 0;
        bool metrics_only = argc == 3 && strcmp(argv[2], "--metrics-only") == 0;
        unsigned long drift_only_gap = 0;
        char *end;
        char conf[256], floor_bin[PATH_MAX], cost_bin[PATH_MAX], source[256];
        ssize_t n;
        long w0, w1, fw0, fw1, lines, rss;
        pid_t pid, floor_pid;

        if (argc > 1 && strncmp(argv[1], "--floor-", 8) == 0)
                return run_floor(argv[1]);
        if (argc < 2) {
                fprintf(stderr, "usage: thpguard-bench THPGUARDD [IDLE_SECONDS [--idle-only]]\n"
                                "       thpguard-bench THPGUARDD --drift-only GAP_USEC\n"
                                "       thpguard-bench THPGUARDD --syscall-only\n"
                                "       thpguard-bench THPGUARDD --metrics-only\n");
                return 2;
        }
        if (drift_only) {
                errno = 0;
                drift_only_gap = argc == 4 ? strtoul(argv[3], &end, 10) : 0;
                if (argc != 4 || errno != 0 || end == argv[3] || *end != '\0' || argv[3][0] == '-' ||
                    drift_only_gap > 1000000)
                        return fprintf(stderr,
                                       "thpguard-bench: --drift-only wants GAP_USEC, 0 to 1000000, got "
                                       "\"%s\"\n",
                                       argc > 3 ? argv[3] : ""),
                               2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        /* The floor corrector is built beside this program. */
        n = readlink("/proc/self/exe", floor_bin, sizeof(floor_bin) - sizeof("min-corrector"));
        if (n <= 0)
                return perror("/proc/self/exe"), 1;
        floor_bin[n] = '\0';
        strcpy(strrchr(floor_bin, '/') + 1, "min-corrector");
        if (access(floor_bin, X_OK) < 0)
                return perror(floor_bin), 1;
        /* And the syscall cost program. */
        memcpy(cost_bin, floor_bin, sizeof(cost_bin));
        strcpy(strrchr(cost_bin, '/') + 1, "syscall-cost");
        if (access(cost_bin, X_OK) < 0)
                return perror(cost_bin), 1;
        if (!mkdtemp(dir))
                return perror("mkdtemp"), 1;
        snprintf(conf, sizeof(conf), "%s/thpguard.conf", dir);
        lock_fd = open("/tmp/thpguard-real-sysfs.lock", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        flock(lock_fd, LOCK_EX);
        save();
        atexit(restore);
        print_machine();
        print_loadavg("at start");
        if (argc > 2 && strcmp(argv[2], "--syscall-only") == 0) {
                measure_syscall_cost(argv[1], cost_bin);
                print_loadavg("at the end");
                return 0;
        }
        if (argc > 3 && strcmp(argv[3], "--idle-only") == 0) {
                measure_idle(argv[1], idle_seconds);
                print_loadavg("at the end");
                return 0;
        }
        if (metrics_only) {
                measure_metrics_write(argv[1]);
                print_loadavg("at the end");
                return 0;
        }

        /* Latency: fight protection off, or 1000 drifts would be a fight. */
        write_word(ENABLED, "madvise");
        write_word(THP "/defrag", "madvise");
        write_policy("recheck_interval = 30; fight_threshold = 0;\nthp = { enabled = \"madvise\"; defrag = "
                     "\"madvise\"; };\n");
        /*
         * Two knobs: `enabled` (the kernel's own write path is slow: it recomputes
         * min_free_kbytes, so both the foreign write and ours cost ~100 us) and
         * `defrag` (a plain flag). The foreign value keeps khugepaged running
         * (always), so no kthread start/stop is timed.
         */
        static const struct {
                const char *path, *foreign, *desired;
        } drift[] = { { ENABLED, "always", "madvise" }, { THP "/defrag", "always", "madvise" } };
        /* The drift latency tables alone, at one gap: for a quick look at one change. */
        if (drift_only) {
                for (size_t k = 0; k < 2; k++)
                        compare_correctors(argv[1], floor_bin, drift[k].path, drift[k].foreign,
                                           drift[k].desired, (unsigned)drift_only_gap);
                print_loadavg("at the end");
                return 0;
        }
        /* The default (auto: the probe where it loads, whose loading is most of the start), then fanotify.
         */
        ready_times((char *const[]){ argv[1], "--config", conf, "--log-target=console", NULL }, ready);
        log_line_about_attribution("ready.log", source, sizeof(source));
        ready_times((char *const[]){ argv[1], "--config", conf, "--log-target=console",
                                     "--write-source=fanotify", NULL },
                    fan_ready);
        ready_times((char *const[]){ "/proc/self/exe", "--floor-ready", NULL }, floor_ready);
        printf("exec -> READY=1 over %d starts, the default --write-source=auto (%s): min %.2f ms, median "
               "%.2f ms, max %.2f ms; --write-source=fanotify: min %.2f ms, median %.2f ms, max %.2f ms; "
               "a program that only sends READY=1: median %.2f ms\n",
               STARTS, source_in_force(source), ready[0] / 1e6, ready[STARTS / 2] / 1e6,
               ready[STARTS - 1] / 1e6, fan_ready[0] / 1e6, fan_ready[STARTS / 2] / 1e6,
               fan_ready[STARTS - 1] / 1e6, floor_ready[STARTS / 2] / 1e6);

        if (!HAS_SYS_ADMIN(status_caps(getpid(), "CapEff:")))
                printf("note: this bench has no CAP_SYS_ADMIN, so \"attribution on\" runs without it too\n");
        print_loadavg("before the drift latency");
        /* Drifts 0.2, 2 and 20 ms apart: back to back is not how they come. */
        static const unsigned gaps_usec[] = { 200, 2000, 20000 };
        for (size_t g = 0; g < sizeof(gaps_usec) / sizeof(gaps_usec[0]); g++)
                for (size_t k = 0; k < 2; k++) {
                        compare_correctors(argv[1], floor_bin, drift[k].path, drift[k].foreign,
                                           drift[k].desired, gaps_usec[g]);
                        compare_other_mount(argv[1], floor_bin, drift[k].path, drift[k].foreign,
                                            drift[k].desired, gaps_usec[g]);
                }
        print_loadavg("after the drift latency");
        measure_syscall_cost(argv[1], cost_bin);

        /*
         * Recheck cost, 1 s rechecks of a policy managing every top-level and
         * khugepaged knob: the work alone, then the daemon per wakeup (nothing
         * else wakes it here) beside an sd-event timer that does nothing.
         */
        write_policy("recheck_interval = 1;\nthp = { enabled = \"madvise\"; defrag = \"madvise\";\n"
                     "  khugepaged = { defrag = true; pages_to_scan = 4096; max_ptes_none = 511; }; };\n");
        pid = start_daemon(argv[1], "recheck.log", &ready_ns); /* it corrects what differs at startup */
        printf("CPU per full recheck of 5 knobs, the work alone: %.1f us (%d rechecks in process)\n",
               recheck_work_us(conf), RECHECKS_IN_PROCESS);
        floor_pid =
            start_argv((char *const[]){ "/proc/self/exe", "--floor-timer", NULL }, "floor.log", &ready_ns);
        c0 = cpu_ns(pid), w0 = wakeups(pid);
        f0 = cpu_ns(floor_pid), fw0 = wakeups(floor_pid);
        sleep(20);
        c1 = cpu_ns(pid), w1 = wakeups(pid);
        f1 = cpu_ns(floor_pid), fw1 = wakeups(floor_pid);
        printf("CPU per recheck wakeup of the daemon: %.1f us (%ld wakeups in 20 s); "
               "an sd-event timer wakeup with no work: %.1f us (%ld wakeups)\n",
               w1 > w0 ? (double)(c1 - c0) / (double)(w1 - w0) / 1e3 : 0.0, w1 - w0,
               fw1 > fw0 ? (double)(f1 - f0) / (double)(fw1 - fw0) / 1e3 : 0.0, fw1 - fw0);
        rss = status_field(pid, "VmHWM:");
        stop_daemon(floor_pid);
        stop_daemon(pid);
        log_line_about_attribution("recheck.log", source, sizeof(source));
        /* The same policy with fanotify, whose startup maps no BPF object. */
        pid = start_argv((char *const[]){ argv[1], "--config", conf, "--log-target=console",
                                          "--write-source=fanotify", NULL },
                         "rss-fanotify.log", &ready_ns);
        sleep(2);
        printf("peak RSS (VmHWM): %ld kB, the default --write-source=auto (%s); --write-source=fanotify: "
               "%ld kB, "
               "2 s after READY=1\n",
               rss, source_in_force(source), status_field(pid, "VmHWM:"));
        stop_daemon(pid);

        measure_idle(argv[1], idle_seconds);
        measure_metrics_write(argv[1]);

        /* Fight: default protection (5 corrections in 10 s), a writer looping flat out for 10 s. */
        write_policy("recheck_interval = 30;\nthp = { enabled = \"madvise\"; };\n");
        pid = start_daemon(argv[1], "fight.log", &ready_ns);
        c0 = cpu_ns(pid), w0 = wakeups(pid);
        long writes = 0;
        for (uint64_t t0 = now_ns(); now_ns() - t0 < 10000000000u; writes++)
                write_word(ENABLED, "always");
        c1 = cpu_ns(pid), w1 = wakeups(pid);
        lines = count_lines("fight.log");
        /* The rate limit's promise: at most 50 inotify wakeups a second while the fight lasts. */
        printf("writer fight, 10 s flat out (%ld foreign writes): daemon CPU %.2f%% of one core, "
               "%.1f wakeups/s, %ld log lines\n",
               writes, (c1 - c0) / 1e7 / 10, (w1 - w0) / 10.0, lines - 1);
        stop_daemon(pid);
        print_loadavg("at the end");
        printf("daemon logs in %s\n", dir);
        return 0;
}
