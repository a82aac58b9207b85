/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Where the daemon's two fanotify groups (writer-events.h) come from.
 *
 * fanotify_init() needs CAP_SYS_ADMIN. Started by hand or in a pod, the
 * daemon opens the groups itself and then drops every capability. Under
 * the shipped unit it is given none at all: a privileged
 * ExecStartPre=+thpguard-writer-groups opens them and leaves them in the
 * service's file descriptor store (FileDescriptorStoreMax=), and systemd
 * hands them to the daemon with LISTEN_FDS. The daemon then takes them out
 * of the store again, so that its death closes the last reference and
 * lets any open the open group holds go on.
 */

#include <stdbool.h>

/* The names the groups carry through the store (FDNAME=). */
#define WRITER_GROUP_FDNAME_WRITE "thpguard-writer-write"
#define WRITER_GROUP_FDNAME_OPEN  "thpguard-writer-open"

typedef struct WriterGroups {
        int write_fd; /* -errno when there is none: why */
        int open_fd;  /* the same */
} WriterGroups;

/*
 * For thpguard-writer-groups: opens both groups and sends them to the
 * service manager's store. 0, or -errno of the first group that could not
 * be opened or sent; *ret says how each group fared.
 */
int writer_groups_store(WriterGroups *ret);

/*
 * For the daemon, before anything else takes LISTEN_FDS: the groups the
 * store handed over, each checked to be a fanotify group and cleared of
 * marks, then removed from the store. Any other passed fd is closed.
 * 1 if the store gave at least the write group (a group it did not give
 * is -ENOENT), 0 if it gave none (the caller opens its own), -errno on
 * failure.
 */
int writer_groups_take_stored(WriterGroups *ret);

/* The groups the daemon opens itself, as it did before the unit gave it no capability. */
void writer_groups_open(WriterGroups *ret);
