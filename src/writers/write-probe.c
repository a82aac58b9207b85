/* SPDX-License-Identifier: MIT */
/*
 * The unprivileged half of the BPF write probe (write-probe.h): the checks
 * of the fds it was handed, the reader of its ring, and what a record says
 * of its writer. The ring is read the way libbpf's ring_buffer__poll()
 * reads it, by hand, so that the daemon needs no bpf() call and no libbpf:
 * a consumer page it writes, a producer page and the data it only reads.
 */
#include "thpguard/write-probe.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "thpguard/escape.h"
#include "thpguard/fileio.h"
#include "thpguard/knob-value.h"
#include "thpguard/number.h"

/*
 * include/uapi/linux/bpf.h: from this system's headers where they have the
 * ring buffer (Linux 5.8), else the same stable ABI values (RHEL 8's 4.18
 * headers predate it). They are enum members, so CMake says which.
 */
#include <linux/bpf.h>
#if HAVE_UAPI_BPF_RINGBUF
#define ARRAY_MAP_TYPE       BPF_MAP_TYPE_ARRAY
#define RINGBUF_MAP_TYPE     BPF_MAP_TYPE_RINGBUF
#define MAP_F_MMAPABLE       BPF_F_MMAPABLE
#define RINGBUF_BUSY_BIT     BPF_RINGBUF_BUSY_BIT
#define RINGBUF_DISCARD_BIT  BPF_RINGBUF_DISCARD_BIT
#define RINGBUF_HEADER_BYTES BPF_RINGBUF_HDR_SZ
#else
#define ARRAY_MAP_TYPE       2  /* BPF_MAP_TYPE_ARRAY */
#define RINGBUF_MAP_TYPE     27 /* BPF_MAP_TYPE_RINGBUF */
#define MAP_F_MMAPABLE       (1U << 10)
#define RINGBUF_BUSY_BIT     (1U << 31)
#define RINGBUF_DISCARD_BIT  (1U << 30)
#define RINGBUF_HEADER_BYTES 8
#endif

/* "key:\tvalue" lines; a value that is not a number where one is wanted is an error. */
int write_probe_fdinfo_parse(const char *buf, size_t len, WriteProbeFdinfo *ret) {
        WriteProbeFdinfo info = {};
        size_t at = 0;

        while (at < len) {
                const char *line = buf + at, *nl = memchr(line, '\n', len - at), *colon;
                size_t n = nl ? (size_t)(nl - line) : len - at, vlen;
                const char *v;
                char value[32];

                at += n + 1;
                colon = memchr(line, ':', n);
                if (!colon)
                        continue;
                v = colon + 1;
                while (v < line + n && (*v == '\t' || *v == ' '))
                        v++;
                vlen = (size_t)(line + n - v);
                if (vlen >= sizeof(value))
                        continue;
                memcpy(value, v, vlen);
                value[vlen] = '\0';
#define KEY_IS(k) ((size_t)(colon - line) == STRLEN(k) && memcmp(line, k, STRLEN(k)) == 0)
                if (KEY_IS("map_type")) {
                        uint64_t t;

                        if (number_parse_u64(value, vlen, &t) < 0 || t > UINT32_MAX)
                                return -EINVAL;
                        info.is_map = true;
                        info.map_type = (uint32_t)t;
                } else if (KEY_IS("max_entries")) {
                        if (number_parse_u64(value, vlen, &info.max_entries) < 0)
                                return -EINVAL;
                } else if (KEY_IS("value_size")) {
                        if (number_parse_u64(value, vlen, &info.value_size) < 0)
                                return -EINVAL;
                } else if (KEY_IS("map_flags")) {
                        /* The kernel prints it in hex: "0x400". */
                        if (vlen < 3 || value[0] != '0' || value[1] != 'x' ||
                            number_parse_hex_u64(value + 2, vlen - 2, &info.map_flags) < 0)
                                return -EINVAL;
                } else if (KEY_IS("link_type")) {
                        info.is_link = true;
                        snprintf(info.link_type, sizeof(info.link_type), "%s", value);
                }
#undef KEY_IS
        }
        *ret = info;
        return 0;
}

