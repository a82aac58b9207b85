/* SPDX-License-Identifier: MIT */
/*
 * min-corrector KNOB WORD [--open-gate | --syscall-exit-hook]
 *
 * The floor of thpguard-bench's drift latency: the least a corrector can
 * do. It blocks on an inotify watch (IN_MODIFY) on the one knob file, and on
 * each wakeup pread()s it and pwrite()s WORD when the bracketed word
 * differs. Nothing else: no logging, no parsing beyond the brackets, no
 * library but libc. The only extra is READY=1 on $NOTIFY_SOCKET once the
 * watch is in place, so the bench starts it as it starts thpguardd; that is
 * before the loop and never on the corrector's path.
 *
 * With --open-gate, a child process beside it holds every open() of KNOB
 * through a fanotify permission event (FAN_OPEN_PERM) and lets it go on at
 * once, looking nothing up: the least that any corrector which holds a
 * writer until it is named (thpguardd's writer gate) adds to a drift.
 *
 * With --syscall-exit-hook, a BPF program that does nothing (return 0) is
 * attached to the raw tracepoint sys_exit for as long as it runs: what the
 * hook alone costs a drift, through every system call of the writer, the
 * observer and the corrector, on a kernel where thpguardd's write probe
 * has to use that hook (no BPF trampolines). Raw bpf(2), no libbpf.
 */
#include <fcntl.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static void notify_ready(void) {
        const char *sock = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        if (!sock || strlen(sock) >= sizeof(sa.sun_path))
                return;
        strcpy(sa.sun_path, sock);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd >= 0)
                (void)!sendto(fd, "READY=1", 7, 0, (struct sockaddr *)&sa, sizeof(sa));
        close(fd);
}

/* The bare open gate: answers every held open of path, and nothing else. 0 once its mark is in place. */
static int start_open_gate(const char *path) {
        int group = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_CLOEXEC), ready[2];
        char c = 0;

        if (group < 0 || fanotify_mark(group, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, path) < 0 ||
            pipe(ready) < 0)
                return -1;
        switch (fork()) {
        case -1:
                return -1;
        case 0: {
                char buf[4096] __attribute__((aligned(8)));

                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                        _exit(1);
                close(ready[0]);
                close(ready[1]); /* the parent reads EOF: the gate is up */
                for (;;) {
                        ssize_t n = read(group, buf, sizeof(buf));

                        if (n <= 0)
                                _exit(1);
                        for (struct fanotify_event_metadata *m = (void *)buf; FAN_EVENT_OK(m, n);
                             m = FAN_EVENT_NEXT(m, n)) {
                                struct fanotify_response r = { .fd = m->fd, .response = FAN_ALLOW };

                                if (m->fd < 0)
                                        continue;
                                (void)!write(group, &r, sizeof(r));
                                close(m->fd);
                        }
                }
        }
        }
        close(group);
        close(ready[1]);
        (void)!read(ready[0], &c, 1);
        close(ready[0]);
        return 0;
}

/* A do-nothing program on sys_exit; its fd is kept open (and so attached) until we exit. */
static int attach_empty_syscall_exit_hook(void) {
        struct bpf_insn prog[] = {
                { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
                { .code = BPF_JMP | BPF_EXIT },
        };
        union bpf_attr load = { .prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT,
                                .insn_cnt = sizeof(prog) / sizeof(prog[0]),
                                .insns = (uint64_t)(uintptr_t)prog,
                                .license = (uint64_t)(uintptr_t) "GPL" };
        union bpf_attr open = { 0 };
        int fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &load, sizeof(load));

        if (fd < 0)
                return -1;
        open.raw_tracepoint.name = (uint64_t)(uintptr_t) "sys_exit";
        open.raw_tracepoint.prog_fd = (uint32_t)fd;
        return (int)syscall(SYS_bpf, BPF_RAW_TRACEPOINT_OPEN, &open, sizeof(open)) < 0 ? -1 : 0;
}

int main(int argc, char **argv) {
        char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        const char *option = argc == 4 ? argv[3] : "";
        char buf[256];
        size_t len;
        int fd, ino;

        if (argc != 3 && !(argc == 4 && (strcmp(option, "--open-gate") == 0 ||
                                         strcmp(option, "--syscall-exit-hook") == 0)))
                return 2;
        if (strcmp(option, "--open-gate") == 0 && start_open_gate(argv[1]) < 0)
                return 1;
        if (strcmp(option, "--syscall-exit-hook") == 0 && attach_empty_syscall_exit_hook() < 0)
                return perror("bpf: an empty program on raw tracepoint sys_exit"), 1;
        len = strlen(argv[2]);
        fd = open(argv[1], O_RDWR | O_CLOEXEC);
        ino = inotify_init1(IN_CLOEXEC);
        if (fd < 0 || ino < 0 || inotify_add_watch(ino, argv[1], IN_MODIFY) < 0)
                return 1;
        notify_ready();
        for (;;) {
                const char *a, *b;
                ssize_t n;

                if (read(ino, events, sizeof(events)) <= 0)
                        return 1;
                n = pread(fd, buf, sizeof(buf) - 1, 0);
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                a = strchr(buf, '[');
                b = a ? strchr(a, ']') : NULL;
                if (b && ((size_t)(b - a - 1) != len || memcmp(a + 1, argv[2], len) != 0))
                        (void)!pwrite(fd, argv[2], len, 0);
        }
}
