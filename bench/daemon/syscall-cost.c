/* SPDX-License-Identifier: MIT */
/*
 * syscall-cost [--calls=N] [--knob-writes=N] [--lock-fd=FD] THPGUARDD POLICY [ROUNDS]
 *
 * What thpguardd costs every OTHER process of the node: this program's own
 * getppid() and 1-byte write() to /dev/null, ns per call over a tight loop
 * of N calls each (default 2,000,000), with no daemon, with thpguardd at its
 * defaults and with each hook of the BPF write probe forced
 * (--write-source=bpf --write-probe-hook=fexit|kprobe|syscall-exit), the
 * modes in turn in each of ROUNDS rounds (default 6), so that a busy
 * stretch of the machine falls on all of them alike. Per mode: median and
 * min-max of the rounds and the ratio of the medians to no daemon, and what
 * the daemon got (its log's "write source:" line) beside the BPF links it
 * holds (/proc/PID/fdinfo link_type, or a perf_event fd). A forced hook the
 * kernel refuses is "refused", and is not started again.
 *
 * Then the probe's own cost per knob write, for each hook that attached:
 * with the kernel's BPF run-time statistics on (BPF_ENABLE_STATS, which
 * ends with its fd; kernel.bpf_stats_enabled where that call is missing,
 * put back after), N knob writes (default 10,000) of defrag's own value,
 * and the run_time_ns and run_cnt of the daemon's probe programs
 * (BPF_PROG_GET_FD_BY_ID of the prog_id of its link fds, or
 * BPF_TASK_FD_QUERY of a perf_event fd) before and after.
 *
 * Root. Takes the real-sysfs tests' lock (LOCK, below) unless the caller
 * holds it on an inherited FD (--lock-fd, thpguard-bench), saves every
 * writable knob and puts back what differs at exit, and never leaves a
 * daemon behind (it is ours to stop, and dies with us: PR_SET_PDEATHSIG).
 * Libc and the kernel's uapi headers only. The last lines ("summary ...")
 * are for scripts (tests/distro/guest/report).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THP        "/sys/kernel/mm/transparent_hugepage"
#define KNOB       THP "/defrag"
#define LOCK       "/tmp/thpguard-real-sysfs.lock"
#define LOCK_WAIT  600 /* s */
#define READY_WAIT 300 /* s until the log says the write source: a BPF load is slow under qemu's TCG */
#define MAX_ROUNDS 50
#define MAX_KNOBS  64
#define MAX_LINKS  4

enum { NO_DAEMON, DEFAULTS, FEXIT, KPROBE, SYSCALL_EXIT, N_MODES };
static const char *const mode_name[N_MODES] = { "no daemon", "thpguardd, defaults", "hook fexit forced",
                                                "hook kprobe forced", "hook syscall-exit forced" };
static const char *const mode_hook[N_MODES] = {
        [FEXIT] = "fexit", [KPROBE] = "kprobe", [SYSCALL_EXIT] = "syscall-exit"
};
enum { GETPPID, WRITE_NULL, N_CALLS };

typedef struct Link {
        char type[32]; /* fdinfo link_type, or "perf_event fd" */
        uint32_t prog_id;
} Link;

typedef struct Mode {
        double ns[N_CALLS][MAX_ROUNDS];
        int rounds;
        char source[64]; /* "bpf (fexit)", "fanotify", "none", or "refused (...)" */
        char links[96];  /* the link types it holds */
        bool refused, varied, raw_tp;
} Mode;

static struct {
        char path[PATH_MAX];
        char value[64];
} saved[MAX_KNOBS];
static int n_saved;
static volatile pid_t daemon_pid;
static char dir[] = "/tmp/thpguard-syscall-cost-XXXXXX";
static int stats_sysctl_old = -1;

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long sys_bpf(int cmd, union bpf_attr *attr) {
        return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

/* The whole of a small file, with read() alone (restore() runs in a signal handler too). */
static ssize_t read_small(const char *path, char *buf, size_t size) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -1;
        n = read(fd, buf, size - 1);
        close(fd);
        if (n < 0)
                return -1;
        buf[n] = '\0';
        return n;
}

