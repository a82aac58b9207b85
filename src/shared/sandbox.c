/* SPDX-License-Identifier: MIT */
#include "thpguard/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "thpguard/fileio.h"
#include "thpguard/macro.h"

/*
 * Landlock, as the kernel's UAPI has it (linux/landlock.h), defined here:
 * the oldest build hosts' headers (RHEL 8, Debian 11) lack it, and a
 * binary built there must still use it on a newer kernel.
 */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH      1
#define LL_FS_EXECUTE             (1ULL << 0)
#define LL_FS_WRITE_FILE          (1ULL << 1)
#define LL_FS_READ_FILE           (1ULL << 2)
#define LL_FS_READ_DIR            (1ULL << 3)
#define LL_FS_REMOVE_FILE         (1ULL << 5)
#define LL_FS_MAKE_REG            (1ULL << 8)
#define LL_FS_ABI1                ((1ULL << 13) - 1) /* EXECUTE .. MAKE_SYM */
#define LL_FS_REFER               (1ULL << 13)       /* ABI 2 */
#define LL_FS_TRUNCATE            (1ULL << 14)       /* ABI 3 */
#define LL_FS_IOCTL_DEV           (1ULL << 15)       /* ABI 5 */
#define LL_NET_BIND_TCP           (1ULL << 0)        /* ABI 4 */
#define LL_NET_CONNECT_TCP        (1ULL << 1)
#define LL_SCOPE_SIGNAL           (1ULL << 1) /* ABI 6 */
/* What a rule on a file, not a directory, may allow. */
#define LL_FS_FILE_RIGHTS                                                                                   \
        (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

struct ll_ruleset_attr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net; /* ABI 4 */
        uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath_attr {
        uint64_t allowed_access;
        int32_t parent_fd;
} __attribute__((packed));

/* The same numbers on every architecture with the unified syscall table. */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule       445
#define __NR_landlock_restrict_self  446
#endif

static uint64_t fs_rights(SandboxAccess a) {
        switch (a) {
        case SANDBOX_LIST:
                return LL_FS_READ_DIR;
        case SANDBOX_READ:
                return LL_FS_READ_FILE | LL_FS_READ_DIR;
        case SANDBOX_WRITE_FILES:
                return LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_WRITE_FILE;
        case SANDBOX_WRITE_DIR:
                return LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_WRITE_FILE | LL_FS_TRUNCATE |
                       LL_FS_MAKE_REG | LL_FS_REMOVE_FILE;
        }
        return 0;
}

static int add_path_rule(int ruleset, const SandboxPath *p, uint64_t handled, const char **missing) {
        _cleanup_close_ int fd = -EBADF;
        struct ll_path_beneath_attr rule;
        struct stat st;

        fd = open(p->path, O_PATH | O_CLOEXEC);
        if (fd < 0) {
                /* It may come later; then it is not ours to use. */
                if (errno == ENOENT || errno == ENOTDIR) {
                        if (!*missing)
                                *missing = p->path;
                        return 0;
                }
                return -errno;
        }
        if (fstat(fd, &st) < 0)
                return -errno;
        rule.allowed_access = fs_rights(p->access) & handled;
        if (!S_ISDIR(st.st_mode))
                rule.allowed_access &= LL_FS_FILE_RIGHTS;
        /* A file where a directory was meant (a wrong --sysfs-root): nothing to allow, its user says why. */
        if (rule.allowed_access == 0)
                return 0;
        rule.parent_fd = fd;
        if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0) < 0)
                return -errno;
        return 0;
}

static int landlock_apply(const SandboxPath *paths, size_t n, bool scope_signals, int *ret_abi,
                          const char **missing) {
        _cleanup_close_ int ruleset = -EBADF;
        struct ll_ruleset_attr attr = {};
        size_t attr_size;
        long abi;
        int r;

        abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
        if (abi < 0)
                return -errno;
        attr.handled_access_fs = LL_FS_ABI1;
        if (abi >= 2)
                attr.handled_access_fs |= LL_FS_REFER;
        if (abi >= 3)
                attr.handled_access_fs |= LL_FS_TRUNCATE;
        if (abi >= 5)
                attr.handled_access_fs |= LL_FS_IOCTL_DEV;
        attr_size = sizeof(attr.handled_access_fs);
        if (abi >= 4) {
                /* No rule allows any: no TCP at all. */
                attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
                attr_size = offsetof(struct ll_ruleset_attr, scoped);
        }
        if (abi >= 6 && scope_signals) {
                /* Not the abstract AF_UNIX scope: NOTIFY_SOCKET may be an abstract socket. */
                attr.scoped = LL_SCOPE_SIGNAL;
                attr_size = sizeof(attr);
        }
        ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, attr_size, 0);
        if (ruleset < 0)
                return -errno;
        for (size_t i = 0; i < n; i++) {
                r = add_path_rule(ruleset, &paths[i], attr.handled_access_fs, missing);
                if (r < 0)
                        return r;
        }
        if (syscall(__NR_landlock_restrict_self, ruleset, 0) < 0)
                return -errno;
        *ret_abi = (int)abi;
        return 0;
}

