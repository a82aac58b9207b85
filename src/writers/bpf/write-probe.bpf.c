// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The BPF write probe: runs on the kernel's sysfs write (kernfs), through
 * any sysfs superblock (sysfs has one per network namespace: a privileged
 * pod's own /sys is another inode of the same kernfs node, which no inotify
 * watch or fanotify mark on ours sees), and for a write to a THP knob puts
 * a record of the writer (write-probe-record.h) into a ring buffer the
 * daemon sleeps on. It wakes the daemon only for a write through another
 * superblock than the one the daemon watches: one through that superblock
 * wakes it by inotify already.
 *
 * It runs in the writer's own context, so what it reads of the writer is
 * the writer's at the moment of the write: no /proc lookup races its exit.
 * Built CO-RE against the few kernel fields it names below (no vmlinux.h):
 * libbpf relocates each one against the running kernel's BTF at load time.
 *
 * Three hooks, which the loader (write-probe-load.c) tries in this order
 * unless told one by name:
 *
 *  fexit   on kernfs_fop_write_iter (5.11+) or kernfs_fop_write: runs for
 *          kernfs writes alone (sysfs and cgroupfs), with the kernel's own
 *          file and the write's result. Needs BPF trampolines (x86-64 5.5+,
 *          arm64 6.0+).
 *  kprobe  on the entry of the same function, where a kernel refuses
 *          trampolines: it too runs only for kernfs writes and has the
 *          kernel's own file. On entry, not a kretprobe: the return
 *          registers no longer hold the file, so a kretprobe would need an
 *          entry probe as well and would put a return trampoline on every
 *          kernfs write of the node (every cgroupfs write of every container
 *          runtime) only to learn whether the kernel took the write, which
 *          the daemon learns anyway by reading the knob. A write the kernel
 *          refuses therefore has a record too (WRITE_PROBE_RECORD_AT_ENTRY);
 *          the daemon names nobody for a knob it did not find drifted.
 *  syscall-exit  the raw tracepoints sys_enter and sys_exit, only when asked
 *          for by name: they run on every system call of every process of
 *          the node (bench/README.md has what that costs), to look at
 *          write(2), pwrite64(2), writev(2), pwritev(2), pwritev2(2), native
 *          or compat (ia32, x32, arm32). The file is taken at sys_enter, so
 *          that an fd swapped by dup2() before the write returns changes
 *          nothing; the record is made at sys_exit, with the result. They
 *          miss io_uring, splice, sendfile, copy_file_range and AIO writes.
 *
 * Every hook records only a file opened for writing (FMODE_WRITE): a
 * read-only fd of a knob, which anyone may open, never makes a record.
 * Measured: the Linux 6.18 built for this project's Firecracker VMs answers
 * EPERM to every fentry/fexit/lsm load and has no kprobes; raw tracepoints
 * load. Debian's 5.10, 6.1 and 6.12 take fexit and kprobes.
 */
#include <asm/unistd.h>
/* NULL: libbpf 0.3's bpf_helpers.h (Debian 11) has none; clang's stddef.h gives it everywhere. */
#include <stddef.h>

#include <linux/bpf.h>
#include <linux/types.h>

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "thpguard/write-probe-record.h"

#define SYSFS_MAGIC 0x62656572

/* The kernel's types, as far as the probe reads them. */
struct super_block {
        unsigned long s_magic;
        unsigned int s_dev;
} __attribute__((preserve_access_index));

struct inode {
        unsigned long i_ino;
        struct super_block *i_sb;
} __attribute__((preserve_access_index));

struct file {
        struct inode *f_inode;
        unsigned int f_mode;
} __attribute__((preserve_access_index));

/* include/linux/fs.h: the file was opened for writing. */
#define FMODE_WRITE 0x2

struct iov_iter {
        unsigned long count;
} __attribute__((preserve_access_index));

struct kiocb {
        struct file *ki_filp;
} __attribute__((preserve_access_index));

struct kernfs_node {
        const char *name;
        __u64
            id; /* 5.5 and later: the node's 64-bit id, unique while the node lives and never reused soon */
} __attribute__((preserve_access_index));

/* Linux 6.15 renamed kernfs_node.parent (now read under RCU); the probe takes whichever there is. */
struct kernfs_node___parent {
        struct kernfs_node *parent;
} __attribute__((preserve_access_index));

struct kernfs_node___rcu_parent {
        struct kernfs_node *__parent;
} __attribute__((preserve_access_index));

