/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * Joins a root prefix (--sysfs-root, --proc-root: "/", "/host/sys") and a
 * path relative to it. This is the one place such paths are built, so a
 * DaemonSet's /host/sys reaches every file the same way.
 */
int path_join_root(const char *root, const char *rel, char *buf, size_t size);

/* True if a and b name the same path textually: runs of slashes count as one, a trailing one as none. */
bool path_equal(const char *a, const char *b);
