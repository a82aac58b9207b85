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

/*
 * True if path's last component is NAME.prom, not hidden: what a
 * Prometheus textfile collector reads, and never one of the temporary
 * files write_file_atomic() makes beside it. The metrics file's rule, which
 * the policy (metrics_file) and --metrics-file check too.
 */
bool path_is_textfile_name(const char *path);
