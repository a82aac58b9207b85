/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for cgroup_path_from_proc() and cgroup_owner_from_path():
 * each input is one read of /proc/PID/cgroup, whose paths a process in a
 * delegated subtree (a container, a user's systemd) names itself.
 */
#include "fuzz-common.h"
#include "thpguard/cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char path[CGROUP_PATH_MAX];
        CgroupOwner owner;
        int r;

        FUZZ_POISON(&path);
        r = cgroup_path_from_proc((const char *)data, size, path, sizeof(path));
        if (r < 0) {
                FUZZ_ASSERT(r == -ENOENT || r == -EINVAL || r == -ENAMETOOLONG);
                FUZZ_ASSERT(FUZZ_UNTOUCHED(&path));
                return 0;
        }
        FUZZ_ASSERT(r == 0 && path[0] == '/' && fuzz_terminated(path, sizeof(path)));
        FUZZ_ASSERT(memmem(data, size, path, strlen(path)));
        cgroup_owner_from_path(path, &owner);
        FUZZ_ASSERT(fuzz_terminated(owner.unit, sizeof(owner.unit)));
        FUZZ_ASSERT(fuzz_terminated(owner.pod_uid, sizeof(owner.pod_uid)));
        FUZZ_ASSERT(fuzz_terminated(owner.container_id, sizeof(owner.container_id)));
        /* What it names is taken from the path, never made up. */
        FUZZ_ASSERT(!owner.unit[0] || strstr(path, owner.unit));
        FUZZ_ASSERT(!owner.container_id[0] || strstr(path, owner.container_id));
        return 0;
}