static int read_fdinfo(int fd, WriteProbeFdinfo *ret) {
        _cleanup_close_ int info = -EBADF;
        char path[64], buf[1024];
        ssize_t n;

        /* Our own fd's: /proc/self is the kernel's view of us, not a path anyone else chose. */
        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
        info = open(path, O_RDONLY | O_CLOEXEC);
        if (info < 0)
                return -errno;
        n = read(info, buf, sizeof(buf));
        if (n < 0)
                return -errno;
        return write_probe_fdinfo_parse(buf, (size_t)n, ret);
}

int write_probe_check_ring_fd(int fd) {
        WriteProbeFdinfo info;
        int r = read_fdinfo(fd, &info);

        if (r < 0)
                return r == -ENOENT ? -EBADF : r;
        if (!info.is_map || info.map_type != RINGBUF_MAP_TYPE || info.max_entries != WRITE_PROBE_RING_BYTES)
                return -EINVAL;
        return 0;
}

int write_probe_check_config_fd(int fd) {
        WriteProbeFdinfo info;
        int r = read_fdinfo(fd, &info);

        if (r < 0)
                return r == -ENOENT ? -EBADF : r;
        if (!info.is_map || info.map_type != ARRAY_MAP_TYPE || info.max_entries != 1 ||
            info.value_size != sizeof(struct write_probe_config) || !(info.map_flags & MAP_F_MMAPABLE))
                return -EINVAL;
        return 0;
}

/*
 * What /proc/self/fd/FD points at. A kprobe is attached through a perf
 * event: on Linux 5.15 and later libbpf wraps it in a bpf_link, before
 * that (or with an older libbpf) the perf event's own fd holds it.
 */
static int fd_target(int fd, char *buf, size_t size) {
        char path[64];
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        n = readlink(path, buf, size - 1);
        if (n < 0)
                return errno == ENOENT ? -EBADF : -errno;
        buf[n] = '\0';
        return 0;
}

int write_probe_check_link_fd(int fd) {
        char target[64];
        int r = fd_target(fd, target, sizeof(target));

        if (r < 0)
                return r;
        return strcmp(target, "anon_inode:bpf_link") == 0 || strcmp(target, "anon_inode:[perf_event]") == 0
                   ? 0
                   : -EINVAL;
}

WriteProbeHook write_probe_hook_of_link_type(const char *link_type) {
        /*
         * The loader's hooks (write-probe-load.c), by the kind of link each
         * makes, as fdinfo names it: the kernel's bpf_types.h names
         * BPF_LINK_TYPE_PERF_EVENT "perf" (Debian 12's 6.1 and 13's 6.12
         * print "link_type:\tperf"); "perf_event" is the uapi's own word.
         */
        if (strcmp(link_type, "tracing") == 0)
                return WRITE_PROBE_HOOK_FEXIT;
        if (strcmp(link_type, "perf") == 0 || strcmp(link_type, "perf_event") == 0)
                return WRITE_PROBE_HOOK_KPROBE;
        if (strcmp(link_type, "raw_tracepoint") == 0)
                return WRITE_PROBE_HOOK_SYSCALL_EXIT;
        return _WRITE_PROBE_HOOK_MAX;
}

WriteProbeHook write_probe_link_hook(int fd) {
        WriteProbeFdinfo info;
        char target[64];

        if (fd_target(fd, target, sizeof(target)) == 0 && strcmp(target, "anon_inode:[perf_event]") == 0)
                return WRITE_PROBE_HOOK_KPROBE;
        if (read_fdinfo(fd, &info) < 0 || !info.is_link)
                return _WRITE_PROBE_HOOK_MAX;
        return write_probe_hook_of_link_type(info.link_type);
}

struct WriteProbe {
        int link_fd;       /* held only: while it is open, the program stays attached */
        int enter_link_fd; /* the same, for the syscall-exit hook's sys_enter */
        int ring_fd;
        int config_fd;
        struct write_probe_config *config; /* mapped; NULL: none */
        size_t page;
        WriteProbeRing
            ring; /* its consumer page is ours to write, the producer page and data the kernel's */
        size_t producer_map_bytes;
        /*
         * The cgroup paths the program announced (WRITE_PROBE_RECORD_CGROUP_KNOWN),
         * oldest replaced first: an active cgroup is announced again every
         * WRITE_PROBE_CGROUP_ANNOUNCE_NS, so it stays.
         */
        struct {
                uint64_t key;
                char *path;
                bool cut;
        } cgroups[WRITE_PROBE_CGROUPS_KEPT];
        unsigned next_cgroup;
};

