/* SPDX-License-Identifier: MIT */
#include "thpguard/write-source-fds.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "thpguard/fanotify-groups.h"
#include "thpguard/fileio.h"
#include "thpguard/macro.h"

/* The THP directory the probe's filter is filled from, where the unit runs the loader. */
#define HOST_THP_DIR "/sys/kernel/mm/transparent_hugepage"

void write_source_fds_init(WriteSourceFds *g) {
        *g = (WriteSourceFds){ .probe = { -ENOENT, -ENOENT, -ENOENT, -ENOENT },
                               .probe_error = -ENOENT,
                               .probe_hook = _WRITE_PROBE_HOOK_MAX,
                               .write_fd = -ENOENT,
                               .open_fd = -ENOENT,
                               .lock_fd = -ENOENT };
}

/* The fds of g, in the order the loader sends them. */
#define GROUP_FDS 7
static int *group_fd(WriteSourceFds *g, unsigned i) {
        int *fds[GROUP_FDS] = { &g->probe.link_fd, &g->probe.enter_link_fd,
                                &g->probe.ring_fd, &g->probe.config_fd,
                                &g->write_fd,      &g->open_fd,
                                &g->lock_fd };

        return fds[i];
}

void write_source_fds_close(WriteSourceFds *g) {
        for (unsigned i = 0; i < GROUP_FDS; i++)
                if (*group_fd(g, i) >= 0)
                        close(*group_fd(g, i));
        write_source_fds_init(g);
}

/* In this process: the probe unless want says otherwise, else the groups. */
static void open_here(const WriteSourceWant *want, const char *thp_dir, WriteSourceFds *ret) {
        WriteSourceFds g;

        write_source_fds_init(&g);
        if (want->source == WRITE_SOURCE_AUTO || want->source == WRITE_SOURCE_BPF) {
                g.probe_error =
                    write_probe_load(thp_dir, want->hook, &g.probe, g.probe_why, sizeof(g.probe_why));
                if (g.probe_error < 0)
                        g.probe.link_fd = g.probe.enter_link_fd = g.probe.ring_fd = g.probe.config_fd =
                            g.probe_error;
                else
                        (void)write_probe_hook_from_string(g.probe_why, &g.probe_hook);
        } else
                snprintf(g.probe_why, sizeof(g.probe_why), "--write-source=%s",
                         write_source_to_string(want->source));
        if (g.probe_error < 0 &&
            (want->source == WRITE_SOURCE_AUTO || want->source == WRITE_SOURCE_FANOTIFY)) {
                g.write_fd = fanotify_groups_open();
                g.open_fd = g.write_fd < 0 ? g.write_fd : fanotify_groups_open_gate();
        }
        if (want->lock)
                g.lock_fd = fanotify_groups_open_lock();
        *ret = g;
}

/* ---- The loader: a child that keeps the privileges, one request, one answer */

#define LOAD_REQUEST_MAGIC 0x74687031U /* "thp1" */

typedef struct LoadRequest {
        uint32_t magic;
        uint32_t source; /* WriteSource */
        uint32_t hook;   /* WriteProbeHook */
        uint32_t lock;   /* 0 or 1 */
} LoadRequest;

typedef struct LoadAnswer {
        int errors[GROUP_FDS]; /* -errno of each fd not sent; 0 for each that was */
        int probe_error;
        uint32_t hook;
        char why[sizeof(((WriteSourceFds *)0)->probe_why)];
} LoadAnswer;

struct WriteSourceLoader {
        int sock;
        pid_t pid;
};

