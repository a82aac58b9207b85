/* SPDX-License-Identifier: MIT */
/*
 * The privileged half of the BPF write probe (write-probe.h): load, fill
 * the knob filter, attach, and hand back the link, the ring and the config
 * map. Run once, by thpguard-writer-groups (the unit's ExecStartPre=+) or
 * by the daemon before it drops, never again: the daemon only reads the
 * ring and writes the config map, both mapped.
 *
 * Built only where clang, bpftool and libbpf were found at configure time
 * (src/CMakeLists.txt); elsewhere write-probe-load-none.c says so.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/write-probe.h"
#include "write-probe.skel.h"

/* The program's own output is a verifier log: the caller gets one line of why instead. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list args) {
        (void)level;
        (void)fmt;
        (void)args;
        return 0;
}

/*
 * Every regular file with a write bit in dirfd and, one level down, in its
 * directories (khugepaged/, hugepages-*kB/): what a policy can name. Only
 * stat()ed, never opened, and no symlink followed.
 */
static int add_knobs(int map_fd, int dirfd, int depth, unsigned *count) {
        _cleanup_(closedirp) DIR *dir = NULL;
        struct dirent *de;
        int fd = dup(dirfd);

        if (fd < 0)
                return -errno;
        dir = fdopendir(fd);
        if (!dir) {
                close(fd);
                return -errno;
        }
        while ((de = readdir(dir))) {
                struct stat st;

                if (de->d_name[0] == '.' || fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (S_ISREG(st.st_mode) && (st.st_mode & 0222)) {
                        uint64_t ino = st.st_ino;
                        uint8_t one = 1;

                        if (bpf_map_update_elem(map_fd, &ino, &one, BPF_ANY) < 0)
                                return -errno;
                        (*count)++;
                } else if (S_ISDIR(st.st_mode) && depth > 0) {
                        _cleanup_close_ int sub =
                            openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        int r;

                        if (sub < 0)
                                continue;
                        r = add_knobs(map_fd, sub, depth - 1, count);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static void destroy(struct write_probe_bpf **skel) {
        if (*skel)
                write_probe_bpf__destroy(*skel);
        *skel = NULL;
}

/* How the probe is hooked to the sysfs write, in the order the loader tries them. */
typedef enum Hook {
        HOOK_FEXIT_WRITE_ITER, /* Linux 5.11 and later */
        HOOK_FEXIT_WRITE,      /* 5.5 to 5.10 */
        HOOK_SYSCALL_EXIT,     /* a kernel that refuses BPF trampolines */
        _HOOK_MAX,
} Hook;

static const char *const hook_name[_HOOK_MAX] = {
        [HOOK_FEXIT_WRITE_ITER] = "fexit",
        [HOOK_FEXIT_WRITE] = "fexit",
        [HOOK_SYSCALL_EXIT] = "syscall-exit",
};

/* Opens and loads the program of one hook alone. */
static int open_and_load(Hook hook, struct write_probe_bpf **ret) {
        struct write_probe_bpf *skel = write_probe_bpf__open();
        int r;

        if (!skel)
                return errno > 0 ? -errno : -ENOMEM;
        bpf_program__set_autoload(skel->progs.write_iter_exit, hook == HOOK_FEXIT_WRITE_ITER);
        bpf_program__set_autoload(skel->progs.write_exit, hook == HOOK_FEXIT_WRITE);
        bpf_program__set_autoload(skel->progs.sys_exit, hook == HOOK_SYSCALL_EXIT);
        r = write_probe_bpf__load(skel);
        if (r < 0) {
                write_probe_bpf__destroy(skel);
                return r;
        }
        *ret = skel;
        return 0;
}

/* The link's fd, of our own; the kernel keeps the link while any fd of it is open. */
static int attach(struct write_probe_bpf *skel, Hook hook, int *ret_fd) {
        struct bpf_program *prog = hook == HOOK_FEXIT_WRITE_ITER ? skel->progs.write_iter_exit
                                   : hook == HOOK_FEXIT_WRITE    ? skel->progs.write_exit
                                                                 : skel->progs.sys_exit;
        struct bpf_link *link = bpf_program__attach(prog);
        long err = libbpf_get_error(link);
        int fd;

        if (err)
                return err < 0 ? (int)err : -EINVAL;
        fd = fcntl(bpf_link__fd(link), F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                fd = -errno;
        bpf_link__destroy(link);
        if (fd < 0)
                return fd;
        *ret_fd = fd;
        return 0;
}

int write_probe_load(const char *thp_dir, WriteProbeFds *ret, char *why, size_t why_size) {
        _cleanup_(destroy) struct write_probe_bpf *skel = NULL;
        _cleanup_close_ int dirfd = -EBADF, ring_fd = -EBADF, config_fd = -EBADF;
        struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
        int link_fd = -EBADF, errors[_HOOK_MAX], r = -ENOENT;
        unsigned knobs = 0;
        Hook hook;

        if (access("/sys/kernel/btf/vmlinux", R_OK) < 0) {
                r = -errno;
                snprintf(why, why_size, "the kernel has no BTF (/sys/kernel/btf/vmlinux: %s)", strerror(-r));
                return r;
        }
        dirfd = open(thp_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0) {
                r = -errno;
                snprintf(why, why_size, "%s: %s", thp_dir, strerror(-r));
                return r;
        }
        libbpf_set_print(quiet);
        /* Before 5.11 a map is charged to RLIMIT_MEMLOCK; we are the privileged loader, for a moment. */
        (void)setrlimit(RLIMIT_MEMLOCK, &unlimited);

        for (hook = 0; hook < _HOOK_MAX; hook++) {
                errors[hook] = r = open_and_load(hook, &skel);
                if (r < 0)
                        continue;
                r = add_knobs(bpf_map__fd(skel->maps.knobs), dirfd, 1, &knobs);
                if (r >= 0 && knobs == 0)
                        r = -ENOENT;
                if (r < 0) {
                        snprintf(why, why_size, "cannot fill the probe's filter with the knobs of %s: %s",
                                 thp_dir, strerror(-r));
                        return r;
                }
                errors[hook] = r = attach(skel, hook, &link_fd);
                if (r == 0)
                        break;
                destroy(&skel);
        }
        if (r < 0) {
                snprintf(
                    why, why_size,
                    "the kernel refused it: fexit on kernfs_fop_write_iter: %s, on kernfs_fop_write: %s; "
                    "raw tracepoint sys_exit: %s%s",
                    strerror(-errors[HOOK_FEXIT_WRITE_ITER]), strerror(-errors[HOOK_FEXIT_WRITE]),
                    strerror(-errors[HOOK_SYSCALL_EXIT]),
                    errors[HOOK_SYSCALL_EXIT] == -EPERM
                        ? " (it needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)"
                        : "");
                return r;
        }
        ring_fd = fcntl(bpf_map__fd(skel->maps.records), F_DUPFD_CLOEXEC, 3);
        config_fd = fcntl(bpf_map__fd(skel->maps.config), F_DUPFD_CLOEXEC, 3);
        if (ring_fd < 0 || config_fd < 0) {
                r = -errno;
                snprintf(why, why_size, "cannot keep the probe's maps: %s", strerror(-r));
                close(link_fd);
                return r;
        }
        snprintf(why, why_size, "%s", hook_name[hook]);
        *ret = (WriteProbeFds){ .link_fd = link_fd,
                                .ring_fd = TAKE_FD(ring_fd),
                                .config_fd = TAKE_FD(config_fd) };
        return 0;
}
