/* SPDX-License-Identifier: MIT */
/*
 * thpguard-impact: the small programs behind bench/impact/run. Each prints
 * one line of key=value figures on stdout; it asserts nothing.
 *
 *   heap MIB SECONDS   A Go-like heap: touch MIB MiB, return 3 of every 4 pages
 *                      with MADV_DONTNEED (what Go's scavenger does), then hold
 *                      for SECONDS while sampling this process's RSS and
 *                      AnonHugePages (smaps_rollup, every 100 ms) and timing
 *                      how long `enabled` reads "always" (inotify).
 *   cow MIB            Copy-on-write after fork: touch MIB MiB, fork, write one
 *                      byte in each 2 MiB of the parent while the child holds
 *                      its copy, and report how much memory those writes copied
 *                      (the Private_Dirty of the parent's mapping grows by what
 *                      was copied).
 *   writer WORD MS     Write WORD to `enabled` every MS milliseconds until
 *                      SIGTERM or SIGINT; prints the number of writes.
 *   peak PID [PORT S]  Sample PID's RSS and AnonHugePages every 100 ms until
 *                      SIGTERM or SIGINT or until PID exits; with PORT, also
 *                      send BGSAVE to the Redis server on 127.0.0.1:PORT every
 *                      S seconds, and read its INFO before each BGSAVE and at
 *                      the end for the longest fork, the largest
 *                      copy-on-write of one save and the longest save.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ENABLED   "/sys/kernel/mm/transparent_hugepage/enabled"
#define PAGE      4096UL
#define HPAGE     (2UL << 20)
#define SAMPLE_MS 100

static volatile sig_atomic_t stop;

static void on_stop(int sig) {
        stop = 1;
}

static void catch_stop(void) {
        struct sigaction sa = { .sa_handler = on_stop };
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
}

static void die(const char *what) {
        fprintf(stderr, "thpguard-impact: %s: %s\n", what, strerror(errno));
        exit(1);
}

static uint64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t now_us(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static unsigned long parse_ulong(const char *s, const char *what) {
        char *end;
        unsigned long v;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || end == s || *end || v == 0) {
                fprintf(stderr, "thpguard-impact: %s: not a positive number: %s\n", what, s);
                exit(2);
        }
        return v;
}

typedef struct {
        long rss_kb, ahp_kb, private_dirty_kb;
} Mem;

/* One process's figures from /proc/PID/smaps_rollup; -1 when it is gone. */
static int mem_read(const char *pid, Mem *ret) {
        char path[64], line[256];
        Mem m = { -1, -1, -1 };
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%s/smaps_rollup", pid);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                if (strncmp(line, "Rss:", 4) == 0)
                        m.rss_kb = strtol(line + 4, NULL, 10);
                else if (strncmp(line, "AnonHugePages:", 14) == 0)
                        m.ahp_kb = strtol(line + 14, NULL, 10);
                else if (strncmp(line, "Private_Dirty:", 14) == 0)
                        m.private_dirty_kb = strtol(line + 14, NULL, 10);
        }
        fclose(f);
        if (m.rss_kb < 0 || m.ahp_kb < 0)
                return -ENODATA;
        *ret = m;
        return 0;
}

static Mem mem_self(void) {
        Mem m;
        if (mem_read("self", &m) < 0)
                die("/proc/self/smaps_rollup");
        return m;
}

/* The figures of the one mapping that contains addr, from /proc/self/smaps: the rest of the process
 * (allocator arenas, a sanitizer's shadow) does not blur them. */
static Mem mem_vma(const void *addr) {
        char line[256];
        Mem m = { -1, -1, -1 };
        bool in = false;
        FILE *f = fopen("/proc/self/smaps", "re");

        if (!f)
                die("/proc/self/smaps");
        while (fgets(line, sizeof(line), f)) {
                unsigned long start, end;
                if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, '-') < strchr(line, ' ')) {
                        if (in)
                                break;
                        in = (uintptr_t)addr >= start && (uintptr_t)addr < end;
                } else if (in && strncmp(line, "Rss:", 4) == 0)
                        m.rss_kb = strtol(line + 4, NULL, 10);
                else if (in && strncmp(line, "AnonHugePages:", 14) == 0)
                        m.ahp_kb = strtol(line + 14, NULL, 10);
                else if (in && strncmp(line, "Private_Dirty:", 14) == 0)
                        m.private_dirty_kb = strtol(line + 14, NULL, 10);
        }
        fclose(f);
        if (m.rss_kb < 0 || m.ahp_kb < 0 || m.private_dirty_kb < 0) {
                errno = ENODATA;
                die("/proc/self/smaps");
        }
        return m;
}

