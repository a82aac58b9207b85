/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * I/O on the THP directory below a sysfs root. Knobs are named by their path
 * relative to transparent_hugepage/ (see knob.h).
 */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "thpguard/macro.h"

#define SYSFS_THP_DIR "kernel/mm/transparent_hugepage"

/* No upper bound known for max_ptes_* (hpage_pmd_size unreadable). */
#define PTES_MAX_UNKNOWN UINT64_MAX

typedef struct Sysfs {
        char *root;
        char *thp_dir;     /* <root>/kernel/mm/transparent_hugepage */
        uint64_t ptes_max; /* read once by sysfs_new(): sysfs_ptes_max() */
} Sysfs;

/*
 * Returns -ENOENT or -ENOTDIR when root itself is missing or not a
 * directory, and -ENODEV when root exists but has no THP directory (a kernel
 * without THP, or a path that is not a sysfs mount) or when root is the
 * default /sys and is not a sysfs (statfs: SYSFS_MAGIC). Any other root
 * (a fixture tree, a pod's /host/sys) is taken as the operator names it; below
 * it, no symlink is followed and only regular files are opened (fileio.h):
 * -ELOOP for a symlink on the way to the THP directory. sysfs_strerror()
 * says what each means, ENODEV included.
 */
int sysfs_new(const char *root, Sysfs **ret);

/*
 * The max_ptes_* upper bound of this kernel, from hpage_pmd_size (read by
 * sysfs_new()) and the page size; PTES_MAX_UNKNOWN if unknown.
 */
uint64_t sysfs_ptes_max(const Sysfs *s);
Sysfs *sysfs_free(Sysfs *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sysfs *, sysfs_free);
#define _cleanup_sysfs_ _cleanup_(sysfs_freep)

/* <thp_dir>/<knob>; rel may also name a directory ("khugepaged"). */
int sysfs_thp_path(const Sysfs *s, const char *rel, char *buf, size_t size);

/* Reads a whole THP file (at most size - 1 bytes; -EFBIG if longer). */
int sysfs_read(const Sysfs *s, const char *knob, char *buf, size_t size, size_t *ret_len);

/* Writes the bare value to a THP file, in one write(), without O_TRUNC. */
int sysfs_write(const Sysfs *s, const char *knob, const char *value);

/*
 * A knob file kept open across reads. On this kind of VM an open() of a
 * sysfs file costs ~20 us and a pread() ~3 us, and pread() at offset 0 of
 * an open sysfs file returns the fresh value, so the daemon holds one per
 * managed knob. Opened read-write when it may be, else read-only (a
 * read-only bind mount), lazily, by path, on first use.
 */
typedef struct SysfsHandle {
        int fd;
        bool writable;
        unsigned opened; /* times opened, kept across closes: a new value means a new open file */
} SysfsHandle;

#define SYSFS_HANDLE_CLOSED ((SysfsHandle){ .fd = -1 })

/* sysfs_read() through h, reopening once if sysfs says the file went away. */
int sysfs_read_handle(const Sysfs *s, const char *knob, SysfsHandle *h, char *buf, size_t size,
                      size_t *ret_len);

/* sysfs_write() through h where it is writable. */
int sysfs_write_handle(const Sysfs *s, const char *knob, SysfsHandle *h, const char *value);

void sysfs_handle_close(SysfsHandle *h);

/*
 * True if h no longer is the file at the knob's path: unlinked, or the file
 * or one of its directories renamed away and replaced (fixture trees; sysfs
 * itself answers ENODEV, and its directories cannot be renamed). Compares
 * the device and inode of the open file with those of the path resolved
 * again from the root.
 */
bool sysfs_handle_is_stale(const Sysfs *s, const char *knob, const SysfsHandle *h);

/*
 * fileio_strerror() for a sysfs root or a knob: also a root without the
 * THP directory (ENODEV, sysfs_new()).
 */
const char *sysfs_strerror(int errnum);
