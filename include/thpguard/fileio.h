/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Reading a whole small file below a root prefix (--sysfs-root,
 * --proc-root): the one implementation for sysfs knobs, /proc files and
 * the metrics' kernel figures. Paths are joined by path_join_root().
 */

#include <stddef.h>

/* Opens root/rel with flags plus O_CLOEXEC, O_NOCTTY and O_NONBLOCK. Returns the fd or -errno. */
int open_below(const char *root, const char *rel, int flags);

/* Reads root/rel into buf, NUL-terminated; -EFBIG if it does not fit in size - 1 bytes. */
int read_file_below(const char *root, const char *rel, char *buf, size_t size, size_t *ret_len);

/* The same into a heap buffer grown up to max bytes; *ret is the caller's to free. */
int read_file_below_alloc(const char *root, const char *rel, size_t max, char **ret, size_t *ret_len);
