/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/*
 * Joins a root prefix (--sysfs-root, --proc-root: "/", "/host/sys") and a
 * path relative to it. This is the one place such paths are built, so a
 * DaemonSet's /host/sys reaches every file the same way.
 */
int path_join_root(const char *root, const char *rel, char *buf, size_t size);
