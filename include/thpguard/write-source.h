/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What tells the daemon of a write to a knob, and who made it: a journal
 * field of the startup message, a --verify --json member, a metric label.
 *
 *   bpf       the BPF write probe (write-probe.h): every write its hook
 *             sees, through any sysfs mount of any network namespace, with
 *             its writer named from the kernel; inotify beside it
 *   fanotify  the fanotify groups and the writer gate (fanotify-groups.h,
 *             fanotify-gate.h), and inotify: writes through this sysfs
 *             superblock only; a write through another is corrected at the
 *             next recheck, its writer unknown
 *   none      inotify alone: writes through this superblock, no writer named
 *
 * and, for bpf, where the probe's program runs (src/writers/bpf/write-probe.bpf.c
 * says what each sees): --write-probe-hook and the policy's
 * write_probe_hook. auto is fexit, else a kprobe, never the syscall
 * tracepoints, which every system call of the node pays for.
 */

#include <errno.h>
#include <string.h>

/* The index of s among the n names of an enum's string table, or -EINVAL: each from_string() below. */
static inline int string_table_find(const char *const *names, int n, const char *s) {
        for (int i = 0; i < n; i++)
                if (names[i] && strcmp(s, names[i]) == 0)
                        return i;
        return -EINVAL;
}

typedef enum WriteSource {
        WRITE_SOURCE_AUTO, /* what --write-source asks for: the probe where it loads, else fanotify */
        WRITE_SOURCE_BPF,
        WRITE_SOURCE_FANOTIFY,
        WRITE_SOURCE_NONE,
        _WRITE_SOURCE_MAX,
} WriteSource;

static const char *const write_source_names[_WRITE_SOURCE_MAX] = {
        [WRITE_SOURCE_AUTO] = "auto",
        [WRITE_SOURCE_BPF] = "bpf",
        [WRITE_SOURCE_FANOTIFY] = "fanotify",
        [WRITE_SOURCE_NONE] = "none",
};

static inline const char *write_source_to_string(WriteSource s) {
        return s >= 0 && s < _WRITE_SOURCE_MAX ? write_source_names[s] : "unknown";
}

static inline int write_source_from_string(const char *s, WriteSource *ret) {
        int i = string_table_find(write_source_names, _WRITE_SOURCE_MAX, s);

        if (i < 0)
                return i;
        *ret = (WriteSource)i;
        return 0;
}

/*
 * What refuses other writers in lock mode (mode = "lock"): a journal field
 * of the startup message, a --verify --json member, a metric label.
 *
 *   fanotify  the lock group and a locking writer gate (fanotify-gate.h,
 *             lock-verdict.h): every open of a knob for writing through
 *             this sysfs superblock, by anyone but thpguardd, fails with
 *             EPERM; a write through another is corrected as in enforce
 *   none      nothing can refuse: enforced as in enforce mode, and said why
 */
typedef enum LockMechanism {
        LOCK_MECHANISM_NONE,
        LOCK_MECHANISM_FANOTIFY,
        _LOCK_MECHANISM_MAX,
} LockMechanism;

static const char *const lock_mechanism_names[_LOCK_MECHANISM_MAX] = {
        [LOCK_MECHANISM_NONE] = "none",
        [LOCK_MECHANISM_FANOTIFY] = "fanotify",
};

static inline const char *lock_mechanism_to_string(LockMechanism m) {
        return m >= 0 && m < _LOCK_MECHANISM_MAX ? lock_mechanism_names[m] : "unknown";
}

typedef enum WriteProbeHook {
        WRITE_PROBE_HOOK_AUTO,
        WRITE_PROBE_HOOK_FEXIT,
        WRITE_PROBE_HOOK_KPROBE,
        WRITE_PROBE_HOOK_SYSCALL_EXIT,
        _WRITE_PROBE_HOOK_MAX,
} WriteProbeHook;

static const char *const write_probe_hook_names[_WRITE_PROBE_HOOK_MAX] = {
        [WRITE_PROBE_HOOK_AUTO] = "auto",
        [WRITE_PROBE_HOOK_FEXIT] = "fexit",
        [WRITE_PROBE_HOOK_KPROBE] = "kprobe",
        [WRITE_PROBE_HOOK_SYSCALL_EXIT] = "syscall-exit",
};

static inline const char *write_probe_hook_to_string(WriteProbeHook h) {
        return h >= 0 && h < _WRITE_PROBE_HOOK_MAX ? write_probe_hook_names[h] : "unknown";
}

static inline int write_probe_hook_from_string(const char *s, WriteProbeHook *ret) {
        int i = string_table_find(write_probe_hook_names, _WRITE_PROBE_HOOK_MAX, s);

        if (i < 0)
                return i;
        *ret = (WriteProbeHook)i;
        return 0;
}
