/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>

#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/path.h"

int open_below(const char *root, const char *rel, int flags) {
        char path[PATH_MAX];
        int fd, r;

        r = path_join_root(root, rel, path, sizeof(path));
        if (r < 0)
                return r;
        /* O_NONBLOCK: a FIFO planted in a fixture or --proc-root tree must not hang us. */
        fd = open(path, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        return fd;
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

int read_file_below(const char *root, const char *rel, char *buf, size_t size, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;
        size_t len = 0;
        int r;

        fd = open_below(root, rel, O_RDONLY);
        if (fd < 0)
                return fd;
        r = read_more(fd, buf, size, &len);
        if (r < 0)
                return r;
        if (r == 0)
                return -EFBIG;
        buf[len] = '\0';
        *ret_len = len;
        return 0;
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
