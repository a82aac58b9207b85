/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/sysfs.h"

/* openat2() came with Linux 5.6 and glibc 2.32's SYS_openat2; older build hosts walk. */
#if defined(SYS_openat2) && defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HAVE_OPENAT2 1
#endif
#endif

/*
 * Copies rel into buf and splits it into its directory part (NULL for none)
 * and its last component ("." for rel ""). A trailing slash is dropped.
 */
static int split(const char *rel, char *buf, size_t size, char **ret_dir, const char **ret_name) {
        size_t len = strlen(rel);
        char *slash;

        if (rel[0] == '/')
                return -EXDEV;
        if (len >= size)
                return -ENAMETOOLONG;
        memcpy(buf, rel, len + 1);
        /* Nothing below a root needs "..", so it is refused on every path, as RESOLVE_BENEATH would. */
        for (const char *p = buf; *p; p += strspn(p, "/")) {
                size_t n = strcspn(p, "/");

                if (n == 2 && p[0] == '.' && p[1] == '.')
                        return -EXDEV;
                p += n;
        }
        while (len > 0 && buf[len - 1] == '/')
                buf[--len] = '\0';
        slash = strrchr(buf, '/');
        if (!slash) {
                *ret_dir = NULL;
                *ret_name = buf[0] ? buf : ".";
                return 0;
        }
        *slash = '\0';
        *ret_dir = buf;
        *ret_name = slash + 1;
        return 0;
}

/* dir below dirfd, one openat(O_NOFOLLOW) per component; dir is cut up in place. */
static int walk_dir(int dirfd, char *dir) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        for (char *p = dir; *p;) {
                size_t n = strcspn(p, "/");
                char *next = p + n + strspn(p + n, "/");
                int nfd;

                p[n] = '\0';
                if (strcmp(p, ".") != 0) {
                        nfd = openat(fd >= 0 ? fd : dirfd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (nfd < 0) {
                                struct stat st;

                                r = -errno;
                                /* O_NOFOLLOW | O_DIRECTORY answers ENOTDIR for a symlink; say what it is. */
                                if (r == -ENOTDIR &&
                                    fstatat(fd >= 0 ? fd : dirfd, p, &st, AT_SYMLINK_NOFOLLOW) >= 0 &&
                                    S_ISLNK(st.st_mode))
                                        r = -ELOOP;
                                return r;
                        }
                        if (fd >= 0)
                                close(fd);
                        fd = nfd;
                }
                p = next;
        }
        if (fd < 0) {
                fd = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
        }
        r = fd;
        fd = -EBADF;
        return r;
}

static int openat2_dir(int dirfd, char *dir) {
#ifdef HAVE_OPENAT2
        struct open_how how = {
                .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
        };
        long fd = syscall(SYS_openat2, dirfd, dir, &how, sizeof(how));

        if (fd >= 0)
                return (int)fd;
        /* ENOSYS: before 5.6. EPERM: a seccomp filter older than the call (systemd's, a runtime's). */
        if (errno != ENOSYS && errno != EPERM)
                return -errno;
#endif
        return walk_dir(dirfd, dir);
}

static int check_type(const struct stat *st, int flags) {
        if (S_ISLNK(st->st_mode))
                return -ELOOP;
        if (flags & O_DIRECTORY)
                return S_ISDIR(st->st_mode) ? 0 : -ENOTDIR;
        if (S_ISDIR(st->st_mode))
                return -EISDIR;
        return S_ISREG(st->st_mode) ? 0 : -EBADFD;
}

/* name in the directory dirfd: its type is checked before the open (a device is never opened) and after. */
static int open_last(int dirfd, const char *name, int flags) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        r = check_type(&st, flags);
        if (r < 0)
                return r;
        /* O_NONBLOCK: should a FIFO be swapped in after the look, the open still returns at once. */
        fd = openat(dirfd, name, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        r = check_type(&st, flags);
        if (r < 0)
                return r;
        r = fd;
        fd = -EBADF;
        return r;
}

static int open_beneath_by(int dirfd, const char *rel, int flags, int (*open_dir)(int, char *)) {
        _cleanup_close_ int dfd = -EBADF;
        char buf[PATH_MAX], *dir;
        const char *name;
        int r;

        r = split(rel, buf, sizeof(buf), &dir, &name);
        if (r < 0)
                return r;
        if (!dir)
                return open_last(dirfd, name, flags);
        dfd = open_dir(dirfd, dir);
        if (dfd < 0)
                return dfd;
        return open_last(dfd, name, flags);
}

int open_beneath(int dirfd, const char *rel, int flags) {
        return open_beneath_by(dirfd, rel, flags, openat2_dir);
}

int open_beneath_walk(int dirfd, const char *rel, int flags) {
        return open_beneath_by(dirfd, rel, flags, walk_dir);
}

int open_below(const char *root, const char *rel, int flags) {
        _cleanup_close_ int rfd = -EBADF;

        rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rfd < 0)
                return -errno;
        while (*rel == '/')
                rel++;
        return open_beneath(rfd, rel, flags);
}

const char *fileio_strerror(int errnum) {
        switch (errnum) {
        case ELOOP:
                return "a symbolic link on the way, not followed";
        case EBADFD:
                return "not a regular file (a FIFO, socket or device node), not opened";
        case FILEIO_EUNSAFE_DIR:
                return "its directory can be written by a user other than root; refused";
        case ENODEV:
                return "no " SYSFS_THP_DIR " below it (a kernel without THP, or not a sysfs mount)";
        default:
                return strerror(errnum);
        }
}

/*
 * /proc and sysfs files report sizes that mean nothing, so read until EOF:
 * appends to buf from *len until EOF (returns 1) or until only the byte for
 * the NUL is left (returns 0), or -errno.
 */
