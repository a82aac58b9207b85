/* SPDX-License-Identifier: MIT */
/*
 * fuse-stall MOUNTPOINT: a process that makes readers of its own
 * /proc/PID/smaps_rollup (and cmdline, mem) block, as MACHINE-FACTS
 * measured: a FUSE file system (spoken over /dev/fuse, no libfuse) whose
 * one file's reads are never answered, mounted at MOUNTPOINT; one thread
 * reads that file's mapped page through /proc/self/mem (so the fault waits
 * with the memory lock held), another then queues in mmap() (a writer of
 * that lock), and every reader of the lock waits behind it. Prints
 * "stalled PID" once both threads are on their way, then waits for a
 * signal. SIGKILL ends it (FUSE waits are killable); unmount MOUNTPOINT
 * (umount -l) afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FILE_SIZE (64 * 4096)

static void fill_attr(struct fuse_attr *a, uint64_t ino) {
        memset(a, 0, sizeof(*a));
        a->ino = ino;
        a->mode = ino == FUSE_ROOT_ID ? (S_IFDIR | 0755) : (S_IFREG | 0644);
        a->nlink = ino == FUSE_ROOT_ID ? 2 : 1;
        a->size = ino == FUSE_ROOT_ID ? 0 : FILE_SIZE;
        a->blocks = a->size / 512;
        a->blksize = 4096;
}

static void reply(int fd, uint64_t unique, int error, const void *data, size_t len) {
        char buf[sizeof(struct fuse_out_header) + 256];
        struct fuse_out_header *h = (struct fuse_out_header *)buf;

        h->len = (uint32_t)(sizeof(*h) + (error ? 0 : len));
        h->error = -error;
        h->unique = unique;
        if (!error && len)
                memcpy(buf + sizeof(*h), data, len);
        if (write(fd, buf, h->len) < 0 && errno != ENOENT)
                perror("fuse-stall: write /dev/fuse");
}

/* Answers everything but READ, which it never answers. */
static void serve(int fd) {
        static char buf[1 << 20];

        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                struct fuse_in_header *in = (struct fuse_in_header *)buf;
                void *arg = buf + sizeof(*in);

                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n <= 0)
                        _exit(0); /* unmounted */
                switch (in->opcode) {
                case FUSE_INIT: {
                        const struct fuse_init_in *ii = arg;
                        struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION,
                                                   .minor = ii->minor < FUSE_KERNEL_MINOR_VERSION
                                                                ? ii->minor
                                                                : FUSE_KERNEL_MINOR_VERSION,
                                                   .max_readahead = ii->max_readahead,
                                                   .max_write = 4096 };
                        reply(fd, in->unique, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_LOOKUP: {
                        struct fuse_entry_out o = { .nodeid = 2, .generation = 1 };

                        if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, "file") != 0) {
                                reply(fd, in->unique, ENOENT, NULL, 0);
                                break;
                        }
                        fill_attr(&o.attr, 2);
                        reply(fd, in->unique, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_GETATTR: {
                        struct fuse_attr_out o = {};

                        fill_attr(&o.attr, in->nodeid);
                        reply(fd, in->unique, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_OPEN: {
                        struct fuse_open_out o = { .fh = 1 };

                        reply(fd, in->unique, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_READ:
                case FUSE_INTERRUPT:
                case FUSE_FORGET:
                case FUSE_BATCH_FORGET:
                        break; /* never answered, or no answer expected */
                case FUSE_FLUSH:
                case FUSE_RELEASE:
                        reply(fd, in->unique, 0, NULL, 0);
                        break;
                default:
                        reply(fd, in->unique, ENOSYS, NULL, 0);
                        break;
                }
        }
}

static void *map_addr;

static void *read_through_mem(void *unused) {
        char c;
        int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);

        (void)unused;
        if (fd < 0 || pread(fd, &c, 1, (off_t)(uintptr_t)map_addr) < 0)
                perror("fuse-stall: /proc/self/mem");
        return NULL;
}

static void *queue_mmap(void *unused) {
        (void)unused;
        (void)mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        return NULL;
}

int main(int argc, char **argv) {
        char opts[128], path[4096], line[32];
        pthread_t reader, writer;
        int fd, file, n;
        pid_t server;

        if (argc != 2) {
                fprintf(stderr, "usage: fuse-stall MOUNTPOINT\n");
                return 2;
        }
        fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (fd < 0) {
                perror("fuse-stall: /dev/fuse");
                return 77;
        }
        snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
        if (mount("fuse-stall", argv[1], "fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
                perror("fuse-stall: mount");
                return 77;
        }
        server = fork();
        if (server < 0)
                return 1;
        if (server == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                serve(fd);
        }
        close(fd);
        snprintf(path, sizeof(path), "%s/file", argv[1]);
        file = open(path, O_RDONLY | O_CLOEXEC);
        if (file < 0) {
                perror("fuse-stall: open");
                return 1;
        }
        map_addr = mmap(NULL, FILE_SIZE, PROT_READ, MAP_PRIVATE, file, 0);
        if (map_addr == MAP_FAILED) {
                perror("fuse-stall: mmap");
                return 1;
        }
        pthread_create(&reader, NULL, read_through_mem, NULL);
        usleep(200 * 1000); /* the reader holds the lock, waiting for the never-answered READ */
        /* No stdio: its buffer's malloc() would need the lock the reader now holds. */
        n = snprintf(line, sizeof(line), "stalled %d\n", (int)getpid());
        if (write(STDOUT_FILENO, line, (size_t)n) != n)
                return 1;
        /* Its stack is an mmap(): the new thread, or this one, queues as the lock's writer. */
        pthread_create(&writer, NULL, queue_mmap, NULL);
        for (;;)
                pause();
}
