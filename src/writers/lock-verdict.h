/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Lock mode's one decision (fanotify-gate.c asks it): may this open of a
 * locked knob go on? fanotify's permission event names the opening thread
 * (FAN_REPORT_TID) and nothing of how it opens: the answer comes from what
 * the kernel shows of that thread while it waits, blocked inside its open:
 *
 *   /proc/TID/status   its thread group, fsuid and effective capabilities.
 *                      A thread that could not write the file (not its
 *                      owner's fsuid, no CAP_DAC_OVERRIDE, the file not
 *                      group- or world-writable) passed the kernel's
 *                      permission check, which comes first, only for a read.
 *   /proc/TID/syscall  otherwise: the system call it is blocked in, and its
 *                      arguments as they were passed in registers. Reading
 *                      it takes CAP_SYS_PTRACE over the opener.
 *
 * Allowed: the daemon's own threads; a thread that cannot write; open() or
 * openat() whose flags are O_RDONLY without O_TRUNC. Everything else is
 * refused, whatever cannot be told included: openat2() (its flags are in
 * the opener's memory, which another of its threads may have changed since
 * the kernel read them), io_uring, an ia32 or x32 call on x86-64 (whose
 * numbers are not the table's: a 32-bit reader of a knob is refused too),
 * an unreadable file. A process outside our PID namespace (pid 0) cannot be
 * looked at at all: it is let through, and the daemon says so.
 *
 * Pure: the parsers take the files' text, the judge what they said.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct OpenerCreds {
        pid_t tgid;
        uid_t fsuid;
        uint64_t cap_effective;
} OpenerCreds;

/* The Tgid:, Uid: (its fourth field, the fsuid) and CapEff: lines of /proc/TID/status; -EBADMSG if one is
 * missing or malformed. */
int lock_parse_creds(const char *buf, size_t len, OpenerCreds *ret);

typedef struct OpenerSyscall {
        long nr; /* -1: not in a system call */
        uint64_t arg[6];
} OpenerSyscall;

/* /proc/TID/syscall: "NR ARG0 ... ARG5 SP PC", "-1 SP PC", or "running" (-EBUSY); -EBADMSG else. */
int lock_parse_syscall(const char *buf, size_t len, OpenerSyscall *ret);

typedef enum LockVerdict {
        LOCK_ALLOW_OWN,    /* a thread of the daemon's */
        LOCK_ALLOW_READ,   /* an open that reads */
        LOCK_ALLOW_UNSEEN, /* outside our PID namespace: nothing to judge by */
        LOCK_DENY,         /* refused: opens for writing, or cannot be told from one */
        _LOCK_VERDICT_MAX,
} LockVerdict;

typedef struct LockOpener {
        pid_t tid;       /* as the event gave it; 0: outside our PID namespace */
        int creds_error; /* 0, or why /proc/TID/status could not be had */
        OpenerCreds creds;
        int syscall_error; /* 0, -EBUSY (running), or why /proc/TID/syscall could not be had */
        OpenerSyscall syscall;
        mode_t file_mode; /* the knob's st_mode */
        uid_t file_uid;   /* and owner */
} LockOpener;

/* The verdict on o for a daemon whose thread group is daemon_pid; *ret_why (static) says what decided it. */
LockVerdict lock_judge(const LockOpener *o, pid_t daemon_pid, const char **ret_why);

/* Whether judging needs /proc/TID/syscall once the creds are known (so the gate reads it only then). */
bool lock_needs_syscall(const LockOpener *o, pid_t daemon_pid);
