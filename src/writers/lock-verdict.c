/* SPDX-License-Identifier: MIT */
#include "lock-verdict.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "thpguard/macro.h"
#include "thpguard/number.h"

/* The next space- or tab-separated word of [*p, end); false at the end. */
static bool next_word(const char **p, const char *end, const char **ret, size_t *ret_len) {
        const char *s = *p, *e;

        while (s < end && (*s == ' ' || *s == '\t'))
                s++;
        if (s == end)
                return false;
        for (e = s; e < end && *e != ' ' && *e != '\t'; e++)
                ;
        *ret = s;
        *ret_len = (size_t)(e - s);
        *p = e;
        return true;
}

static bool starts(const char *line, size_t len, const char *key) {
        size_t n = strlen(key);

        return len >= n && memcmp(line, key, n) == 0;
}

/* A decimal that fits an id: pid_t or uid_t. */
static int parse_id(const char *s, size_t n, uint64_t max, uint64_t *ret) {
        uint64_t v;

        if (number_parse_u64(s, n, &v) < 0 || v > max)
                return -EBADMSG;
        *ret = v;
        return 0;
}

int lock_parse_creds(const char *buf, size_t len, OpenerCreds *ret) {
        const char *end = buf + len, *line = buf;
        bool have_tgid = false, have_uid = false, have_cap = false;
        OpenerCreds c = {};

        while (line < end) {
                const char *nl = memchr(line, '\n', (size_t)(end - line));
                const char *eol = nl ? nl : end, *p, *w;
                size_t n = (size_t)(eol - line), wl;
                uint64_t v;

                if (starts(line, n, "Tgid:")) {
                        p = line + 5;
                        if (have_tgid || !next_word(&p, eol, &w, &wl) ||
                            parse_id(w, wl, INT32_MAX, &v) < 0 || next_word(&p, eol, &w, &wl))
                                return -EBADMSG;
                        c.tgid = (pid_t)v;
                        have_tgid = true;
                } else if (starts(line, n, "Uid:")) {
                        /* real, effective, saved, fs */
                        p = line + 4;
                        for (int i = 0; i < 4; i++)
                                if (!next_word(&p, eol, &w, &wl) || parse_id(w, wl, UINT32_MAX, &v) < 0)
                                        return -EBADMSG;
                        if (have_uid || next_word(&p, eol, &w, &wl))
                                return -EBADMSG;
                        c.fsuid = (uid_t)v;
                        have_uid = true;
                } else if (starts(line, n, "CapEff:")) {
                        p = line + 7;
                        if (have_cap || !next_word(&p, eol, &w, &wl) ||
                            number_parse_hex_u64(w, wl, &v) < 0 || next_word(&p, eol, &w, &wl))
                                return -EBADMSG;
                        c.cap_effective = v;
                        have_cap = true;
                }
                line = nl ? nl + 1 : end;
        }
        if (!have_tgid || !have_uid || !have_cap)
                return -EBADMSG;
        *ret = c;
        return 0;
}

/* "0x" and lower-case hex digits, as the kernel prints them. */
static int parse_hex_word(const char *w, size_t wl, uint64_t *ret) {
        if (wl < 3 || w[0] != '0' || w[1] != 'x')
                return -EBADMSG;
        return number_parse_hex_u64(w + 2, wl - 2, ret);
}

int lock_parse_syscall(const char *buf, size_t len, OpenerSyscall *ret) {
        const char *end = buf + len, *p = buf, *w;
        OpenerSyscall s = {};
        uint64_t v, rest;
        size_t wl, words;

        if (len > 0 && buf[len - 1] == '\n')
                end--;
        if ((size_t)(end - buf) == strlen("running") && memcmp(buf, "running", 7) == 0)
                return -EBUSY;
        if (!next_word(&p, end, &w, &wl))
                return -EBADMSG;
        if (wl == 2 && memcmp(w, "-1", 2) == 0)
                s.nr = -1;
        else if (parse_id(w, wl, INT32_MAX, &v) == 0)
                s.nr = (long)v;
        else
                return -EBADMSG;
        /* Six arguments, the stack pointer and the program counter; only the last two when not in a call. */
        words = s.nr < 0 ? 2 : 8;
        for (size_t i = 0; i < words; i++) {
                if (!next_word(&p, end, &w, &wl) || parse_hex_word(w, wl, &rest) < 0)
                        return -EBADMSG;
                if (s.nr >= 0 && i < 6)
                        s.arg[i] = rest;
        }
        if (next_word(&p, end, &w, &wl))
                return -EBADMSG;
        *ret = s;
        return 0;
}

/*
 * The open flags of a call that opens by path with its flags in a register,
 * in this build's own system-call table; false for any other call.
 */
static bool open_flags(const OpenerSyscall *s, uint64_t *ret) {
#ifdef SYS_open
        if (s->nr == SYS_open) {
                *ret = s->arg[1];
                return true;
        }
#endif
        if (s->nr == SYS_openat) {
                *ret = s->arg[2];
                return true;
        }
        return false;
}

/* Whether the opener could pass the kernel's permission check for writing at all. */
static bool may_write(const LockOpener *o) {
        if (o->creds.cap_effective & (UINT64_C(1) << CAP_DAC_OVERRIDE))
                return true;
        if (o->creds.fsuid == o->file_uid)
                return (o->file_mode & S_IWUSR) != 0;
        /* Group or others may write: which group the opener is in is not in the check. */
        return (o->file_mode & (S_IWGRP | S_IWOTH)) != 0;
}

bool lock_needs_syscall(const LockOpener *o, pid_t daemon_pid) {
        return o->tid > 0 && o->creds_error == 0 && o->creds.tgid != daemon_pid && may_write(o);
}

LockVerdict lock_judge(const LockOpener *o, pid_t daemon_pid, const char **ret_why) {
        uint64_t flags;

        if (o->tid == 0) {
                *ret_why = "outside this PID namespace";
                return LOCK_ALLOW_UNSEEN;
        }
        if (o->creds_error != 0) {
                *ret_why = "its /proc/TID/status cannot be read";
                return LOCK_DENY;
        }
        if (o->creds.tgid == daemon_pid) {
                *ret_why = "thpguardd itself";
                return LOCK_ALLOW_OWN;
        }
        if (!may_write(o)) {
                *ret_why = "it cannot write the file";
                return LOCK_ALLOW_READ;
        }
        if (o->syscall_error != 0) {
                *ret_why = "its system call cannot be read";
                return LOCK_DENY;
        }
        if (!open_flags(&o->syscall, &flags)) {
                *ret_why = "opened by a call whose flags cannot be told";
                return LOCK_DENY;
        }
        if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) {
                *ret_why = "opened for writing";
                return LOCK_DENY;
        }
        *ret_why = "opened for reading";
        return LOCK_ALLOW_READ;
}
