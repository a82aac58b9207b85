/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Reads of /proc/PID files that may block: smaps_rollup, smaps, cmdline and
 * mem take the process's memory lock, which the process itself can hold for
 * as long as it likes (a page of a FUSE file nobody serves, read through
 * /proc/self/mem, with another thread queued in mmap()): a reader then
 * waits in state D, as `ps` does. Each read here is a procfs_read_X()
 * (procfs.h) done by a child process, which sends back what it parsed,
 * waited for until a deadline; a child that misses it is killed and left
 * behind (it may stay in D until the lock is released), and the next read
 * gets a new child. The caller skips that process (thpguardctl pid: what
 * it could not read) and says so. One child serves every read until then:
 * a fork per scan, not per process.
 */

#include <stddef.h>
#include <stdint.h>

#include "thpguard/macro.h"
#include "thpguard/procfs.h"

/* Long enough for a /proc read on a loaded machine (tens of microseconds idle). */
#define CTL_BOUNDED_READ_DEADLINE_USEC (500 * 1000)
/*
 * thpguardctl pid's, for one process's smaps, which lists every mapping: a
 * process with tens of thousands takes far longer than one smaps_rollup.
 */
#define CTL_PID_READ_DEADLINE_USEC (2 * 1000 * 1000)

typedef struct CtlBoundedReader CtlBoundedReader;

int ctl_bounded_reader_new(const char *proc_root, uint64_t deadline_usec, CtlBoundedReader **ret);
CtlBoundedReader *ctl_bounded_reader_free(CtlBoundedReader *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(CtlBoundedReader *, ctl_bounded_reader_free);

/*
 * procfs_read_status(), procfs_read_smaps_rollup(), procfs_read_stat() and
 * procfs_read_smaps(), done by the child: their result, or -ETIMEDOUT when
 * it did not answer within the deadline.
 */
int ctl_bounded_read_status(CtlBoundedReader *r, uint64_t pid, ProcStatus *ret);
int ctl_bounded_read_smaps_rollup(CtlBoundedReader *r, uint64_t pid, ProcSmapsRollup *ret);
int ctl_bounded_read_stat(CtlBoundedReader *r, uint64_t pid, ProcStat *ret);
int ctl_bounded_read_smaps(CtlBoundedReader *r, uint64_t pid, size_t top_n, ProcSmaps *ret);
