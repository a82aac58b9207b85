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

typedef struct WatchDir {
        char rel[KNOB_PATH_MAX]; /* "" for transparent_hugepage/ itself */
        int wd;                  /* -1 while the watch is lost */
} WatchDir;

typedef struct Watches {
        int fd;
        WatchDir *dirs;
        size_t n_dirs;
        size_t n_unlisted; /* directories left out when memory ran short: unwatched until the next sync */
} Watches;

int watches_new(Watches **ret);
Watches *watches_free(Watches *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(Watches *, watches_free);

/* Watches exactly the directories of p's knobs. Returns how many could not be watched. */
size_t watches_sync(Watches *w, const Sysfs *s, const Policy *p);

/* Tries again to watch every lost directory; returns how many were re-added. */
size_t watches_readd(Watches *w, const Sysfs *s);

/* How many directories are not watched right now. */
size_t watches_lost(const Watches *w);

WatchDir *watches_find(Watches *w, int wd);

/* The mask we watch: writes, plus files and directories coming and going (fixture trees, hotplug). */
#define WATCH_MASK                                                                                          \
        (IN_MODIFY | IN_ATTRIB | IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)
