/* SPDX-License-Identifier: MIT */
#include "thpguard/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thpguard/fileio.h"
#include "thpguard/macro.h"

/* The largest /proc/PID/cgroup read (cgroup.h). */
#define CGROUP_FILE_MAX (64 * 1024)

/*
 * /proc/PID/cgroup on a hybrid system (cgroup v1 controllers, systemd's
 * named hierarchy, cgroup v2 at /sys/fs/cgroup/unified):
 *
 *   4:memory:/system.slice/tuned.service
 *   1:name=systemd:/system.slice/tuned.service
 *   0::/system.slice/tuned.service
 *
 * On a pure cgroup v2 system only the "0::" line is there.
 */
int cgroup_path_from_proc(const char *buf, size_t len, char *ret, size_t size) {
        const char *found = NULL;
        size_t found_len = 0;
        bool unified = false;

        for (const char *line = buf, *end = buf + len; line < end && !unified;) {
                const char *nl = memchr(line, '\n', (size_t)(end - line));
                const char *eol = nl ? nl : end;
                const char *c1 = memchr(line, ':', (size_t)(eol - line));
                const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(eol - c1 - 1)) : NULL;

                if (c2) {
                        size_t controllers = (size_t)(c2 - c1 - 1);

                        unified = c1 - line == 1 && line[0] == '0' && controllers == 0;
                        if (unified || (controllers == STRLEN("name=systemd") &&
                                        memcmp(c1 + 1, "name=systemd", controllers) == 0)) {
                                found = c2 + 1;
                                found_len = (size_t)(eol - found);
                        }
                }
                line = eol + 1;
        }
        if (!found)
                return -ENOENT;
        if (found_len == 0 || found[0] != '/' || memchr(found, '\0', found_len))
                return -EINVAL;
        if (found_len >= size)
                return -ENAMETOOLONG;
        memcpy(ret, found, found_len);
        ret[found_len] = '\0';
        return 0;
}

int cgroup_read_path_at(int pid_dirfd, char *ret, size_t size) {
        _cleanup_free_ char *text = malloc(CGROUP_FILE_MAX);
        size_t len;
        int r;

        if (!text)
                return -ENOMEM;
        r = read_file_at(pid_dirfd, "cgroup", text, CGROUP_FILE_MAX, &len);
        if (r < 0)
                return r;
        return cgroup_path_from_proc(text, len, ret, size);
}

int cgroup_read_path(const char *proc_root, uint64_t pid, char *ret, size_t size) {
        _cleanup_close_ int fd = -EBADF;
        char name[32];

        snprintf(name, sizeof(name), "%" PRIu64, pid);
        fd = open_below(proc_root, name, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        return cgroup_read_path_at(fd, ret, size);
}

static bool has_suffix(const char *s, size_t len, const char *suffix) {
        size_t n = strlen(suffix);

        return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

static bool is_unit_name(const char *s, size_t len) {
        static const char *const suffixes[] = { ".service", ".scope", ".socket", ".mount", ".swap",
                                                ".timer",   ".path",  ".target", ".device" };
        bool suffix = false;

        if (len == 0 || len >= CGROUP_UNIT_MAX)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                      (s[i] >= '0' && s[i] <= '9') || strchr(":-_.\\@", s[i])))
                        return false;
        for (size_t i = 0; i < ELEMENTSOF(suffixes) && !suffix; i++)
                suffix = has_suffix(s, len, suffixes[i]) && len > strlen(suffixes[i]);
        return suffix;
}

/* A pod UID: 36 characters of hex and dashes; the systemd driver writes the dashes as '_'. */
static bool copy_pod_uid(const char *s, size_t len, char *ret) {
        if (len != 36)
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = s[i] == '_' ? '-' : s[i];
                bool dash = i == 8 || i == 13 || i == 18 || i == 23;

                if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
                        return false;
                ret[i] = c;
        }
        ret[len] = '\0';
        return true;
}

