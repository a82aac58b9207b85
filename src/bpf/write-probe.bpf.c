// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The BPF write probe: runs on the return of every write to a sysfs
 * attribute, through any sysfs superblock (sysfs has one per network
 * namespace: a privileged pod's own /sys is another inode of the same
 * kernfs node, which no inotify watch or fanotify mark on ours sees), and
 * for a write to a THP knob puts a record of the writer (write-probe-record.h)
 * into a ring buffer the daemon sleeps on. It wakes the daemon only for a
 * write through another superblock than the one the daemon watches: one
 * through that superblock wakes it by inotify already.
 *
 * It runs in the writer's own context, so what it reads of the writer is
 * the writer's at the moment of the write: no /proc lookup races its exit.
 * Built CO-RE against the few kernel fields it names below (no vmlinux.h):
 * libbpf relocates each one against the running kernel's BTF at load time.
 *
 * Two ways in, of which the loader (write-probe-load.c) attaches the first
 * the kernel takes. fexit on the kernfs write: it runs for sysfs writes
 * alone, and sees the file and the result at once. Where a kernel refuses
 * BPF trampolines, the raw tracepoint on every syscall's exit, which
 * looks at write(2), pwrite64(2), writev(2), pwritev(2) and pwritev2(2)
 * and finds the file by its fd; it misses io_uring and splice writes, and
 * costs every syscall on the node the tracepoint's slow path (bench/README.md
 * has the figure). Measured: the Linux 6.18 built for this project's
 * Firecracker VMs answers EPERM to every fentry/fexit/lsm load and has no
 * kprobes; raw tracepoints load.
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
} __attribute__((preserve_access_index));

struct kiocb {
        struct file *ki_filp;
} __attribute__((preserve_access_index));

struct kernfs_node {
        const char *name;
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

static void read_cgroup(struct task_struct *t, struct write_probe_record *r) {
        struct kernfs_node *kn = BPF_CORE_READ(deepest_cgroup(t), kn);

        r->cgroup_depth = 0;
        r->cgroup_truncated = 0;
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

/* The knob file is a sysfs attribute whose inode the loader put in knobs: its inode number. */
static int knob_of(struct file *file, __u64 *ret_ino, __u32 *ret_dev) {
        struct inode *inode = BPF_CORE_READ(file, f_inode);
        __u64 ino;

        if (BPF_CORE_READ(inode, i_sb, s_magic) != SYSFS_MAGIC)
                return 0;
        ino = BPF_CORE_READ(inode, i_ino);
        if (!bpf_map_lookup_elem(&knobs, &ino))
                return 0;
        *ret_ino = ino;
        *ret_dev = BPF_CORE_READ(inode, i_sb, s_dev);
        return 1;
}

static int record_write(__u64 ino, __u32 sb_dev, long ret, const void *value) {
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
        r->flags = quiet ? WRITE_PROBE_RECORD_QUIET : 0;
        r->pad = 0;
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
static int note_write(struct file *file, long ret, const void *value) {
        __u64 ino;
        __u32 dev;

        if (ret <= 0 || !knob_of(file, &ino, &dev))
                return 0;
        return record_write(ino, dev, ret, value);
}

/* Linux 5.11 and later: ssize_t kernfs_fop_write_iter(struct kiocb *, struct iov_iter *) */
SEC("fexit/kernfs_fop_write_iter")
int write_iter_exit(unsigned long long *ctx) {
        struct kiocb *iocb = (struct kiocb *)ctx[0];

        return note_write(BPF_CORE_READ(iocb, ki_filp), (long)ctx[2], NULL);
}

/* Before 5.11: ssize_t kernfs_fop_write(struct file *, const char __user *, size_t, loff_t *) */
SEC("fexit/kernfs_fop_write")
int write_exit(unsigned long long *ctx) {
        return note_write((struct file *)ctx[0], (long)ctx[4], NULL);
}

struct fdtable {
        unsigned int max_fds;
        struct file **fd;
} __attribute__((preserve_access_index));

struct files_struct {
        struct fdtable *fdt;
} __attribute__((preserve_access_index));

struct task_struct___files {
        struct files_struct *files;
} __attribute__((preserve_access_index));

/* Where the kernel keeps a syscall's number and first two arguments, per architecture. */
#if defined(__TARGET_ARCH_x86)
struct pt_regs {
        unsigned long di;
        unsigned long si;
        unsigned long orig_ax;
} __attribute__((preserve_access_index));
#define SYSCALL_NR(regs)   ((long)BPF_CORE_READ(regs, orig_ax))
#define SYSCALL_ARG1(regs) BPF_CORE_READ(regs, di)
#define SYSCALL_ARG2(regs) BPF_CORE_READ(regs, si)
#elif defined(__TARGET_ARCH_arm64)
struct pt_regs {
        unsigned long regs[31];
        unsigned long orig_x0;
        int syscallno;
} __attribute__((preserve_access_index));
#define SYSCALL_NR(regs)   ((long)BPF_CORE_READ(regs, syscallno))
#define SYSCALL_ARG1(regs) BPF_CORE_READ(regs, orig_x0)
#define SYSCALL_ARG2(regs) BPF_CORE_READ(regs, regs[1])
#else
#error "the BPF write probe knows the syscall registers of x86 and arm64 only"
#endif

struct iovec {
        void *iov_base;
        unsigned long iov_len;
};

/*
 * sys_exit(struct pt_regs *regs, long ret): the syscall's number and
 * arguments are in regs. Here the record comes after the write's inotify
 * event, so it carries the value written (write(2)'s buffer, or the first
 * iovec's): the daemon tells by it a write of its policy's own value, whose
 * record may come after the knob was read compliant, from a drift's.
 */
SEC("raw_tp/sys_exit")
int sys_exit(struct bpf_raw_tracepoint_args *ctx) {
        struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
        long ret = (long)ctx->args[1], nr;
        struct task_struct___files *t;
        struct fdtable *fdt;
        struct file **fds, *file = NULL;
        const void *value;
        unsigned long fd;

        if (ret <= 0)
                return 0;
        nr = SYSCALL_NR(regs);
        if (nr != __NR_write && nr != __NR_pwrite64 && nr != __NR_writev && nr != __NR_pwritev &&
            nr != __NR_pwritev2)
                return 0;
        fd = SYSCALL_ARG1(regs);
        t = (struct task_struct___files *)bpf_get_current_task();
        fdt = BPF_CORE_READ(t, files, fdt);
        if (fd >= BPF_CORE_READ(fdt, max_fds))
                return 0;
        fds = BPF_CORE_READ(fdt, fd);
        if (bpf_probe_read_kernel(&file, sizeof(file), fds + fd) < 0 || !file)
                return 0;
        value = (const void *)SYSCALL_ARG2(regs);
        if (nr != __NR_write && nr != __NR_pwrite64) {
                struct iovec iov = {};

                if (bpf_probe_read_user(&iov, sizeof(iov), value) < 0 || iov.iov_len < (unsigned long)ret)
                        value = NULL; /* the first iovec does not hold all that was written: no value */
                else
                        value = iov.iov_base;
        }
        return note_write(file, ret, value);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
