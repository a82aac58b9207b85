/* SPDX-License-Identifier: MIT */
#include "thpguard/priority.h"

#include <errno.h>
#include <sys/resource.h>

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
