/* SPDX-License-Identifier: MIT */
#include "bounded-read.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "thpguard/event-util.h"
#include "thpguard/fileio.h"
#include "thpguard/macro.h"

struct CtlBoundedReader {
        const char *proc_root;
        uint64_t deadline_usec;
        pid_t child; /* 0: none yet */
        int fd;      /* our end of the socket pair */
};

typedef struct Request {
        uint64_t pid;
        uint32_t size;
        char name[32];
} Request;

typedef struct Response {
        int32_t r;
        uint32_t len;
} Response;

/* The child: one request, one answer, until the pipe closes. */
__attribute__((noreturn)) static void serve(const char *proc_root, int fd) {
        static char buf[CTL_BOUNDED_READ_MAX];
        Request q;

        while (read(fd, &q, sizeof(q)) == (ssize_t)sizeof(q)) {
                Response a = {};
                size_t len = 0;

                q.name[sizeof(q.name) - 1] = '\0';
                a.r = read_pid_file(proc_root, q.pid, q.name, buf,
                                    q.size < sizeof(buf) ? q.size : sizeof(buf), &len);
                a.len = a.r >= 0 ? (uint32_t)len : 0;
                if (send(fd, &a, sizeof(a), MSG_NOSIGNAL) != (ssize_t)sizeof(a) ||
                    (a.len > 0 && send(fd, buf, a.len, MSG_NOSIGNAL) != (ssize_t)a.len))
                        break;
        }
        _exit(0);
}

static void child_drop(CtlBoundedReader *r) {
        if (r->child > 0) {
                /* It may be stuck in D for good: killed, reaped if it is already gone, never waited for. */
                (void)kill(r->child, SIGKILL);
                (void)waitpid(r->child, NULL, WNOHANG);
        }
        if (r->fd >= 0)
                close(r->fd);
        r->child = 0;
        r->fd = -EBADF;
}

/* A socket pair, not pipes: send(MSG_NOSIGNAL) to a dead child is EPIPE, never SIGPIPE. */
static int child_start(CtlBoundedReader *r) {
        int sv[2];
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                int e = -errno;

                close(sv[0]);
                close(sv[1]);
                return e;
        }
        if (pid == 0) {
                close(sv[0]);
                serve(r->proc_root, sv[1]);
        }
        close(sv[1]);
        r->child = pid;
        r->fd = sv[0];
        return 0;
}

int ctl_bounded_reader_new(const char *proc_root, uint64_t deadline_usec, CtlBoundedReader **ret) {
        CtlBoundedReader *r = calloc(1, sizeof(*r));

        if (!r)
                return -ENOMEM;
        *r = (CtlBoundedReader){ .proc_root = proc_root, .deadline_usec = deadline_usec, .fd = -EBADF };
        *ret = r;
        return 0;
}

CtlBoundedReader *ctl_bounded_reader_free(CtlBoundedReader *r) {
        if (!r)
                return NULL;
        child_drop(r);
        free(r);
        return NULL;
}

/* Reads exactly size bytes from fd before the deadline (CLOCK_MONOTONIC). */
static int read_until(int fd, void *p, size_t size, uint64_t deadline) {
        size_t done = 0;

        while (done < size) {
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                ssize_t n;
                int k;

                if (now >= deadline)
                        return -ETIMEDOUT;
                k = poll(&pfd, 1, (int)((deadline - now + 999) / 1000));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -ETIMEDOUT;
                n = read(fd, (char *)p + done, size - done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EPIPE;
                done += (size_t)n;
        }
        return 0;
}

int ctl_bounded_read_pid_file(CtlBoundedReader *r, uint64_t pid, const char *name, char *buf, size_t size,
                              size_t *ret_len) {
        Request q = { .pid = pid,
                      .size = (uint32_t)(size < CTL_BOUNDED_READ_MAX ? size : CTL_BOUNDED_READ_MAX) };
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + r->deadline_usec;
        Response a;
        int k;

        if (strlen(name) >= sizeof(q.name) || size == 0)
                return -EINVAL;
        strcpy(q.name, name);
        if (r->child == 0) {
                k = child_start(r);
                if (k < 0)
                        return k;
        }
        if (send(r->fd, &q, sizeof(q), MSG_NOSIGNAL) != (ssize_t)sizeof(q)) {
                child_drop(r);
                return -EPIPE;
        }
        k = read_until(r->fd, &a, sizeof(a), deadline);
        if (k >= 0 && a.r >= 0 && (a.len >= q.size || a.len >= size))
                k = -EBADMSG;
        if (k >= 0 && a.r >= 0)
                k = read_until(r->fd, buf, a.len, deadline);
        if (k < 0) {
                /* Stuck, or gone: the next read gets a new child. */
                child_drop(r);
                return k;
        }
        if (a.r < 0)
                return a.r;
        buf[a.len] = '\0';
        *ret_len = a.len;
        return 0;
}
