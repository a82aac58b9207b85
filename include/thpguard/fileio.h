/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Opening, reading and replacing files below a root prefix (--sysfs-root,
 * --proc-root) and on a path checked from / (the policy, the files
 * thpguardd keeps) as root: the one implementation for sysfs knobs, /proc
 * files, the policy and the files thpguardd keeps. Below a root no symbolic
 * link is followed and ".." never leaves it; on a checked path a link is
 * followed only where nobody but root can have placed it; only regular
 * files (or, asked for, directories) are opened: a symlink planted in a
 * fixture tree or in a directory another user owns cannot redirect a read
 * or a write.
 */

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "thpguard/macro.h"

/* Closes *fd if it is open, keeping errno: a cleanup must not change what the caller reports. */
static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved_errno = errno;
                close(*fd);
                errno = saved_errno;
        }
}
#define _cleanup_close_ _cleanup_(closep)

/* Closes fd if it is one (a negative one is an -errno kept in its place); returns -EBADF, for fd =
 * safe_close(fd). */
static inline int safe_close(int fd) {
        if (fd >= 0)
                close(fd);
        return -EBADF;
}

/* Hands an fd out of a _cleanup_close_ variable. */
#define TAKE_FD(fd)                                                                                         \
        ({                                                                                                  \
                int _fd = (fd);                                                                             \
                (fd) = -EBADF;                                                                              \
                _fd;                                                                                        \
        })

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

/*
 * Opens rel below the directory dirfd. flags are open()'s; O_CLOEXEC,
 * O_NOCTTY, O_NONBLOCK and O_NOFOLLOW are added. With O_DIRECTORY rel must
 * name a directory (O_PATH | O_DIRECTORY gives an fd for the *at() calls);
 * otherwise a regular file, checked before the open, so a device node is
 * never opened and a FIFO never blocks. Returns the fd or -errno: -ELOOP for
 * a symlink anywhere on the way, -EXDEV for ".." or an absolute rel, -EISDIR
 * or -ENOTDIR, -EBADFD for a FIFO, socket or device node.
 *
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) where the kernel has it
 * (5.6) and no seccomp filter refuses it; open_beneath_walk() where not.
 */
int open_beneath(int dirfd, const char *rel, int flags);

/*
 * The same, one openat(O_PATH | O_NOFOLLOW) per component, for any kernel:
 * open_path_checked()'s walker, following no link.
 */
int open_beneath_walk(int dirfd, const char *rel, int flags);

/* Symbolic links open_path_checked() follows on the way, as the kernel's MAXSYMLINKS. */
#define FILEIO_SYMLINKS_MAX 40

/*
 * Opens path for reading the way the kernel would resolve it, but one name
 * at a time, following each symbolic link itself, so that check_dir() sees
 * every directory a name is looked up in, with its path: / first, then
 * down, and along each link's target (from /, or from the link's
 * directory). A relative path starts at the working directory's absolute
 * path. check_dir() returns 0 to go on, 1 to go on but follow no symbolic
 * link from there on (one is then -ELOOP), or -errno to stop there (and
 * reports why itself). The last name must be a regular file (-EISDIR,
 * -EBADFD otherwise); more than FILEIO_SYMLINKS_MAX links is -ELOOP.
 * Returns the fd or -errno. The policy's StrictModes walk.
 */
int open_path_checked(const char *path, int (*check_dir)(int dirfd, const char *dirpath, void *userdata),
                      void *userdata);

/* What dir_strict_modes() finds wrong with a directory. */
typedef enum DirFault {
        DIR_FAULT_OWNER = 1 << 0,    /* not owned by root */
        DIR_FAULT_WRITABLE = 1 << 1, /* group or others may write it, and it is not on a read-only mount */
} DirFault;

/*
 * The StrictModes rule for a directory that a path thpguardd trusts goes
 * through (the policy's, and each one up to a symbolic link on the way to
 * a file thpguardd keeps): owned by root, and not writable by group or
 * others (sticky or not: /tmp fails) unless it is on a read-only mount,
 * such as a Kubernetes ConfigMap volume, whose directory the kubelet makes
 * mode 0777. 0 with the DirFault bits in ret_faults (0: it passes) and,
 * if ret_st is not NULL, its fstat() there; or -errno.
 */
int dir_strict_modes(int fd, struct stat *ret_st, unsigned *ret_faults);

/*
 * The directory of a file thpguardd keeps (the metrics file, the feature
 * file): path is absolute; an O_PATH fd of its directory, and its last name
 * in ret_name. The path is resolved with open_path_checked()'s walker: a
 * symbolic link on the way (/var/run -> /run) is followed only while every
 * directory looked up in so far passes dir_strict_modes(), as the policy's
 * path must; after one that does not, a link is -ELOOP, so that nobody who
 * owns a directory on the way can point the write elsewhere. The directory
 * itself must be owned by root (or by the user we run as) and not writable
 * by group or others (-FILEIO_EUNSAFE_DIR); its parents may be anybody's.
 * -EINVAL for a path that is not absolute or names no file.
 */
int open_kept_dir(const char *path, const char **ret_name);

/* open_beneath() from root, which is opened as given (its own symlinks are the operator's). */
int open_below(const char *root, const char *rel, int flags);

/*
 * write_file_atomic()'s own errno for a directory it refuses (systemd's
 * chase() says ENOLINK too).
 */
#define FILEIO_EUNSAFE_DIR ENOLINK

/*
 * strerror() that also says what the errnos given a meaning of their own
 * here mean: why open_beneath() refused a file (ELOOP, EBADFD) and why
 * write_file_atomic() refused a directory (FILEIO_EUNSAFE_DIR). errnum > 0.
 * Every message about a file thpguard opens goes through it (a sysfs
 * root's or knob's through sysfs_strerror(), which adds the sysfs ones).
 */
const char *fileio_strerror(int errnum);

/* Reads fd until EOF into buf, NUL-terminated; -EFBIG if it does not fit in size - 1 bytes. */
int read_fd(int fd, char *buf, size_t size, size_t *ret_len);

/* read_fd() of root/rel. */
int read_file_below(const char *root, const char *rel, char *buf, size_t size, size_t *ret_len);

/* The same for rel below the directory dirfd (an fd of /proc/PID, say). */
int read_file_at(int dirfd, const char *rel, char *buf, size_t size, size_t *ret_len);

/* read_fd() into a heap buffer grown up to max bytes (-EFBIG past it); *ret is the caller's to free. */
int read_fd_alloc(int fd, size_t max, char **ret, size_t *ret_len);

/* The same of root/rel. */
int read_file_below_alloc(const char *root, const char *rel, size_t max, char **ret, size_t *ret_len);

/*
 * Replaces the file at path by text: a temporary file next to it
 * (".NAME.XXXXXX": the textfile collector reads only *.prom, and
 * node-feature-discovery skips hidden files), fsync()ed, made 0644 and
 * renamed over path. A reader sees the old file or the new one, never a
 * part.
 *
 * path is absolute. Its directory is opened once, with open_kept_dir()
 * (-ELOOP for a symbolic link that someone other than root could have
 * placed, -FILEIO_EUNSAFE_DIR for a directory that another user than root,
 * or than the one we run as, owns or may write: nothing is written), and
 * the temporary file is created (O_EXCL | O_NOFOLLOW) and renamed relative
 * to it: whoever owns a directory on the way cannot steer the write
 * elsewhere.
 */
int write_file_atomic(const char *path, const char *text, size_t len);
