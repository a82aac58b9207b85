/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime-shim.h"
#include "thpguard/macro.h"
#include "thpguard/path.h"

/* The runtimes a shim may become: each is named in the packaged engine drop-ins. */
static const char *const known_runtimes[] = { "runc", "crun" };

const char *const runtime_shim_search_dirs[] = {
        "usr/local/sbin", "usr/local/bin", "usr/sbin", "usr/bin", NULL,
};

int runtime_shim_parse_name(const char *argv0, RuntimeShimName *ret) {
        const char *base, *sep, *mode_name;
        RuntimeShimName n = {};
        size_t runtime_len;
        bool known = false;

        if (!argv0)
                return -EINVAL;
        base = strrchr(argv0, '/');
        base = base ? base + 1 : argv0;
        sep = strstr(base, "-thp-");
        if (!sep)
                return -EINVAL;
        runtime_len = (size_t)(sep - base);
        if (runtime_len == 0 || runtime_len >= sizeof(n.runtime))
                return -EINVAL;
        memcpy(n.runtime, base, runtime_len);
        for (size_t i = 0; i < ELEMENTSOF(known_runtimes); i++)
                if (strcmp(n.runtime, known_runtimes[i]) == 0)
                        known = true;
        if (!known)
                return -EINVAL;

        mode_name = sep + STRLEN("-thp-");
        n.mode = thp_mode_from_string(mode_name);
        /* "inherit" would be a shim that changes nothing: a configuration mistake, not a mode. */
        if (n.mode != THP_MODE_DISABLE && n.mode != THP_MODE_ADVISED_ONLY)
                return -EINVAL;
        *ret = n;
        return 0;
}

int runtime_shim_find_runtime(const char *root, const char *runtime, const struct stat *self, char *ret,
                              size_t size) {
        char rel[128], path[4096];

        if (!runtime || !*runtime || strchr(runtime, '/'))
                return -EINVAL;
        for (size_t i = 0; runtime_shim_search_dirs[i]; i++) {
                struct stat st;
                int r;

                if (snprintf(rel, sizeof(rel), "%s/%s", runtime_shim_search_dirs[i], runtime) >=
                    (int)sizeof(rel))
                        return -ENAMETOOLONG;
                r = path_join_root(root, rel, path, sizeof(path));
                if (r < 0)
                        return r;
                /* stat(), not lstat(): a runtime installed through a symlink (alternatives) is the
                 * operator's; what it resolves to must be an executable file that is not this shim. */
                if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || access(path, X_OK) < 0)
                        continue;
                if (self && st.st_dev == self->st_dev && st.st_ino == self->st_ino)
                        continue;
                if (strlen(path) >= size)
                        return -ENAMETOOLONG;
                memcpy(ret, path, strlen(path) + 1);
                return 0;
        }
        return -ENOENT;
}
