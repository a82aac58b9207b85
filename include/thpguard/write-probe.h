/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The BPF write probe (src/bpf/write-probe.bpf.c): a program on the return
 * of the kernel's sysfs write, which records every write to a THP knob
 * through any sysfs superblock, in the writer's context, into a ring buffer.
 *
 * Two halves. Loading it (write_probe_load()) needs CAP_BPF and CAP_PERFMON
 * or CAP_SYS_ADMIN, BTF, fexit and the ring buffer (Linux 5.8+): the unit's
 * privileged ExecStartPre= or, by hand and in a pod, the daemon before it
 * drops. What comes of it is three file descriptors, the link (the program
 * stays attached while it is open), the ring and the config map. Reading
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
#include "thpguard/writer.h"

/* The names the fds carry through the service's fd store (FDNAME=). */
#define WRITE_PROBE_FDNAME_LINK   "thpguard-write-probe-link"
#define WRITE_PROBE_FDNAME_RING   "thpguard-write-probe-ring"
#define WRITE_PROBE_FDNAME_CONFIG "thpguard-write-probe-config"

typedef struct WriteProbeFds {
        int link_fd;
        int ring_fd;
        int config_fd; /* struct write_probe_config's map; < 0 (or unmappable): every record wakes the reader
                        */
} WriteProbeFds;

/*
 * Loads and attaches the probe, filtered in the kernel to the regular files
 * with a write bit below thp_dir (any knob a policy can name, so that a
 * reload needs nothing of it): on fexit of the kernfs write, else on the
 * syscall-exit raw tracepoint (src/bpf/write-probe.bpf.c says when). 0 and
 * the three fds (close-on-exec) in *ret, why[] the hook ("fexit" or
 * "syscall-exit"); or -errno with why[] saying what was missing (no BTF, a
 * refused load). -EOPNOTSUPP: built without BPF.
 */
int write_probe_load(const char *thp_dir, WriteProbeFds *ret, char *why, size_t why_size);

/*
 * Whether fd is what its name says: a BPF ring buffer of the probe's size
 * (from /proc/self/fdinfo, parsed by write_probe_fdinfo_parse()), the
 * config map (a mappable one-entry array of struct write_probe_config), or
 * a BPF link. 0, or -EBADF / -EINVAL for anything else.
 */
int write_probe_check_ring_fd(int fd);
int write_probe_check_config_fd(int fd);
int write_probe_check_link_fd(int fd);

/* The hook a link fd attaches the probe by, "fexit" or "syscall-exit", from its fdinfo; "" if neither. */
const char *write_probe_link_hook(int fd);

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
 * position and the data it only reads, mapped twice over (data[i] and
 * data[size + i] are the same byte, so that a record that wraps reads
 * whole). size is a power of two.
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
 * unit, pod or container (writer_set_cgroup_cut()).
 */
void write_probe_writer(const struct write_probe_record *r, Writer *ret);

/*
 * Whether the record's write set a knob of this type to word: the value
 * was read whole (the syscall-exit hook) and the kernel would take it as
 * word (knob_value_write_sets()). False when not known.
 */
bool write_probe_record_sets(const struct write_probe_record *r, KnobType type, const char *word);

/* Whether the record is of a write by the process whose own PID namespace numbers it pid in pidns. */
bool write_probe_record_is(const struct write_probe_record *r, uint32_t pidns, uint32_t pid);