/* A knob's active value: the bracketed word, or the whole (a number), without the newline. */
static bool knob_value(const char *path, char *out, size_t size) {
        char buf[256], *open_br, *close_br;
        size_t n;

        if (read_small(path, buf, sizeof(buf)) < 0)
                return false;
        open_br = strchr(buf, '[');
        close_br = open_br ? strchr(open_br, ']') : NULL;
        if (open_br && close_br) {
                open_br++;
                n = (size_t)(close_br - open_br);
        } else {
                open_br = buf;
                n = strcspn(buf, "\n");
        }
        if (n == 0 || n >= size)
                return false;
        memcpy(out, open_br, n);
        out[n] = '\0';
        return true;
}

static bool write_word(const char *path, const char *word) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        bool ok;

        if (fd < 0)
                return false;
        ok = write(fd, word, strlen(word)) == (ssize_t)strlen(word);
        close(fd);
        return ok;
}

/* Every regular file with a write bit in the THP directory and one level down: what a policy can name. */
static void save_dir(const char *path, int depth) {
        DIR *d = opendir(path);
        struct dirent *de;

        while (d && (de = readdir(d))) {
                char sub[PATH_MAX];
                struct stat st;

                if (de->d_name[0] == '.' ||
                    (size_t)snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >= sizeof(sub))
                        continue;
                if (lstat(sub, &st) < 0)
                        continue;
                if (S_ISDIR(st.st_mode) && depth > 0)
                        save_dir(sub, depth - 1);
                else if (S_ISREG(st.st_mode) && (st.st_mode & 0222) && n_saved < MAX_KNOBS &&
                         knob_value(sub, saved[n_saved].value, sizeof(saved[n_saved].value))) {
                        memcpy(saved[n_saved].path, sub, sizeof(sub));
                        n_saved++;
                }
        }
        if (d)
                closedir(d);
}

static void stop_daemon(void) {
        pid_t pid = daemon_pid;

        if (pid <= 0)
                return;
        kill(pid, SIGTERM);
        for (int i = 0; i < 3000 && waitpid(pid, NULL, WNOHANG) == 0; i++)
                usleep(10000);
        if (waitpid(pid, NULL, WNOHANG) == 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
        }
        daemon_pid = 0;
}

/* The daemon first (it would put its policy back), then every knob that differs, then the sysctl. */
static void restore(void) {
        char now[64], buf[16];

        stop_daemon();
        for (int i = 0; i < n_saved; i++)
                if (!knob_value(saved[i].path, now, sizeof(now)) || strcmp(now, saved[i].value) != 0)
                        (void)write_word(saved[i].path, saved[i].value);
        if (stats_sysctl_old >= 0) {
                buf[0] = (char)('0' + stats_sysctl_old);
                buf[1] = '\0';
                (void)write_word("/proc/sys/kernel/bpf_stats_enabled", buf);
                stats_sysctl_old = -1;
        }
}

static void on_signal(int sig) {
        restore();
        _exit(128 + sig);
}

static void print_machine(void) {
        struct utsname u;
        char line[256], model[256] = "unknown", load[64] = "";
        FILE *f = fopen("/proc/cpuinfo", "r");

        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
                        snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
                        model[strcspn(model, "\n")] = '\0';
                        break;
                }
        if (f)
                fclose(f);
        uname(&u);
        if (read_small("/proc/loadavg", load, sizeof(load)) > 0)
                load[strcspn(load, " \n")] = '\0';
        printf("machine: %s %s %s, %ld CPUs, %s; load average %s\n", u.sysname, u.release, u.machine,
               sysconf(_SC_NPROCESSORS_ONLN), model, load);
}

