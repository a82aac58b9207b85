/* SPDX-License-Identifier: MIT */
/*
 * refuse-thp-flags COMMAND [ARGS...]: runs COMMAND under a seccomp filter
 * that makes prctl(PR_SET_THP_DISABLE, x, FLAGS) with FLAGS != 0 fail with
 * EINVAL, as every kernel before 6.18 does (PR_THP_DISABLE_EXCEPT_ADVISED
 * is new there). Everything else, plain PR_SET_THP_DISABLE included, is
 * allowed. The filter is inherited by every process below COMMAND, so a
 * container engine run under it starts its runtime shims on a "6.1 kernel".
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp-exec.h"

#ifndef PR_SET_THP_DISABLE
#define PR_SET_THP_DISABLE 41
#endif

#define ARG_LO(n) (offsetof(struct seccomp_data, args[n]))
#define ARG_HI(n) (offsetof(struct seccomp_data, args[n]) + 4)

int main(int argc, char **argv) {
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prctl, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_THP_DISABLE, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                /* arg3 (args[2]) non-zero in either half: refused. */
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(2)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EINVAL & SECCOMP_RET_DATA)),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        return seccomp_exec("refuse-thp-flags", filter, sizeof(filter) / sizeof(filter[0]), argc, argv);
}
