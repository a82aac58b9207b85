/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Drops every privilege for good, in the order the kernel allows it: the
 * bounding set and the locked securebits (both need CAP_SETPCAP, so before
 * the capability sets), the ambient set, no-new-privs, then the permitted,
 * effective and inheritable sets. Afterwards not even execve() of a
 * set-uid-root or file-capability program gives any back: the bounding set
 * is empty, SECBIT_NOROOT is locked and no-new-privs is set.
 *
 * Whatever the kernel refused is left as it is (a missing CAP_SETPCAP
 * leaves the bounding set): capability_check_dropped() reads the result
 * back and says what is left. Idempotent: a process that has nothing left
 * makes no call that changes anything, so a second call is harmless.
 * The THP files are root's, 0644: root writes them with no capability.
 * Only the calling thread is changed (capset() is per thread): call it
 * before any thread is created.
 */
int capability_drop_all(void);

/*
 * The same, but what of keep (a mask of CAP_* bits) is permitted stays
 * permitted, not effective: lock mode's CAP_SYS_PTRACE, which the daemon
 * holds only until its gate is started (capability_raise() there), then
 * drops with capability_drop_all().
 */
int capability_keep_only(uint64_t keep);

/* Makes a permitted capability effective in the calling thread; -EPERM if it is not permitted. */
int capability_raise(unsigned cap);

/* Whether the calling thread has cap in its permitted set. */
bool capability_permitted(unsigned cap);

/* What the calling thread holds, read back from the kernel (capget(), prctl()). */
typedef struct CapabilityState {
        uint64_t effective, permitted, inheritable, ambient, bounding;
        bool no_new_privs;
        int securebits;
        bool securebits_locked; /* SECBIT_NOROOT and the other three bits, and their locks */
} CapabilityState;

int capability_state_read(CapabilityState *ret);

/*
 * 0 if nothing is left: every capability set and the bounding set empty,
 * no-new-privs set. -EPERM otherwise, with what is left and why in why
 * ("the bounding set keeps cap_sys_admin (0x200000): it takes
 * CAP_SETPCAP to empty it..."). A process that is not root and never had
 * a capability may keep its bounding set: with no-new-privs it can gain
 * nothing from it.
 */
int capability_check_dropped(char *why, size_t size);

/* The same, but what of keep is permitted (never effective) is no failure. */
int capability_check_kept(uint64_t keep, char *why, size_t size);
