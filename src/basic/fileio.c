/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "thpguard/fileio.h"
#include "thpguard/macro.h"

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

/* Where walk() is, and what it does on the way. */
typedef struct Walk {
        bool follow_symlinks; /* else a symlink on the way is -ELOOP; cleared when check_dir() says so */
        int (*check_dir)(int dirfd, const char *dirpath, void *userdata); /* NULL: none */
        void *userdata;
        char path[PATH_MAX]; /* the directory reached: the start's path, then each name added */
} Walk;

/* w->path one name down (or up, for ".."). */
static int walk_path_enter(Walk *w, const char *name) {
        size_t len = strlen(w->path);

        if (strcmp(name, "..") == 0) {
                char *slash = strrchr(w->path, '/');

                if (slash)
                        slash[slash == w->path ? 1 : 0] = '\0';
                return 0;
        }
        if (len + 1 + strlen(name) >= sizeof(w->path))
                return -ENAMETOOLONG;
        snprintf(w->path + len, sizeof(w->path) - len, "%s%s", len > 0 && w->path[len - 1] != '/' ? "/" : "",
                 name);
        return 0;
}

/*
 * The one path walker: resolves rel from the directory dirfd (w->path) one
 * name at a time with openat(O_PATH | O_NOFOLLOW), as the kernel would, up
 * to its last name, which it leaves to the caller to open: an O_PATH fd of
 * the directory that holds it, and the name in ret_name ("." when rel has
 * none). A symbolic link on the way is -ELOOP, or, with follow_symlinks,
 * resolved here, the last name's too (at most FILEIO_SYMLINKS_MAX; an
 * absolute target from /). check_dir, if set, is called on every directory
 * entered after dirfd, with its path; a negative return ends the walk, a
 * positive one makes every symbolic link from there on -ELOOP.
 */