/* 2 MiB-aligned anonymous memory, so that every 2 MiB of it can be one huge page. */
static char *map_aligned(size_t size) {
        char *p = mmap(NULL, size + HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        char *a;
        if (p == MAP_FAILED)
                die("mmap");
        a = (char *)(((uintptr_t)p + HPAGE - 1) & ~(HPAGE - 1));
        if (a > p)
                munmap(p, (size_t)(a - p));
        munmap(a + size, (size_t)(p + HPAGE - a));
        return a;
}

static void touch(char *p, size_t size) {
        for (size_t off = 0; off < size; off += PAGE)
                p[off] = 1;
}

/* Whether `enabled` reads "always", through an fd kept open (pread re-reads it). */
static bool enabled_is_always(int fd) {
        char buf[128];
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        return strstr(buf, "[always]") != NULL;
}

static int cmd_heap(unsigned long mib, unsigned long seconds) {
        size_t size = mib << 20;
        char *heap = map_aligned(size);
        Mem touched, freed, end, peak;
        uint64_t start, deadline, next_sample, always_since = 0, always_us = 0;
        unsigned long flips = 0;
        bool always;
        int kfd, ifd;

        kfd = open(ENABLED, O_RDONLY | O_CLOEXEC);
        ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (kfd < 0 || ifd < 0 || inotify_add_watch(ifd, ENABLED, IN_MODIFY) < 0)
                die(ENABLED);

        touch(heap, size);
        touched = mem_self();
        /* Go's scavenger returns runs of pages; keep the first of every four. */
        for (size_t off = 0; off < size; off += 4 * PAGE)
                if (madvise(heap + off + PAGE, 3 * PAGE, MADV_DONTNEED) < 0)
                        die("madvise");
        freed = peak = mem_self();

        start = now_us();
        deadline = start + seconds * 1000000;
        next_sample = start + SAMPLE_MS * 1000;
        always = enabled_is_always(kfd);
        if (always)
                always_since = start, flips++;
        for (uint64_t now = start; now < deadline; now = now_us()) {
                uint64_t until = next_sample < deadline ? next_sample : deadline;
                struct pollfd pfd = { .fd = ifd, .events = POLLIN };
                char ev[4096];

                if (poll(&pfd, 1, (int)(until > now ? (until - now + 999) / 1000 : 0)) > 0) {
                        bool a;
                        while (read(ifd, ev, sizeof(ev)) > 0)
                                ;
                        a = enabled_is_always(kfd);
                        now = now_us();
                        if (a && !always)
                                always_since = now, flips++;
                        else if (!a && always)
                                always_us += now - always_since;
                        always = a;
                }
                if (now_us() >= next_sample) {
                        Mem m = mem_self();
                        if (m.rss_kb > peak.rss_kb)
                                peak.rss_kb = m.rss_kb;
                        if (m.ahp_kb > peak.ahp_kb)
                                peak.ahp_kb = m.ahp_kb;
                        next_sample += SAMPLE_MS * 1000;
                }
        }
        if (always)
                always_us += now_us() - always_since;
        end = mem_self();
        if (end.rss_kb > peak.rss_kb)
                peak.rss_kb = end.rss_kb;
        if (end.ahp_kb > peak.ahp_kb)
                peak.ahp_kb = end.ahp_kb;

        printf(
            "live_kb=%lu rss_touched_kb=%ld rss_freed_kb=%ld ahp_freed_kb=%ld rss_end_kb=%ld "
            "ahp_end_kb=%ld rss_peak_kb=%ld ahp_peak_kb=%ld hold_us=%llu always_us=%llu always_flips=%lu\n",
            (unsigned long)(size / 4 / 1024), touched.rss_kb, freed.rss_kb, freed.ahp_kb, end.rss_kb,
            end.ahp_kb, peak.rss_kb, peak.ahp_kb, (unsigned long long)(now_us() - start),
            (unsigned long long)always_us, flips);
        return 0;
}

static int cmd_cow(unsigned long mib) {
        size_t size = mib << 20;
        char *p = map_aligned(size);
        unsigned long writes = 0;
        Mem before, forked, after;
        uint64_t t0, us;
        int pipefd[2];
        char c;
        pid_t child;

        touch(p, size);
        before = mem_vma(p);
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                die("pipe");
        child = fork();
        if (child < 0)
                die("fork");
        if (child == 0) {
                /* Hold the shared copy until the parent is done. */
                close(pipefd[1]);
                while (read(pipefd[0], &c, 1) > 0)
                        ;
                _exit(0);
        }
        close(pipefd[0]);
        forked = mem_vma(p);
        t0 = now_us();
        for (size_t off = PAGE; off < size; off += HPAGE, writes++)
                p[off] = 2;
        us = now_us() - t0;
        after = mem_vma(p);
        close(pipefd[1]);
        waitpid(child, NULL, 0);

        printf("writes=%lu ahp_before_kb=%ld ahp_after_kb=%ld copied_kb=%ld copied_per_write_kb=%.1f "
               "us_per_write=%.1f\n",
               writes, before.ahp_kb, after.ahp_kb, after.private_dirty_kb - forked.private_dirty_kb,
               writes ? (double)(after.private_dirty_kb - forked.private_dirty_kb) / (double)writes : 0.0,
               writes ? (double)us / (double)writes : 0.0);
        return 0;
}

static void sleep_until_ms(uint64_t t) {
        uint64_t now = now_ms();
        if (t > now) {
                struct timespec ts = { .tv_sec = (time_t)((t - now) / 1000),
                                       .tv_nsec = (long)((t - now) % 1000) * 1000000 };
                nanosleep(&ts, NULL);
        }
}

static int cmd_writer(const char *word, unsigned long period_ms) {
        unsigned long writes = 0;
        uint64_t next = now_ms();

        catch_stop();
        while (!stop) {
                int fd = open(ENABLED, O_WRONLY | O_CLOEXEC);
                if (fd < 0 || write(fd, word, strlen(word)) < 0)
                        die(ENABLED);
                close(fd);
                writes++;
                next += period_ms;
                sleep_until_ms(next);
        }
        printf("writes=%lu\n", writes);
        return 0;
}

/* Sends one RESP command to 127.0.0.1:PORT and reads the whole reply (a status line or one bulk string). */
static ssize_t redis_command(unsigned long port, const char *cmd, char *reply, size_t size) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
        size_t got = 0, want = 0;
        int fd;

        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || write(fd, cmd, strlen(cmd)) < 0) {
                close(fd);
                return -errno;
        }
        while (got < size - 1) {
                ssize_t n = read(fd, reply + got, size - 1 - got);
                char *eol;
                if (n <= 0)
                        break;
                got += (size_t)n;
                reply[got] = '\0';
                eol = strstr(reply, "\r\n");
                if (!eol)
                        continue;
                if (reply[0] != '$')
                        break;
                if (!want)
                        want = (size_t)(eol - reply) + 2 + strtoul(reply + 1, NULL, 10) + 2;
                if (got >= want)
                        break;
        }
        reply[got] = '\0';
        close(fd);
        return (ssize_t)got;
}