/* ---- seccomp ------------------------------------------------------------ */

#if defined(__x86_64__)
#define SECCOMP_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SECCOMP_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define SECCOMP_ARCH AUDIT_ARCH_I386
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SECCOMP_ARCH AUDIT_ARCH_PPC64LE
#elif defined(__powerpc64__)
#define SECCOMP_ARCH AUDIT_ARCH_PPC64
#elif defined(__s390x__)
#define SECCOMP_ARCH AUDIT_ARCH_S390X
#elif defined(__riscv) && __riscv_xlen == 64
#define SECCOMP_ARCH AUDIT_ARCH_RISCV64
#endif

/* Newer than some build hosts' headers; the same numbers on every architecture above. */
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup    425
#define __NR_io_uring_enter    426
#define __NR_io_uring_register 427
#endif
#ifndef __NR_open_tree
#define __NR_open_tree  428
#define __NR_move_mount 429
#define __NR_fsopen     430
#define __NR_fsconfig   431
#define __NR_fsmount    432
#define __NR_fspick     433
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif

/*
 * LeakSanitizer checks for leaks at exit from a clone()d thread that
 * ptrace()s the process's own threads: a sanitizer build (the tests') keeps
 * ptrace(), and Landlock still confines it to the process itself.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZER_STOPS_THE_WORLD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZER_STOPS_THE_WORLD 1
#endif
#endif

/* Refused whole: nothing the daemon does after startup, and each a way out or into others. */
static const int denied_syscalls[] = {
/* other processes */
#ifndef SANITIZER_STOPS_THE_WORLD
        __NR_ptrace,
#endif
        __NR_process_vm_readv,
        __NR_process_vm_writev,
        __NR_kcmp,
        __NR_pidfd_getfd,
        __NR_pidfd_send_signal,
        __NR_tkill,
        __NR_rt_sigqueueinfo,
        __NR_rt_tgsigqueueinfo,
        /* a new program, new namespaces, mounts */
        __NR_execve,
        __NR_execveat,
        __NR_unshare,
        __NR_setns,
        __NR_mount,
        __NR_umount2,
        __NR_pivot_root,
        __NR_chroot,
        __NR_open_tree,
        __NR_move_mount,
        __NR_fsopen,
        __NR_fsconfig,
        __NR_fsmount,
        __NR_fspick,
        __NR_mount_setattr,
        /* the kernel itself */
        __NR_init_module,
        __NR_finit_module,
        __NR_delete_module,
        __NR_kexec_load,
#ifdef __NR_kexec_file_load
        __NR_kexec_file_load,
#endif
        __NR_reboot,
        __NR_swapon,
        __NR_swapoff,
        __NR_bpf,
        __NR_perf_event_open,
        __NR_userfaultfd,
        __NR_acct,
        __NR_quotactl,
        __NR_open_by_handle_at,
        __NR_keyctl,
        __NR_add_key,
        __NR_request_key,
        /* io_uring's requests never pass through seccomp */
        __NR_io_uring_setup,
        __NR_io_uring_enter,
        __NR_io_uring_register,
        /* the clock, the names */
        __NR_settimeofday,
        __NR_clock_settime,
        __NR_clock_adjtime,
        __NR_adjtimex,
        __NR_sethostname,
        __NR_setdomainname,
        /* identities and capabilities: all given up already */
        __NR_setuid,
        __NR_setgid,
        __NR_setreuid,
        __NR_setregid,
        __NR_setresuid,
        __NR_setresgid,
        __NR_setfsuid,
        __NR_setfsgid,
        __NR_setgroups,
        __NR_capset,
#ifdef __NR_mknod
        __NR_mknod,
#endif
        __NR_mknodat,
#ifdef __NR_iopl
        __NR_iopl,
        __NR_ioperm,
#endif
};

