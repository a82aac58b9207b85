/* SPDX-License-Identifier: MIT */
#include "thpguard/writer-feed.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "thpguard/writer-events.h"

/* The nice value the lookups' thread sets itself: see feed_thread(). */
#define WRITER_FEED_NICE 10

/* A flat-out writer's events merge in the kernel: a few slots are plenty. */
#define FEED_SLOTS 16

struct WriterFeed {
        int group_fd;
        int ready_fd; /* eventfd: results are queued */
        int stop_fd;  /* eventfd: the thread must end */
        char proc_root[4096];
        pid_t self_pid;
        pthread_t thread;
        bool started;

        pthread_mutex_t lock;
        pthread_cond_t idle; /* broadcast when busy turns false */
        bool busy;           /* the thread holds events it has not queued yet */
        bool overflow;
        uint64_t pushed; /* results queued since the start */
        WriterSeen slot[FEED_SLOTS];
        size_t head, n;
};

static size_t queued_bytes(int fd) {
        int n = 0;

        return ioctl(fd, FIONREAD, &n) < 0 || n < 0 ? 0 : (size_t)n;
}

/* Under the lock. The queue keeps the newest: the last writer of a knob is what a record names. */
static void push(WriterFeed *f, const WriterSeen *s) {
        if (f->n == FEED_SLOTS) {
                f->head = (f->head + 1) % FEED_SLOTS;
                f->n--;
                f->overflow = true;
        }
        f->slot[(f->head + f->n) % FEED_SLOTS] = *s;
        f->n++;
        f->pushed++;
        pthread_cond_broadcast(&f->idle);
}

static void look_up_batch(WriterFeed *f, const char *buf, size_t len) {
        WriterSeen seen;
        pid_t cached = -1;
        size_t offset = 0;
        WriterEvent ev;
        int r;

        while ((r = writer_events_next(buf, len, &offset, &ev)) > 0) {
                struct stat st;
                bool mapped;

                if (ev.overflow) {
                        pthread_mutex_lock(&f->lock);
                        f->overflow = true;
                        pthread_mutex_unlock(&f->lock);
                        continue;
                }
                mapped = ev.fd >= 0 && fstat(ev.fd, &st) == 0;
                if (ev.fd >= 0)
                        close(ev.fd);
                if (!mapped || ev.pid == f->self_pid)
                        continue;
                /* One lookup per writer and batch: a loop's events name the same pid. */
                if (ev.pid != cached) {
                        if (writer_lookup(f->proc_root, ev.pid, &seen.writer) < 0)
                                seen.writer = (Writer){ .pid = ev.pid, .exited = true };
                        cached = ev.pid;
                }
                seen.dev = st.st_dev;
                seen.ino = st.st_ino;
                pthread_mutex_lock(&f->lock);
                push(f, &seen);
                pthread_mutex_unlock(&f->lock);
        }
}

static void *feed_thread(void *userdata) {
        WriterFeed *f = userdata;
        char buf[4096] __attribute__((aligned(8)));
        Writer warm;

        /*
         * Below the loop's thread: when both wake on one write and a CPU is
         * short, the correction goes first. Raising one's own nice value
         * needs no capability; a failure only leaves it equal.
         */
        (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), WRITER_FEED_NICE);
        /* The first lookup pays for cold code and page faults; pay it now, not on a writer's time. */
        (void)writer_lookup(f->proc_root, f->self_pid, &warm);
        for (;;) {
                struct pollfd p[] = { { .fd = f->group_fd, .events = POLLIN },
                                      { .fd = f->stop_fd, .events = POLLIN } };
                ssize_t n;

                if (poll(p, 2, -1) < 0 && errno != EINTR)
                        break;
                if (p[1].revents)
                        break;
                if (!(p[0].revents & POLLIN))
                        continue;
                pthread_mutex_lock(&f->lock);
                f->busy = true;
                pthread_mutex_unlock(&f->lock);

                n = read(f->group_fd, buf, sizeof(buf));
                if (n > 0)
                        look_up_batch(f, buf, (size_t)n);

                pthread_mutex_lock(&f->lock);
                if (queued_bytes(f->group_fd) == 0) {
                        f->busy = false;
                        pthread_cond_broadcast(&f->idle);
                }
                pthread_mutex_unlock(&f->lock);
                if (n > 0)
                        (void)eventfd_write(f->ready_fd, 1);
        }
        return NULL;
}

