/* SPDX-License-Identifier: MIT */
/*
 * fuse-hang MOUNTPOINT [FILE VALUE]: a process that holds its own memory lock for as
 * long as it lives, as any local user who may mount FUSE can. It serves
 * a one-file FUSE file system itself, straight on /dev/fuse, but never
 * answers a READ; maps the file; one thread reads that page through
 * /proc/self/mem (which holds the mmap lock across the fault), another
 * is then queued in mmap() for the lock in write mode. From then on every
 * reader of its smaps_rollup, cmdline or mem waits in state D.
 * Prints "ready PID" once both threads are stuck. It cannot be killed
 * while the READ waits: abort the connection first
 * (/sys/fs/fuse/connections/MINOR/abort), then SIGKILL it. With FILE
 * and VALUE it then writes VALUE to FILE and prints "wrote".
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static int fuse_fd;
static volatile int read_seen, go_read, go_mmap;
static void *mapped;

static void reply(uint64_t unique, int error, const void *body, size_t len) {
        char buf[sizeof(struct fuse_out_header) + 512];
        struct fuse_out_header h = { .len = (uint32_t)(sizeof(h) + (error ? 0 : len)),
                                     .error = error,
                                     .unique = unique };

        memcpy(buf, &h, sizeof(h));
        if (!error && len)
                memcpy(buf + sizeof(h), body, len);
        if (write(fuse_fd, buf, h.len) < 0)
                perror("fuse-hang: reply");
}

static void fill_attr(uint64_t ino, struct fuse_attr *a) {
        memset(a, 0, sizeof(*a));
        a->ino = ino;
        a->mode = ino == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0644;
        a->nlink = ino == FUSE_ROOT_ID ? 2 : 1;
        a->size = ino == FUSE_ROOT_ID ? 0 : 4096;
        a->blocks = 8;
        a->blksize = 4096;
}

static void *serve(void *arg) {
        static char buf[FUSE_MIN_READ_BUFFER + 65536];

        for (;;) {
                ssize_t n = read(fuse_fd, buf, sizeof(buf));
                struct fuse_in_header *in = (struct fuse_in_header *)buf;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < (ssize_t)sizeof(*in))
                        return NULL;
                switch (in->opcode) {
                case FUSE_INIT: {
                        struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION,
                                                   .minor = 26,
                                                   .max_readahead = 4096,
                                                   .max_write = 4096 };
                        reply(in->unique, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_LOOKUP: {
                        struct fuse_entry_out o = { .nodeid = 2, .attr_valid = 3600, .entry_valid = 3600 };

                        if (strcmp(buf + sizeof(*in), "f") != 0) {
                                reply(in->unique, -ENOENT, NULL, 0);
                                break;
                        }
                        fill_attr(2, &o.attr);
                        reply(in->unique, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_GETATTR: {
                        struct fuse_attr_out o = { .attr_valid = 3600 };

                        fill_attr(in->nodeid, &o.attr);
                        reply(in->unique, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_OPEN: {
                        struct fuse_open_out o = { .fh = 1 };
                        reply(in->unique, 0, &o, sizeof(o));
                        break;
                }
                case FUSE_READ:
                        read_seen = 1; /* never answered */
                        break;
                case FUSE_INTERRUPT:
                case FUSE_FORGET:
                case FUSE_BATCH_FORGET:
                        break; /* no reply */
                case FUSE_FLUSH:
                case FUSE_RELEASE:
                        reply(in->unique, 0, NULL, 0);
                        break;
                default:
                        reply(in->unique, -ENOSYS, NULL, 0);
                        break;
                }
        }
        (void)arg;
}

/* Holds the mmap lock (read) while the fault waits for the READ that never comes. */
static void *read_through_mem(void *arg) {
        char c;
        int fd = open("/proc/self/mem", O_RDONLY);

        while (!go_read)
                usleep(1000);
        if (fd < 0 || pread(fd, &c, 1, (off_t)(uintptr_t)mapped) < 0)
                perror("fuse-hang: /proc/self/mem");
        (void)arg;
        return NULL;
}

/* Queued for the lock in write mode: from now on, readers wait behind it. */
static void *queue_mmap(void *arg) {
        while (!go_mmap)
                usleep(1000);
        (void)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        (void)arg;
        return NULL;
}

int main(int argc, char **argv) {
        char opts[128], file[4096], line[32];
        pthread_t t;
        int fd;

        if (argc != 2 && argc != 4) {
                fprintf(stderr, "usage: fuse-hang MOUNTPOINT [FILE VALUE]\n");
                return 2;
        }
        fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (fuse_fd < 0) {
                perror("fuse-hang: /dev/fuse");
                return 77;
        }
        snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fuse_fd);
        if (mount("fuse-hang", argv[1], "fuse.fuse-hang", MS_NOSUID | MS_NODEV, opts) < 0) {
                perror("fuse-hang: mount");
                return 77;
        }
        pthread_create(&t, NULL, serve, NULL);
        snprintf(file, sizeof(file), "%s/f", argv[1]);
        fd = open(file, O_RDONLY);
        if (fd < 0) {
                perror("fuse-hang: open");
                return 1;
        }
        mapped = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
        if (mapped == MAP_FAILED) {
                perror("fuse-hang: mmap");
                return 1;
        }
        /*
         * Both threads first: from the stuck read on, anything that needs
         * the lock (a thread's stack, malloc growing the heap) would wait
         * too, main included. So the line below is formatted beforehand.
         */
        pthread_create(&t, NULL, read_through_mem, NULL);
        pthread_create(&t, NULL, queue_mmap, NULL);
        snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
        go_read = 1;
        while (!read_seen)
                usleep(1000);
        usleep(50000); /* the reader is now asleep on the READ, the lock held */
        go_mmap = 1;
        usleep(50000);
        if (write(STDOUT_FILENO, line, strlen(line)) < 0)
                return 1;
        /*
         * A hostile writer: it writes FILE (a THP knob) while anything that
         * reads its command line waits for good. open() and write() of a
         * present buffer need no memory lock, so this thread still can.
         */
        if (argc == 4) {
                int k = open(argv[2], O_WRONLY | O_CLOEXEC);

                if (k < 0 || write(k, argv[3], strlen(argv[3])) < 0 ||
                    write(STDOUT_FILENO, "wrote\n", 6) < 0)
                        return 1;
                close(k);
        }
        for (;;)
                pause();
}