static int read_more(int fd, char *buf, size_t size, size_t *len) {
        while (*len + 1 < size) {
                ssize_t n = read(fd, buf + *len, size - 1 - *len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return 1;
                *len += (size_t)n;
        }
        return 0;
}

int read_fd(int fd, char *buf, size_t size, size_t *ret_len) {
        size_t len = 0;
        int r;

        r = read_more(fd, buf, size, &len);
        if (r < 0)
                return r;
        if (r == 0)
                return -EFBIG;
        buf[len] = '\0';
        *ret_len = len;
        return 0;
}

int read_file_below(const char *root, const char *rel, char *buf, size_t size, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;

        fd = open_below(root, rel, O_RDONLY);
        if (fd < 0)
                return fd;
        return read_fd(fd, buf, size, ret_len);
}

int read_pid_file(const char *proc_root, uint64_t pid, const char *name, char *buf, size_t size,
                  size_t *ret_len) {
        char rel[64];

        snprintf(rel, sizeof(rel), "%" PRIu64 "/%s", pid, name);
        return read_file_below(proc_root, rel, buf, size, ret_len);
}

int read_file_at(int dirfd, const char *rel, char *buf, size_t size, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;

        fd = open_beneath(dirfd, rel, O_RDONLY);
        if (fd < 0)
                return fd;
        return read_fd(fd, buf, size, ret_len);
}

int read_file_below_alloc(const char *root, const char *rel, size_t max, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, len = 0;
        int r;

        fd = open_below(root, rel, O_RDONLY);
        if (fd < 0)
                return fd;
        do {
                size_t want = size ? size * 4 : 64 * 1024;
                char *p;

                if (size >= max)
                        return -EFBIG;
                if (want > max)
                        want = max;
                p = realloc(buf, want);
                if (!p)
                        return -ENOMEM;
                buf = p;
                size = want;
                r = read_more(fd, buf, size, &len);
                if (r < 0)
                        return r;
        } while (r == 0);
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

static int write_all(int fd, const char *buf, size_t len) {
        while (len > 0) {
                ssize_t n = write(fd, buf, len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                buf += n;
                len -= (size_t)n;
        }
        return 0;
}

/*
 * The directory of a file thpguardd keeps (the metrics file, the feature
 * file), opened once from / without following a symlink anywhere: nobody who owns a directory on the way can
 * point the write elsewhere. The directory itself must be root's (or that of
 * the user we run as): a directory that belongs to another user is refused.
 * Its mode is not: the temporary file is created O_EXCL | O_NOFOLLOW and
 * renamed relative to the directory fd, so whoever else may write there can
 * only replace or add files, as they could anyway, never steer our write
 * out of it. A Kubernetes emptyDir, the DaemonSet's, is always root's and
 * 0777. Parents are walked without symlinks but not owner-checked: Debian's
 * /var/lib/prometheus/node-exporter (root's, 0755) lies in a directory the
 * prometheus user owns.
 */
static int open_dir(const char *path, const char **ret_name) {
        _cleanup_close_ int fd = -EBADF;
        const char *slash = strrchr(path, '/');
        char dir[PATH_MAX];
        struct stat st;
        int r;

        if (path[0] != '/' || !slash[1])
                return -EINVAL;
        r = snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
        if (r < 0 || (size_t)r >= sizeof(dir))
                return -ENAMETOOLONG;
        fd = open_below("/", dir, O_PATH | O_DIRECTORY);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        /* Whoever else can write it could have planted what we then present as ours. */
        if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH)))
                return -FILEIO_EUNSAFE_DIR;
        *ret_name = slash + 1;
        r = fd;
        fd = -EBADF;
        return r;
}

/* ".NAME.XXXXXX" in dirfd, created as mkostemp() would, but relative to the directory fd. */
static int create_temp(int dirfd, const char *name, char *tmp, size_t size) {
        static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

        for (unsigned attempt = 0; attempt < 100; attempt++) {
                unsigned char rnd[6];
                char suffix[sizeof(rnd) + 1];
                int fd, r;

                if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
                        /* No entropy yet at early boot: the clock will do, O_EXCL keeps it safe. */
                        struct timespec ts;
                        uint64_t x;

                        clock_gettime(CLOCK_MONOTONIC, &ts);
                        x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 40 ^
                            attempt;
                        memcpy(rnd, &x, sizeof(rnd));
                }
                for (size_t i = 0; i < sizeof(rnd); i++)
                        suffix[i] = letters[rnd[i] % STRLEN(letters)];
                suffix[sizeof(rnd)] = '\0';
                r = snprintf(tmp, size, ".%s.%s", name, suffix);
                if (r < 0 || (size_t)r >= size)
                        return -ENAMETOOLONG;
                fd = openat(dirfd, tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW,
                            0644);
                if (fd >= 0)
                        return fd;
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

int write_file_atomic(const char *path, const char *text, size_t len) {
        _cleanup_close_ int dirfd = -EBADF, fd = -EBADF;
        const char *name = NULL;
        char tmp[NAME_MAX + 1];
        int r;

        dirfd = open_dir(path, &name);
        if (dirfd < 0)
                return dirfd;
        /* Same directory, so renameat() is atomic; hidden (and not *.prom), so no collector or
         * node-feature-discovery reads it. */
        fd = create_temp(dirfd, name, tmp, sizeof(tmp));
        if (fd < 0)
                return fd;
        r = write_all(fd, text, len);
        if (r >= 0 && fchmod(fd, 0644) < 0)
                r = -errno;
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        /* renameat() replaces the entry called name, whatever it is: it follows no symlink. */
        if (r >= 0 && renameat(dirfd, tmp, dirfd, name) < 0)
                r = -errno;
        if (r < 0)
                (void)unlinkat(dirfd, tmp, 0);
        return r;
}