struct cgroup {
        struct kernfs_node *kn;
        int level;
} __attribute__((preserve_access_index));

struct cgroup_subsys_state {
        struct cgroup *cgroup;
} __attribute__((preserve_access_index));

struct css_set {
        struct cgroup_subsys_state *subsys[1]; /* CGROUP_SUBSYS_COUNT: its real size comes from the BTF */
        struct cgroup *dfl_cgrp;
} __attribute__((preserve_access_index));

struct ns_common {
        unsigned int inum;
} __attribute__((preserve_access_index));

struct net {
        struct ns_common ns;
} __attribute__((preserve_access_index));

struct mnt_namespace {
        struct ns_common ns;
} __attribute__((preserve_access_index));

struct pid_namespace {
        struct ns_common ns;
} __attribute__((preserve_access_index));

struct upid {
        int nr;
        struct pid_namespace *ns;
} __attribute__((preserve_access_index));

struct pid {
        unsigned int level;
        struct upid numbers[1];
} __attribute__((preserve_access_index));

struct nsproxy {
        struct net *net_ns;
        struct mnt_namespace *mnt_ns;
} __attribute__((preserve_access_index));

typedef struct {
        unsigned int val;
} kuid_t;

struct cred {
        kuid_t euid;
} __attribute__((preserve_access_index));

struct mm_struct {
        unsigned long arg_start;
        unsigned long arg_end;
} __attribute__((preserve_access_index));

struct task_struct {
        int tgid;
        char comm[16];
        struct task_struct *group_leader;
        struct pid *thread_pid;
        struct nsproxy *nsproxy;
        struct css_set *cgroups;
        const struct cred *cred;
        struct mm_struct *mm;
} __attribute__((preserve_access_index));

/* The THP knobs' kernfs inode numbers, filled by the loader (write-probe-load.c). */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 256);
        __type(key, __u64);
        __type(value, __u8);
} knobs SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, WRITE_PROBE_RING_BYTES);
} records SEC(".maps");

/* Records the ring had no room for; the next one that fits carries the count. */
__u32 lost = 0;

/*
 * The superblock the daemon watches, which it writes itself (struct
 * write_probe_config). A write through it raises the inotify event that
 * wakes the daemon's corrector, so its record is submitted without a
 * wakeup of its own: on a virtual machine that wakeup is an interrupt the
 * writer sends itself in its write(), about 20 us before the corrector can
 * run (bench/README.md).
 */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 1);
        __uint(map_flags, BPF_F_MMAPABLE);
        __type(key, __u32);
        __type(value, struct write_probe_config);
} config SEC(".maps");

static struct kernfs_node *kernfs_parent(struct kernfs_node *kn) {
        if (bpf_core_field_exists(((struct kernfs_node___rcu_parent *)0)->__parent))
                return BPF_CORE_READ((struct kernfs_node___rcu_parent *)kn, __parent);
        return BPF_CORE_READ((struct kernfs_node___parent *)kn, parent);
}

/*
 * The cgroup that says most about the writer: the deepest of its unified
 * one and those of its v1 controllers. On cgroup v2 that is the unified
 * one; on a hybrid or v1 node a container runtime may have placed it in
 * the controllers only.
 */
static struct cgroup *deepest_cgroup(struct task_struct *t) {
        struct css_set *cset = BPF_CORE_READ(t, cgroups);
        struct cgroup *best = BPF_CORE_READ(cset, dfl_cgrp);
        int best_level = BPF_CORE_READ(best, level);
        struct cgroup_subsys_state **subsys = __builtin_preserve_access_index(&cset->subsys[0]);
        unsigned n = bpf_core_field_size(cset->subsys) / sizeof(void *);

        for (unsigned i = 0; i < 16; i++) {
                struct cgroup_subsys_state *css = NULL;
                struct cgroup *c;
                int level;

                if (i >= n)
                        break;
                if (bpf_probe_read_kernel(&css, sizeof(css), subsys + i) < 0 || !css)
                        continue;
                c = BPF_CORE_READ(css, cgroup);
                level = BPF_CORE_READ(c, level);
                if (level > best_level) {
                        best = c;
                        best_level = level;
                }
        }
        return best;
}