static void child_answer(int sock, WriteSourceFds *g) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(GROUP_FDS * sizeof(int))];
        } control = {};
        LoadAnswer a = { .probe_error = g->probe_error, .hook = (uint32_t)g->probe_hook };
        struct iovec iov = { .iov_base = &a, .iov_len = sizeof(a) };
        struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
        int fds[GROUP_FDS];
        unsigned n = 0;

        snprintf(a.why, sizeof(a.why), "%s", g->probe_why);
        for (unsigned i = 0; i < GROUP_FDS; i++) {
                a.errors[i] = *group_fd(g, i) >= 0 ? 0 : *group_fd(g, i);
                if (*group_fd(g, i) >= 0)
                        fds[n++] = *group_fd(g, i);
        }
        if (n > 0) {
                struct cmsghdr *c;

                m.msg_control = control.buf;
                m.msg_controllen = CMSG_SPACE(n * sizeof(int));
                c = CMSG_FIRSTHDR(&m);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(n * sizeof(int));
                memcpy(CMSG_DATA(c), fds, n * sizeof(int));
        }
        (void)sendmsg(sock, &m, MSG_NOSIGNAL);
}

__attribute__((noreturn)) static void child_main(int sock, const char *thp_dir, pid_t parent) {
        LoadRequest req;
        WriteSourceWant want;
        WriteSourceFds g;
        ssize_t n;

        /* Never outlive the daemon, never hold its start up: at the back of the queue. */
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
                _exit(0);
        (void)setpriority(PRIO_PROCESS, 0, 10);
        n = recv(sock, &req, sizeof(req), 0);
        if (n != (ssize_t)sizeof(req) || req.magic != LOAD_REQUEST_MAGIC ||
            req.source >= _WRITE_SOURCE_MAX || req.hook >= _WRITE_PROBE_HOOK_MAX || req.lock > 1)
                _exit(0);
        want = (WriteSourceWant){ .source = (WriteSource)req.source,
                                  .hook = (WriteProbeHook)req.hook,
                                  .lock = req.lock == 1 };
        open_here(&want, thp_dir, &g);
        child_answer(sock, &g);
        _exit(0);
}

int write_source_loader_start(const char *thp_dir, WriteSourceLoader **ret) {
        _cleanup_free_ WriteSourceLoader *l = calloc(1, sizeof(*l));
        pid_t parent = getpid();
        int sv[2];

        if (!l)
                return -ENOMEM;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        l->pid = fork();
        if (l->pid < 0) {
                int r = -errno;

                close(sv[0]);
                close(sv[1]);
                return r;
        }
        if (l->pid == 0) {
                close(sv[0]);
                child_main(sv[1], thp_dir, parent);
        }
        close(sv[1]);
        l->sock = sv[0];
        *ret = TAKE_PTR(l);
        return 0;
}

int write_source_loader_request(WriteSourceLoader *l, const WriteSourceWant *want) {
        LoadRequest req = {
                .magic = LOAD_REQUEST_MAGIC, .source = want->source, .hook = want->hook, .lock = want->lock
        };

        if (send(l->sock, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req))
                return errno > 0 ? -errno : -EIO;
        return 0;
}

int write_source_loader_fd(const WriteSourceLoader *l) {
        return l->sock;
}

static void reap(WriteSourceLoader *l) {
        if (l->pid > 0)
                while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        l->pid = 0;
}

