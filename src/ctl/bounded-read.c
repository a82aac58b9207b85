/* SPDX-License-Identifier: MIT */
#include "bounded-read.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
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

typedef enum ProcFile {
        PROC_FILE_STATUS,
        PROC_FILE_SMAPS_ROLLUP,
        PROC_FILE_STAT,
        PROC_FILE_SMAPS,
} ProcFile;

typedef struct Request {
        uint64_t pid;
        ProcFile file;
        uint64_t top_n; /* PROC_FILE_SMAPS */
} Request;

/* What the child parsed: r, then on success the struct of the file asked for. */
typedef struct Response {
        int32_t r;
        union {
                ProcStatus status;
                ProcSmapsRollup rollup;
                ProcStat stat;
                ProcSmaps smaps;
        };
} Response;

static size_t response_size(ProcFile file) {
        switch (file) {
        case PROC_FILE_STATUS:
                return offsetof(Response, status) + sizeof(ProcStatus);
        case PROC_FILE_SMAPS_ROLLUP:
                return offsetof(Response, rollup) + sizeof(ProcSmapsRollup);
        case PROC_FILE_SMAPS:
                return offsetof(Response, smaps) + sizeof(ProcSmaps);
        default:
                return offsetof(Response, stat) + sizeof(ProcStat);
        }
}

/* The child: one request, one answer, until the socket closes. */
__attribute__((noreturn)) static void serve(const char *proc_root, int fd) {
        Request q;

        while (read(fd, &q, sizeof(q)) == (ssize_t)sizeof(q)) {
                Response a = {};
                size_t size;

                switch (q.file) {
                case PROC_FILE_STATUS:
                        a.r = procfs_read_status(proc_root, q.pid, &a.status);
                        break;
                case PROC_FILE_SMAPS_ROLLUP:
                        a.r = procfs_read_smaps_rollup(proc_root, q.pid, &a.rollup);
                        break;
                case PROC_FILE_SMAPS:
                        a.r = procfs_read_smaps(proc_root, q.pid, (size_t)q.top_n, &a.smaps);
                        break;
                default:
                        a.r = procfs_read_stat(proc_root, q.pid, &a.stat);
                        break;
                }
                size = a.r >= 0 ? response_size(q.file) : sizeof(a.r);
                if (send(fd, &a, size, MSG_NOSIGNAL) != (ssize_t)size)
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
        safe_close(r->fd);
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

/* One request to the child, a new one if none runs; its answer in *ret (a Response). */
static int bounded_read(CtlBoundedReader *r, uint64_t pid, ProcFile file, size_t top_n, Response *ret) {
        Request q = { .pid = pid, .file = file, .top_n = top_n };
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + r->deadline_usec;
        int k;

        if (r->child == 0) {
                k = child_start(r);
                if (k < 0)
                        return k;
        }
        if (send(r->fd, &q, sizeof(q), MSG_NOSIGNAL) != (ssize_t)sizeof(q)) {
                child_drop(r);
                return -EPIPE;
        }
        k = read_until(r->fd, &ret->r, sizeof(ret->r), deadline);
        if (k >= 0 && ret->r >= 0)
                k = read_until(r->fd, (char *)ret + sizeof(ret->r), response_size(file) - sizeof(ret->r),
                               deadline);
        if (k < 0) {
                /* Stuck, or gone: the next read gets a new child. */
                child_drop(r);
                return k;
        }
        return ret->r;
}

int ctl_bounded_read_status(CtlBoundedReader *r, uint64_t pid, ProcStatus *ret) {
        Response a;
        int k = bounded_read(r, pid, PROC_FILE_STATUS, 0, &a);

        if (k >= 0)
                *ret = a.status;
        return k;
}

int ctl_bounded_read_smaps_rollup(CtlBoundedReader *r, uint64_t pid, ProcSmapsRollup *ret) {
        Response a;
        int k = bounded_read(r, pid, PROC_FILE_SMAPS_ROLLUP, 0, &a);

        if (k >= 0)
                *ret = a.rollup;
        return k;
}

int ctl_bounded_read_stat(CtlBoundedReader *r, uint64_t pid, ProcStat *ret) {
        Response a;
        int k = bounded_read(r, pid, PROC_FILE_STAT, 0, &a);

        if (k >= 0)
                *ret = a.stat;
        return k;
}

int ctl_bounded_read_smaps(CtlBoundedReader *r, uint64_t pid, size_t top_n, ProcSmaps *ret) {
        Response a;
        int k = bounded_read(r, pid, PROC_FILE_SMAPS, top_n, &a);

        if (k >= 0)
                *ret = a.smaps;
        return k;
}