/*
 * The cgroups whose path a record carried, and when: a record of a writer
 * in one of them carries the path again only after
 * WRITE_PROBE_CGROUP_ANNOUNCE_NS, and else just its key
 * (WRITE_PROBE_RECORD_CGROUP_KNOWN), which the daemon looks up in what it
 * kept of the last announcement. Walking up to ten levels and copying
 * their names is most of a record's cost.
 */
struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, 1024);
        __type(key, __u64);   /* the cgroup's kernfs node id */
        __type(value, __u64); /* CLOCK_MONOTONIC of its last announcement */
} announced SEC(".maps");

static void read_cgroup(struct task_struct *t, struct write_probe_record *r) {
        struct kernfs_node *kn = BPF_CORE_READ(deepest_cgroup(t), kn);
        __u64 key = BPF_CORE_READ(kn, id), now = bpf_ktime_get_ns(), *last;

        r->cgroup_depth = 0;
        r->cgroup_truncated = 0;
        r->cgroup_key = key;
        last = key ? bpf_map_lookup_elem(&announced, &key) : NULL;
        if (last && now - *last < WRITE_PROBE_CGROUP_ANNOUNCE_NS) {
                r->flags |= WRITE_PROBE_RECORD_CGROUP_KNOWN;
                return;
        }
        if (key)
                bpf_map_update_elem(&announced, &key, &now, BPF_ANY);
        for (unsigned i = 0; i < WRITE_PROBE_CGROUP_DEPTH; i++) {
                struct kernfs_node *parent;

                if (!kn)
                        return;
                parent = kernfs_parent(kn);
                if (!parent) /* the hierarchy's root: no name of its own in the path */
                        return;
                if (bpf_probe_read_kernel_str(r->cgroup[i], WRITE_PROBE_CGROUP_NAME,
                                              BPF_CORE_READ(kn, name)) < 0)
                        r->cgroup[i][0] = '\0';
                r->cgroup_depth = i + 1;
                kn = parent;
        }
        r->cgroup_truncated = kn && kernfs_parent(kn) ? 1 : 0;
}

static void read_pid_ns(struct task_struct *t, struct write_probe_record *r) {
        struct pid *pid = BPF_CORE_READ(t, group_leader, thread_pid);
        unsigned level = BPF_CORE_READ(pid, level);
        struct upid *numbers = __builtin_preserve_access_index(&pid->numbers[0]);
        struct upid own = {};

        if (level > 32 || bpf_probe_read_kernel(&own, sizeof(own), numbers + level) < 0)
                return;
        r->ns_tgid = own.nr;
        r->pidns = BPF_CORE_READ(own.ns, ns.inum);
}

/*
 * The knob file is a sysfs attribute, opened for writing, whose inode the
 * loader put in knobs: its inode number.
 */
static int knob_of(struct file *file, __u64 *ret_ino, __u32 *ret_dev) {
        struct inode *inode;
        __u64 ino;

        if (!file || !(BPF_CORE_READ(file, f_mode) & FMODE_WRITE))
                return 0;
        inode = BPF_CORE_READ(file, f_inode);
        if (BPF_CORE_READ(inode, i_sb, s_magic) != SYSFS_MAGIC)
                return 0;
        ino = BPF_CORE_READ(inode, i_ino);
        if (!bpf_map_lookup_elem(&knobs, &ino))
                return 0;
        *ret_ino = ino;
        *ret_dev = BPF_CORE_READ(inode, i_sb, s_dev);
        return 1;
}

/*
 * flags: WRITE_PROBE_RECORD_AT_ENTRY where ret is the length asked for, not
 * yet the result. write_ns: when the write began, where the hook saw its
 * beginning (kprobe, syscall-exit); else 0, and now is taken.
 */