int write_probe_new(const WriteProbeFds *fds, WriteProbe **ret) {
        WriteProbe *p = calloc(1, sizeof(*p));
        int ring_fd = fds->ring_fd;
        void *c, *prod;

        if (!p) {
                close(fds->link_fd);
                safe_close(fds->enter_link_fd);
                close(fds->ring_fd);
                safe_close(fds->config_fd);
                return -ENOMEM;
        }
        p->link_fd = fds->link_fd;
        p->enter_link_fd = fds->enter_link_fd;
        p->ring_fd = ring_fd;
        p->config_fd = fds->config_fd;
        p->page = (size_t)sysconf(_SC_PAGESIZE);
        if (p->config_fd >= 0) {
                void *config = mmap(NULL, p->page, PROT_READ | PROT_WRITE, MAP_SHARED, p->config_fd, 0);

                /* Unmapped, it is as if it had not come: every record wakes the reader. */
                p->config = config == MAP_FAILED ? NULL : config;
        }
        c = mmap(NULL, p->page, PROT_READ | PROT_WRITE, MAP_SHARED, ring_fd, 0);
        if (c == MAP_FAILED) {
                int r = -errno;

                write_probe_free(p);
                return r;
        }
        p->ring.consumer_pos = c;
        p->ring.size = WRITE_PROBE_RING_BYTES;
        /* The data once, not twice over as libbpf maps it: 256 KiB less RSS (write_probe_ring_next()). */
        p->producer_map_bytes = p->page + (size_t)WRITE_PROBE_RING_BYTES;
        prod = mmap(NULL, p->producer_map_bytes, PROT_READ, MAP_SHARED, ring_fd, (off_t)p->page);
        if (prod == MAP_FAILED) {
                int r = -errno;

                write_probe_free(p);
                return r;
        }
        p->ring.producer_pos = prod;
        p->ring.data = (const uint8_t *)prod + p->page;
        *ret = p;
        return 0;
}

WriteProbe *write_probe_free(WriteProbe *p) {
        if (!p)
                return NULL;
        if (p->ring.producer_pos)
                munmap((void *)p->ring.producer_pos, p->producer_map_bytes);
        if (p->ring.consumer_pos)
                munmap(p->ring.consumer_pos, p->page);
        if (p->config)
                munmap(p->config, p->page);
        safe_close(p->config_fd);
        safe_close(p->ring_fd);
        safe_close(p->link_fd);
        safe_close(p->enter_link_fd);
        for (size_t i = 0; i < ELEMENTSOF(p->cgroups); i++)
                free(p->cgroups[i].path);
        free(p);
        return NULL;
}

int write_probe_fd(const WriteProbe *p) {
        return p->ring_fd;
}

void write_probe_skip_writer(WriteProbe *p, uint32_t tgid) {
        if (p->config)
                __atomic_store_n(&p->config->self_tgid, tgid, __ATOMIC_RELEASE);
}

void write_probe_quiet_superblock(WriteProbe *p, dev_t dev) {
        if (p->config)
                __atomic_store_n(&p->config->quiet_sb_dev, (uint32_t)(major(dev) << 20 | minor(dev)),
                                 __ATOMIC_RELEASE);
}

/*
 * The kernel's ring (kernel/bpf/ringbuf.c): an 8-byte header before each
 * record, its length with the busy and discard bits and the record's page
 * offset, the record rounded up to 8 bytes. A record is reserved busy,
 * with the producer position already past it, and the bit is cleared when
 * it is submitted; positions only grow, the data is at pos & (size - 1).
 */
