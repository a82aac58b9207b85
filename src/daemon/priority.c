/* SPDX-License-Identifier: MIT */
#include "priority.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int priority_raise(int *ret_nice) {
        int nice;

        errno = 0;
        nice = getpriority(PRIO_PROCESS, 0);
        if (nice == -1 && errno != 0)
                return -errno;
        if (nice == 0 && setpriority(PRIO_PROCESS, 0, DAEMON_NICE) < 0)
                return -errno;
        *ret_nice = nice == 0 ? DAEMON_NICE : nice;
        return 0;
}

/*
 * struct sched_attr with the utilization clamps of Linux 5.3 (SCHED_ATTR_SIZE_VER1):
 * older kernels take a larger struct while the fields they lack are zero.
 * glibc declares it only since 2.41.
 */
typedef struct ThreadSchedAttr {
        uint32_t size;
        uint32_t sched_policy;
        uint64_t sched_flags;
        int32_t sched_nice;
        uint32_t sched_priority;
        uint64_t sched_runtime; /* SCHED_OTHER: the slice asked for, Linux 6.12+ */
        uint64_t sched_deadline;
        uint64_t sched_period;
        uint32_t sched_util_min;
        uint32_t sched_util_max;
} ThreadSchedAttr;

int priority_short_slice(void) {
        ThreadSchedAttr attr = {
                .size = sizeof(attr),
                .sched_policy = SCHED_OTHER,
                .sched_runtime = CORRECTOR_SLICE_NSEC,
        };
        int nice;

        if (sched_getscheduler(0) != SCHED_OTHER)
                return -EPERM; /* a policy someone chose (SCHED_BATCH, real time) is kept */
        errno = 0;
        nice = getpriority(PRIO_PROCESS, 0); /* this thread's own */
        if (nice == -1 && errno != 0)
                return -errno;
        attr.sched_nice = nice;
        if (syscall(SYS_sched_setattr, 0, &attr, 0) < 0)
                return -errno;
        return 0;
}
