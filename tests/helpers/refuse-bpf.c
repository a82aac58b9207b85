/* SPDX-License-Identifier: MIT */
/*
 * refuse-bpf COMMAND [ARGS...]: runs COMMAND under a seccomp filter that
 * makes every bpf(2) call fail with EPERM, as a kernel with the BPF syscall
 * restricted (or a container's seccomp profile) answers. Everything else is
 * allowed. The filter is inherited by every process below COMMAND.
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

int main(int argc, char **argv) {
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        return seccomp_exec("refuse-bpf", filter, sizeof(filter) / sizeof(filter[0]), argc, argv);
}