#define NS_CLONE_FLAGS                                                                                      \
        (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |       \
         CLONE_NEWNET)

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#else
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#endif

#define STMT(code, k)         ((struct sock_filter)BPF_STMT(code, k))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP(code, k, jt, jf))
#define RET_ERRNO(e)          STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((e)&SECCOMP_RET_DATA))
#define RET_ALLOW             STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define LOAD(off)             STMT(BPF_LD | BPF_W | BPF_ABS, off)

/*
 * nr allowed only when its first argument, a pid, is self or also (when
 * not 0): kill(pid, ...) and tgkill(tgid, ...) to this process or the
 * child it may kill; the scheduler setters with 0, the calling thread;
 * prlimit64() with 0 or our own pid, this process. Any other pid: EPERM.
 */
static size_t emit_self_only(struct sock_filter *f, int nr, pid_t self, pid_t also) {
        size_t n = 0;

        f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 5);
        f[n++] = LOAD(ARG_LO(0)); /* pid_t: the kernel reads the low 32 bits only */
        f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)self, 1, 0);
        f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(also > 0 ? also : self), 0, 1);
        f[n++] = RET_ALLOW;
        f[n++] = RET_ERRNO(EPERM);
        f[n++] = LOAD(offsetof(struct seccomp_data, nr));
        return n;
}

static int seccomp_apply(pid_t also) {
#ifdef SECCOMP_ARCH
        struct sock_filter f[8 + 2 * ELEMENTSOF(denied_syscalls) + 6 * 7 + 8];
        struct sock_fprog prog;
        size_t n = 0;
        pid_t self = getpid();

        f[n++] = LOAD(offsetof(struct seccomp_data, arch));
        f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_ARCH, 1, 0);
        f[n++] = RET_ERRNO(EPERM);
        f[n++] = LOAD(offsetof(struct seccomp_data, nr));
#ifdef __x86_64__
        /* x32 calls share the architecture value and carry this bit. */
        f[n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1);
        f[n++] = RET_ERRNO(EPERM);
#endif
        for (size_t i = 0; i < ELEMENTSOF(denied_syscalls); i++) {
                f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)denied_syscalls[i], 0, 1);
                f[n++] = RET_ERRNO(EPERM);
        }
        f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1);
        f[n++] = RET_ERRNO(ENOSYS);
        n += emit_self_only(f + n, __NR_kill, self, also);
        n += emit_self_only(f + n, __NR_tgkill, self, also);
        /* The corrector thread sets its own slice (priority.h); no thread sets another's. */
        n += emit_self_only(f + n, __NR_sched_setattr, 0, 0);
        n += emit_self_only(f + n, __NR_sched_setscheduler, 0, 0);
        n += emit_self_only(f + n, __NR_sched_setparam, 0, 0);
        /*
         * Our own limits only (glibc's getrlimit() and setrlimit() are
         * prlimit64(0, ...)): another process of the same uid, which is
         * every root process in a hostPID pod, is no business of ours, and
         * the kernel asks no capability to set its RLIMIT_NOFILE to 1.
         */
        n += emit_self_only(f + n, __NR_prlimit64, 0, self);
#ifndef __s390x__ /* s390's clone() has its flags second */
        f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 3);
        f[n++] = LOAD(ARG_LO(0));
        f[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, NS_CLONE_FLAGS, 0, 1);
        f[n++] = RET_ERRNO(EPERM);
#endif
        f[n++] = RET_ALLOW;
        prog = (struct sock_fprog){ .len = (unsigned short)n, .filter = f };
        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
                return -errno;
        return 0;
#else
        return -ENOTSUP;
#endif
}

static bool unavailable(int r) {
        /* Not built in, disabled at boot, or refused by a filter already in force (systemd's). */
        return r == -ENOSYS || r == -EOPNOTSUPP || r == -EPERM;
}

static int landlock_confine(const SandboxPath *paths, size_t n_paths, bool scope_signals,
                            SandboxResult *ret) {
        SandboxResult res = {};
        int r;

        r = landlock_apply(paths, n_paths, scope_signals, &res.landlock_abi, &res.missing);
        if (r < 0 && !unavailable(r))
                return r;
        res.landlock_error = r < 0 ? r : 0;
        *ret = res;
        return 0;
}

