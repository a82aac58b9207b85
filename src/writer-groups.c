/* SPDX-License-Identifier: MIT */
#include "thpguard/writer-groups.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "thpguard/writer-events.h"

void writer_groups_open(WriterGroups *ret) {
        ret->write_fd = writer_events_open();
        ret->open_fd = ret->write_fd < 0 ? ret->write_fd : writer_events_open_gate();
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

int writer_groups_store(WriterGroups *ret) {
        WriterGroups g;

        writer_groups_open(&g);
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

int writer_groups_take_stored(WriterGroups *ret) {
        WriterGroups g = { .write_fd = -ENOENT, .open_fd = -ENOENT };
        char **names = NULL;
        int n;

        n = sd_listen_fds_with_names(1, &names);
        if (n < 0)
                return n;
        for (int i = 0; i < n; i++) {
                int fd = SD_LISTEN_FDS_START + i, *slot = NULL;
                const char *name = names ? names[i] : NULL;

                if (name && strcmp(name, WRITER_GROUP_FDNAME_WRITE) == 0 && g.write_fd < 0)
                        slot = &g.write_fd;
                else if (name && strcmp(name, WRITER_GROUP_FDNAME_OPEN) == 0 && g.open_fd < 0)
                        slot = &g.open_fd;
                if (slot && take_group(fd))
                        *slot = fd;
                else
                        close(fd);
                if (slot)
                        unstore(name);
        }
        for (int i = 0; names && names[i]; i++)
                free(names[i]);
        free(names);
        if (g.write_fd < 0) {
                if (g.open_fd >= 0)
                        close(g.open_fd); /* the gate names writers for the write group's records only */
                return 0;
        }
        *ret = g;
        return 1;
}
