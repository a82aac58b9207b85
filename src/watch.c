/* SPDX-License-Identifier: MIT */
#include "thpguard/watch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

int watches_new(Watches **ret) {
        Watches *w = calloc(1, sizeof(*w));

        if (!w)
                return -ENOMEM;
        w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (w->fd < 0) {
                int r = -errno;
                free(w);
                return r;
        }
        *ret = w;
        return 0;
}

Watches *watches_free(Watches *w) {
        if (!w)
                return NULL;
        if (w->fd >= 0)
                close(w->fd);
        free(w->dirs);
        free(w);
        return NULL;
}

static int watch_add(Watches *w, const Sysfs *s, WatchDir *d) {
        char path[PATH_MAX];
        int r, wd;

        r = sysfs_thp_path(s, d->rel, path, sizeof(path));
        if (r < 0)
                return r;
        /* A symlink planted where a knob directory should be is not watched (nor read: fileio.h). */
        wd = inotify_add_watch(w->fd, path, WATCH_MASK | IN_DONT_FOLLOW | IN_ONLYDIR);
        if (wd < 0)
                return -errno;
        d->wd = wd;
        return 0;
}

/* True if a knob before index i of p lies in the same directory as knob i. */
static bool dir_seen_before(const Policy *p, size_t i) {
        size_t len = knob_dir_len(p->knobs[i].path);

        for (size_t j = 0; j < i; j++)
                if (knob_dir_len(p->knobs[j].path) == len &&
                    strncmp(p->knobs[j].path, p->knobs[i].path, len) == 0)
                        return true;
        return false;
}

size_t watches_sync(Watches *w, const Sysfs *s, const Policy *p) {
        WatchDir *dirs = NULL;
        size_t n = 0, failed = 0, unlisted = 0;

        for (size_t i = 0; i < p->n_knobs; i++) {
                const char *path = p->knobs[i].path;
                WatchDir *nd;

                if (dir_seen_before(p, i))
                        continue;
                /* Out of memory: this directory goes unwatched, and is counted so. */
                nd = unlisted == 0 ? realloc(dirs, (n + 1) * sizeof(*nd)) : NULL;
                if (!nd) {
                        unlisted++;
                        continue;
                }
                dirs = nd;
                snprintf(dirs[n].rel, sizeof(dirs[n].rel), "%.*s", (int)knob_dir_len(path), path);
                dirs[n].wd = -1;
                n++;
        }

        /* inotify_add_watch() on an inode already watched returns the same wd, so re-adding is cheap. */
        for (size_t i = 0; i < w->n_dirs; i++)
                if (w->dirs[i].wd >= 0)
                        inotify_rm_watch(w->fd, w->dirs[i].wd);
        free(w->dirs);
        w->dirs = dirs;
        w->n_dirs = n;
        w->n_unlisted = unlisted;
        for (size_t i = 0; i < n; i++)
                if (watch_add(w, s, &w->dirs[i]) < 0)
                        failed++;
        return failed + unlisted;
}

size_t watches_readd(Watches *w, const Sysfs *s) {
        size_t added = 0;

        for (size_t i = 0; i < w->n_dirs; i++)
                if (w->dirs[i].wd < 0 && watch_add(w, s, &w->dirs[i]) >= 0)
                        added++;
        return added;
}

size_t watches_lost(const Watches *w) {
        size_t lost = w->n_unlisted;

        for (size_t i = 0; i < w->n_dirs; i++)
                lost += w->dirs[i].wd < 0;
        return lost;
}

WatchDir *watches_find(Watches *w, int wd) {
        for (size_t i = 0; i < w->n_dirs; i++)
                if (w->dirs[i].wd == wd)
                        return &w->dirs[i];
        return NULL;
}