int sandbox_landlock(const SandboxPath *paths, size_t n_paths, SandboxResult *ret) {
        return landlock_confine(paths, n_paths, true, ret);
}

int sandbox_seccomp(pid_t signal_also, SandboxResult *ret) {
        int r = seccomp_apply(signal_also);

        /* EINVAL: a kernel without CONFIG_SECCOMP_FILTER. */
        if (r < 0 && r != -EINVAL && r != -ENOTSUP)
                return r;
        ret->seccomp = r >= 0;
        ret->seccomp_error = r < 0 ? r : 0;
        return 0;
}

int sandbox_apply(const SandboxPath *paths, size_t n_paths, SandboxResult *ret) {
        SandboxResult res;
        int r;

        r = sandbox_landlock(paths, n_paths, &res);
        if (r >= 0)
                r = sandbox_seccomp(0, &res);
        if (r < 0)
                return r;
        *ret = res;
        return 0;
}

#define SANDBOX_DAEMON_FILES_MAX 8

/* The paths the daemon's Landlock rules name, into paths (and dirs, which they point into). */
static int daemon_paths(const SandboxDaemon *d, char dirs[][PATH_MAX], SandboxPath *paths, size_t *ret_n) {
        char real[PATH_MAX];
        size_t n = 0;

        if (d->n_written_files + d->n_read_files > SANDBOX_DAEMON_FILES_MAX)
                return -E2BIG;
        paths[n++] = (SandboxPath){ d->proc_root, SANDBOX_READ };
        /* A ConfigMap's file is a symlink into a directory beside it: its real directory too. */
        snprintf(dirs[0], PATH_MAX, "%s", d->policy_file);
        paths[n++] = (SandboxPath){ dirname(dirs[0]), SANDBOX_READ };
        if (realpath(d->policy_file, real)) {
                snprintf(dirs[1], PATH_MAX, "%s", real);
                paths[n++] = (SandboxPath){ dirname(dirs[1]), SANDBOX_READ };
        }
        if (d->listed_dir)
                paths[n++] = (SandboxPath){ d->listed_dir, SANDBOX_LIST };
        paths[n++] = (SandboxPath){ d->knob_dir, d->knobs_read_only ? SANDBOX_READ : SANDBOX_WRITE_FILES };
        /* json-c before 0.16 seeds its hash from /dev/urandom, not getrandom() (Debian 11, RHEL 8). */
        paths[n++] = (SandboxPath){ "/dev/urandom", SANDBOX_READ };
        for (size_t i = 0; i < d->n_written_files + d->n_read_files; i++) {
                bool written = i < d->n_written_files;

                snprintf(dirs[3 + i], PATH_MAX, "%s",
                         written ? d->written_files[i] : d->read_files[i - d->n_written_files]);
                paths[n++] =
                    (SandboxPath){ dirname(dirs[3 + i]), written ? SANDBOX_WRITE_DIR : SANDBOX_READ };
        }
        *ret_n = n;
        return 0;
}

int sandbox_confine_daemon_files(const SandboxDaemon *d, SandboxResult *ret) {
        char dirs[3 + SANDBOX_DAEMON_FILES_MAX][PATH_MAX];
        SandboxPath paths[6 + SANDBOX_DAEMON_FILES_MAX];
        size_t n;
        int r;

        r = daemon_paths(d, dirs, paths, &n);
        if (r < 0)
                return r;
        return landlock_confine(paths, n, !d->signal_outside, ret);
}

int sandbox_confine_daemon(const SandboxDaemon *d, SandboxResult *ret) {
        SandboxResult res;
        int r;

        r = sandbox_confine_daemon_files(d, &res);
        if (r >= 0)
                r = sandbox_seccomp(0, &res);
        if (r < 0)
                return r;
        *ret = res;
        return 0;
}

void sandbox_describe(const SandboxResult *r, char *buf, size_t size) {
        char ll[64];

        if (r->landlock_abi > 0)
                snprintf(ll, sizeof(ll), "Landlock ABI %d", r->landlock_abi);
        else
                snprintf(ll, sizeof(ll), "no Landlock (%s)", strerror(-r->landlock_error));
        snprintf(buf, size, "%s, %s", ll, r->seccomp ? "seccomp filter" : "no seccomp filter");
}