/* Inlined: a BPF function takes five arguments at most. */
static __attribute__((always_inline)) int record_write(__u64 ino, __u32 sb_dev, long ret, const void *value,
                                                       __u32 flags, __u64 write_ns) {
        struct task_struct *t;
        struct write_probe_record *r;
        unsigned long args, args_end;
        __u32 missed, quiet, zero = 0, tgid = bpf_get_current_pid_tgid() >> 32;
        struct write_probe_config *c = bpf_map_lookup_elem(&config, &zero);

        if (ret <= 0) /* refused or empty: nothing changed */
                return 0;
        /* The daemon's own correction: it knows it wrote, and this runs before its reader does. */
        if (c && c->self_tgid != 0 && c->self_tgid == tgid)
                return 0;
        r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
        if (!r) {
                __sync_fetch_and_add(&lost, 1);
                return 0;
        }
        quiet = c && c->quiet_sb_dev != 0 && c->quiet_sb_dev == sb_dev;
        t = (struct task_struct *)bpf_get_current_task();
        missed = lost;
        if (missed)
                __sync_fetch_and_add(&lost, -missed);
        r->lost = missed;
        r->ino = ino;
        r->ret = ret;
        r->sb_dev = sb_dev;
        r->tgid = tgid;
        r->ns_tgid = 0;
        r->pidns = 0;
        read_pid_ns(t, r);
        r->netns = BPF_CORE_READ(t, nsproxy, net_ns, ns.inum);
        r->mntns = BPF_CORE_READ(t, nsproxy, mnt_ns, ns.inum);
        r->euid = BPF_CORE_READ(t, cred, euid.val);
        r->cgroup_id = bpf_get_current_cgroup_id();
        r->flags = flags | (quiet ? WRITE_PROBE_RECORD_QUIET : 0);
        r->pad = 0;
        /* CLOCK_MONOTONIC, the daemon's clock: which of its reads came first after this write. */
        r->ktime_end_ns = flags & WRITE_PROBE_RECORD_AT_ENTRY ? 0 : bpf_ktime_get_ns();
        r->ktime_ns = write_ns ? write_ns : r->ktime_end_ns ? r->ktime_end_ns : bpf_ktime_get_ns();
        /* What was written, from the writer's own buffer: the value the daemon compares with its policy. */
        r->value_len = 0;
        if (value) {
                __u32 len = ret > WRITE_PROBE_VALUE_LEN ? WRITE_PROBE_VALUE_LEN : (__u32)ret;

                if (bpf_probe_read_user(r->value, len, value) == 0)
                        r->value_len = len;
        }
        bpf_get_current_comm(r->comm, sizeof(r->comm));
        read_cgroup(t, r);

        /* The writer's own argv, from its own memory: we run in its context. */
        r->cmdline_len = 0;
        args = BPF_CORE_READ(t, mm, arg_start);
        args_end = BPF_CORE_READ(t, mm, arg_end);
        if (args && args_end > args) {
                __u32 len = args_end - args > WRITE_PROBE_CMDLINE_LEN ? WRITE_PROBE_CMDLINE_LEN
                                                                      : (__u32)(args_end - args);

                if (bpf_probe_read_user(r->cmdline, len, (const void *)args) == 0)
                        r->cmdline_len = len;
        }
        bpf_ringbuf_submit(r, quiet ? BPF_RB_NO_WAKEUP : 0);
        return 0;
}

/* value: the writer's buffer, NULL where the hook has none. */
static int note_write(struct file *file, long ret, const void *value, __u32 flags) {
        __u64 ino;
        __u32 dev;

        if (ret <= 0 || !knob_of(file, &ino, &dev))
                return 0;
        return record_write(ino, dev, ret, value, flags, 0);
}

/* ---- fexit: Linux 5.11 and later, ssize_t kernfs_fop_write_iter(struct kiocb *, struct iov_iter *) */
SEC("fexit/kernfs_fop_write_iter")
int write_iter_exit(unsigned long long *ctx) {
        struct kiocb *iocb = (struct kiocb *)ctx[0];

        return note_write(BPF_CORE_READ(iocb, ki_filp), (long)ctx[2], NULL, 0);
}

/* Before 5.11: ssize_t kernfs_fop_write(struct file *, const char __user *, size_t, loff_t *) */
SEC("fexit/kernfs_fop_write")
int write_exit(unsigned long long *ctx) {
        return note_write((struct file *)ctx[0], (long)ctx[4], NULL, 0);
}