static long info_field(const char *info, const char *key) {
        const char *p = strstr(info, key);
        return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

typedef struct {
        unsigned long bgsaves, refused;
        long fork_usec_max, cow_kb_max, bgsave_s_max;
} RedisFigures;

/* The largest fork time and copy-on-write of any save so far, from INFO. */
static void redis_note_info(unsigned long port, RedisFigures *r) {
        static char info[65536];
        long v;
        if (redis_command(port, "*1\r\n$4\r\nINFO\r\n", info, sizeof(info)) <= 0)
                return;
        v = info_field(info, "\nlatest_fork_usec:");
        if (v > r->fork_usec_max)
                r->fork_usec_max = v;
        v = info_field(info, "\nrdb_last_cow_size:");
        if (v >= 0 && v / 1024 > r->cow_kb_max)
                r->cow_kb_max = v / 1024;
        v = info_field(info, "\nrdb_last_bgsave_time_sec:");
        if (v > r->bgsave_s_max)
                r->bgsave_s_max = v;
}

static int cmd_peak(const char *pid, unsigned long port, unsigned long every_s) {
        Mem peak = { 0, 0, 0 }, m;
        RedisFigures r = { 0, 0, 0, 0, 0 };
        uint64_t next_bgsave = now_ms() + every_s * 1000;

        catch_stop();
        while (!stop && mem_read(pid, &m) == 0) {
                if (m.rss_kb > peak.rss_kb)
                        peak.rss_kb = m.rss_kb;
                if (m.ahp_kb > peak.ahp_kb)
                        peak.ahp_kb = m.ahp_kb;
                if (port && now_ms() >= next_bgsave) {
                        char reply[256];
                        redis_note_info(port, &r);
                        if (redis_command(port, "*1\r\n$6\r\nBGSAVE\r\n", reply, sizeof(reply)) > 0 &&
                            reply[0] == '+')
                                r.bgsaves++;
                        else
                                r.refused++;
                        next_bgsave += every_s * 1000;
                }
                sleep_until_ms(now_ms() + SAMPLE_MS);
        }
        if (port)
                redis_note_info(port, &r);
        printf("rss_peak_kb=%ld ahp_peak_kb=%ld bgsaves=%lu bgsaves_refused=%lu fork_usec_max=%ld "
               "cow_kb_max=%ld bgsave_s_max=%ld\n",
               peak.rss_kb, peak.ahp_kb, r.bgsaves, r.refused, r.fork_usec_max, r.cow_kb_max,
               r.bgsave_s_max);
        return 0;
}

static int usage(void) {
        fputs(
            "usage: thpguard-impact heap MIB SECONDS | cow MIB | writer WORD MS | peak PID [PORT SECONDS]\n",
            stderr);
        return 2;
}

int main(int argc, char *argv[]) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc == 4 && strcmp(argv[1], "heap") == 0)
                return cmd_heap(parse_ulong(argv[2], "MIB"), parse_ulong(argv[3], "SECONDS"));
        if (argc == 3 && strcmp(argv[1], "cow") == 0)
                return cmd_cow(parse_ulong(argv[2], "MIB"));
        if (argc == 4 && strcmp(argv[1], "writer") == 0)
                return cmd_writer(argv[2], parse_ulong(argv[3], "MS"));
        if (argc == 3 && strcmp(argv[1], "peak") == 0)
                return cmd_peak(argv[2], 0, 0);
        if (argc == 5 && strcmp(argv[1], "peak") == 0)
                return cmd_peak(argv[2], parse_ulong(argv[3], "PORT"), parse_ulong(argv[4], "SECONDS"));
        return usage();
}