_hot_ int write_probe_ring_next(WriteProbeRing *ring, struct write_probe_record *ret) {
        const size_t mask = ring->size - 1;
        unsigned long cons = __atomic_load_n(ring->consumer_pos, __ATOMIC_ACQUIRE);

        for (;;) {
                unsigned long prod = __atomic_load_n(ring->producer_pos, __ATOMIC_ACQUIRE);
                const uint32_t *header;
                uint32_t len;
                size_t bytes;
                bool take;

                if (cons >= prod)
                        return 0;
                header = (const uint32_t *)(ring->data + (cons & mask));
                len = __atomic_load_n(header, __ATOMIC_ACQUIRE);
                /* Reserved, not submitted yet: it stays the next, and the ring reads as ready until it is
                 * in. */
                if (len & RINGBUF_BUSY_BIT)
                        return -EBUSY;
                take = !(len & RINGBUF_DISCARD_BIT);
                len &= ~(RINGBUF_BUSY_BIT | RINGBUF_DISCARD_BIT);
                bytes = ((size_t)len + RINGBUF_HEADER_BYTES + 7) & ~(size_t)7;
                /*
                 * Not the kernel's: a record longer than the ring, or past
                 * what the producer has reserved. Where the next one starts
                 * cannot be known: what is in the ring is given up, so that
                 * the reader goes on with what comes next instead of
                 * stopping here for good while poll() says ready.
                 */
                if (bytes > ring->size || bytes > prod - cons) {
                        __atomic_store_n(ring->consumer_pos, prod, __ATOMIC_RELEASE);
                        return -EBADMSG;
                }
                take = take && len == sizeof(*ret);
                if (take) {
                        /*
                         * The data is mapped once (its pages count in our RSS): a
                         * record that runs past the end goes on at the start. The
                         * 8-byte header, 8-aligned, never does.
                         */
                        size_t at = ((cons & mask) + RINGBUF_HEADER_BYTES) & mask;
                        size_t first = ring->size - at < sizeof(*ret) ? ring->size - at : sizeof(*ret);

                        memcpy(ret, ring->data + at, first);
                        memcpy((uint8_t *)ret + first, ring->data, sizeof(*ret) - first);
                }
                cons += bytes;
                __atomic_store_n(ring->consumer_pos, cons, __ATOMIC_RELEASE);
                if (take)
                        return 1;
        }
}

static bool cgroup_path(const struct write_probe_record *r, char *buf, size_t size);

/* A record that carries its cgroup's path: kept by its key for the records that will not. */
static void learn_cgroup(WriteProbe *p, const struct write_probe_record *r) {
        char path[WRITE_PROBE_CGROUP_DEPTH * (WRITE_PROBE_CGROUP_NAME + 4) + 8];
        size_t slot = p->next_cgroup;
        bool cut = cgroup_path(r, path, sizeof(path));
        char *copy;

        for (size_t i = 0; i < ELEMENTSOF(p->cgroups); i++)
                if (p->cgroups[i].path && p->cgroups[i].key == r->cgroup_key) {
                        slot = i;
                        break;
                }
        copy = strdup(path);
        if (!copy)
                return; /* its later records will say the path is not known */
        if (slot == p->next_cgroup)
                p->next_cgroup = (p->next_cgroup + 1) % ELEMENTSOF(p->cgroups);
        free(p->cgroups[slot].path);
        p->cgroups[slot].key = r->cgroup_key;
        p->cgroups[slot].path = copy;
        p->cgroups[slot].cut = cut;
}

_hot_ int write_probe_next(WriteProbe *p, struct write_probe_record *ret) {
        int r = write_probe_ring_next(&p->ring, ret);

        if (r > 0 && ret->cgroup_key != 0 && !(ret->flags & WRITE_PROBE_RECORD_CGROUP_KNOWN))
                learn_cgroup(p, ret);
        return r;
}

bool write_probe_record_sets(const struct write_probe_record *r, KnobType type, const char *word) {
        /* Anything cut short, or a length the program would not write, tells nothing. */
        if (r->value_len == 0 || r->value_len > sizeof(r->value) || r->ret != (int64_t)r->value_len)
                return false;
        return knob_value_write_sets(type, r->value, r->value_len, word);
}

void knob_reads_add(KnobReads *h, uint64_t at_ns, bool drifted) {
        h->at_ns[h->next] = at_ns;
        h->drifted[h->next] = drifted;
        h->next = (h->next + 1) % KNOB_READS_KEPT;
        if (h->n < KNOB_READS_KEPT)
                h->n++;
}

uint64_t write_probe_record_end(const struct write_probe_record *r) {
        return r->ktime_end_ns ? r->ktime_end_ns : r->ktime_ns + WRITE_PROBE_WRITE_WINDOW_NS;
}

