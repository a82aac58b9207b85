/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "thpguard/cgroup.h"

static void test_path_from_proc(void **state) {
        /* A hybrid host: v1 controllers, systemd's named hierarchy, and the unified one. */
        const char hybrid[] = "12:memory:/system.slice/other.service\n"
                              "1:name=systemd:/system.slice/named.service\n"
                              "0::/system.slice/tuned.service\n";
        const char legacy[] = "4:memory:/x\n1:name=systemd:/system.slice/named.service\n";
        const char v2[] = "0::/kubepods.slice/a.scope";
        char path[CGROUP_PATH_MAX];

        assert_int_equal(cgroup_path_from_proc(hybrid, strlen(hybrid), path, sizeof(path)), 0);
        assert_string_equal(path, "/system.slice/tuned.service");
        assert_int_equal(cgroup_path_from_proc(legacy, strlen(legacy), path, sizeof(path)), 0);
        assert_string_equal(path, "/system.slice/named.service");
        assert_int_equal(cgroup_path_from_proc(v2, strlen(v2), path, sizeof(path)), 0);
        assert_string_equal(path, "/kubepods.slice/a.scope");

        assert_int_equal(cgroup_path_from_proc("4:memory:/x\n", 12, path, sizeof(path)), -ENOENT);
        assert_int_equal(cgroup_path_from_proc("", 0, path, sizeof(path)), -ENOENT);
        assert_int_equal(cgroup_path_from_proc("0::relative\n", 12, path, sizeof(path)), -EINVAL);
        assert_int_equal(cgroup_path_from_proc("0::/a\0b\n", 8, path, sizeof(path)), -EINVAL);
        assert_int_equal(cgroup_path_from_proc(v2, strlen(v2), path, 5), -ENAMETOOLONG);
}

static void check(const char *path, const char *unit, const char *pod, const char *container) {
        CgroupOwner o;

        cgroup_owner_from_path(path, &o);
        assert_string_equal(o.unit, unit);
        assert_string_equal(o.pod_uid, pod);
        assert_string_equal(o.container_id, container);
}

#define UID       "1b2c3d4e-5f60-7a8b-9c0d-e1f2a3b4c5d6"
#define UID_UNDER "1b2c3d4e_5f60_7a8b_9c0d_e1f2a3b4c5d6"
#define CID       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_owner_systemd(void **state) {
        check("/system.slice/tuned.service", "tuned.service", "", "");
        check("/system.slice/docker.service/sub", "docker.service", "", "");
        check("/user.slice/user-1000.slice/session-3.scope", "session-3.scope", "", "");
        check("/user.slice/user-1000.slice/user@1000.service/app.slice/x.service", "user@1000.service", "",
              "");
        check("/system.slice/getty@tty1.service", "getty@tty1.service", "", "");
        check("/", "", "", "");
        check("/init.scope", "init.scope", "", "");
        /* Not a unit: a bare directory someone made. */
        check("/mygroup/sub", "", "", "");
        check("/system.slice/.service", "", "", "");
        check("/system.slice/bad name.service", "", "", "");
}

/* As a pod with a cgroup namespace of its own sees processes outside it. */
static void test_owner_private_namespace(void **state) {
        check("/../../system.slice/tuned.service", "tuned.service", "", "");
        check("/../../../../init.scope", "init.scope", "", "");
        check("/../user.slice/user-1000.slice/session-3.scope", "session-3.scope", "", "");
        /* A sibling pod's container, up to the burstable slice. */
        check("/../../kubepods-burstable-pod" UID_UNDER ".slice/cri-containerd-" CID ".scope",
              "cri-containerd-" CID ".scope", UID, CID);
        /* Only leading "..": a unit may not be called "..", nor hide behind one. */
        check("/../..", "", "", "");
        check("/system.slice/../tuned.service", "", "", "");
        check("/..foo/x.service", "", "", "");
}

static void test_owner_kubernetes(void **state) {
        /* systemd cgroup driver, cgroup v2 or v1's name=systemd: containerd, CRI-O, Docker. */
        check("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_UNDER
              ".slice/cri-containerd-" CID ".scope",
              "cri-containerd-" CID ".scope", UID, CID);
        check("/kubepods.slice/kubepods-pod" UID_UNDER ".slice/crio-" CID ".scope", "crio-" CID ".scope",
              UID, CID);
        check("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_UNDER
              ".slice/docker-" CID ".scope",
              "docker-" CID ".scope", UID, CID);
        /* cgroupfs driver (v1 and v2): no unit. */
        check("/kubepods/burstable/pod" UID "/" CID, "", UID, CID);
        check("/kubepods/pod" UID "/" CID, "", UID, CID);
        /* The pod's own cgroup, no container below it. */
        check("/kubepods/burstable/pod" UID, "", UID, "");
        /* Lookalikes outside kubepods, and malformed IDs, name nothing. */
        check("/system.slice/pod" UID ".service", "pod" UID ".service", "", "");
        check("/kubepods/burstable/podnot-a-uid/" CID, "", "", "");
        check("/kubepods/pod" UID "/NOT-HEX", "", UID, "");
        check("/kubepods.slice/kubepods-pod" UID_UNDER ".slice/cri-containerd-xyz.scope",
              "cri-containerd-xyz.scope", UID, "");
}

static void test_owner_podman(void **state) {
        (void)state;
        check("/machine.slice/libpod-" CID ".scope", "libpod-" CID ".scope", "", CID);
        check("/libpod_parent/libpod-" CID, "", "", CID);
        /* conmon, podman's monitor, is not the container. */
        check("/machine.slice/libpod-conmon-" CID ".scope", "libpod-conmon-" CID ".scope", "", "");
        check("/libpod_parent/libpod-not-hex", "", "", "");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_path_from_proc),   cmocka_unit_test(test_owner_systemd),
                cmocka_unit_test(test_owner_kubernetes), cmocka_unit_test(test_owner_private_namespace),
                cmocka_unit_test(test_owner_podman),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
