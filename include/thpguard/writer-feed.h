/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The writer lookups, on a thread of their own. A one-shot writer (a
 * script's `echo`) is gone from /proc a few tens of microseconds after
 * its write, once its parent reaps it. Looked up after the correction,
 * on the loop's thread, it was often gone already; looked up before, the
 * correction would wait. So a thread blocks on the fanotify group, wakes
 * together with the loop on the same write, and looks the writer up while
 * the loop corrects. The loop takes the results when it writes its record.
 *
 * The thread touches nothing of the daemon's: it reads the group and
 * /proc, and hands (device, inode, Writer) over through a small queue.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "thpguard/macro.h"
#include "thpguard/writer.h"

typedef struct WriterSeen {
        dev_t dev; /* the written file */
        ino_t ino;
        Writer writer;
} WriterSeen;

typedef struct WriterFeed WriterFeed;

/*
 * Starts the thread on group_fd (a fanotify group, whose fd the feed then
 * owns). Writes by self_pid, ours, are skipped. Start it after dropping
 * capabilities: a thread inherits them, and capset() acts on one thread.
 */
int writer_feed_new(int group_fd, const char *proc_root, pid_t self_pid, WriterFeed **ret);

/* Stops and joins the thread, closes the group. */
WriterFeed *writer_feed_free(WriterFeed *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(WriterFeed *, writer_feed_free);

/* The group, for fanotify_mark(). */
int writer_feed_group_fd(const WriterFeed *f);

/* Readable when results are queued; writer_feed_clear_ready() after reading them. */
int writer_feed_ready_fd(const WriterFeed *f);
void writer_feed_clear_ready(WriterFeed *f);

/*
 * Waits, at most timeout_usec, until every event the group holds now has
 * been looked up. Returns false on timeout (a lookup stuck on a process
 * whose memory is locked: /proc/PID/cmdline waits for it).
 */
bool writer_feed_settle(WriterFeed *f, uint64_t timeout_usec);

/*
 * The count of results queued since the start, and a wait, at most
 * timeout_usec, for a result after that count, or for events to look up.
 * inotify and fanotify hear of a write in the same kernel call, inotify
 * first: a loop woken by the one may run before the other is queued, when
 * the writer was preempted in between.
 */
uint64_t writer_feed_pushed(WriterFeed *f);
bool writer_feed_wait_result(WriterFeed *f, uint64_t pushed, uint64_t timeout_usec);

/* Takes the oldest result; false when none is left. */
bool writer_feed_pop(WriterFeed *f, WriterSeen *ret);

/* True once if results were dropped (the queue was full, or the kernel's overflowed) since the last call. */
bool writer_feed_take_overflow(WriterFeed *f);
