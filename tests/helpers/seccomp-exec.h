/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the refuse-* helpers share: install a seccomp filter on ourselves and
 * exec argv[1..], which inherits it, as do all its children. As root no
 * NO_NEW_PRIVS is needed, and none is set: the command keeps its
 * privileges. Returns main()'s exit status when it cannot: 2 usage, 125 the
 * filter refused, 127 the command not run.
 */

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline int seccomp_exec(const char *name, struct sock_filter *filter, unsigned short len, int argc,
                               char **argv) {
        struct sock_fprog prog = { .len = len, .filter = filter };

        if (argc < 2) {
                fprintf(stderr, "usage: %s COMMAND [ARGS...]\n", name);
                return 2;
        }
        if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
                fprintf(stderr, "%s: seccomp(SECCOMP_SET_MODE_FILTER): %s\n", name, strerror(errno));
                return 125;
        }
        execvp(argv[1], argv + 1);
        fprintf(stderr, "%s: %s: %s\n", name, argv[1], strerror(errno));
        return 127;
}
