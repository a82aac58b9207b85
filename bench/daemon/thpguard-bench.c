/* SPDX-License-Identifier: MIT */
/*
 * thpguard-bench THPGUARDD [IDLE_SECONDS]
 *
 * Measures the daemon on this machine's real THP sysfs and prints figures;
 * it asserts nothing. Needs root; saves and restores every knob its policies
 * manage, and holds the same lock as the real-sysfs tests.
 *
 *  - exec -> READY=1 over 20 starts, through our own NOTIFY_SOCKET, beside
 *    the floor: this program re-executed to do nothing but send READY=1;
 *  - drift latency: 1000 foreign writes per knob, each timed until the file
 *    reads the policy's value again (fight protection off);
 *  - CPU per full recheck: the work alone (10,000 rechecks in this process
 *    through the daemon's own read-and-compare), and per recheck wakeup of
 *    the daemon from /proc/PID/schedstat, beside the floor: an sd-event
 *    loop whose 1 s timer does nothing;
 *  - wakeups while idle (context switches over IDLE_SECONDS, default 60);
 *  - peak RSS (VmHWM);
 *  - a writer looping flat out for 10 s: daemon CPU and log lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "thpguard/compliance.h"
#include "thpguard/diag.h"
#include "thpguard/event-util.h"
#include "thpguard/policy.h"
#include "thpguard/sysfs.h"

#define THP                 "/sys/kernel/mm/transparent_hugepage"
#define ENABLED             THP "/enabled"
#define DRIFTS              1000
#define STARTS              20
#define RECHECKS_IN_PROCESS 10000

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

/* Starts argv with stderr to DIR/logname and waits for its READY=1 on our NOTIFY_SOCKET. */
static pid_t start_argv(char *const argv[], const char *logname, uint64_t *ret_ready_ns) {
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
                execv(argv[0], argv);
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
        uint64_t ptes_max;

        if (policy_load(conf, &diag, &p) < 0 || p->n_knobs > 16 || sysfs_new("/sys", &s) < 0) {
                diag_print(&diag, stderr);
                return -1;
        }
        ptes_max = knob_ptes_max_read(s);
        for (size_t i = 0; i < p->n_knobs; i++)
                h[i] = SYSFS_HANDLE_CLOSED;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        for (int n = 0; n < RECHECKS_IN_PROCESS; n++)
                for (size_t i = 0; i < p->n_knobs; i++) {
                        KnobStatus st;
                        knob_status_read(s, &p->knobs[i], &h[i], ptes_max, &st);
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
        uint64_t lat[DRIFTS], lat_ret[DRIFTS], ready[STARTS], floor_ready[STARTS], ready_ns, c0, c1, f0, f1;
        int idle_seconds = argc > 2 ? atoi(argv[2]) : 60, lock;
        char conf[256], cur[32];
        long w0, w1, fw0, fw1, lines;
        pid_t pid, floor_pid;

        if (argc > 1 && strncmp(argv[1], "--floor-", 8) == 0)
                return run_floor(argv[1]);
        if (argc < 2) {
                fprintf(stderr, "usage: thpguard-bench THPGUARDD [IDLE_SECONDS]\n");
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (!mkdtemp(dir))
                return perror("mkdtemp"), 1;
        snprintf(conf, sizeof(conf), "%s/thpguard.conf", dir);
        lock = open("/tmp/thpguard-real-sysfs.lock", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        flock(lock, LOCK_EX);
        save();
        atexit(restore);
        print_machine();

        /* Latency: fight protection off, or 1000 drifts would be a fight. */
        write_word(ENABLED, "madvise");
        write_word(THP "/defrag", "madvise");
        write_policy("recheck_interval = 30; fight_threshold = 0;\nthp = { enabled = \"madvise\"; defrag = "
                     "\"madvise\"; };\n");
        ready_times((char *const[]){ argv[1], "--config", conf, "--log-target=console", NULL }, ready);
        ready_times((char *const[]){ "/proc/self/exe", "--floor-ready", NULL }, floor_ready);
        printf("exec -> READY=1 over %d starts: min %.2f ms, median %.2f ms, max %.2f ms; "
               "a program that only sends READY=1: median %.2f ms\n",
               STARTS, ready[0] / 1e6, ready[STARTS / 2] / 1e6, ready[STARTS - 1] / 1e6,
               floor_ready[STARTS / 2] / 1e6);

        pid = start_daemon(argv[1], "latency.log", &ready_ns);
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
                int ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

                if (kfd < 0 || ino < 0 || inotify_add_watch(ino, THP, IN_MODIFY) < 0)
                        return perror(drift[k].path), 1;
                for (int i = 0; i < DRIFTS; i++) {
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
                        uint64_t t0 = now_ns(), t1, t2;
                        write_word(drift[k].path, drift[k].foreign);
                        t1 = now_ns();
                        for (;;) {
                                read_active(kfd, cur, sizeof(cur));
                                if (strcmp(cur, drift[k].desired) == 0 || now_ns() - t0 >= 1000000000u)
                                        break;
                                wait_modify(ino, t0);
                        }
                        t2 = now_ns();
                        lat[i] = t2 - t0;
                        lat_ret[i] = t2 - t1;
                        usleep(200); /* a drift, not a flood: keep below the inotify rate limit */
                        drain(ino);  /* the events of this drift's two writes */
                }
                close(ino);
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
        printf("peak RSS (VmHWM): %ld kB\n", status_field(pid, "VmHWM:"));
        stop_daemon(floor_pid);
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
        printf("daemon logs in %s\n", dir);
        return 0;
}