int write_source_loader_finish(WriteSourceLoader *l, WriteSourceFds *ret) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(GROUP_FDS * sizeof(int))];
        } control;
        LoadAnswer a;
        struct iovec iov = { .iov_base = &a, .iov_len = sizeof(a) };
        struct msghdr m = { .msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = control.buf,
                            .msg_controllen = sizeof(control.buf) };
        int fds[GROUP_FDS], n_fds = 0;
        unsigned next = 0;
        WriteSourceFds g;
        ssize_t n;

        n = recvmsg(l->sock, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return -EAGAIN;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); n >= 0 && c; c = CMSG_NXTHDR(&m, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

                        for (size_t j = 0; j < k && n_fds < GROUP_FDS; j++)
                                memcpy(&fds[n_fds++], CMSG_DATA(c) + j * sizeof(int), sizeof(int));
                }
        reap(l);
        write_source_fds_init(&g);
        if (n != (ssize_t)sizeof(a) || (m.msg_flags & MSG_CTRUNC)) {
                for (int j = 0; j < n_fds; j++)
                        close(fds[j]);
                g.probe_error = -EPROTO;
                snprintf(g.probe_why, sizeof(g.probe_why), "the loading process died");
                *ret = g;
                return 0;
        }
        /* Each fd the answer says was sent, in order; one it does not is closed. */
        for (unsigned i = 0; i < GROUP_FDS; i++) {
                if (a.errors[i] == 0 && next < (unsigned)n_fds)
                        *group_fd(&g, i) = fds[next++];
                else
                        *group_fd(&g, i) = a.errors[i] < 0 ? a.errors[i] : -EPROTO;
        }
        while (next < (unsigned)n_fds)
                close(fds[next++]);
        a.why[sizeof(a.why) - 1] = '\0';
        snprintf(g.probe_why, sizeof(g.probe_why), "%s", a.why);
        g.probe_error = a.probe_error <= 0 ? a.probe_error : -EPROTO;
        g.probe_hook = a.hook < _WRITE_PROBE_HOOK_MAX ? (WriteProbeHook)a.hook : _WRITE_PROBE_HOOK_MAX;
        /* The probe without its ring or link is none. */
        if (g.probe_error == 0 && (g.probe.ring_fd < 0 || g.probe.link_fd < 0)) {
                g.probe_error = -EPROTO;
                snprintf(g.probe_why, sizeof(g.probe_why),
                         "the loading process sent the probe without its ring");
        }
        *ret = g;
        return 0;
}

WriteSourceLoader *write_source_loader_free(WriteSourceLoader *l) {
        if (!l)
                return NULL;
        /*
         * Our end closed first: a child still waiting for its request reads
         * the end of it and exits, even where a seccomp filter (ours,
         * sandbox.c) refuses the kill() below.
         */
        safe_close(l->sock);
        l->sock = -1;
        if (l->pid > 0)
                (void)kill(l->pid, SIGKILL);
        reap(l);
        free(l);
        return NULL;
}

/* How long write_source_fds_open() waits for the loader: a probe loads in well under a second. */
#define LOADER_WAIT_MSEC (30 * 1000)

void write_source_fds_open(const WriteSourceWant *want, const char *thp_dir, WriteSourceFds *ret) {
        _cleanup_(write_source_loader_freep) WriteSourceLoader *l = NULL;
        struct pollfd p;
        WriteSourceFds g;
        int r;

        write_source_fds_init(&g);
        r = write_source_loader_start(thp_dir, &l);
        if (r >= 0)
                r = write_source_loader_request(l, want);
        if (r >= 0) {
                p = (struct pollfd){ .fd = write_source_loader_fd(l), .events = POLLIN };
                while ((r = poll(&p, 1, LOADER_WAIT_MSEC)) < 0 && errno == EINTR)
                        ;
                r = r > 0 ? write_source_loader_finish(l, &g) : r == 0 ? -ETIMEDOUT : -errno;
        }
        if (r < 0) {
                g.probe_error = g.write_fd = g.open_fd = g.lock_fd = r;
                snprintf(g.probe_why, sizeof(g.probe_why), "cannot run the loading process: %s",
                         strerror(-r));
        }
        *ret = g;
}

WriteSource write_source_fds_source(const WriteSourceFds *g) {
        return g->probe_error == 0 ? WRITE_SOURCE_BPF
               : g->write_fd >= 0  ? WRITE_SOURCE_FANOTIFY
                                   : WRITE_SOURCE_NONE;
}

WriteSource write_source_fds_probe(const WriteSourceWant *want, const char *thp_dir, char *detail,
                                   size_t size) {
        WriteSourceFds g;
        WriteSource in_force;

        write_source_fds_open(want, thp_dir, &g);
        in_force = write_source_fds_source(&g);
        snprintf(detail, size, "%s", g.probe_why);
        write_source_fds_close(&g);
        return in_force;
}

