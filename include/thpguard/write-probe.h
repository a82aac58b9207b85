/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The BPF write probe (src/writers/bpf/write-probe.bpf.c): a program on the
 * kernel's sysfs write (or, asked for by name, on every system call's
 * exit), which records the writes to a THP knob it sees through any sysfs
 * superblock (on fexit and kprobes every write; on the syscall tracepoints
 * not io_uring, splice, sendfile, copy_file_range or AIO ones), in the
 * writer's context, into a ring buffer.
 *
 * Two halves. Loading it (write_probe_load()) needs CAP_BPF and CAP_PERFMON
 * or CAP_SYS_ADMIN, BTF, the ring buffer (Linux 5.8+) and one of its hooks
 * (fexit, a kprobe, or the syscall tracepoints when named): the unit's
 * privileged ExecStartPre= or, by hand and in a pod, a child the daemon
 * forks before it drops. What comes of it is three file descriptors (four
 * on the syscall-exit hook), the link (the program stays attached while it
 * is open), the ring and the config map. Reading
 * the ring (WriteProbe) needs no privilege and no bpf() call: the ring is
 * mapped, and poll() on its fd says when a record is in; the config map is
 * mapped too, and written like memory. So the daemon, with no capability
 * and a seccomp filter without bpf(), reads it as it would a pipe.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "thpguard/knob.h"
#include "thpguard/macro.h"
#include "thpguard/write-probe-record.h"
#include "thpguard/write-source.h"
#include "thpguard/writer.h"

/* The names the fds carry through the service's fd store (FDNAME=). */
#define WRITE_PROBE_FDNAME_LINK   "thpguard-write-probe-link"
#define WRITE_PROBE_FDNAME_ENTER  "thpguard-write-probe-link-enter"
#define WRITE_PROBE_FDNAME_RING   "thpguard-write-probe-ring"
#define WRITE_PROBE_FDNAME_CONFIG "thpguard-write-probe-config"

/*
 * What the syscall-exit hook costs every other process's system calls, as
 * bench/daemon measured it (bench/README.md): said where it is attached.
 */
#define WRITE_PROBE_SYSCALL_EXIT_COST "a getppid() 1.6-1.75x, a 1-byte write() 2.7-2.9x as long"

typedef struct WriteProbeFds {
        int link_fd;
        int enter_link_fd; /* the syscall-exit hook's sys_enter; < 0 on the others */
        int ring_fd;
        int config_fd; /* struct write_probe_config's map; < 0 (or unmappable): every record wakes the reader
                        */
} WriteProbeFds;

/*
 * Loads and attaches the probe, filtered in the kernel to the regular files
 * with a write bit below thp_dir (any knob a policy can name, so that a
 * reload needs nothing of it), on hook: auto tries fexit of the kernfs
 * write, then a kprobe on it. 0 and the fds (close-on-exec) in *ret, why[]
 * the hook's name; or -errno with why[] saying what was missing (no BTF,
 * each refused hook and libbpf's last word on it). -EOPNOTSUPP: built
 * without BPF.
 */
int write_probe_load(const char *thp_dir, WriteProbeHook hook, WriteProbeFds *ret, char *why,
                     size_t why_size);

/*
 * Whether fd is what its name says: a BPF ring buffer of the probe's size
 * (from /proc/self/fdinfo, parsed by write_probe_fdinfo_parse()), the
 * config map (a mappable one-entry array of struct write_probe_config), or
 * a BPF link. 0, or -EBADF / -EINVAL for anything else.
 */
int write_probe_check_ring_fd(int fd);
int write_probe_check_config_fd(int fd);
int write_probe_check_link_fd(int fd);

/*
 * The hook a link fd attaches the probe by, from its fdinfo: fexit,
 * kprobe (a perf event, itself or through a bpf_link) or syscall-exit;
 * _WRITE_PROBE_HOOK_MAX if none of them.
 */
WriteProbeHook write_probe_link_hook(int fd);
/* The same from an fdinfo link_type ("tracing", "perf", "raw_tracepoint"...). */
WriteProbeHook write_probe_hook_of_link_type(const char *link_type);

/* What /proc/self/fdinfo/FD says of a BPF object: map_type and max_entries, or link_type. */
typedef struct WriteProbeFdinfo {
        bool is_map;
        uint32_t map_type;
        uint64_t max_entries;
        uint64_t value_size;
        uint64_t map_flags;
        bool is_link;
        char link_type[32];
} WriteProbeFdinfo;

int write_probe_fdinfo_parse(const char *buf, size_t len, WriteProbeFdinfo *ret);

typedef struct WriteProbe WriteProbe;

