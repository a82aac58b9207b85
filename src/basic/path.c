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

bool path_equal(const char *a, const char *b) {
        if ((*a == '/') != (*b == '/'))
                return false;
        for (;;) {
                size_t na, nb;

                a += strspn(a, "/");
                b += strspn(b, "/");
                na = strcspn(a, "/");
                nb = strcspn(b, "/");
                if (na != nb || strncmp(a, b, na) != 0)
                        return false;
                if (na == 0)
                        return true;
                a += na;
                b += nb;
        }
}

bool path_is_textfile_name(const char *path) {
        const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
        size_t len = strlen(name);

        return len > strlen(".prom") && name[0] != '.' && strcmp(name + len - strlen(".prom"), ".prom") == 0;
}
