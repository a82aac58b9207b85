/* SPDX-License-Identifier: MIT */
/*
 * The privileged half of the BPF write probe (write-probe.h): load, fill
 * the knob filter, attach, and hand back the link, the ring and the config
 * map. Run once, by thpguard-write-source (the unit's ExecStartPre=+) or
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

/*
 * libbpf's messages go to the caller's debug log, and the last line of a
 * refused load (the verifier's verdict, or libbpf's own reason) is kept
 * for the reason the probe is missing. This runs in the loading process
 * alone (a child of the daemon's, or thpguard-write-source): one at a time.
 */
static char last_message[160];

static int keep_message(enum libbpf_print_level level, const char *fmt, va_list args) {
        char line[sizeof(last_message)];
        size_t n;

        if (level == LIBBPF_DEBUG)
                return 0;
        (void)vsnprintf(line, sizeof(line), fmt, args);
        n = strcspn(line, "\n");
        line[n] = '\0';
        if (n > 0)
                memcpy(last_message, line, n + 1);
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
typedef enum Attach {
        ATTACH_FEXIT_WRITE_ITER,  /* Linux 5.11 and later */
        ATTACH_FEXIT_WRITE,       /* 5.5 to 5.10 */
        ATTACH_KPROBE_WRITE_ITER, /* a kernel that refuses BPF trampolines */
        ATTACH_KPROBE_WRITE,
        ATTACH_SYSCALL_EXIT, /* only by name: sys_enter and sys_exit */
        _ATTACH_MAX,
} Attach;

static const WriteProbeHook attach_hook[_ATTACH_MAX] = {
        [ATTACH_FEXIT_WRITE_ITER] = WRITE_PROBE_HOOK_FEXIT,
        [ATTACH_FEXIT_WRITE] = WRITE_PROBE_HOOK_FEXIT,
        [ATTACH_KPROBE_WRITE_ITER] = WRITE_PROBE_HOOK_KPROBE,
        [ATTACH_KPROBE_WRITE] = WRITE_PROBE_HOOK_KPROBE,
        [ATTACH_SYSCALL_EXIT] = WRITE_PROBE_HOOK_SYSCALL_EXIT,
};

static const char *const attach_name[_ATTACH_MAX] = {
        [ATTACH_FEXIT_WRITE_ITER] = "fexit on kernfs_fop_write_iter",
        [ATTACH_FEXIT_WRITE] = "fexit on kernfs_fop_write",
        [ATTACH_KPROBE_WRITE_ITER] = "kprobe on kernfs_fop_write_iter",
        [ATTACH_KPROBE_WRITE] = "kprobe on kernfs_fop_write",
        [ATTACH_SYSCALL_EXIT] = "raw tracepoints sys_enter and sys_exit",
};

/* Whether hook (auto: fexit, then kprobe; never syscall-exit) tries a. */
static bool hook_tries(WriteProbeHook hook, Attach a) {
        if (hook == WRITE_PROBE_HOOK_AUTO)
                return attach_hook[a] != WRITE_PROBE_HOOK_SYSCALL_EXIT;
        return attach_hook[a] == hook;
}

/* The programs of one way in: one, or sys_enter's beside sys_exit. */
static void programs_of(struct write_probe_bpf *skel, Attach a, struct bpf_program *ret[2]) {
        ret[1] = NULL;
        switch (a) {
        case ATTACH_FEXIT_WRITE_ITER:
                ret[0] = skel->progs.write_iter_exit;
                break;
        case ATTACH_FEXIT_WRITE:
                ret[0] = skel->progs.write_exit;
                break;
        case ATTACH_KPROBE_WRITE_ITER:
                ret[0] = skel->progs.kprobe_write_iter;
                break;
        case ATTACH_KPROBE_WRITE:
                ret[0] = skel->progs.kprobe_write;
                break;
        default:
                ret[0] = skel->progs.sys_exit;
                ret[1] = skel->progs.sys_enter;
                break;
        }
}

/* Opens and loads the programs of one way in alone. */
static int open_and_load(Attach a, struct write_probe_bpf **ret) {
        struct write_probe_bpf *skel = write_probe_bpf__open();
        struct bpf_program *mine[2], *prog;
        int r;

        if (!skel)
                return errno > 0 ? -errno : -ENOMEM;
        programs_of(skel, a, mine);
        bpf_object__for_each_program(prog, skel->obj)
            bpf_program__set_autoload(prog, prog == mine[0] || prog == mine[1]);
        r = write_probe_bpf__load(skel);
        if (r < 0) {
                write_probe_bpf__destroy(skel);
                return r;
        }
        *ret = skel;
        return 0;
}

/*
 * The link's fd, of our own; the kernel keeps the link while any fd of it
 * is open. Disconnected first, so that libbpf only frees its memory: its
 * detach of a kprobe's perf event would disable the event before closing it.
 */
static int attach_one(struct bpf_program *prog, int *ret_fd) {
        struct bpf_link *link = bpf_program__attach(prog);
        long err = libbpf_get_error(link);
        int fd;

        if (err)
                return err < 0 ? (int)err : -EINVAL;
        bpf_link__disconnect(link);
        fd = fcntl(bpf_link__fd(link), F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                fd = -errno;
        close(bpf_link__fd(link));
        bpf_link__destroy(link);
        if (fd < 0)
                return fd;
        *ret_fd = fd;
        return 0;
}

/*
 * A kprobe goes through the kernel's kprobe PMU (Linux 4.17 and later,
 * every kernel the probe's ring buffer needs). Where there is none, libbpf
 * would write a probe of its own into tracefs's kprobe_events instead: a
 * change to the node outside the THP directory, which the loader never makes.
 */
#define KPROBE_PMU_TYPE "/sys/bus/event_source/devices/kprobe/type"

/* -EOPNOTSUPP ("Operation not supported" in the reason) where the kernel has no kprobes. */
static int kprobes_available(void) {
        return access(KPROBE_PMU_TYPE, R_OK) < 0 ? -EOPNOTSUPP : 0;
}

/* The syscall-exit hook's sys_enter first: a sys_exit with nothing taken at entry records nothing. */
static int attach(struct write_probe_bpf *skel, Attach a, int *ret_fd, int *ret_enter_fd) {
        struct bpf_program *mine[2];
        int fd = -EBADF, enter_fd = -EBADF, r;

        programs_of(skel, a, mine);
        if (mine[1]) {
                r = attach_one(mine[1], &enter_fd);
                if (r < 0)
                        return r;
        }
        r = attach_one(mine[0], &fd);
        if (r < 0) {
                safe_close(enter_fd);
                return r;
        }
        *ret_fd = fd;
        *ret_enter_fd = enter_fd;
        return 0;
}

/* why[]: "fexit on kernfs_fop_write_iter: Operation not permitted; kprobe ...: ..." for each one tried. */
static void say_refused(WriteProbeHook hook, const int errors[_ATTACH_MAX], const char *last, char *why,
                        size_t why_size) {
        size_t at = 0;

        at += (size_t)snprintf(why, why_size, "the kernel refused it: ");
        for (Attach a = 0; a < _ATTACH_MAX && at < why_size; a++)
                if (hook_tries(hook, a))
                        at += (size_t)snprintf(why + at, why_size - at, "%s: %s; ", attach_name[a],
                                               strerror(-errors[a]));
        if (at >= why_size)
                return;
        /* EPERM from every hook is most likely ours; from one alone, the kernel's (no trampolines). */
        bool all_eperm = true;
        for (Attach a = 0; a < _ATTACH_MAX; a++)
                if (hook_tries(hook, a) && errors[a] != -EPERM)
                        all_eperm = false;
        if (all_eperm)
                at += (size_t)snprintf(why + at, why_size - at,
                                       "(it needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN); ");
        if (at < why_size && last[0])
                at += (size_t)snprintf(why + at, why_size - at, "%s; ", last);
        /* No trailing "; ". */
        if (at >= 2 && at < why_size)
                why[at - 2] = '\0';
}

int write_probe_load(const char *thp_dir, WriteProbeHook hook, WriteProbeFds *ret, char *why,
                     size_t why_size) {
        _cleanup_(destroy) struct write_probe_bpf *skel = NULL;
        _cleanup_close_ int dirfd = -EBADF, ring_fd = -EBADF, config_fd = -EBADF;
        struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
        int link_fd = -EBADF, enter_fd = -EBADF, errors[_ATTACH_MAX], r = -ENOENT;
        unsigned knobs = 0;
        Attach a;

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
        last_message[0] = '\0';
        libbpf_set_print(keep_message);
        /* Before 5.11 a map is charged to RLIMIT_MEMLOCK; we are the privileged loader, for a moment. */
        (void)setrlimit(RLIMIT_MEMLOCK, &unlimited);

        for (a = 0; a < _ATTACH_MAX; a++) {
                errors[a] = -ENOENT;
                if (!hook_tries(hook, a))
                        continue;
                if (attach_hook[a] == WRITE_PROBE_HOOK_KPROBE && (r = kprobes_available()) < 0) {
                        errors[a] = r;
                        continue;
                }
                errors[a] = r = open_and_load(a, &skel);
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
                errors[a] = r = attach(skel, a, &link_fd, &enter_fd);
                if (r == 0)
                        break;
                destroy(&skel);
        }
        libbpf_set_print(NULL);
        if (r < 0) {
                say_refused(hook, errors, last_message, why, why_size);
                return r;
        }
        ring_fd = fcntl(bpf_map__fd(skel->maps.records), F_DUPFD_CLOEXEC, 3);
        config_fd = fcntl(bpf_map__fd(skel->maps.config), F_DUPFD_CLOEXEC, 3);
        if (ring_fd < 0 || config_fd < 0) {
                r = -errno;
                snprintf(why, why_size, "cannot keep the probe's maps: %s", strerror(-r));
                close(link_fd);
                safe_close(enter_fd);
                return r;
        }
        snprintf(why, why_size, "%s", write_probe_hook_to_string(attach_hook[a]));
        *ret = (WriteProbeFds){ .link_fd = link_fd,
                                .enter_link_fd = enter_fd,
                                .ring_fd = TAKE_FD(ring_fd),
                                .config_fd = TAKE_FD(config_fd) };
        return 0;
}