RecordVerdict knob_reads_judge(const KnobReads *h, uint64_t write_ns) {
        unsigned oldest = (h->next + KNOB_READS_KEPT - h->n) % KNOB_READS_KEPT;

        if (h->n == KNOB_READS_KEPT && write_ns < h->at_ns[oldest])
                return RECORD_OLDER_THAN_READS;
        /* Oldest first: the first read at or after the write. */
        for (unsigned k = 0; k < h->n; k++) {
                unsigned i = (oldest + k) % KNOB_READS_KEPT;

                if (h->at_ns[i] >= write_ns)
                        return h->drifted[i] ? RECORD_READ_DRIFTED : RECORD_READ_COMPLIANT;
        }
        return RECORD_UNREAD;
}

bool write_probe_record_is(const struct write_probe_record *r, uint32_t pidns, uint32_t pid) {
        return r->pidns == pidns && r->ns_tgid == pid;
}

/*
 * "/a/b/c" from the leaf-first slots, "/..." in front when ancestors did
 * not fit, "..." after a name that filled its slot (the program cuts a
 * longer one there). Returns whether anything is missing.
 */
static bool cgroup_path(const struct write_probe_record *r, char *buf, size_t size) {
        size_t at = 0;
        unsigned depth =
            r->cgroup_depth > WRITE_PROBE_CGROUP_DEPTH ? WRITE_PROBE_CGROUP_DEPTH : r->cgroup_depth;
        bool cut = r->cgroup_truncated;

        buf[0] = '\0';
        if (r->cgroup_truncated && at + 4 < size) {
                memcpy(buf, "/...", 4);
                at = 4;
        }
        for (unsigned i = depth; i-- > 0;) {
                size_t n = strnlen(r->cgroup[i], WRITE_PROBE_CGROUP_NAME);
                /* A NUL always ends what the program read: a name this long may have been longer. */
                bool full = n >= WRITE_PROBE_CGROUP_NAME - 1;

                if (at + 1 + n + (full ? 3 : 0) >= size) {
                        cut = true;
                        break;
                }
                buf[at++] = '/';
                memcpy(buf + at, r->cgroup[i], n);
                at += n;
                if (full) {
                        memcpy(buf + at, "...", 3);
                        at += 3;
                        cut = true;
                }
        }
        if (at == 0 && size > 1)
                buf[at++] = '/';
        buf[at] = '\0';
        return cut;
}

void write_probe_writer(const WriteProbe *p, const struct write_probe_record *r, Writer *ret) {
        char path[WRITE_PROBE_CGROUP_DEPTH * (WRITE_PROBE_CGROUP_NAME + 4) + 8];
        Writer w = { .pid = (pid_t)r->tgid, .uid = r->euid, .uid_known = true, .netns = r->netns };
        size_t cmdline_len = r->cmdline_len > sizeof(r->cmdline) ? sizeof(r->cmdline) : r->cmdline_len;
        bool cut;

        escape_printable(r->comm, strnlen(r->comm, sizeof(r->comm)), w.comm, sizeof(w.comm));
        if (cmdline_len > 0)
                writer_set_cmdline(&w, r->cmdline, cmdline_len, cmdline_len == sizeof(r->cmdline));
        /*
         * Escaped there, and each slot is the kernel's kernfs name, cut at
         * the slot's end. A path without its outer levels proves no owner:
         * a process that may create cgroups (root in a privileged pod)
         * names the ones below its own as it likes, another pod's included.
         */
        if (r->flags & WRITE_PROBE_RECORD_CGROUP_KNOWN) {
                /* Announced before: what was kept of it, or nothing proven (it was not read, or let go). */
                snprintf(path, sizeof(path), "/...");
                cut = true;
                for (size_t i = 0; p && i < ELEMENTSOF(p->cgroups); i++)
                        if (p->cgroups[i].path && p->cgroups[i].key == r->cgroup_key) {
                                snprintf(path, sizeof(path), "%s", p->cgroups[i].path);
                                cut = p->cgroups[i].cut;
                                break;
                        }
        } else
                cut = cgroup_path(r, path, sizeof(path));
        if (cut)
                writer_set_cgroup_cut(&w, path);
        else
                writer_set_cgroup(&w, path);
        *ret = w;
}
