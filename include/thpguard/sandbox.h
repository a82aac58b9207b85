/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The daemon's confinement after startup, with what the running kernel
 * offers, once and for good (it cannot be undone, and it is inherited by
 * every thread created afterwards: apply it before creating any).
 *
 * - Landlock (Linux 5.13+): file access only below the paths given, each
 *   with one of the accesses below; no TCP (ABI 4, Linux 6.7); no signal
 *   to a process outside the domain (ABI 6, Linux 6.12). AF_UNIX sockets
 *   (the journal, sd_notify()) are not file accesses to Landlock: they
 *   keep working.
 * - A seccomp filter (raw BPF; no libseccomp): kill() and tgkill() only to
 *   this process itself (raise() and abort() use tgkill() on it); tkill(),
 *   sigqueue to others, ptrace(), process_vm_readv()/writev(), kcmp(),
 *   pidfd_getfd(), execve(), new namespaces, mounts, modules, kexec, bpf(),
 *   perf_event_open(), keyrings, io_uring (whose requests seccomp never
 *   sees), the clock, the host name, uid and capability changes: EPERM.
 *   clone3() returns ENOSYS, so that libc falls back to clone(), whose
 *   flags a filter can read. A syscall of another architecture (x32,
 *   i386 on x86_64) is refused whole.
 *
 * The caller must have set no-new-privs (capability_drop_all()).
 */

typedef enum SandboxAccess {
        SANDBOX_LIST,        /* open directories below, no file */
        SANDBOX_READ,        /* read files and list directories below */
        SANDBOX_WRITE_FILES, /* also write files that exist (the THP knobs) */
        SANDBOX_WRITE_DIR,   /* also create, replace (rename within) and remove files: a file renamed into
                                place */
} SandboxAccess;

typedef struct SandboxPath {
        const char *path; /* a directory (or a file) */
        SandboxAccess access;
} SandboxPath;

typedef struct SandboxResult {
        int landlock_abi;    /* the ABI enforced; 0: none */
        int landlock_error;  /* why not (-errno: -ENOSYS, -EOPNOTSUPP disabled at boot, -EPERM refused) */
        bool seccomp;        /* the filter is installed */
        int seccomp_error;   /* why not (-EINVAL: no CONFIG_SECCOMP_FILTER; -ENOTSUP: architecture) */
        const char *missing; /* the first path that did not exist, so it got no rule; NULL: none */
} SandboxResult;

/*
 * Confines the calling process. A kernel without one of the features is
 * not an error: ret says what was done and why not. Returns -errno when
 * a feature the kernel has failed (a confinement that would be partial).
 */
int sandbox_apply(const SandboxPath *paths, size_t n_paths, SandboxResult *ret);

/*
 * The two halves of sandbox_apply(), for a process that starts a child in
 * between: a child created after Landlock shares its domain (Landlock lets
 * the two signal each other), and the filter, installed after, lets kill()
 * and tgkill() reach signal_also (that child; 0: none) besides the caller.
 * sandbox_seccomp() sets only ret->seccomp and ret->seccomp_error.
 */
int sandbox_landlock(const SandboxPath *paths, size_t n_paths, SandboxResult *ret);
int sandbox_seccomp(pid_t signal_also, SandboxResult *ret);

/*
 * What the daemon may touch once confined, from plain arguments, so that a
 * test helper confines itself exactly as the daemon does.
 */
typedef struct SandboxDaemon {
        const char *proc_root;   /* read: the writers, khugepaged, the kernel's memory figures */
        const char *policy_file; /* its directory read (where it is named, and where it really is) */
        const char *knob_dir;    /* the THP directory: its files written, never created */
        bool knobs_read_only;    /* --verify, --check-config: read it only */
        const char
            *listed_dir; /* the sysfs root, where a one-shot opens it after the confinement; or NULL */
        /* Files renamed into place (the metrics file, ...): their directories writable. */
        const char *const *written_files;
        size_t n_written_files;
        /* Files only read (--alive's metrics file): their directories readable. */
        const char *const *read_files;
        size_t n_read_files;
        /*
         * Lock mode: its gate is started before the confinement (a Landlock
         * domain would keep it from reading an opener's system call), so
         * outside the domain, and the daemon must be able to kill it: no
         * signal scope (the seccomp filter still lets kill() reach the gate
         * alone).
         */
        bool signal_outside;
} SandboxDaemon;

int sandbox_confine_daemon(const SandboxDaemon *d, SandboxResult *ret);

/* Its Landlock half alone: the caller installs the filter itself, with sandbox_seccomp(). */
int sandbox_confine_daemon_files(const SandboxDaemon *d, SandboxResult *ret);

/* "Landlock ABI 6, seccomp" or "nothing (...)": what ret says was applied, for a log line. */
void sandbox_describe(const SandboxResult *r, char *buf, size_t size);