static int walk(int dirfd, const char *rel, Walk *w, char ret_name[static NAME_MAX + 1]) {
        _cleanup_close_ int dir = -EBADF;
        _cleanup_free_ char *todo = strdup(rel);
        unsigned symlinks = 0;
        int r;

        if (!todo)
                return -ENOMEM;
        dir = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return -errno;
        for (const char *p = todo;;) {
                _cleanup_close_ int fd = -EBADF;
                char name[NAME_MAX + 1];
                struct stat st;
                size_t len;
                bool last;

                p += strspn(p, "/");
                len = strcspn(p, "/");
                if (len > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(name, p, len);
                name[len] = '\0';
                p += len;
                last = p[strspn(p, "/")] == '\0';
                if (len == 0 || (last && (!w->follow_symlinks || strcmp(name, ".") == 0))) {
                        snprintf(ret_name, NAME_MAX + 1, "%s", len == 0 ? "." : name);
                        r = dir;
                        dir = -EBADF;
                        return r;
                }
                if (strcmp(name, ".") == 0)
                        continue;

                fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 || fstat(fd, &st) < 0)
                        return -errno;
                if (S_ISLNK(st.st_mode)) {
                        char target[PATH_MAX], *next;
                        ssize_t n;

                        if (!w->follow_symlinks || ++symlinks > FILEIO_SYMLINKS_MAX)
                                return -ELOOP;
                        n = readlinkat(dir, name, target, sizeof(target));
                        if (n < 0)
                                return -errno;
                        if ((size_t)n >= sizeof(target))
                                return -ENAMETOOLONG;
                        target[n] = '\0';
                        /* The target then the rest, from the link's directory or from /. */
                        if (asprintf(&next, "%s/%s", target, p) < 0)
                                return -ENOMEM;
                        free(todo);
                        todo = next;
                        p = todo;
                        if (target[0] == '/') {
                                closep(&dir);
                                dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                                if (dir < 0)
                                        return -errno;
                                strcpy(w->path, "/");
                        }
                        continue;
                }
                if (last) {
                        snprintf(ret_name, NAME_MAX + 1, "%s", name);
                        r = dir;
                        dir = -EBADF;
                        return r;
                }
                if (!S_ISDIR(st.st_mode))
                        return -ENOTDIR;
                r = walk_path_enter(w, name);
                if (r < 0)
                        return r;
                closep(&dir);
                dir = fd;
                fd = -EBADF;
                if (w->check_dir) {
                        r = w->check_dir(dir, w->path, w->userdata);
                        if (r < 0)
                                return r;
                        if (r > 0)
                                w->follow_symlinks = false;
                }
        }
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

int open_beneath(int dirfd, const char *rel, int flags) {
        char buf[PATH_MAX], *dir;
        const char *name;
        int r;

        r = split(rel, buf, sizeof(buf), &dir, &name);
        if (r < 0)
                return r;
        if (!dir)
                return open_last(dirfd, name, flags);
#ifdef HAVE_OPENAT2
        {
                _cleanup_close_ int dfd = -EBADF;
                struct open_how how = {
                        .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
                };

                dfd = (int)syscall(SYS_openat2, dirfd, dir, &how, sizeof(how));
                if (dfd >= 0)
                        return open_last(dfd, name, flags);
                /* ENOSYS: before 5.6. EPERM: a seccomp filter older than the call (systemd's, a runtime's).
                 */
                if (errno != ENOSYS && errno != EPERM)
                        return -errno;
        }
#endif
        return open_beneath_walk(dirfd, rel, flags);
}

int open_beneath_walk(int dirfd, const char *rel, int flags) {
        _cleanup_close_ int dfd = -EBADF;
        char buf[PATH_MAX], name[NAME_MAX + 1], *dir;
        const char *last;
        Walk w = {};
        int r;

        /* What open_beneath() refuses before any open: an absolute rel, "..", a path too long. */
        r = split(rel, buf, sizeof(buf), &dir, &last);
        if (r < 0)
                return r;
        dfd = walk(dirfd, rel, &w, name);
        if (dfd < 0)
                return dfd;
        return open_last(dfd, name, flags);
}

/* open_path_checked() with open_last()'s flags: a regular file to read, or O_PATH | O_DIRECTORY. */
static int open_checked(const char *path, int flags,
                        int (*check_dir)(int dirfd, const char *dirpath, void *userdata), void *userdata) {
        _cleanup_close_ int root = -EBADF, dfd = -EBADF;
        _cleanup_free_ char *full = NULL;
        char name[NAME_MAX + 1];
        Walk w = { .follow_symlinks = true, .check_dir = check_dir, .userdata = userdata, .path = "/" };
        int r;

        /* A relative path from the working directory's absolute path, so that each directory on it is
         * checked. */
        if (path[0] != '/') {
                _cleanup_free_ char *cwd = getcwd(NULL, 0);

                if (!cwd)
                        return -errno;
                if (asprintf(&full, "%s/%s", cwd, path) < 0)
                        return -ENOMEM;
                path = full;
        }
        root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return -errno;
        r = check_dir(root, w.path, userdata);
        if (r < 0)
                return r;
        if (r > 0)
                w.follow_symlinks = false;
        dfd = walk(root, path, &w, name);
        if (dfd < 0)
                return dfd;
        return open_last(dfd, name, flags);
}

int open_path_checked(const char *path, int (*check_dir)(int dirfd, const char *dirpath, void *userdata),
                      void *userdata) {
        return open_checked(path, O_RDONLY, check_dir, userdata);
}

/* Is the directory on a read-only mount? Then nobody writes it, whatever its mode. */
static bool on_read_only_mount(int fd) {
        _cleanup_close_ int rfd = -EBADF;
        struct statvfs sv;

        if (fstatvfs(fd, &sv) == 0)
                return sv.f_flag & ST_RDONLY;
        /* Before Linux 3.12, fstatfs() refuses an O_PATH descriptor. */
        rfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return rfd >= 0 && fstatvfs(rfd, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

int dir_strict_modes(int fd, struct stat *ret_st, unsigned *ret_faults) {
        unsigned faults = 0;
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_uid != 0)
                faults |= DIR_FAULT_OWNER;
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !on_read_only_mount(fd))
                faults |= DIR_FAULT_WRITABLE;
        if (ret_st)
                *ret_st = st;
        *ret_faults = faults;
        return 0;
}

/*
 * open_kept_dir()'s check_dir: every directory may be anybody's, but a
 * symbolic link is followed only while all of them so far pass the
 * policy's rule, so that only root can have placed it or can replace it.
 */
static int links_only_below_strict(int fd, const char *dirpath, void *userdata) {
        unsigned faults;
        int r;

        r = dir_strict_modes(fd, NULL, &faults);
        if (r < 0)
                return r;
        return faults != 0;
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

int read_file_at(int dirfd, const char *rel, char *buf, size_t size, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;

        fd = open_beneath(dirfd, rel, O_RDONLY);
        if (fd < 0)
                return fd;
        return read_fd(fd, buf, size, ret_len);
}

int read_fd_alloc(int fd, size_t max, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, len = 0;
        int r;

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

int read_file_below_alloc(const char *root, const char *rel, size_t max, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;

        fd = open_below(root, rel, O_RDONLY);
        if (fd < 0)
                return fd;
        return read_fd_alloc(fd, max, ret, ret_len);
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
 * The directory's own rule is not dir_strict_modes(): the user we run as
 * may own it, and a read-only mount is no exception (nothing is written
 * there anyway). The temporary file is created O_EXCL | O_NOFOLLOW and
 * renamed relative to the fd, so nobody can steer our write out of the
 * directory once it is open. A Kubernetes emptyDir, always 0777, is
 * refused: use a hostPath directory.
 */
int open_kept_dir(const char *path, const char **ret_name) {
        _cleanup_close_ int fd = -EBADF;
        const char *slash = strrchr(path, '/');
        char dir[PATH_MAX];
        struct stat st;
        int r;

        if (path[0] != '/' || !slash[1])
                return -EINVAL;
        r = snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
        if (r < 0 || (size_t)r >= sizeof(dir))
                return -ENAMETOOLONG;
        fd = open_checked(dir, O_PATH | O_DIRECTORY, links_only_below_strict, NULL);
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

        dirfd = open_kept_dir(path, &name);
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
