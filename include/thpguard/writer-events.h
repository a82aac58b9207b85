/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Who writes the knob files: a fanotify group with a FAN_MODIFY mark on
 * each, which names the writing process for every write. inotify cannot:
 * it says that a file changed, never by whom.
 *
 * fanotify_init() needs CAP_SYS_ADMIN; marks added to the group later do
 * not, so the daemon opens the group at startup, then drops every
 * capability, and marks files as they are opened and replaced.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A notification-only group, non-blocking; the fd, or -errno (-EPERM without CAP_SYS_ADMIN). */
int writer_events_open(void);

/* Marks the file that file_fd is open on (not a path, so no name is resolved again). */
int writer_events_mark(int group_fd, int file_fd);

typedef struct WriterEvent {
        bool overflow; /* the kernel dropped events: writers were missed */
        pid_t pid;     /* 0: a writer outside our PID namespace */
        int fd;        /* the written file, opened for us; -1 with overflow. The caller closes it. */
} WriterEvent;

/*
 * The next event of a buffer read() from the group, from *offset on:
 * 1 and the event, 0 at the end, -EBADMSG for a malformed record (after
 * which the rest of the buffer is skipped). Pure: checks every length
 * against the buffer and the metadata version.
 */
int writer_events_next(const void *buf, size_t len, size_t *offset, WriterEvent *ret);
