/* SPDX-License-Identifier: MIT */
#include "knob-watch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "thpguard/fileio.h"
#include "thpguard/macro.h"

/* The mask we watch: writes, plus files and directories coming and going (fixture trees, hotplug). */
#define WATCH_MASK                                                                                          \
        (IN_MODIFY | IN_ATTRIB | IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)

typedef struct WatchDir {
        char rel[KNOB_PATH_MAX]; /* "" for transparent_hugepage/ itself */
        int wd;                  /* -1 while the watch is lost */
} WatchDir;

struct Watches {
        int fd;
        WatchDir *dirs;
        size_t n_dirs;
        size_t n_unlisted; /* directories left out when memory ran short: unwatched until the next sync */
};

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
        safe_close(w->fd);
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

int watches_fd(const Watches *w) {
        return w->fd;
}

size_t watches_listed(const Watches *w) {
        return w->n_dirs;
}

bool watches_quiet(const Watches *w) {
        int queued = 0;

        return ioctl(w->fd, FIONREAD, &queued) >= 0 && queued == 0;
}

_hot_ static WatchDir *find_dir(Watches *w, int wd) {
        for (size_t i = 0; i < w->n_dirs; i++)
                if (w->dirs[i].wd == wd)
                        return &w->dirs[i];
        return NULL;
}

_hot_ int watches_next(Watches *w, const void *buf, size_t n, size_t *offset, WatchEvent *ret) {
        const struct inotify_event *ev;
        WatchDir *dir;

        if (*offset + sizeof(*ev) > n)
                return 0;
        ev = (const struct inotify_event *)((const char *)buf + *offset);
        if (ev->len > n - *offset - sizeof(*ev))
                return 0;
        *offset += sizeof(*ev) + ev->len;

        *ret = (WatchEvent){ .overflow = ev->mask & IN_Q_OVERFLOW };
        dir = ret->overflow ? NULL : find_dir(w, ev->wd);
        if (!dir)
                return 1;
        ret->dir = dir->rel;
        if (ev->mask & IN_IGNORED) {
                dir->wd = -1;
                ret->lost = true;
                return 1;
        }
        /* A watch follows its directory renamed away: drop it, so the recheck watches the path again. */
        if (ev->mask & IN_MOVE_SELF)
                inotify_rm_watch(w->fd, ev->wd);
        if (ev->len > 0 && !(ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)))
                ret->name = ev->name;
        ret->replaced = ev->mask & (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF);
        return 1;
}

struct FileWatch {
        int fd;
        char dir[PATH_MAX];
        char name[NAME_MAX + 1];
};

int file_watch_new(const char *path, FileWatch **ret) {
        _cleanup_(file_watch_freep) FileWatch *w = NULL;
        const char *slash = strrchr(path, '/');
        const char *name = slash ? slash + 1 : path;

        if (strlen(name) > NAME_MAX || strlen(path) >= PATH_MAX)
                return -ENAMETOOLONG;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->fd = -1;
        snprintf(w->name, sizeof(w->name), "%s", name);
        if (!slash)
                snprintf(w->dir, sizeof(w->dir), ".");
        else if (slash == path)
                snprintf(w->dir, sizeof(w->dir), "/");
        else
                snprintf(w->dir, sizeof(w->dir), "%.*s", (int)(slash - path), path);
        w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (w->fd < 0)
                return -errno;
        *ret = TAKE_PTR(w);
        return 0;
}

FileWatch *file_watch_free(FileWatch *w) {
        if (!w)
                return NULL;
        safe_close(w->fd);
        free(w);
        return NULL;
}

int file_watch_start(FileWatch *w) {
        if (inotify_add_watch(w->fd, w->dir,
                              IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB |
                                  IN_MOVED_FROM) < 0)
                return -errno;
        return 0;
}

int file_watch_fd(const FileWatch *w) {
        return w->fd;
}

const char *file_watch_dir(const FileWatch *w) {
        return w->dir;
}

bool file_watch_changed(FileWatch *w) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        bool changed = false;

        for (;;) {
                ssize_t n = read(w->fd, buf, sizeof(buf));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *)p;

                        p += sizeof(*ev) + ev->len;
                        /*
                         * Our file, or a ConfigMap's "..data" symlink swap: the kubelet renames
                         * ..data_tmp over ..data and never writes the file itself. Its other
                         * steps (new and removed ..<timestamp> dirs) would only reload twice.
                         */
                        if (ev->mask & IN_Q_OVERFLOW || (ev->len > 0 && (strcmp(ev->name, w->name) == 0 ||
                                                                         strcmp(ev->name, "..data") == 0)))
                                changed = true;
                }
        }
        return changed;
}
