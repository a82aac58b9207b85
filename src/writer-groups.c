/* SPDX-License-Identifier: MIT */
#include "thpguard/writer-groups.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "thpguard/macro.h"
#include "thpguard/writer-events.h"

/* The THP directory the probe's filter is filled from, where the unit runs the loader. */
#define HOST_THP_DIR "/sys/kernel/mm/transparent_hugepage"

/* What the loading child tells its parent; the three fds come beside it. */
typedef struct LoadAnswer {
        int error;
        char why[sizeof(((WriterGroups *)0)->probe_why)];
} LoadAnswer;

static void child_load(int sock, const char *thp_dir) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(3 * sizeof(int))];
        } control = {};
        LoadAnswer a = {};
        WriteProbeFds fds;
        struct iovec iov = { .iov_base = &a, .iov_len = sizeof(a) };
        struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

        a.error = write_probe_load(thp_dir, &fds, a.why, sizeof(a.why));
        if (a.error == 0) {
                struct cmsghdr *c;

                m.msg_control = control.buf;
                m.msg_controllen = sizeof(control.buf);
                c = CMSG_FIRSTHDR(&m);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(3 * sizeof(int));
                memcpy(CMSG_DATA(c), (int[]){ fds.link_fd, fds.ring_fd, fds.config_fd }, 3 * sizeof(int));
        }
        (void)sendmsg(sock, &m, MSG_NOSIGNAL);
}

/*
 * write_probe_load() in a child process of its own, which hands the three
 * fds back and exits: libbpf parses the kernel's whole BTF (measured: the
 * daemon's peak RSS went from 3.5 to 15.3 MiB when it loaded the probe
 * itself), and none of that is ever the caller's.
 */
static int load_probe(const char *thp_dir, WriteProbeFds *ret, char *why, size_t why_size) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(3 * sizeof(int))];
        } control;
        LoadAnswer a = { .error = -EPROTO };
        struct iovec iov = { .iov_base = &a, .iov_len = sizeof(a) };
        struct msghdr m = { .msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = control.buf,
                            .msg_controllen = sizeof(control.buf) };
        struct cmsghdr *c;
        int sv[2], fds[3] = { -1, -1, -1 };
        ssize_t n;
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                int r = -errno;

                close(sv[0]);
                close(sv[1]);
                return r;
        }
        if (pid == 0) {
                close(sv[0]);
                child_load(sv[1], thp_dir);
                _exit(0);
        }
        close(sv[1]);
        n = recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC);
        close(sv[0]);
        (void)waitpid(pid, NULL, 0);
        c = n == (ssize_t)sizeof(a) ? CMSG_FIRSTHDR(&m) : NULL;
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(3 * sizeof(int)))
                memcpy(fds, CMSG_DATA(c), sizeof(fds));
        a.why[sizeof(a.why) - 1] = '\0';
        snprintf(why, why_size, "%s", n == (ssize_t)sizeof(a) ? a.why : "the loading process died");
        if (a.error == 0 && fds[2] < 0)
                a.error = -EPROTO;
        if (a.error < 0) {
                for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                        if (fds[i] >= 0)
                                close(fds[i]);
                return a.error;
        }
        *ret = (WriteProbeFds){ .link_fd = fds[0], .ring_fd = fds[1], .config_fd = fds[2] };
        return 0;
}

void writer_groups_open(WriteSource want, const char *thp_dir, WriterGroups *ret) {
        WriterGroups g = { .probe = { -ENOENT, -ENOENT, -ENOENT },
                           .probe_error = -ENOENT,
                           .write_fd = -ENOENT,
                           .open_fd = -ENOENT };

        if (want == WRITE_SOURCE_AUTO || want == WRITE_SOURCE_BPF) {
                g.probe_error = load_probe(thp_dir, &g.probe, g.probe_why, sizeof(g.probe_why));
                if (g.probe_error < 0)
                        g.probe.link_fd = g.probe.ring_fd = g.probe.config_fd = g.probe_error;
        } else
                snprintf(g.probe_why, sizeof(g.probe_why), "--write-source=%s",
                         write_source_to_string(want));
        if (g.probe_error < 0 && (want == WRITE_SOURCE_AUTO || want == WRITE_SOURCE_FANOTIFY)) {
                g.write_fd = writer_events_open();
                g.open_fd = g.write_fd < 0 ? g.write_fd : writer_events_open_gate();
        }
        *ret = g;
}

WriteSource writer_groups_source(const WriterGroups *g) {
        return g->probe_error == 0 ? WRITE_SOURCE_BPF
               : g->write_fd >= 0  ? WRITE_SOURCE_FANOTIFY
                                   : WRITE_SOURCE_NONE;
}

WriteSource writer_groups_probe(WriteSource want, const char *thp_dir, char *detail, size_t size) {
        WriterGroups g;
        WriteSource in_force;

        writer_groups_open(want, thp_dir, &g);
        in_force = writer_groups_source(&g);
        snprintf(detail, size, "%s", g.probe_why);
        for (int *fd = (int[]){ g.probe.link_fd, g.probe.ring_fd, g.probe.config_fd, g.write_fd, g.open_fd },
                 *end = fd + 5;
             fd < end; fd++)
                if (*fd >= 0)
                        close(*fd);
        return in_force;
}

