/* SPDX-License-Identifier: MIT */
#include "thpguard/sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "thpguard/fileio.h"
#include "thpguard/knob-value.h"
#include "thpguard/knob.h"
#include "thpguard/macro.h"
#include "thpguard/path.h"

Sysfs *sysfs_free(Sysfs *s) {
        if (!s)
                return NULL;
        free(s->root);
        free(s->thp_dir);
        free(s);
        return NULL;
}

/* Only the default root must be a sysfs: fixture trees and a pod's /host/sys are what the operator says. */
static int check_default_root(const char *root, int fd) {
        struct statfs sfs;

        if (!path_equal(root, "/sys"))
                return 0;
        if (fstatfs(fd, &sfs) < 0)
                return -errno;
        return sfs.f_type == SYSFS_MAGIC ? 0 : -ENODEV;
}

static uint64_t read_ptes_max(const Sysfs *s) {
        char buf[64];
        uint64_t pmd;
        size_t len;
        long page;

        if (sysfs_read(s, "hpage_pmd_size", buf, sizeof(buf), &len) < 0 ||
            knob_value_parse_u64(buf, len, &pmd) < 0)
                return PTES_MAX_UNKNOWN;
        page = sysconf(_SC_PAGESIZE);
        if (page <= 0 || pmd < (uint64_t)page)
                return PTES_MAX_UNKNOWN;
        return knob_ptes_max(pmd, (uint64_t)page);
}

int sysfs_new(const char *root, Sysfs **ret) {
        _cleanup_sysfs_ Sysfs *s = NULL;
        _cleanup_close_ int fd = -EBADF, thp = -EBADF;
        char buf[PATH_MAX];
        int r;

        /* Not O_PATH: fstatfs() takes one only since Linux 3.12. */
        fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = check_default_root(root, fd);
        if (r < 0)
                return r;
        thp = open_beneath(fd, SYSFS_THP_DIR, O_PATH | O_DIRECTORY);
        if (thp == -ENOENT || thp == -ENOTDIR)
                return -ENODEV;
        if (thp < 0)
                return thp;

        r = path_join_root(root, SYSFS_THP_DIR, buf, sizeof(buf));
        if (r < 0)
                return r;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->root = strdup(root);
        s->thp_dir = strdup(buf);
        if (!s->root || !s->thp_dir)
                return -ENOMEM;
        s->ptes_max = read_ptes_max(s);

        *ret = TAKE_PTR(s);
        return 0;
}

uint64_t sysfs_ptes_max(const Sysfs *s) {
        return s->ptes_max;
}

int sysfs_thp_path(const Sysfs *s, const char *rel, char *buf, size_t size) {
        return path_join_root(s->thp_dir, rel, buf, size);
}

/* A knob's file, opened from the root without following a symlink below it (fileio.h). */
static int knob_open(const Sysfs *s, const char *knob, int flags) {
        char rel[PATH_MAX];
        int r;

        r = path_join_root(SYSFS_THP_DIR, knob, rel, sizeof(rel));
        if (r < 0)
                return r;
        return open_below(s->root, rel, flags);
}

int sysfs_read(const Sysfs *s, const char *knob, char *buf, size_t size, size_t *ret_len) {
        char rel[PATH_MAX];
        int r;

        r = path_join_root(SYSFS_THP_DIR, knob, rel, sizeof(rel));
        if (r < 0)
                return r;
        return read_file_below(s->root, rel, buf, size, ret_len);
}

int sysfs_write(const Sysfs *s, const char *knob, const char *value) {
        _cleanup_close_ int fd = -EBADF;
        size_t len = strlen(value);
        ssize_t n;

        /* No O_TRUNC: it raises an IN_MODIFY of its own and means nothing to sysfs. */
        fd = knob_open(s, knob, O_WRONLY);
        if (fd < 0)
                return fd;
        n = write(fd, value, len);
        if (n < 0)
                return -errno;
        if ((size_t)n != len)
                return -EIO;
        return 0;
}

static int handle_open(const Sysfs *s, const char *knob, SysfsHandle *h) {
        int fd;

        fd = knob_open(s, knob, O_RDWR);
        if (fd >= 0) {
                *h = (SysfsHandle){ .fd = fd, .writable = true, .opened = h->opened + 1 };
                return 0;
        }
        if (fd != -EROFS && fd != -EACCES && fd != -EPERM)
                return fd;
        fd = knob_open(s, knob, O_RDONLY);
        if (fd < 0)
                return fd;
        *h = (SysfsHandle){ .fd = fd, .writable = false, .opened = h->opened + 1 };
        return 0;
}

void sysfs_handle_close(SysfsHandle *h) {
        safe_close(h->fd);
        *h = (SysfsHandle){ .fd = -1, .opened = h->opened };
}

bool sysfs_handle_is_stale(const Sysfs *s, const char *knob, const SysfsHandle *h) {
        _cleanup_close_ int fd = -EBADF;
        struct stat held, now;

        if (h->fd < 0)
                return false;
        if (fstat(h->fd, &held) < 0 || held.st_nlink == 0)
                return true;
        /*
         * A file, or a whole directory, renamed away and replaced keeps its
         * links: only the path, resolved again, can tell. O_PATH opens nothing.
         */
        fd = knob_open(s, knob, O_PATH);
        if (fd < 0 || fstat(fd, &now) < 0)
                return true;
        return now.st_dev != held.st_dev || now.st_ino != held.st_ino;
}

/* What sysfs answers on an open file whose attribute was removed. */
static bool is_gone(int err) {
        return err == ENODEV || err == ESTALE || err == ENOENT;
}

_hot_ int sysfs_read_handle(const Sysfs *s, const char *knob, SysfsHandle *h, char *buf, size_t size,
                            size_t *ret_len) {
        for (int attempt = 0;; attempt++) {
                size_t len = 0;
                int r = 0;

                if (h->fd < 0) {
                        r = handle_open(s, knob, h);
                        if (r < 0)
                                return r;
                }
                for (;;) {
                        ssize_t n;

                        if (len + 1 >= size) {
                                r = -EFBIG;
                                break;
                        }
                        n = pread(h->fd, buf + len, size - 1 - len, (off_t)len);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0) {
                                r = -errno;
                                break;
                        }
                        len += (size_t)n;
                        /* A short read is the whole attribute: sysfs fills it in one go. */
                        if (n == 0 || len + 1 < size)
                                break;
                }
                if (r < 0 && is_gone(-r) && attempt == 0) {
                        sysfs_handle_close(h);
                        continue;
                }
                if (r < 0)
                        return r;
                buf[len] = '\0';
                *ret_len = len;
                return 0;
        }
}

_hot_ int sysfs_write_handle(const Sysfs *s, const char *knob, SysfsHandle *h, const char *value) {
        size_t len = strlen(value);
        ssize_t n;

        /* A read-only handle: the path write reports the real reason (EROFS, EACCES). */
        if (h->fd < 0 || !h->writable)
                return sysfs_write(s, knob, value);
        n = pwrite(h->fd, value, len, 0);
        if (n < 0) {
                int r = -errno;
                if (is_gone(-r))
                        sysfs_handle_close(h);
                return r;
        }
        return (size_t)n == len ? 0 : -EIO;
}

const char *sysfs_strerror(int errnum) {
        if (errnum == ENODEV)
                return "no " SYSFS_THP_DIR " below it (a kernel without THP, or not a sysfs mount)";
        return fileio_strerror(errnum);
}