/* Where the kernel keeps a function's, and a syscall's, number and arguments, per architecture. */
#if defined(__TARGET_ARCH_x86)
struct pt_regs {
        unsigned long bx;
        unsigned long cx;
        unsigned long dx;
        unsigned long si;
        unsigned long di;
        unsigned long orig_ax;
} __attribute__((preserve_access_index));
#define FUNC_ARG1(regs)    BPF_CORE_READ(regs, di)
#define FUNC_ARG2(regs)    BPF_CORE_READ(regs, si)
#define FUNC_ARG3(regs)    BPF_CORE_READ(regs, dx)
#define SYSCALL_NR(regs)   ((long)BPF_CORE_READ(regs, orig_ax))
#define SYSCALL_ARG1(regs) BPF_CORE_READ(regs, di)
#define SYSCALL_ARG2(regs) BPF_CORE_READ(regs, si)
/* ia32 (int $0x80, sysenter) passes them in bx, cx. */
#define COMPAT_ARG1(regs) BPF_CORE_READ(regs, bx)
#define COMPAT_ARG2(regs) BPF_CORE_READ(regs, cx)
#elif defined(__TARGET_ARCH_arm64)
struct pt_regs {
        unsigned long regs[31];
        unsigned long orig_x0;
        int syscallno;
} __attribute__((preserve_access_index));
/*
 * The kernel's regs[31] sits in an anonymous union (beside user_regs) and
 * an anonymous struct: libbpf's CO-RE matching descends into both. The
 * macros' parameter is p, not regs: a parameter named like the field
 * would turn regs[0] into ctx[0].
 */
#define FUNC_ARG1(p)    BPF_CORE_READ(p, regs[0])
#define FUNC_ARG2(p)    BPF_CORE_READ(p, regs[1])
#define FUNC_ARG3(p)    BPF_CORE_READ(p, regs[2])
#define SYSCALL_NR(p)   ((long)BPF_CORE_READ(p, syscallno))
#define SYSCALL_ARG1(p) BPF_CORE_READ(p, orig_x0)
#define SYSCALL_ARG2(p) BPF_CORE_READ(p, regs[1])
/* arm32 on arm64: the same registers. */
#define COMPAT_ARG1(p)  BPF_CORE_READ(p, orig_x0)
#define COMPAT_ARG2(p)  BPF_CORE_READ(p, regs[1])
#else
#error "the BPF write probe knows the registers of x86 and arm64 only"
#endif

/* ---- kprobe: the entry of the same functions (why the entry: the comment at the top) */
SEC("kprobe/kernfs_fop_write_iter")
int kprobe_write_iter(struct pt_regs *ctx) {
        struct kiocb *iocb = (struct kiocb *)FUNC_ARG1(ctx);
        struct iov_iter *from = (struct iov_iter *)FUNC_ARG2(ctx);

        return note_write(BPF_CORE_READ(iocb, ki_filp), (long)BPF_CORE_READ(from, count), NULL,
                          WRITE_PROBE_RECORD_AT_ENTRY);
}

SEC("kprobe/kernfs_fop_write")
int kprobe_write(struct pt_regs *ctx) {
        return note_write((struct file *)FUNC_ARG1(ctx), (long)FUNC_ARG3(ctx), NULL,
                          WRITE_PROBE_RECORD_AT_ENTRY);
}

/* ---- syscall-exit: sys_enter takes the file, sys_exit records the result */

struct fdtable {
        unsigned int max_fds;
        struct file **fd;
} __attribute__((preserve_access_index));

struct files_struct {
        struct fdtable *fdt;
} __attribute__((preserve_access_index));

struct thread_info {
        unsigned long flags;
        unsigned int status;
} __attribute__((preserve_access_index));

struct task_struct___files {
        struct thread_info thread_info;
        struct files_struct *files;
} __attribute__((preserve_access_index));

struct iovec {
        void *iov_base;
        unsigned long iov_len;
};

/* The write calls, as each calling convention numbers them. */
enum { CALL_NONE, CALL_PLAIN, CALL_VECTOR };