/* Sends fd to the service manager's store under name, and closes our copy either way. */
static int store_and_close(int fd, const char *name) {
        char msg[128];
        int r;

        snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
        r = sd_pid_notify_with_fds(0, 0, msg, &fd, 1);
        close(fd);
        /* 0: no NOTIFY_SOCKET, so nobody would keep it. */
        return r < 0 ? r : r == 0 ? -ENOTCONN : 0;
}

int writer_groups_store(WriteSource want, WriterGroups *ret) {
        WriterGroups g;

        writer_groups_open(want, HOST_THP_DIR, &g);
        if (g.probe_error == 0) {
                /* The ring first: a link alone is of no use to the daemon (writer_groups_take_stored()). */
                g.probe.ring_fd = store_and_close(g.probe.ring_fd, WRITE_PROBE_FDNAME_RING);
                if (g.probe.ring_fd < 0) {
                        close(g.probe.link_fd);
                        close(g.probe.config_fd);
                        g.probe.link_fd = g.probe.config_fd = g.probe.ring_fd;
                } else {
                        g.probe.link_fd = store_and_close(g.probe.link_fd, WRITE_PROBE_FDNAME_LINK);
                        /* Without it every record wakes the daemon: as fast a correction, a slower write. */
                        g.probe.config_fd = store_and_close(g.probe.config_fd, WRITE_PROBE_FDNAME_CONFIG);
                }
                *ret = g;
                return g.probe.ring_fd < 0 ? g.probe.ring_fd : g.probe.link_fd < 0 ? g.probe.link_fd : 0;
        }
        if (g.write_fd >= 0)
                g.write_fd = store_and_close(g.write_fd, WRITER_GROUP_FDNAME_WRITE);
        /* The open group alone is of no use to the daemon (writer_groups_take_stored()). */
        if (g.open_fd >= 0 && g.write_fd < 0) {
                close(g.open_fd);
                g.open_fd = g.write_fd;
        } else if (g.open_fd >= 0)
                g.open_fd = store_and_close(g.open_fd, WRITER_GROUP_FDNAME_OPEN);
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

int writer_groups_take_stored(WriterGroups *ret) {
        WriterGroups g = { .probe = { -ENOENT, -ENOENT, -ENOENT },
                           .probe_error = -ENOENT,
                           .write_fd = -ENOENT,
                           .open_fd = -ENOENT };
        char **names = NULL;
        int n;

        n = sd_listen_fds_with_names(1, &names);
        if (n < 0)
                return n;
        for (int i = 0; i < n; i++) {
                int fd = SD_LISTEN_FDS_START + i, *slot = NULL;
                const char *name = names ? names[i] : NULL;
                bool taken = false;

                if (name && strcmp(name, WRITER_GROUP_FDNAME_WRITE) == 0 && g.write_fd < 0)
                        slot = &g.write_fd;
                else if (name && strcmp(name, WRITER_GROUP_FDNAME_OPEN) == 0 && g.open_fd < 0)
                        slot = &g.open_fd;
                else if (name && strcmp(name, WRITE_PROBE_FDNAME_RING) == 0 && g.probe.ring_fd < 0)
                        slot = &g.probe.ring_fd;
                else if (name && strcmp(name, WRITE_PROBE_FDNAME_LINK) == 0 && g.probe.link_fd < 0)
                        slot = &g.probe.link_fd;
                else if (name && strcmp(name, WRITE_PROBE_FDNAME_CONFIG) == 0 && g.probe.config_fd < 0)
                        slot = &g.probe.config_fd;
                if (slot == &g.probe.ring_fd)
                        taken = take_probe_fd(fd, write_probe_check_ring_fd);
                else if (slot == &g.probe.link_fd)
                        taken = take_probe_fd(fd, write_probe_check_link_fd);
                else if (slot == &g.probe.config_fd)
                        taken = take_probe_fd(fd, write_probe_check_config_fd);
                else if (slot)
                        taken = take_group(fd);
                if (taken)
                        *slot = fd;
                else
                        close(fd);
                if (slot)
                        unstore(name);
        }
        for (int i = 0; names && names[i]; i++)
                free(names[i]);
        free(names);
        if (g.probe.ring_fd >= 0 && g.probe.link_fd >= 0) {
                /* With the probe in force the groups are not used: nobody is held. */
                if (g.write_fd >= 0)
                        close(g.write_fd);
                if (g.open_fd >= 0)
                        close(g.open_fd);
                g.write_fd = g.open_fd = -ENOENT;
                g.probe_error = 0;
                /* The hook, as the loader said it: the daemon's startup line names it. */
                snprintf(g.probe_why, sizeof(g.probe_why), "%s", write_probe_link_hook(g.probe.link_fd));
                *ret = g;
                return 1;
        }
        /* Without both ring and link there is no probe (the config map alone is of no use). */
        if (g.probe.ring_fd >= 0)
                close(g.probe.ring_fd);
        if (g.probe.link_fd >= 0)
                close(g.probe.link_fd);
        if (g.probe.config_fd >= 0)
                close(g.probe.config_fd);
        g.probe.ring_fd = g.probe.link_fd = g.probe.config_fd = -ENOENT;
        if (g.write_fd < 0) {
                if (g.open_fd >= 0)
                        close(g.open_fd); /* the gate names writers for the write group's records only */
                return 0;
        }
        *ret = g;
        return 1;
}
