/* SPDX-License-Identifier: MIT */
#include "thpguard/fanotify-groups.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include "thpguard/fileio.h"
#include "thpguard/number.h"

/* include/uapi/linux/fanotify.h, Linux 5.15: RHEL 8's headers predate it. */
#ifndef FAN_REPORT_PIDFD
#define FAN_REPORT_PIDFD          0x00000080
#define FAN_EVENT_INFO_TYPE_PIDFD 4
#define FAN_EPIDFD                -2
#endif

/* Linux 4.20: RHEL 8's headers predate it too. */
#ifndef FAN_REPORT_TID
#define FAN_REPORT_TID 0x00000100
#endif

static int open_group(unsigned int class) {
        int fd = fanotify_init(class | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_CLOEXEC | O_LARGEFILE);

        return fd < 0 ? -errno : fd;
}

int fanotify_groups_open(void) {
        int fd = open_group(FAN_CLASS_NOTIF | FAN_REPORT_PIDFD);

        /* Before 5.15 the flag is EINVAL: the pid alone, then. */
        return fd == -EINVAL ? open_group(FAN_CLASS_NOTIF) : fd;
}

int fanotify_groups_open_gate(void) {
        return open_group(FAN_CLASS_CONTENT);
}

int fanotify_groups_open_lock(void) {
        return open_group(FAN_CLASS_CONTENT | FAN_REPORT_TID);
}

int fanotify_groups_check_lock(int group_fd) {
        char path[64], buf[4096], *p;
        size_t len;
        uint64_t flags;
        int r;

        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", group_fd);
        r = read_file_below("/", path + 1, buf, sizeof(buf), &len);
        if (r < 0)
                return r;
        /* "fanotify flags:110 event-flags:8002": the flags fanotify_init() was given, in hex. */
        p = strstr(buf, "fanotify flags:");
        if (!p)
                return -EMEDIUMTYPE;
        p += strlen("fanotify flags:");
        r = number_parse_hex_u64(p, strcspn(p, " \n"), &flags);
        if (r < 0)
                return r;
        if (!(flags & FAN_REPORT_TID) ||
            (flags & (FAN_CLASS_CONTENT | FAN_CLASS_PRE_CONTENT)) != FAN_CLASS_CONTENT)
                return -EMEDIUMTYPE;
        return 0;
}

/* With a NULL path, the object marked is the one the fd is open on. */
static int mark(int group_fd, unsigned int flags, uint64_t mask, int file_fd) {
        if (fanotify_mark(group_fd, flags, mask, file_fd, NULL) < 0)
                return -errno;
        return 0;
}

int fanotify_groups_mark(int group_fd, int file_fd) {
        return mark(group_fd, FAN_MARK_ADD, FAN_MODIFY, file_fd);
}

int fanotify_groups_mark_gate(int group_fd, int file_fd) {
        return mark(group_fd, FAN_MARK_ADD, FAN_OPEN_PERM, file_fd);
}

int fanotify_groups_unmark_gate(int group_fd, int file_fd) {
        return mark(group_fd, FAN_MARK_REMOVE, FAN_OPEN_PERM, file_fd);
}

static int answer(int group_fd, int event_fd, uint32_t response) {
        struct fanotify_response r = { .fd = event_fd, .response = response };
        ssize_t n;

        do
                n = write(group_fd, &r, sizeof(r));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return n == (ssize_t)sizeof(r) ? 0 : -EIO;
}

int fanotify_groups_allow(int group_fd, int event_fd) {
        return answer(group_fd, event_fd, FAN_ALLOW);
}

int fanotify_groups_deny(int group_fd, int event_fd) {
        return answer(group_fd, event_fd, FAN_DENY);
}

/*
 * A read() returns whole records, each a struct fanotify_event_metadata
 * (24 bytes, vers 3 since Linux 2.6.37) followed by event_len -
 * metadata_len bytes of info records (FAN_REPORT_* groups only):
 *
 *   event_len=24 vers=3 metadata_len=24 mask=FAN_MODIFY fd=7 pid=4242
 *
 * With FAN_REPORT_PIDFD an info record follows: a header (type 4, pad,
 * len 8) and the pidfd, FAN_NOPIDFD (-1) or FAN_EPIDFD (-2) when the
 * writer had exited or the pidfd could not be made.
 */
int fanotify_groups_next(const void *buf, size_t len, size_t *offset, FanotifyEvent *ret) {
        struct fanotify_event_metadata m;

        if (*offset >= len)
                return 0;
        if (len - *offset < sizeof(m)) {
                *offset = len;
                return -EBADMSG;
        }
        memcpy(&m, (const char *)buf + *offset, sizeof(m)); /* buf need not be aligned */
        if (m.vers != FANOTIFY_METADATA_VERSION || m.metadata_len < sizeof(m) ||
            m.event_len < m.metadata_len || m.event_len > len - *offset) {
                *offset = len;
                return -EBADMSG;
        }
        *offset += m.event_len;
        if (m.mask & FAN_Q_OVERFLOW) {
                *ret = (FanotifyEvent){ .overflow = true, .fd = -1 };
                return 1;
        }
        *ret = (FanotifyEvent){
                .permission = (m.mask & FAN_OPEN_PERM) != 0, .pid = m.pid, .fd = m.fd, .pidfd = -1
        };
        for (size_t at = m.metadata_len; at + sizeof(struct fanotify_event_info_header) <= m.event_len;) {
                const char *info = (const char *)buf + (*offset - m.event_len) + at;
                struct fanotify_event_info_header h;
                int32_t pidfd;

                memcpy(&h, info, sizeof(h));
                if (h.len < sizeof(h) || h.len > m.event_len - at)
                        break;
                if (h.info_type == FAN_EVENT_INFO_TYPE_PIDFD && h.len >= sizeof(h) + sizeof(pidfd)) {
                        memcpy(&pidfd, info + sizeof(h), sizeof(pidfd));
                        if (pidfd >= 0)
                                ret->pidfd = pidfd;
                        else
                                ret->pid_gone = pidfd != FAN_EPIDFD;
                }
                at += h.len;
        }
        return 1;
}
