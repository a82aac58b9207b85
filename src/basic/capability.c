/* SPDX-License-Identifier: MIT */
#include "thpguard/capability.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Older kernel headers (before 4.3) lack the ambient set's names. */
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT           47
#define PR_CAP_AMBIENT_IS_SET    1
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif
#ifndef SECBIT_NO_CAP_AMBIENT_RAISE
#define SECBIT_NO_CAP_AMBIENT_RAISE        (1 << 6)
#define SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED (1 << 7)
#endif
#ifndef PR_SET_NO_NEW_PRIVS
#define PR_SET_NO_NEW_PRIVS 38
#define PR_GET_NO_NEW_PRIVS 39
#endif

/* Root gains nothing on execve(), setuid() keeps the (empty) sets, and none of it can be undone. */
#define SECUREBITS_BASE                                                                                     \
        (SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |    \
         SECBIT_KEEP_CAPS_LOCKED)
/* Kernels before 4.3 have no ambient set and refuse its bits with EPERM. */
#define SECUREBITS_AMBIENT (SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

static int cap_get(struct __user_cap_data_struct data[static 2]) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

        return syscall(SYS_capget, &h, data) < 0 ? -errno : 0;
}

int capability_state_read(CapabilityState *ret) {
        struct __user_cap_data_struct data[2] = {};
        CapabilityState s = {};
        int r, nnp;

        r = cap_get(data);
        if (r < 0)
                return r;
        s.effective = (uint64_t)data[1].effective << 32 | data[0].effective;
        s.permitted = (uint64_t)data[1].permitted << 32 | data[0].permitted;
        s.inheritable = (uint64_t)data[1].inheritable << 32 | data[0].inheritable;
        for (unsigned c = 0; c < 64; c++) {
                r = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
                if (r < 0)
                        break; /* EINVAL: past the kernel's last capability */
                if (r > 0)
                        s.bounding |= UINT64_C(1) << c;
                /* EINVAL before Linux 4.3, which has no ambient set: nothing can be in it. */
                if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) > 0)
                        s.ambient |= UINT64_C(1) << c;
        }
        nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
        s.no_new_privs = nnp > 0;
        s.securebits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
        s.securebits_locked = s.securebits >= 0 && (s.securebits & SECUREBITS_BASE) == SECUREBITS_BASE;
        *ret = s;
        return 0;
}

static bool nothing_left(const CapabilityState *s) {
        return !s->effective && !s->permitted && !s->inheritable && !s->ambient && !s->bounding &&
               s->no_new_privs;
}

static void lock_securebits(const CapabilityState *s) {
        int want;

        if (s->securebits < 0 || s->securebits_locked)
                return;
        want = s->securebits | SECUREBITS_BASE;
        if (prctl(PR_SET_SECUREBITS, want | SECUREBITS_AMBIENT, 0, 0, 0) < 0)
                (void)prctl(PR_SET_SECUREBITS, want, 0, 0, 0);
}

int capability_keep_only(uint64_t keep) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2] = {};
        CapabilityState s;
        uint64_t kept;
        int r;

        r = capability_state_read(&s);
        if (r < 0)
                return r;
        if (nothing_left(&s))
                return 0;
        kept = s.permitted & keep;
        /* Both need CAP_SETPCAP in the effective set: before the sets are emptied. The bounding set
         * goes whole: it only limits what execve() gives, and takes nothing from the permitted set. */
        if (s.effective & (UINT64_C(1) << CAP_SETPCAP)) {
                for (unsigned c = 0; c < 64; c++)
                        if (s.bounding & (UINT64_C(1) << c))
                                (void)prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
                lock_securebits(&s);
        }
        if (s.ambient)
                (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        if (!s.no_new_privs)
                (void)prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        data[0].permitted = (uint32_t)kept;
        data[1].permitted = (uint32_t)(kept >> 32);
        /* A process that has no more than it keeps makes no capset() call, which a seccomp filter may
         * refuse. */
        if ((s.effective || s.inheritable || s.permitted != kept) && syscall(SYS_capset, &h, data) < 0)
                return -errno;
        return 0;
}

int capability_drop_all(void) {
        return capability_keep_only(0);
}

int capability_raise(unsigned cap) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2] = {};
        int r;

        r = cap_get(data);
        if (r < 0)
                return r;
        if (!(data[cap / 32].permitted & (1U << (cap % 32))))
                return -EPERM;
        data[cap / 32].effective |= 1U << (cap % 32);
        return syscall(SYS_capset, &h, data) < 0 ? -errno : 0;
}

bool capability_permitted(unsigned cap) {
        CapabilityState s;

        return capability_state_read(&s) == 0 && (s.permitted & (UINT64_C(1) << cap));
}

int capability_check_kept(uint64_t keep, char *why, size_t size) {
        CapabilityState s;
        int r;

        r = capability_state_read(&s);
        if (r < 0) {
                snprintf(why, size, "cannot read the capability sets back: %s", strerror(-r));
                return r;
        }
        if (s.effective || (s.permitted & ~keep) || s.inheritable || s.ambient) {
                snprintf(why, size,
                         "capabilities are left: effective 0x%" PRIx64 ", permitted 0x%" PRIx64
                         ", inheritable 0x%" PRIx64 ", ambient 0x%" PRIx64,
                         s.effective, s.permitted, s.inheritable, s.ambient);
                return -EPERM;
        }
        if (!s.no_new_privs) {
                snprintf(why, size, "no-new-privs could not be set");
                return -EPERM;
        }
        /* Not root and never privileged: with no-new-privs, execve() cannot use the bounding set. */
        if (s.bounding && geteuid() != 0 && getuid() != 0)
                return 0;
        /* What is kept may stay in it too: with no-new-privs no execve() gains from it. */
        if (s.bounding & ~keep) {
                snprintf(why, size,
                         "the bounding set keeps 0x%" PRIx64
                         ": emptying it takes CAP_SETPCAP, which this process was not given (the "
                         "shipped unit's CapabilityBoundingSet= has it)",
                         s.bounding & ~keep);
                return -EPERM;
        }
        return 0;
}

int capability_check_dropped(char *why, size_t size) {
        return capability_check_kept(0, why, size);
}