int write_source_fds_match(const WriteSourceFds *g, const WriteSourceWant *want, char *why,
                           size_t why_size) {
        WriteSource have = write_source_fds_source(g);

        if (want->source == WRITE_SOURCE_NONE || want->source == WRITE_SOURCE_AUTO) {
                if (have != WRITE_SOURCE_BPF || want->hook == WRITE_PROBE_HOOK_AUTO ||
                    want->hook == g->probe_hook)
                        return 0;
        } else if (want->source == have &&
                   (have != WRITE_SOURCE_BPF || want->hook == WRITE_PROBE_HOOK_AUTO ||
                    want->hook == g->probe_hook))
                return 0;
        if (have == WRITE_SOURCE_BPF)
                snprintf(why, why_size,
                         "the service's file descriptor store holds the BPF write probe on the %s hook, but "
                         "--write-source=%s and write_probe_hook %s ask for another",
                         write_probe_hook_to_string(g->probe_hook), write_source_to_string(want->source),
                         write_probe_hook_to_string(want->hook));
        else
                snprintf(
                    why, why_size,
                    "the service's file descriptor store holds the fanotify groups, but --write-source=%s "
                    "asks for another",
                    write_source_to_string(want->source));
        return -EMEDIUMTYPE;
}

/*
 * systemd closes a stored fd the moment it polls POLLHUP or POLLERR
 * ("Received EPOLLHUP on stored fd N (NAME), closing"), given to the
 * service yet or not. A kprobe's perf event with no ring buffer of its own
 * always polls POLLHUP (a kprobe has no bpf_link before Linux 5.15, nor
 * with libbpf 0.3: Debian 11), and an array map, the config, POLLERR: the
 * daemon got them only where systemd happened to pass the store on before
 * it looked at them. Such an fd goes into the store inside a carrier, a
 * datagram socket whose peer sent it and is gone, which polls nothing;
 * write_source_fds_take_stored() takes it out. Returns the fd to store.
 */
static int carry(int fd) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        char byte = 0;
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
        struct msghdr m = { .msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = control.buf,
                            .msg_controllen = sizeof(control.buf) };
        struct pollfd p = { .fd = fd };
        struct cmsghdr *c;
        int sv[2];

        if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLHUP | POLLERR)))
                return fd;
        if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        if (sendmsg(sv[0], &m, MSG_NOSIGNAL) != 1) {
                int r = -errno;

                close(sv[0]);
                close(sv[1]);
                return r < 0 ? r : -EIO;
        }
        close(sv[0]);
        close(fd);
        return sv[1];
}

/* What a stored fd holds: the one in its carrier (carry()), which is closed; else the fd itself. */
static int uncarry(int fd) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control;
        char byte;
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
        struct msghdr m = { .msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = control.buf,
                            .msg_controllen = sizeof(control.buf) };
        struct cmsghdr *c;
        struct stat st;
        int inner = -EBADF;

        if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
                return fd;
        if (recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) == 1 && !(m.msg_flags & MSG_CTRUNC) &&
            (c = CMSG_FIRSTHDR(&m)) && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(sizeof(int)))
                memcpy(&inner, CMSG_DATA(c), sizeof(int));
        close(fd);
        return inner;
}

/* Sends fd to the service manager's store under name, and closes our copy either way. */
static int store_and_close(int fd, const char *name) {
        char msg[128];
        int r, stored = carry(fd);

        if (stored < 0) {
                close(fd);
                return stored;
        }
        snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
        r = sd_pid_notify_with_fds(0, 0, msg, &stored, 1);
        close(stored);
        /* 0: no NOTIFY_SOCKET, so nobody would keep it. */
        return r < 0 ? r : r == 0 ? -ENOTCONN : 0;
}

