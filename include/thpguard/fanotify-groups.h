/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Who writes the knob files, through two fanotify groups on the same files:
 *
 *  - the write group (FAN_CLASS_NOTIF, FAN_MODIFY): one event per write,
 *    naming the writing process. inotify says that a file changed, never
 *    by whom.
 *  - the open group (FAN_CLASS_CONTENT, FAN_OPEN_PERM): the kernel holds
 *    every open() of a marked file until the group answers it, so a writer
 *    is still alive, and its /proc/PID still there, while it is looked up.
 *    That is what names a one-shot `sh -c 'echo ... > enabled'`, whose
 *    /proc/PID is gone microseconds after its write. Kernels built without
 *    CONFIG_FANOTIFY_ACCESS_PERMISSIONS refuse it (EINVAL).
 *
 * fanotify_init() needs CAP_SYS_ADMIN; marks added to a group later do
 * not, so the daemon opens both groups at startup, then drops every
 * capability, and marks files as they are opened and replaced.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The write group, non-blocking; the fd, or -errno (-EPERM without
 * CAP_SYS_ADMIN). Where the kernel has FAN_REPORT_PIDFD (5.15), each event
 * carries a pidfd of the writer, taken when the event is read: a writer
 * gone by then is known to be gone, and its pid is never looked up (it may
 * be another process's already).
 */
int fanotify_groups_open(void);

/* The open group, non-blocking; the fd, or -errno (-EINVAL where the kernel has no permission events). */
int fanotify_groups_open_gate(void);

/* Marks the file that file_fd is open on (not a path, so no name is resolved again) for FAN_MODIFY. */
int fanotify_groups_mark(int group_fd, int file_fd);

/* Marks it in the open group for FAN_OPEN_PERM; unmark takes the mark away again. */
int fanotify_groups_mark_gate(int group_fd, int file_fd);
int fanotify_groups_unmark_gate(int group_fd, int file_fd);

/*
 * Lock mode's group (lock-verdict.h): the open group's, whose events name
 * the opening thread (FAN_REPORT_TID, Linux 4.20: -EINVAL before), not its
 * process, so that what the gate reads of it is the opener's own system
 * call. The fd, or -errno.
 */
int fanotify_groups_open_lock(void);

/* 0 if group_fd is such a group (its fdinfo's flags say so); -EMEDIUMTYPE if it is another. */
int fanotify_groups_check_lock(int group_fd);

/* Lets the open the event fd event_fd stands for go on; -errno if the group refused the answer. */
int fanotify_groups_allow(int group_fd, int event_fd);
/* Refuses it: the opener's open() fails with EPERM. */
int fanotify_groups_deny(int group_fd, int event_fd);

typedef struct FanotifyEvent {
        bool overflow;   /* the kernel dropped events: writers were missed */
        bool permission; /* an open waiting for fanotify_groups_allow() */
        bool pid_gone;   /* FAN_REPORT_PIDFD said the writer had exited when the event was read */
        pid_t pid;       /* 0: a writer outside our PID namespace */
        int fd;          /* the file, opened for us; -1 with overflow. The caller closes it. */
        int pidfd;       /* the writer, pinned; -1 when none came. The caller closes it. */
} FanotifyEvent;

/*
 * The next event of a buffer read() from a group, from *offset on:
 * 1 and the event, 0 at the end, -EBADMSG for a malformed record (after
 * which the rest of the buffer is skipped). Pure: checks every length
 * against the buffer and the metadata version.
 */
int fanotify_groups_next(const void *buf, size_t len, size_t *offset, FanotifyEvent *ret);
