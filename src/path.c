/* SPDX-License-Identifier: MIT */
#include "thpguard/path.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int path_join_root(const char *root, const char *rel, char *buf, size_t size) {
        size_t rlen = strlen(root);
        int r;

        while (rlen > 0 && root[rlen - 1] == '/')
                rlen--;
        while (*rel == '/')
                rel++;
        r = snprintf(buf, size, "%.*s/%s", (int)rlen, root, rel);
        if (r < 0 || (size_t)r >= size)
                return -ENAMETOOLONG;
        return 0;
}
