/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * One write to a THP knob as the BPF write probe (src/writers/bpf/write-probe.bpf.c)
 * saw it, in the writer's own context at the moment its write returned: the
 * layout both the BPF program and the daemon (write-probe.h) compile. Fixed
 * size, so that a record of any other length is refused whole.
 */

#include <linux/types.h>

#define WRITE_PROBE_COMM_LEN    16
#define WRITE_PROBE_CMDLINE_LEN 256
/*
 * The cgroup path, leaf first, one component a slot: deep enough for a
 * Kubernetes container (kubepods.slice/kubepods-burstable.slice/
 * kubepods-burstable-pod<uid>.slice/cri-containerd-<id>.scope is 4) inside
 * a nested systemd, wide enough for a container scope (85 bytes).
 */
#define WRITE_PROBE_CGROUP_DEPTH 10
#define WRITE_PROBE_CGROUP_NAME  112
/*
 * The first bytes of what was written, enough for any word a knob takes
 * and its newline (the syscall-exit hook only: see value_len). Read from
 * the writer's memory, which another of its threads may change meanwhile:
 * shown, never trusted.
 */
#define WRITE_PROBE_VALUE_LEN 32
/* The ring's size: about 170 records, more than a burst of drifts between two reads. */
#define WRITE_PROBE_RING_BYTES (256 * 1024)

/*
 * The program asked for no wakeup of the ring's reader: the write went
 * through the superblock the daemon watches (write_probe_config), where
 * its inotify watch wakes it for the write anyway, and a wakeup would cost
 * the writer an interrupt of its own (bench/README.md).
 */
#define WRITE_PROBE_RECORD_QUIET 1U
/*
 * Made on the write's entry (the kprobe hook): ret is the length the
 * writer asked to write, and whether the kernel took it is not known.
 */
#define WRITE_PROBE_RECORD_AT_ENTRY 2U
/*
 * The cgroup's path is not in this record: it is the one the record with
 * the same cgroup_key carried, at most WRITE_PROBE_CGROUP_ANNOUNCE_NS ago
 * (each cgroup's path is announced once in that time, not in every record).
 */
#define WRITE_PROBE_RECORD_CGROUP_KNOWN 4U
#define WRITE_PROBE_CGROUP_ANNOUNCE_NS  (10ULL * 1000 * 1000 * 1000)

/*
 * What the daemon tells the program, through a one-entry array map it has
 * mapped (BPF_F_MMAPABLE): no bpf() call, no privilege. Only the daemon
 * knows which superblock its inotify watch is on: the unit's helper loads
 * the probe in the host's namespaces, and a daemon in a network namespace
 * of its own (PrivateNetwork=, a pod) watches another sysfs.
 */
struct write_probe_config {
        __u32 quiet_sb_dev; /* the kernel's major << 20 | minor; 0: wake for every write */
        /*
         * The daemon's own process, as the initial PID namespace numbers it
         * (which a daemon in a pod learns only from the record of one of its
         * own writes): its writes are not recorded. 0: every write is.
         */
        __u32 self_tgid;
};

struct write_probe_record {
        __u64 ino;       /* the kernfs inode written: the same number through every sysfs mount */
        __s64 ret;       /* what the write returned */
        __u64 cgroup_id; /* the writer's cgroup in the unified hierarchy */
        /*
         * CLOCK_MONOTONIC when the write began (kprobe, syscall-exit) or
         * returned (fexit), and when it had returned (fexit, syscall-exit; 0
         * where the hook runs before it: kprobe). The write took effect
         * between the two: the first read of the knob after the second says
         * whether it drifted the knob (knob_reads_judge()), and of two writes
         * before one read the one begun later set what it found. The kernel's
         * clock, never the writer's.
         */
        __u64 ktime_ns;
        __u64 ktime_end_ns;
        __u64 cgroup_key;   /* the writer's (deepest) cgroup's kernfs node id: what its path is kept by */
        __u32 tgid;         /* the writer's process, as the initial PID namespace numbers it */
        __u32 ns_tgid;      /* the same, as its own PID namespace numbers it */
        __u32 pidns;        /* inode number of its PID namespace */
        __u32 netns;        /* of its network namespace */
        __u32 mntns;        /* of its mount namespace */
        __u32 sb_dev;       /* the device of the sysfs superblock the write went through */
        __u32 euid;         /* in the initial user namespace */
        __u32 lost;         /* records the ring had no room for since the last one that fit */
        __u32 cgroup_depth; /* slots of cgroup filled, leaf first; 0: the root */
        __u32 cgroup_truncated; /* 1: there were more ancestors than slots */
        __u32 cmdline_len;      /* bytes of cmdline read */
        __u32 flags;            /* WRITE_PROBE_RECORD_* */
        /*
         * Bytes of value read from the writer's buffer: at most
         * WRITE_PROBE_VALUE_LEN, the first of ret. 0 where the hook cannot
         * read it (fexit: the buffer is the kernel's and gone), and on fexit
         * the record is in the ring before the write's inotify event anyway.
         */
        __u32 value_len;
        __u32 pad;
        char value[WRITE_PROBE_VALUE_LEN];
        char comm[WRITE_PROBE_COMM_LEN];
        char cmdline[WRITE_PROBE_CMDLINE_LEN]; /* argv as in memory: NUL-separated, maybe cut */
        char cgroup[WRITE_PROBE_CGROUP_DEPTH][WRITE_PROBE_CGROUP_NAME];
};