/* The lock the real-sysfs tests take, waited for at most LOCK_WAIT s; the fd is kept to the end. */
static int take_lock(int inherited) {
        int fd = inherited >= 0 ? inherited : open(LOCK, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

        if (fd < 0)
                return -1;
        /* An inherited fd is the same open file as the caller's lock: flock() returns at once. */
        for (int i = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; i++) {
                if (errno != EWOULDBLOCK || i >= LOCK_WAIT * 10)
                        return -1;
                if (i == 0)
                        printf("waiting for %s (another real-sysfs run holds it)\n", LOCK);
                usleep(100000);
        }
        (void)fcntl(fd, F_SETFD, FD_CLOEXEC); /* the daemon must not hold it */
        return fd;
}

static double ns_per_call(int call, long calls, int null_fd) {
        uint64_t t0, t1;

        for (int i = 0; i < 1000; i++) /* warm */
                (void)getppid();
        t0 = now_ns();
        if (call == GETPPID)
                for (long i = 0; i < calls; i++)
                        (void)getppid();
        else
                for (long i = 0; i < calls; i++)
                        (void)!write(null_fd, "x", 1);
        t1 = now_ns();
        return (double)(t1 - t0) / (double)calls;
}

/* "bpf (fexit)", "fanotify", "none": what the daemon's "write source:" line says, once it is logged. */
static bool source_of(const char *log, char *out, size_t size) {
        static char buf[65536];
        const char *at, *end;

        if (read_small(log, buf, sizeof(buf)) < 0 || !(at = strstr(buf, "write source: ")))
                return false;
        at += strlen("write source: ");
        if (strncmp(at, "bpf (", 5) == 0 && (end = strchr(at, ')')))
                end++;
        else
                end = at + strcspn(at, " ,:\"\n");
        snprintf(out, size, "%.*s", (int)(end - at), at);
        return true;
}

/* Starts thpguardd in mode m and waits until its log says the write source (it joins after READY=1). */
static int start_daemon(const char *bin, const char *policy, int m, const char *log, char *source,
                        size_t size) {
        /* Emptied here, not in the child: the last round's line must not be read as this one's. */
        int log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        char hook[64];
        pid_t parent = getpid(), pid;

        if (log_fd < 0)
                return -1;

        snprintf(hook, sizeof(hook), "--write-probe-hook=%s", mode_hook[m] ? mode_hook[m] : "auto");
        fflush(stdout);
        pid = fork();
        if (pid < 0) {
                close(log_fd);
                return -1;
        }
        if (pid == 0) {
                int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);

                if (null_fd < 0 || dup2(log_fd, 2) < 0 || dup2(null_fd, 1) < 0 || dup2(null_fd, 0) < 0)
                        _exit(126);
                /* Never outlive us, whatever ends us. */
                if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
                        _exit(126);
                unsetenv("NOTIFY_SOCKET");
                unsetenv("LISTEN_FDS");
                unsetenv("LISTEN_PID");
                unsetenv("LISTEN_FDNAMES");
                if (m == DEFAULTS)
                        execl(bin, bin, "--config", policy, "--log-target=console", (char *)NULL);
                else
                        execl(bin, bin, "--config", policy, "--log-target=console", "--write-source=bpf",
                              hook, (char *)NULL);
                _exit(127);
        }
        daemon_pid = pid;
        close(log_fd);
        for (int i = 0; i < READY_WAIT * 50; i++) {
                if (source_of(log, source, size))
                        return 0;
                if (waitpid(pid, NULL, WNOHANG) == pid) {
                        daemon_pid = 0;
                        fprintf(stderr,
                                "syscall-cost: %s exited before it said its write source; its log (%s):\n",
                                bin, log);
                        return -1;
                }
                usleep(20000);
        }
        fprintf(stderr, "syscall-cost: %s said no write source in %d s (log %s)\n", bin, READY_WAIT, log);
        return -1;
}

