/* SPDX-License-Identifier: MIT */
/*
 * ia32-write write|forge PATH VALUE: what a 64-bit process can do with
 * ia32 system calls (int $0x80, IA32 emulation), whose numbers are not the
 * 64-bit ones, against the BPF write probe's syscall-exit hook.
 *
 *   write  opens PATH for writing and writes VALUE with the ia32 write(2)
 *          (number 4, which is stat(2) on x86-64): a real write the probe
 *          must record as a write.
 *   forge  opens PATH read-only (anyone may: the knobs are 0644), names
 *          itself kubelet, and makes two ia32 calls whose numbers are
 *          64-bit write calls (328, eventfd2, is pwritev2; 20, getpid, is
 *          writev), with rdi the knob's fd and rsi an iovec of VALUE, where
 *          a probe that read them as 64-bit calls would take its fd and
 *          buffer: no write happens, and the probe must record none.
 *
 * The buffers sit below 4 GiB (MAP_32BIT): an ia32 call's pointers are 32
 * bits. Exit 0 when the calls were made (the write's result: 1 if it
 * failed), 77 where there is no IA32 emulation or this is not x86-64.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(__x86_64__)
static long int80(long nr, long ebx, long ecx, long edx, long rdi, long rsi) {
        long ret;

        __asm__ volatile("int $0x80"
                         : "=a"(ret)
                         : "a"(nr), "b"(ebx), "c"(ecx), "d"(edx), "D"(rdi), "S"(rsi)
                         : "memory", "r8", "r9", "r10", "r11");
        return ret;
}

int main(int argc, char **argv) {
        struct iovec *iov;
        char *buf;
        size_t len;
        long r;
        int fd;

        if (argc != 4 || (strcmp(argv[1], "write") != 0 && strcmp(argv[1], "forge") != 0)) {
                fprintf(stderr, "usage: ia32-write write|forge PATH VALUE\n");
                return 2;
        }
        len = strlen(argv[3]);
        buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        if (buf == MAP_FAILED || len > 1000) {
                perror("ia32-write: mmap below 4 GiB");
                return 1;
        }
        memcpy(buf, argv[3], len);
        /* getpid through int $0x80: -ENOSYS where the kernel has no IA32 emulation. */
        if (int80(20, 0, 0, 0, 0, 0) != getpid()) {
                fprintf(stderr, "ia32-write: no IA32 emulation here\n");
                return 77;
        }
        if (strcmp(argv[1], "write") == 0) {
                fd = open(argv[2], O_WRONLY | O_CLOEXEC);
                if (fd < 0) {
                        fprintf(stderr, "ia32-write: %s: %s\n", argv[2], strerror(errno));
                        return 1;
                }
                r = int80(4, fd, (long)(unsigned long)buf, (long)len, 0, 0);
                if (r != (long)len) {
                        fprintf(stderr, "ia32-write: ia32 write(2) of %s: %s\n", argv[2], strerror((int)-r));
                        return 1;
                }
                return 0;
        }
        fd = open(argv[2], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "ia32-write: %s: %s\n", argv[2], strerror(errno));
                return 1;
        }
        (void)prctl(PR_SET_NAME, "kubelet");
        iov = (struct iovec *)(buf + 1024);
        iov->iov_base = buf;
        iov->iov_len = len;
        /* ebx, ecx: an ia32 eventfd2(0, 0), which makes an eventfd, and an ia32 getpid(). */
        (void)int80(328, 0, 0, 1, fd, (long)(unsigned long)iov);
        (void)int80(20, 0, 0, 1, fd, (long)(unsigned long)iov);
        return 0;
}
#else
int main(void) {
        fprintf(stderr, "ia32-write: x86-64 only\n");
        return 77;
}
#endif