#if defined(__TARGET_ARCH_x86)
#define TS_COMPAT       0x0002     /* arch/x86/include/asm/thread_info.h: an ia32 call is running */
#define X32_SYSCALL_BIT 0x40000000 /* x32 calls carry it in their number */
static int write_call(struct task_struct___files *t, long nr, int *ret_compat) {
        *ret_compat = 0;
        if (BPF_CORE_READ(t, thread_info.status) & TS_COMPAT) {
                *ret_compat = 1; /* arch/x86/entry/syscalls/syscall_32.tbl */
                return nr == 4 || nr == 181                  ? CALL_PLAIN
                       : nr == 146 || nr == 334 || nr == 379 ? CALL_VECTOR
                                                             : CALL_NONE;
        }
        if (nr & X32_SYSCALL_BIT) {
                nr &= ~X32_SYSCALL_BIT; /* syscall_64.tbl's x32 numbers; its iovecs are 32-bit */
                *ret_compat = 2;
                return nr == 1 || nr == 18                   ? CALL_PLAIN
                       : nr == 516 || nr == 535 || nr == 547 ? CALL_VECTOR
                                                             : CALL_NONE;
        }
        return nr == __NR_write || nr == __NR_pwrite64                          ? CALL_PLAIN
               : nr == __NR_writev || nr == __NR_pwritev || nr == __NR_pwritev2 ? CALL_VECTOR
                                                                                : CALL_NONE;
}
#else
#define TIF_32BIT 22 /* arch/arm64/include/asm/thread_info.h: an arm32 task */
static int write_call(struct task_struct___files *t, long nr, int *ret_compat) {
        *ret_compat = 0;
        if (BPF_CORE_READ(t, thread_info.flags) & (1UL << TIF_32BIT)) {
                *ret_compat = 1; /* arch/arm64/tools/syscall_32.tbl (EABI) */
                return nr == 4 || nr == 181                  ? CALL_PLAIN
                       : nr == 146 || nr == 362 || nr == 393 ? CALL_VECTOR
                                                             : CALL_NONE;
        }
        return nr == __NR_write || nr == __NR_pwrite64                          ? CALL_PLAIN
               : nr == __NR_writev || nr == __NR_pwritev || nr == __NR_pwritev2 ? CALL_VECTOR
                                                                                : CALL_NONE;
}
#endif

/* What sys_enter found: a write call on a knob file opened for writing, by this thread. */
struct pending_write {
        __u64 ino;
        __u64 value;    /* the writer's buffer; 0: none (a vector, or a compat vector) */
        __u64 enter_ns; /* CLOCK_MONOTONIC at sys_enter: before the write could take effect */
        __u32 sb_dev;
        __u32 pad;
};

struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, 1024);
        __type(key, __u64); /* pid_tgid */
        __type(value, struct pending_write);
} pending SEC(".maps");

/* sys_enter(struct pt_regs *regs, long id) */
SEC("raw_tp/sys_enter")
int sys_enter(struct bpf_raw_tracepoint_args *ctx) {
        struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
        struct task_struct___files *t = (struct task_struct___files *)bpf_get_current_task();
        struct pending_write w = {};
        struct file **fds, *file = NULL;
        struct fdtable *fdt;
        unsigned long fd;
        const void *value;
        __u64 id;
        int call, compat;

        call = write_call(t, (long)ctx->args[1], &compat);
        if (call == CALL_NONE)
                return 0;
        fd = compat == 1 ? (unsigned int)COMPAT_ARG1(regs) : SYSCALL_ARG1(regs);
        value = (const void *)(compat == 1 ? (unsigned int)COMPAT_ARG2(regs) : SYSCALL_ARG2(regs));
        fdt = BPF_CORE_READ(t, files, fdt);
        if (fd >= BPF_CORE_READ(fdt, max_fds))
                return 0;
        fds = BPF_CORE_READ(fdt, fd);
        if (bpf_probe_read_kernel(&file, sizeof(file), fds + fd) < 0 || !knob_of(file, &w.ino, &w.sb_dev))
                return 0;
        if (call == CALL_VECTOR && compat == 0) {
                struct iovec iov = {};

                /* The first iovec's bytes: what the record shows of the value, if it holds them all. */
                value = bpf_probe_read_user(&iov, sizeof(iov), value) == 0 ? iov.iov_base : NULL;
        } else if (call == CALL_VECTOR)
                value = NULL; /* a compat iovec: its value is not shown */
        w.value = (__u64)(unsigned long)value;
        w.enter_ns = bpf_ktime_get_ns();
        id = bpf_get_current_pid_tgid();
        bpf_map_update_elem(&pending, &id, &w, BPF_ANY);
        return 0;
}

/* sys_exit(struct pt_regs *regs, long ret) */
SEC("raw_tp/sys_exit")
int sys_exit(struct bpf_raw_tracepoint_args *ctx) {
        struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
        struct task_struct___files *t = (struct task_struct___files *)bpf_get_current_task();
        struct pending_write *w;
        long ret = (long)ctx->args[1];
        __u64 id;
        int compat;

        if (write_call(t, SYSCALL_NR(regs), &compat) == CALL_NONE)
                return 0;
        id = bpf_get_current_pid_tgid();
        w = bpf_map_lookup_elem(&pending, &id);
        if (!w)
                return 0;
        if (ret > 0)
                record_write(w->ino, w->sb_dev, ret, (const void *)(unsigned long)w->value, 0, w->enter_ns);
        bpf_map_delete_elem(&pending, &id);
        return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