/* The BPF links the daemon holds: bpf_link fds (fdinfo link_type, prog_id) and perf_event fds (a kprobe). */
static int daemon_links(pid_t pid, Link links[MAX_LINKS]) {
        char path[64], target[64], info[2048], *at;
        struct dirent *de;
        int n = 0;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
        d = opendir(path);
        while (d && (de = readdir(d)) && n < MAX_LINKS) {
                char fdpath[PATH_MAX];
                ssize_t len;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(fdpath, sizeof(fdpath), "/proc/%d/fd/%s", (int)pid, de->d_name);
                len = readlink(fdpath, target, sizeof(target) - 1);
                if (len <= 0)
                        continue;
                target[len] = '\0';
                memset(&links[n], 0, sizeof(links[n]));
                if (strcmp(target, "anon_inode:bpf_link") == 0) {
                        snprintf(fdpath, sizeof(fdpath), "/proc/%d/fdinfo/%s", (int)pid, de->d_name);
                        if (read_small(fdpath, info, sizeof(info)) < 0)
                                continue;
                        if ((at = strstr(info, "link_type:")))
                                sscanf(at, "link_type: %31s", links[n].type);
                        if ((at = strstr(info, "prog_id:")))
                                sscanf(at, "prog_id: %u", &links[n].prog_id);
                        n++;
                } else if (strcmp(target, "anon_inode:[perf_event]") == 0) {
                        union bpf_attr a;

                        memset(&a, 0, sizeof(a));
                        a.task_fd_query.pid = (uint32_t)pid;
                        a.task_fd_query.fd = (uint32_t)atoi(de->d_name);
                        snprintf(links[n].type, sizeof(links[n].type), "perf_event fd");
                        if (sys_bpf(BPF_TASK_FD_QUERY, &a) == 0)
                                links[n].prog_id = a.task_fd_query.prog_id;
                        n++;
                }
        }
        if (d)
                closedir(d);
        return n;
}

static int prog_stats(uint32_t id, uint64_t *ret_ns, uint64_t *ret_cnt, char name[16]) {
        struct bpf_prog_info info;
        union bpf_attr a;
        int fd;

        memset(&a, 0, sizeof(a));
        a.prog_id = id;
        fd = (int)sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
        if (fd < 0)
                return -errno;
        memset(&info, 0, sizeof(info));
        memset(&a, 0, sizeof(a));
        a.info.bpf_fd = (uint32_t)fd;
        a.info.info_len = sizeof(info);
        a.info.info = (uint64_t)(uintptr_t)&info;
        if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        close(fd);
        *ret_ns = info.run_time_ns;
        *ret_cnt = info.run_cnt;
        memcpy(name, info.name, 16);
        name[15] = '\0';
        return 0;
}

/* Run-time statistics on: an fd that keeps them on (Linux 5.8), else the sysctl, put back by restore(). */
static int stats_on(const char **how) {
        union bpf_attr a;
        char buf[16];
        int fd;

        memset(&a, 0, sizeof(a));
        a.enable_stats.type = BPF_STATS_RUN_TIME;
        fd = (int)sys_bpf(BPF_ENABLE_STATS, &a);
        if (fd >= 0) {
                *how = "BPF_ENABLE_STATS";
                return fd;
        }
        if (read_small("/proc/sys/kernel/bpf_stats_enabled", buf, sizeof(buf)) < 0)
                return -1;
        stats_sysctl_old = buf[0] == '1';
        if (!write_word("/proc/sys/kernel/bpf_stats_enabled", "1"))
                return -1;
        *how = "kernel.bpf_stats_enabled";
        return INT_MAX; /* no fd: the sysctl */
}

static void stats_off(int fd) {
        char buf[2] = { 0, 0 };

        if (fd != INT_MAX) {
                close(fd);
                return;
        }
        buf[0] = (char)('0' + (stats_sysctl_old > 0));
        (void)write_word("/proc/sys/kernel/bpf_stats_enabled", buf);
        stats_sysctl_old = -1;
}