int write_source_fds_store(const WriteSourceWant *want, WriteSourceFds *ret) {
        WriteSourceFds g;

        write_source_fds_open(want, HOST_THP_DIR, &g);
        /* Apart from the source: the daemon locks with it whatever names writers. */
        if (g.lock_fd >= 0)
                g.lock_fd = store_and_close(g.lock_fd, WRITE_SOURCE_FDNAME_LOCK);
        if (g.probe_error == 0) {
                /* The ring first: a link alone is of no use to the daemon (write_source_fds_take_stored()).
                 */
                g.probe.ring_fd = store_and_close(g.probe.ring_fd, WRITE_PROBE_FDNAME_RING);
                if (g.probe.ring_fd < 0) {
                        int r = g.probe.ring_fd;

                        write_source_fds_close(&g);
                        g.probe_error = g.probe.link_fd = g.probe.config_fd = g.probe.ring_fd = r;
                } else {
                        /* sys_enter's before sys_exit's: a daemon given sys_exit alone would see nothing. */
                        if (g.probe.enter_link_fd >= 0)
                                g.probe.enter_link_fd =
                                    store_and_close(g.probe.enter_link_fd, WRITE_PROBE_FDNAME_ENTER);
                        g.probe.link_fd = store_and_close(g.probe.link_fd, WRITE_PROBE_FDNAME_LINK);
                        /* Without it every record wakes the daemon: as fast a correction, a slower write. */
                        g.probe.config_fd = store_and_close(g.probe.config_fd, WRITE_PROBE_FDNAME_CONFIG);
                }
                *ret = g;
                return g.probe.ring_fd < 0 ? g.probe.ring_fd : g.probe.link_fd < 0 ? g.probe.link_fd : 0;
        }
        if (g.write_fd >= 0)
                g.write_fd = store_and_close(g.write_fd, WRITE_SOURCE_FDNAME_WRITE);
        /* The open group alone is of no use to the daemon (write_source_fds_take_stored()). */
        if (g.open_fd >= 0 && g.write_fd < 0) {
                close(g.open_fd);
                g.open_fd = g.write_fd;
        } else if (g.open_fd >= 0)
                g.open_fd = store_and_close(g.open_fd, WRITE_SOURCE_FDNAME_OPEN);
        *ret = g;
        return g.write_fd < 0 ? g.write_fd : g.open_fd < 0 ? g.open_fd : 0;
}

/*
 * A fanotify group answers FAN_MARK_FLUSH, anything else refuses it. The
 * flush also drops marks a daemon that died before taking the group out of
 * the store may have left: the new one marks its files itself.
 */
static bool take_group(int fd) {
        if (fanotify_mark(fd, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL) < 0)
                return false;
        /* Passed without close-on-exec; its status flags (O_NONBLOCK) came with it. */
        return fcntl(fd, F_SETFD, FD_CLOEXEC) == 0;
}

static void unstore(const char *name) {
        char msg[128];

        snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", name);
        (void)sd_notify(0, msg);
}

static bool take_probe_fd(int fd, int (*check)(int fd)) {
        if (check(fd) < 0)
                return false;
        return fcntl(fd, F_SETFD, FD_CLOEXEC) == 0;
}

