/* SPDX-License-Identifier: MIT */
#include "thpguard/capability.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "thpguard/macro.h"

static int cap_get(struct __user_cap_data_struct data[static 2]) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

        return syscall(SYS_capget, &h, data) < 0 ? -errno : 0;
}

int capability_drop_all(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2] = {};
        bool any = false;
        int r;

        /* Without CAP_SETPCAP this fails with EPERM: the bounding set is then the service manager's. */
        for (unsigned long c = 0; prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++)
                (void)prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
                /* EINVAL before Linux 4.3, which has no ambient set. */
#ifdef PR_CAP_AMBIENT
        (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
#endif

        r = cap_get(data);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(data); i++)
                any = any || data[i].effective || data[i].permitted || data[i].inheritable;
        if (!any)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(data); i++)
                data[i] = (struct __user_cap_data_struct){};
        if (syscall(SYS_capset, &h, data) < 0)
                return -errno;
        return 0;
}
