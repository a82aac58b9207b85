/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The OCI runtime shims (/usr/libexec/thpguard/<runtime>-thp-<mode>): what a
 * shim's own name says, and where the real runtime it becomes is. Container
 * engines start a runtime by path with no arguments of ours (containerd's
 * BinaryName, CRI-O's runtime_path, podman --runtime), so the name carries
 * everything; there is no configuration file.
 */

#include <stddef.h>
#include <sys/stat.h>

#include "thpguard/thp-mode.h"

#define RUNTIME_SHIM_RUNTIME_MAX 16

typedef struct RuntimeShimName {
        char runtime[RUNTIME_SHIM_RUNTIME_MAX]; /* "runc", "crun" */
        ThpMode mode;                           /* THP_MODE_DISABLE or THP_MODE_ADVISED_ONLY */
} RuntimeShimName;

/*
 * Parses the basename of argv0, "<runtime>-thp-<mode>": runtime one of runc
 * and crun, mode disable or advised-only. -EINVAL for anything else (a
 * shim that does not know its mode must not run a container in some mode).
 */
int runtime_shim_parse_name(const char *argv0, RuntimeShimName *ret);

/* The directories searched for the real runtime, in order (the order of a default PATH); NULL-terminated. */
extern const char *const runtime_shim_search_dirs[];

/*
 * The real runtime: the first of runtime_shim_search_dirs/<runtime>, below
 * root ("/" on a node; a tree in tests), that is an executable regular file
 * and not self (the shim's own st_dev/st_ino, so a runtime name linked back
 * to the shim cannot loop; NULL: not checked). Never a relative path, never
 * PATH. -ENOENT if there is none.
 */
int runtime_shim_find_runtime(const char *root, const char *runtime, const struct stat *self, char *ret,
                              size_t size);
