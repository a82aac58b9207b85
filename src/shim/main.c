/* SPDX-License-Identifier: MIT */
/*
 * The OCI runtime shim, installed as /usr/libexec/thpguard/<runtime>-thp-<mode>
 * (runc-thp-disable, crun-thp-advised-only, ...). A container engine runs it
 * where it would run the runtime; it sets its own THP mode, which every
 * process of the container inherits (fork() copies it, execve() keeps it),
 * and becomes the real runtime with argv and environment unchanged. It never
 * runs a container in another mode: a mode the kernel refuses, or a runtime
 * that is not there, is one line on stderr (which the engine shows) and a
 * non-zero exit.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime-shim.h"

/* As env(1) and `thpguardctl exec`: 125 the shim's own failure, 126 cannot run, 127 not found. */
enum {
        SHIM_EXIT_FAILED = 125,
        SHIM_EXIT_CANNOT_RUN = 126,
        SHIM_EXIT_NOT_FOUND = 127,
};

int main(int argc, char **argv) {
        const char *name = argc > 0 && argv[0] ? argv[0] : "";
        char runtime_path[PATH_MAX], why[512];
        struct stat self;
        RuntimeShimName n;
        int r;

        if (runtime_shim_parse_name(name, &n) < 0) {
                fprintf(
                    stderr,
                    "thpguard runtime shim: '%s' does not name a runtime and a THP mode "
                    "(runc-thp-disable, runc-thp-advised-only, crun-thp-disable, crun-thp-advised-only); "
                    "not starting anything\n",
                    name);
                return SHIM_EXIT_FAILED;
        }
        r = runtime_shim_find_runtime("/", n.runtime, stat("/proc/self/exe", &self) == 0 ? &self : NULL,
                                      runtime_path, sizeof(runtime_path));
        if (r < 0) {
                fprintf(
                    stderr,
                    "%s: no %s in /usr/local/sbin, /usr/local/bin, /usr/sbin or /usr/bin (%s); not starting "
                    "the container\n",
                    name, n.runtime, strerror(-r));
                return SHIM_EXIT_NOT_FOUND;
        }
        r = thp_mode_apply(n.mode, NULL, why, sizeof(why));
        if (r < 0) {
                fprintf(stderr, "%s: %s; not starting the container\n", name, why);
                return SHIM_EXIT_FAILED;
        }
        /* The runtime sees its own name, as if the engine had run it. */
        argv[0] = n.runtime;
        execv(runtime_path, argv);
        r = -errno;
        fprintf(stderr, "%s: cannot execute %s: %s\n", name, runtime_path, strerror(-r));
        return SHIM_EXIT_CANNOT_RUN;
}