int write_source_fds_take_stored(WriteSourceFds *ret) {
        WriteSourceFds g;
        char **names = NULL;
        int n;

        write_source_fds_init(&g);
        n = sd_listen_fds_with_names(1, &names);
        if (n < 0)
                return n;
        for (int i = 0; i < n; i++) {
                int fd = SD_LISTEN_FDS_START + i, *slot = NULL;
                const char *name = names ? names[i] : NULL;
                bool taken = false;

                if (name && strcmp(name, WRITE_SOURCE_FDNAME_WRITE) == 0 && g.write_fd < 0)
                        slot = &g.write_fd;
                else if (name && strcmp(name, WRITE_SOURCE_FDNAME_OPEN) == 0 && g.open_fd < 0)
                        slot = &g.open_fd;
                else if (name && strcmp(name, WRITE_SOURCE_FDNAME_LOCK) == 0 && g.lock_fd < 0)
                        slot = &g.lock_fd;
                else if (name && strcmp(name, WRITE_PROBE_FDNAME_RING) == 0 && g.probe.ring_fd < 0)
                        slot = &g.probe.ring_fd;
                else if (name && strcmp(name, WRITE_PROBE_FDNAME_LINK) == 0 && g.probe.link_fd < 0)
                        slot = &g.probe.link_fd;
                else if (name && strcmp(name, WRITE_PROBE_FDNAME_ENTER) == 0 && g.probe.enter_link_fd < 0)
                        slot = &g.probe.enter_link_fd;
                else if (name && strcmp(name, WRITE_PROBE_FDNAME_CONFIG) == 0 && g.probe.config_fd < 0)
                        slot = &g.probe.config_fd;
                /* The probe's fds may come in a carrier (carry()). */
                if (slot && slot != &g.write_fd && slot != &g.open_fd && slot != &g.lock_fd)
                        fd = uncarry(fd);
                if (fd < 0)
                        taken = false;
                else if (slot == &g.probe.ring_fd)
                        taken = take_probe_fd(fd, write_probe_check_ring_fd);
                else if (slot == &g.probe.link_fd || slot == &g.probe.enter_link_fd)
                        taken = take_probe_fd(fd, write_probe_check_link_fd);
                else if (slot == &g.probe.config_fd)
                        taken = take_probe_fd(fd, write_probe_check_config_fd);
                else if (slot == &g.lock_fd)
                        taken = fanotify_groups_check_lock(fd) == 0 && take_group(fd);
                else if (slot)
                        taken = take_group(fd);
                if (taken)
                        *slot = fd;
                else if (fd >= 0)
                        close(fd);
                if (slot)
                        unstore(name);
        }
        for (int i = 0; names && names[i]; i++)
                free(names[i]);
        free(names);
        if (g.probe.link_fd >= 0)
                g.probe_hook = write_probe_link_hook(g.probe.link_fd);
        /* The syscall-exit hook's sys_exit records only what its sys_enter took. */
        if (g.probe.ring_fd >= 0 && g.probe.link_fd >= 0 && g.probe_hook < _WRITE_PROBE_HOOK_MAX &&
            (g.probe_hook != WRITE_PROBE_HOOK_SYSCALL_EXIT || g.probe.enter_link_fd >= 0)) {
                /* With the probe in force the groups are not used: nobody is held. */
                safe_close(g.write_fd);
                safe_close(g.open_fd);
                g.write_fd = g.open_fd = -ENOENT;
                g.probe_error = 0;
                /* The hook, as the loader said it: the daemon's startup line names it. */
                snprintf(g.probe_why, sizeof(g.probe_why), "%s", write_probe_hook_to_string(g.probe_hook));
                *ret = g;
                return 1;
        }
        /* Without ring and link there is no probe (the config map alone is of no use). */
        for (int *fd = (int[]){ g.probe.ring_fd, g.probe.link_fd, g.probe.enter_link_fd, g.probe.config_fd },
                 *end = fd + 4;
             fd < end; fd++)
                if (*fd >= 0)
                        close(*fd);
        g.probe.ring_fd = g.probe.link_fd = g.probe.enter_link_fd = g.probe.config_fd = -ENOENT;
        g.probe_hook = _WRITE_PROBE_HOOK_MAX;
        if (g.write_fd < 0) {
                safe_close(g.open_fd); /* the gate names writers for the write group's records only */
                g.open_fd = -ENOENT;
                if (g.lock_fd < 0)
                        return 0;
                /* The lock alone: the source is none (the helper logged why). */
                g.write_fd = -ENOENT;
                snprintf(
                    g.probe_why, sizeof(g.probe_why),
                    "none in the fd store (thpguard-write-source, the unit's ExecStartPre=, logged why)");
                *ret = g;
                return 1;
        }
        /* Said in the daemon's startup line, where strerror(ENOENT) alone would say nothing. */
        snprintf(g.probe_why, sizeof(g.probe_why),
                 "none in the fd store (thpguard-write-source, the unit's ExecStartPre=, logged why)");
        *ret = g;
        return 1;
}