/* A container ID: 12 to 64 lower-case hex digits. */
static bool copy_container_id(const char *s, size_t len, char *ret) {
        if (len < 12 || len > 64)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        memcpy(ret, s, len);
        ret[len] = '\0';
        return true;
}

/* "kubepods-burstable-pod<uid>.slice" (systemd driver) or "pod<uid>" (cgroupfs driver). */
static bool parse_pod_component(const char *s, size_t len, char *ret) {
        const char *pod;

        if (has_suffix(s, len, ".slice")) {
                len -= STRLEN(".slice");
                for (pod = s + len; pod > s && pod[-1] != '-'; pod--)
                        ;
                return pod > s && (size_t)(s + len - pod) > 3 && memcmp(pod, "pod", 3) == 0 &&
                       copy_pod_uid(pod + 3, (size_t)(s + len - pod - 3), ret);
        }
        return len > 3 && memcmp(s, "pod", 3) == 0 && copy_pod_uid(s + 3, len - 3, ret);
}

/* "cri-containerd-<id>.scope", "crio-<id>.scope", "docker-<id>.scope", or a bare "<id>" (cgroupfs). */
static bool parse_container_component(const char *s, size_t len, char *ret) {
        static const char *const prefixes[] = { "cri-containerd-", "crio-", "docker-" };

        if (has_suffix(s, len, ".scope")) {
                len -= STRLEN(".scope");
                for (size_t i = 0; i < ELEMENTSOF(prefixes); i++) {
                        size_t n = strlen(prefixes[i]);

                        if (len > n && memcmp(s, prefixes[i], n) == 0)
                                return copy_container_id(s + n, len - n, ret);
                }
                return false;
        }
        return copy_container_id(s, len, ret);
}

/* podman's "libpod-<id>.scope" (systemd manager) or "libpod-<id>" (cgroupfs); not its "libpod-conmon-<id>".
 */
static bool parse_podman_component(const char *s, size_t len, char *ret) {
        if (has_suffix(s, len, ".scope"))
                len -= STRLEN(".scope");
        return len > STRLEN("libpod-") && memcmp(s, "libpod-", STRLEN("libpod-")) == 0 &&
               copy_container_id(s + STRLEN("libpod-"), len - STRLEN("libpod-"), ret);
}

void cgroup_owner_from_path(const char *path, CgroupOwner *ret) {
        bool past_slices = false, in_kubepods = false, in_pod = false, leading = true;

        *ret = (CgroupOwner){};
        for (const char *c = path; *c;) {
                size_t len;

                while (*c == '/')
                        c++;
                len = strcspn(c, "/");
                if (len == 0)
                        break;
                /*
                 * Seen from a private cgroup namespace, a cgroup outside it
                 * starts with one ".." per level up to the common ancestor
                 * ("/../../system.slice/x.service"). What follows is named
                 * as from that ancestor: systemd's slice names carry their
                 * whole path, so a unit or pod is still recognised.
                 */
                if (leading && len == 2 && memcmp(c, "..", 2) == 0) {
                        c += len;
                        continue;
                }
                leading = false;
                /* systemd: the unit is the first component that is not a slice. */
                if (!past_slices && !has_suffix(c, len, ".slice")) {
                        past_slices = true;
                        if (is_unit_name(c, len)) {
                                memcpy(ret->unit, c, len);
                                ret->unit[len] = '\0';
                        }
                }
                if (len >= STRLEN("kubepods") && memcmp(c, "kubepods", STRLEN("kubepods")) == 0)
                        in_kubepods = true;
                if (in_kubepods && !in_pod && parse_pod_component(c, len, ret->pod_uid))
                        in_pod = true;
                else if (in_pod && !ret->container_id[0])
                        parse_container_component(c, len, ret->container_id);
                else if (!in_kubepods && !ret->container_id[0])
                        parse_podman_component(c, len, ret->container_id);
                c += len;
        }
}
