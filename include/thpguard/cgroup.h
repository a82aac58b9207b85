/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Who a process belongs to, from its cgroup path: the systemd unit, and for
 * a Kubernetes container its pod UID and container ID. The parsing of the
 * text in /proc/PID/cgroup does no I/O; its reader is beside it.
 */

#include <stddef.h>
#include <stdint.h>

#define CGROUP_PATH_MAX         4096
#define CGROUP_UNIT_MAX         256
#define CGROUP_POD_UID_MAX      64
#define CGROUP_CONTAINER_ID_MAX 128

typedef struct CgroupOwner {
        char unit[CGROUP_UNIT_MAX];                 /* "tuned.service"; "" when none */
        char pod_uid[CGROUP_POD_UID_MAX];           /* "" unless a Kubernetes pod's */
        char container_id[CGROUP_CONTAINER_ID_MAX]; /* "" unless a container's */
} CgroupOwner;

/*
 * The process's path in the unified hierarchy ("0::/system.slice/x.service"),
 * else in systemd's named v1 hierarchy ("1:name=systemd:/..."). -ENOENT if
 * neither line is there; -ENAMETOOLONG if it does not fit.
 */
int cgroup_path_from_proc(const char *buf, size_t len, char *ret, size_t size);

/*
 * cgroup_path_from_proc() of the cgroup file read through pid_dirfd, an fd
 * of /proc/PID (a process that is gone fails to read: -ESRCH or -ENOENT),
 * or below proc_root. The file is read whole, up to 64 KiB: hybrid cgroup
 * v1 prints a line per hierarchy, each path up to PATH_MAX.
 */
int cgroup_read_path_at(int pid_dirfd, char *ret, size_t size);
int cgroup_read_path(const char *proc_root, uint64_t pid, char *ret, size_t size);

/*
 * The owner of a cgroup path. The unit is the first component after the
 * slices that names a unit, as systemd's cg_path_get_unit() finds it:
 *
 *   /system.slice/tuned.service                      unit tuned.service
 *   /user.slice/user-1000.slice/session-3.scope      unit session-3.scope
 *   /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_5f60_7a8b_9c0d_e1f2a3b4c5d6.slice/
 *       cri-containerd-<64 hex>.scope                unit, pod 1b2c3d4e-5f60-..., container <64 hex>
 *   /kubepods/burstable/pod1b2c3d4e-5f60-.../<64 hex> (cgroupfs driver): pod and container, no unit
 *
 *   /../../system.slice/tuned.service                unit tuned.service: seen from a pod
 *       with a cgroup namespace of its own, the ".." up to the common ancestor are skipped
 *
 * crio-<id>.scope and docker-<id>.scope name containers the same way. Outside
 * kubepods, podman's containers are named too:
 *
 *   /machine.slice/libpod-<64 hex>.scope             unit, container <64 hex>
 *   /libpod_parent/libpod-<64 hex>                   (cgroupfs manager) container, no unit
 * Never fails: what the path does not say stays "".
 */
void cgroup_owner_from_path(const char *path, CgroupOwner *ret);