int writer_feed_new(int group_fd, const char *proc_root, pid_t self_pid, WriterFeed **ret) {
        _cleanup_(writer_feed_freep) WriterFeed *f = NULL;
        pthread_condattr_t ca;
        int r;

        f = calloc(1, sizeof(*f));
        if (!f) {
                close(group_fd);
                return -ENOMEM;
        }
        f->group_fd = group_fd;
        f->ready_fd = f->stop_fd = -1;
        f->self_pid = self_pid;
        snprintf(f->proc_root, sizeof(f->proc_root), "%s", proc_root);
        pthread_mutex_init(&f->lock, NULL);
        /* settle() waits by CLOCK_MONOTONIC: a clock step must not stretch or cut it. */
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&f->idle, &ca);
        pthread_condattr_destroy(&ca);

        f->ready_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        f->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (f->ready_fd < 0 || f->stop_fd < 0)
                return -errno;
        r = pthread_create(&f->thread, NULL, feed_thread, f);
        if (r != 0)
                return -r;
        f->started = true;
        *ret = TAKE_PTR(f);
        return 0;
}

WriterFeed *writer_feed_free(WriterFeed *f) {
        if (!f)
                return NULL;
        if (f->started) {
                (void)eventfd_write(f->stop_fd, 1);
                pthread_join(f->thread, NULL);
        }
        if (f->group_fd >= 0)
                close(f->group_fd);
        if (f->ready_fd >= 0)
                close(f->ready_fd);
        if (f->stop_fd >= 0)
                close(f->stop_fd);
        pthread_cond_destroy(&f->idle);
        pthread_mutex_destroy(&f->lock);
        free(f);
        return NULL;
}

int writer_feed_group_fd(const WriterFeed *f) {
        return f->group_fd;
}

int writer_feed_ready_fd(const WriterFeed *f) {
        return f->ready_fd;
}

void writer_feed_clear_ready(WriterFeed *f) {
        eventfd_t v;

        (void)eventfd_read(f->ready_fd, &v);
}

static struct timespec deadline_after(uint64_t usec) {
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        t.tv_sec += (time_t)(usec / 1000000);
        t.tv_nsec += (long)(usec % 1000000) * 1000;
        if (t.tv_nsec >= 1000000000) {
                t.tv_sec++;
                t.tv_nsec -= 1000000000;
        }
        return t;
}

bool writer_feed_settle(WriterFeed *f, uint64_t timeout_usec) {
        struct timespec deadline = deadline_after(timeout_usec);
        bool settled = true;

        pthread_mutex_lock(&f->lock);
        while (f->busy || queued_bytes(f->group_fd) > 0)
                if (pthread_cond_timedwait(&f->idle, &f->lock, &deadline) == ETIMEDOUT) {
                        settled = false;
                        break;
                }
        pthread_mutex_unlock(&f->lock);
        return settled;
}

uint64_t writer_feed_pushed(WriterFeed *f) {
        uint64_t n;

        pthread_mutex_lock(&f->lock);
        n = f->pushed;
        pthread_mutex_unlock(&f->lock);
        return n;
}

bool writer_feed_wait_result(WriterFeed *f, uint64_t pushed, uint64_t timeout_usec) {
        struct timespec deadline = deadline_after(timeout_usec);
        bool more;

        pthread_mutex_lock(&f->lock);
        while (f->pushed == pushed && !f->busy && queued_bytes(f->group_fd) == 0)
                if (pthread_cond_timedwait(&f->idle, &f->lock, &deadline) == ETIMEDOUT)
                        break;
        more = f->pushed != pushed || f->busy || queued_bytes(f->group_fd) > 0;
        pthread_mutex_unlock(&f->lock);
        return more;
}

bool writer_feed_pop(WriterFeed *f, WriterSeen *ret) {
        bool any;

        pthread_mutex_lock(&f->lock);
        any = f->n > 0;
        if (any) {
                *ret = f->slot[f->head];
                f->head = (f->head + 1) % FEED_SLOTS;
                f->n--;
        }
        pthread_mutex_unlock(&f->lock);
        return any;
}

bool writer_feed_take_overflow(WriterFeed *f) {
        bool o;

        pthread_mutex_lock(&f->lock);
        o = f->overflow;
        f->overflow = false;
        pthread_mutex_unlock(&f->lock);
        return o;
}