/* The probe's own cost per knob write, in the daemon of mode m: the summary line and a row. */
static void probe_cost(int m, pid_t pid, long writes, char *row, size_t size, char *summary,
                       size_t summary_size) {
        uint64_t ns0[MAX_LINKS] = { 0 }, cnt0[MAX_LINKS] = { 0 }, ns = 0, cnt = 0, t0, t1;
        char value[64], names[64] = "", name[16];
        const char *how = "?";
        Link links[MAX_LINKS];
        int n = daemon_links(pid, links), fd, st, knob_fd;
        size_t at = 0;

        if (!knob_value(KNOB, value, sizeof(value)) || (knob_fd = open(KNOB, O_WRONLY | O_CLOEXEC)) < 0) {
                snprintf(row, size, "cannot open %s: %s", KNOB, strerror(errno));
                return;
        }
        fd = stats_on(&how);
        if (fd < 0) {
                snprintf(row, size, "cannot turn the BPF statistics on: %s", strerror(errno));
                close(knob_fd);
                return;
        }
        for (int i = 0; i < n; i++)
                if ((st = prog_stats(links[i].prog_id, &ns0[i], &cnt0[i], name)) < 0) {
                        snprintf(row, size, "prog %u: %s (root: BPF_PROG_GET_FD_BY_ID needs CAP_SYS_ADMIN)",
                                 links[i].prog_id, strerror(-st));
                        stats_off(fd);
                        close(knob_fd);
                        return;
                }
        t0 = now_ns();
        for (long i = 0; i < writes; i++)
                (void)!pwrite(knob_fd, value, strlen(value), 0);
        t1 = now_ns();
        for (int i = 0; i < n; i++) {
                uint64_t ns1 = 0, cnt1 = 0;

                if (prog_stats(links[i].prog_id, &ns1, &cnt1, name) < 0)
                        continue;
                ns += ns1 - ns0[i];
                cnt += cnt1 - cnt0[i];
                if (at < sizeof(names))
                        at += (size_t)snprintf(names + at, sizeof(names) - at, "%s%s", i ? "+" : "", name);
        }
        stats_off(fd);
        close(knob_fd);
        if (n == 0) {
                snprintf(row, size, "no BPF link found in /proc/%d/fd", (int)pid);
                return;
        }
        snprintf(row, size, "%-13s %-28s %9llu %10.2f %8.1f %13.1f %11.2f", mode_hook[m], names,
                 (unsigned long long)cnt, (double)cnt / (double)writes, cnt ? (double)ns / (double)cnt : 0.0,
                 (double)ns / (double)writes, (double)(t1 - t0) / (double)writes / 1000.0);
        snprintf(summary, summary_size,
                 "summary probe hook=%s writes=%ld runs=%llu ns_per_run=%.1f ns_per_write=%.1f stats=%s",
                 mode_hook[m], writes, (unsigned long long)cnt, cnt ? (double)ns / (double)cnt : 0.0,
                 (double)ns / (double)writes, how);
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

static double median_of(const double *v, int n, double *ret_min, double *ret_max) {
        double s[MAX_ROUNDS];

        memcpy(s, v, sizeof(double) * (size_t)n);
        qsort(s, (size_t)n, sizeof(double), cmp_double);
        *ret_min = s[0];
        *ret_max = s[n - 1];
        return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void usage(void) {
        fprintf(stderr, "usage: syscall-cost [--calls=N] [--knob-writes=N] [--lock-fd=FD] THPGUARDD POLICY "
                        "[ROUNDS]\n");
        exit(2);
}

int main(int argc, char **argv) {
        static const struct option options[] = { { "calls", required_argument, NULL, 'c' },
                                                 { "knob-writes", required_argument, NULL, 'w' },
                                                 { "lock-fd", required_argument, NULL, 'l' },
                                                 { NULL, 0, NULL, 0 } };
        static Mode mode[N_MODES];
        static char probe_rows[N_MODES][256], probe_summary[N_MODES][256];
        long calls = 2000000, writes = 10000, rounds = 6;
        int lock_fd = -1, null_fd, opt;
        const char *bin, *policy;
        char log[sizeof(dir) + 32];

        while ((opt = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (opt) {
                case 'c':
                        calls = atol(optarg);
                        break;
                case 'w':
                        writes = atol(optarg);
                        break;
                case 'l':
                        lock_fd = atoi(optarg);
                        break;
                default:
                        usage();
                }
        if (argc - optind < 2 || argc - optind > 3)
                usage();
        bin = argv[optind];
        policy = argv[optind + 1];
        if (argc - optind == 3)
                rounds = atol(argv[optind + 2]);
        if (calls < 1000 || writes < 1 || rounds < 1 || rounds > MAX_ROUNDS)
                usage();
        if (access(bin, X_OK) < 0 || access(policy, R_OK) < 0) {
                fprintf(stderr, "syscall-cost: %s: %s\n", access(bin, X_OK) < 0 ? bin : policy,
                        strerror(errno));
                return 1;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        print_machine();
        if (take_lock(lock_fd) < 0) {
                fprintf(stderr, "syscall-cost: cannot take %s: %s\n", LOCK, strerror(errno));
                return 1;
        }
        null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null_fd < 0 || !mkdtemp(dir)) {
                perror("syscall-cost");
                return 1;
        }
        save_dir(THP, 1);
        atexit(restore);
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        signal(SIGHUP, on_signal);
        printf("%s with %s; %ld rounds of the modes in turn (no daemon, defaults, fexit, kprobe, "
               "syscall-exit), "
               "%ld calls a loop; %d knobs saved\n",
               bin, policy, rounds, calls, n_saved);

        for (int r = 0; r < rounds; r++) {
                printf("round %d:", r + 1);
                for (int m = 0; m < N_MODES; m++) {
                        Mode *o = &mode[m];
                        char source[64] = "-";

                        if (o->refused)
                                continue;
                        if (m != NO_DAEMON) {
                                Link links[MAX_LINKS];
                                size_t at = 0;
                                int n;

                                snprintf(log, sizeof(log), "%s/%d.log", dir, m);
                                if (start_daemon(bin, policy, m, log, source, sizeof(source)) < 0) {
                                        char cmd[sizeof(log) + 16];
                                        snprintf(cmd, sizeof(cmd), "tail -n 20 %s >&2", log);
                                        (void)!system(cmd);
                                        return 1;
                                }
                                n = daemon_links(daemon_pid, links);
                                o->links[0] = '\0';
                                /* "raw_tracepoint(2)": each type once, with its count. */
                                for (int i = 0; i < n && at < sizeof(o->links); i++) {
                                        int same = 0, first = 1;

                                        for (int j = 0; j < n; j++)
                                                if (strcmp(links[j].type, links[i].type) == 0) {
                                                        same++;
                                                        first &= j >= i;
                                                }
                                        o->raw_tp |= strcmp(links[i].type, "raw_tracepoint") == 0;
                                        if (!first)
                                                continue;
                                        at += (size_t)snprintf(o->links + at, sizeof(o->links) - at, "%s%s",
                                                               at ? "," : "", links[i].type);
                                        if (same > 1 && at < sizeof(o->links))
                                                at += (size_t)snprintf(o->links + at, sizeof(o->links) - at,
                                                                       "(%d)", same);
                                }
                                if (m != DEFAULTS) {
                                        char want[64];
                                        snprintf(want, sizeof(want), "bpf (%s)", mode_hook[m]);
                                        if (strcmp(source, want) != 0) {
                                                o->refused = true;
                                                snprintf(o->source, sizeof(o->source), "refused (got %.40s)",
                                                         source);
                                                stop_daemon();
                                                printf(" %s refused;", mode_hook[m]);
                                                continue;
                                        }
                                }
                        }
                        if (r == 0)
                                snprintf(o->source, sizeof(o->source), "%s", source);
                        else if (strcmp(o->source, source) != 0)
                                o->varied = true;
                        for (int c = 0; c < N_CALLS; c++)
                                o->ns[c][o->rounds] = ns_per_call(c, calls, null_fd);
                        printf(" %s %.1f/%.1f;",
                               m == NO_DAEMON  ? "none"
                               : m == DEFAULTS ? "defaults"
                                               : mode_hook[m],
                               o->ns[GETPPID][o->rounds], o->ns[WRITE_NULL][o->rounds]);
                        o->rounds++;
                        /* The probe's own cost, once per forced hook, with this daemon. */
                        if (r == 0 && mode_hook[m])
                                probe_cost(m, daemon_pid, writes, probe_rows[m], sizeof(probe_rows[m]),
                                           probe_summary[m], sizeof(probe_summary[m]));
                        stop_daemon();
                }
                printf(" (ns per getppid()/write())\n");
        }

        double med[N_MODES][N_CALLS] = { { 0 } }, lo[N_MODES][N_CALLS] = { { 0 } },
               hi[N_MODES][N_CALLS] = { { 0 } };
        for (int m = 0; m < N_MODES; m++)
                for (int c = 0; c < N_CALLS && mode[m].rounds > 0; c++)
                        med[m][c] = median_of(mode[m].ns[c], mode[m].rounds, &lo[m][c], &hi[m][c]);
        printf("\nns per call for this process, median (min-max) of the rounds, the medians' ratio to no "
               "daemon, and the minimums' (the least disturbed round of each):\n");
        printf("%-26s %-40s %-40s %-40s\n", "mode", "write source (BPF links held)", "getppid()",
               "write() of 1 byte to /dev/null");
        for (int m = 0; m < N_MODES; m++) {
                Mode *o = &mode[m];
                char cell[N_CALLS][96], src[96];

                snprintf(src, sizeof(src), "%s%s%s%s%s", m == NO_DAEMON ? "-" : o->source,
                         o->links[0] && !o->refused ? " [" : "", o->refused ? "" : o->links,
                         o->links[0] && !o->refused ? "]" : "", o->varied ? " (varied)" : "");
                if (o->rounds == 0) {
                        printf("%-26s %-40s %-40s %-40s\n", mode_name[m], src, "refused", "refused");
                        continue;
                }
                for (int c = 0; c < N_CALLS; c++)
                        snprintf(cell[c], sizeof(cell[c]), "%.1f (%.1f-%.1f) %.2fx, min %.2fx", med[m][c],
                                 lo[m][c], hi[m][c], med[m][c] / med[NO_DAEMON][c],
                                 lo[m][c] / lo[NO_DAEMON][c]);
                printf("%-26s %-40s %-40s %-40s\n", mode_name[m], src, cell[GETPPID], cell[WRITE_NULL]);
        }
        printf(
            "\nthe probe's own cost: %ld writes of %s's own value, run_time_ns and run_cnt of the daemon's "
            "probe programs (BPF statistics on for those writes alone):\n",
            writes, KNOB);
        printf("%-13s %-28s %9s %10s %8s %13s %11s\n", "hook", "programs", "runs", "runs/write", "ns/run",
               "ns/knob write", "us/write()");
        for (int m = FEXIT; m < N_MODES; m++)
                if (mode[m].refused || !probe_rows[m][0])
                        printf("%-13s %s\n", mode_hook[m], mode[m].refused ? "refused" : "(not measured)");
                else
                        printf("%s\n", probe_rows[m]);

        /* For scripts: one line per mode, then per measured hook. */
        for (int m = 0; m < N_MODES; m++) {
                Mode *o = &mode[m];
                char src[64];
                int i = 0;

                if (o->rounds == 0) {
                        printf("summary mode=%s source=refused\n", mode_hook[m]);
                        continue;
                }
                snprintf(src, sizeof(src), "%s", m == NO_DAEMON ? "-" : o->source);
                for (char *p = src; *p; p++)
                        if (*p != ' ')
                                src[i++] = *p;
                src[i] = '\0';
                printf("summary mode=%s source=%s links=%s raw_tracepoint=%s getppid_ns=%.1f getppid_x=%.2f "
                       "getppid_min_x=%.2f write_ns=%.1f write_x=%.2f write_min_x=%.2f\n",
                       m == NO_DAEMON  ? "none"
                       : m == DEFAULTS ? "defaults"
                                       : mode_hook[m],
                       src, o->links[0] ? o->links : "-", o->raw_tp ? "yes" : "no", med[m][GETPPID],
                       med[m][GETPPID] / med[NO_DAEMON][GETPPID], lo[m][GETPPID] / lo[NO_DAEMON][GETPPID],
                       med[m][WRITE_NULL], med[m][WRITE_NULL] / med[NO_DAEMON][WRITE_NULL],
                       lo[m][WRITE_NULL] / lo[NO_DAEMON][WRITE_NULL]);
        }
        for (int m = FEXIT; m < N_MODES; m++)
                if (probe_summary[m][0])
                        printf("%s\n", probe_summary[m]);
        restore();
        for (int m = DEFAULTS; m < N_MODES; m++) {
                snprintf(log, sizeof(log), "%s/%d.log", dir, m);
                (void)unlink(log);
        }
        (void)rmdir(dir);
        return 0;
}