/* The reader of the ring; takes the fds (closes them on failure too). */
int write_probe_new(const WriteProbeFds *fds, WriteProbe **ret);
WriteProbe *write_probe_free(WriteProbe *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(WriteProbe *, write_probe_free);

/* poll() it for POLLIN: a record is in. */
int write_probe_fd(const WriteProbe *p);

/*
 * The superblock (dev, as stat() gives it) the caller's inotify watch is
 * on: a write through it is recorded without waking the ring's reader.
 * Nothing where the probe came without its config map.
 */
void write_probe_quiet_superblock(WriteProbe *p, dev_t dev);

/*
 * The caller's own process as the record of one of its writes numbers it
 * (tgid, the initial PID namespace's number): its writes are no longer
 * recorded. Nothing where the probe came without its config map.
 */
void write_probe_skip_writer(WriteProbe *p, uint32_t tgid);

/*
 * The next record, copied out of the ring into *ret: 1; 0 when the ring is
 * empty. A record the program did not write (any other length) is skipped,
 * and so is one it discarded.
 *
 * -EBUSY: the next record is reserved and not submitted yet (the program
 * is still writing it, or was preempted doing so): nothing after it can
 * be read before it is in, and until then poll() says the ring is ready.
 * The caller must not poll() the ring again at once, or it spins: it
 * looks again a little later (daemon-corrector.c: after 1 ms).
 *
 * -EBADMSG: a header no kernel writes (a record longer than the ring or
 * past what was reserved): what is in the ring is skipped, up to the
 * producer, so that the reader never stops on it for good.
 */
_hot_ int write_probe_next(WriteProbe *p, struct write_probe_record *ret);

/*
 * The ring write_probe_next() reads, as plain memory, for the reader and
 * its tests: the consumer position the reader writes, the producer
 * position and the data it only reads, size bytes mapped once: a record
 * that runs past the end is read on from the start. size is a power of
 * two.
 */
typedef struct WriteProbeRing {
        unsigned long *consumer_pos;
        const unsigned long *producer_pos;
        const uint8_t *data;
        size_t size;
} WriteProbeRing;

/* write_probe_next() of ring. */
_hot_ int write_probe_ring_next(WriteProbeRing *ring, struct write_probe_record *ret);

/*
 * The writer a record names, every byte of it escaped: its pid as the node
 * numbers it (as the daemon numbers it when both share a PID namespace),
 * comm, command line, euid, cgroup path and from it unit, pod and
 * container, network namespace. A path the program could not keep whole
 * (more levels than WRITE_PROBE_CGROUP_DEPTH, or a name that filled its
 * slot) is shown cut ("/.../b/c") with cgroup_truncated set, and names no
 * unit, pod or container (writer_set_cgroup_cut()). A record whose
 * cgroup the program announced before (WRITE_PROBE_RECORD_CGROUP_KNOWN)
 * takes the path p kept of that announcement; NULL, or a path not kept
 * (lost, or replaced by newer ones), proves nothing: shown "/...", cut.
 */
void write_probe_writer(const WriteProbe *p, const struct write_probe_record *r, Writer *ret);

/* How many announced cgroup paths the reader keeps (WRITE_PROBE_RECORD_CGROUP_KNOWN). */
#define WRITE_PROBE_CGROUPS_KEPT 64

/*
 * Whether the record's write set a knob of this type to word: the value
 * was read whole (the syscall-exit hook) and the kernel would take it as
 * word (knob_value_write_sets()). False when not known. Shown only: the
 * value is read from the writer's memory, which the writer may change
 * after its write, so it never decides whether the writer is named.
 */
bool write_probe_record_sets(const struct write_probe_record *r, KnobType type, const char *word);

/*
 * The last reads of one knob by the daemon (CLOCK_MONOTONIC, and whether
 * each found it drifted), which say of a record that comes after them
 * which read first saw its write: a write the first read after it found
 * compliant (the policy's own value, or one the kernel refused) names no
 * drift, however late its record comes, whatever its value says.
 */
#define KNOB_READS_KEPT 8

typedef struct KnobReads {
        uint64_t at_ns[KNOB_READS_KEPT];
        bool drifted[KNOB_READS_KEPT];
        unsigned n;    /* kept, at most KNOB_READS_KEPT */
        unsigned next; /* the slot the next read goes to */
} KnobReads;

void knob_reads_add(KnobReads *h, uint64_t at_ns, bool drifted);

typedef enum RecordVerdict {
        RECORD_UNREAD,           /* no read since the write: the next one says */
        RECORD_READ_DRIFTED,     /* the first read after it found the knob drifted */
        RECORD_READ_COMPLIANT,   /* ... found it compliant: the write drifted nothing we saw */
        RECORD_OLDER_THAN_READS, /* before every read kept: too old to name anything */
} RecordVerdict;

RecordVerdict knob_reads_judge(const KnobReads *h, uint64_t write_ns);

/*
 * How long after a write began its record may be judged by the reads that
 * follow, where the hook runs before the write (kprobe: no end time): a
 * write takes microseconds; one preempted longer inside the kernel may be
 * judged by a read made before it took effect, and go unnamed.
 */
#define WRITE_PROBE_WRITE_WINDOW_NS (10 * 1000 * 1000ULL)

/* When the record's write had certainly taken effect: its end, or its beginning and the window. */
uint64_t write_probe_record_end(const struct write_probe_record *r);

/* Whether the record is of a write by the process whose own PID namespace numbers it pid in pidns. */
bool write_probe_record_is(const struct write_probe_record *r, uint32_t pidns, uint32_t pid);
