/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>

#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/path.h"

static int open_below(const char *root, const char *rel) {
        char path[PATH_MAX];
        int fd, r;

        r = path_join_root(root, rel, path, sizeof(path));
        if (r < 0)
                return r;
        /* O_NONBLOCK: a FIFO planted in a fixture or --proc-root tree must not hang us. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        return fd;
}

/* /proc and sysfs files report sizes that mean nothing, so read until EOF. */
static int read_all(int fd, char *buf, size_t size, size_t *ret_len) {
        size_t len = 0;

        for (;;) {
                ssize_t n;

                if (len + 1 >= size)
                        return -EFBIG;
                n = read(fd, buf + len, size - 1 - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        *ret_len = len;
        return 0;
}

int read_file_below(const char *root, const char *rel, char *buf, size_t size, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;

        fd = open_below(root, rel);
        if (fd < 0)
                return fd;
        return read_all(fd, buf, size, ret_len);
}

int read_file_below_alloc(const char *root, const char *rel, size_t max, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, len = 0;

        fd = open_below(root, rel);
        if (fd < 0)
                return fd;
        for (;;) {
                ssize_t n;

                if (len + 1 >= size) {
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
                }
                n = read(fd, buf + len, size - 1 - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}
