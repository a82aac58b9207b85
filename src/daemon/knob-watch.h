/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * inotify watches on the directories that hold managed knobs:
 * transparent_hugepage/, khugepaged/, each managed hugepages-<N>kB/.
 * inotify is not recursive, so each directory has its own watch. An event
 * only means "re-read and compare": the same value rewritten, an O_TRUNC
 * open and our own corrections raise IN_MODIFY too.
 */

#include <stdbool.h>
#include <stddef.h>

#include "thpguard/knob.h"
#include "thpguard/macro.h"
#include "thpguard/policy.h"
#include "thpguard/sysfs.h"

typedef struct Watches Watches;

int watches_new(Watches **ret);
Watches *watches_free(Watches *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(Watches *, watches_free);

/* The inotify fd, for the event loop: readable when events are queued. */
int watches_fd(const Watches *w);

/* Watches exactly the directories of p's knobs. Returns how many could not be watched. */
size_t watches_sync(Watches *w, const Sysfs *s, const Policy *p);

/* Tries again to watch every lost directory; returns how many were re-added. */
size_t watches_readd(Watches *w, const Sysfs *s);

/* How many directories are not watched right now. */
size_t watches_lost(const Watches *w);

/* How many directories are listed, watched or not (those memory ran short for are not). */
size_t watches_listed(const Watches *w);

/* True if no event is queued (FIONREAD); false if one is, or if that cannot be told. */
bool watches_quiet(const Watches *w);

/* One event on a knob directory, decoded. */
typedef struct WatchEvent {
        bool overflow;    /* the queue overflowed: events were lost */
        const char *dir;  /* the watched directory, as a knob's (knob_in_dir()); NULL: none of ours */
        const char *name; /* the file in dir the event is about; NULL: dir itself */
        bool lost;        /* the watch is gone (the directory went away): watches_readd() tries again */
        bool replaced;    /* the file or the directory came or went: a new inode, to reopen by path */
} WatchEvent;

/*
 * The event at *offset of buf, what one read() of watches_fd() returned
 * (n bytes), and *offset moved past it. Returns 1 with the event, 0 at the
 * end. A watch the kernel dropped is marked lost; the watch of a directory
 * renamed away is dropped (it would follow the directory), so that
 * watches_readd() watches its path again.
 */
int watches_next(Watches *w, const void *buf, size_t n, size_t *offset, WatchEvent *ret);

/*
 * One file's watch, through its directory (the file itself may be replaced
 * by a rename): a write, a rename over it, the file coming or going, or a
 * ConfigMap's "..data" symlink swap beside it.
 */
typedef struct FileWatch FileWatch;

/* Splits path into directory and name and opens an inotify instance; watches nothing yet. */
int file_watch_new(const char *path, FileWatch **ret);
FileWatch *file_watch_free(FileWatch *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(FileWatch *, file_watch_free);

/* Watches the file's directory; -errno if it cannot be watched. */
int file_watch_start(FileWatch *w);
int file_watch_fd(const FileWatch *w);
/* The directory watched, for messages. */
const char *file_watch_dir(const FileWatch *w);

/* Reads every queued event. True if one may concern the file, or events were lost. */
bool file_watch_changed(FileWatch *w);
