/* SPDX-License-Identifier: MIT */
/*
 * probe-inject THP_DIR FIFO CMD [ARG...]: runs CMD (thpguardd) with a BPF
 * write probe of the test's own, whose records the test writes, one line
 * on FIFO each: what the real probe hands the daemon, at the moment the
 * test chooses. It is for what the real probe on this machine's kernel
 * cannot be made to do on cue: a record that comes after the drift was
 * corrected (a writer preempted inside write(2) on a preemptible kernel,
 * before the syscall-exit hook ran), or one that never comes.
 *
 * The ring is a real BPF ring buffer of the probe's size, the link a real
 * BPF link (a program that does nothing, on the rare raw tracepoint
 * task_rename), the config map a real one (struct write_probe_config),
 * passed at 3, 4 and 5 with LISTEN_FDS, LISTEN_PID and LISTEN_FDNAMES as
 * the unit's fd store passes them (unit-exec.c); a raw tracepoint link is
 * what the syscall-exit hook makes, so a second one, as its sys_enter's,
 * at 6. A record is put in the
 * ring by a program run with BPF_PROG_TEST_RUN, so the ring wakes its
 * reader exactly as the real probe's does, or not (BPF_RB_NO_WAKEUP): by
 * the probe's own rule, unless the line says.
 *
 * A line: space-separated key=value, every key optional: ino= (the knob's
 * inode), sb=own|other (the superblock the write went through: THP_DIR's,
 * or another), quiet=0|1 (default: the probe's rule, quiet where sb is the
 * one the daemon wrote into the config map), pid= (the writer's tgid),
 * pidns= (the inode of its PID namespace: the daemon's own, with its pid,
 * makes the record of one of its own corrections), comm=, value= (what
 * was written; \n for a newline), busy_ms= (the record is reserved, then
 * left busy, not yet submitted, for that long before it is: what a program
 * preempted while it fills its record leaves at the ring's head; the
 * helper spins in the kernel meanwhile, preemption off, on one CPU), cpu=
 * (that CPU: the helper runs the record's program there, so that the test
 * keeps what it watches on the others), lost= (records the ring had no
 * room for before this one, as the kernel's program counts them), ago=
 * (the write began this many ms before the line; default: when the line
 * is read), at=mark (it began at the last line "mark", which the helper
 * answers "ok mark"), entry=1 (a kprobe's record, made at the write's
 * entry: WRITE_PROBE_RECORD_AT_ENTRY, its ret the length asked for, 7
 * without a value). After each record the helper writes "ok quiet" or
 * "ok wake" and "self=" the tgid the daemon wrote into the config map to
 * FIFO.ack ("error" if it could not).
 *
 * The helper forks: the parent becomes CMD, with this pid, and a child
 * serves FIFO until CMD exits (its pidfd). Exit 125 if the kernel
 * or our privileges give no BPF, 127 if CMD cannot be run.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "thpguard/write-probe-record.h"
#include "thpguard/write-probe.h"

/*
 * include/uapi/linux/bpf.h, Linux 5.13 and 5.17: Debian 11's headers (5.10)
 * predate both, and the release matrix builds this there. BPF_FUNC_loop is
 * an enum's member, so it gets a name of its own; a kernel without the
 * helper refuses the program, and the test that wants it skips.
 */
#ifndef BPF_PSEUDO_FUNC
#define BPF_PSEUDO_FUNC 4
#endif
#define HELPER_BPF_LOOP 181 /* BPF_FUNC_loop */

/* The array map's one value: the record, then the ring's submit flags, then how long to keep it busy. */
struct slot {
        struct write_probe_record record;
        __u64 flags;
        __u64 busy_ns;
        __s64 cpu; /* where the program runs; -1: wherever the helper is (not the program's) */
};

static int sys_bpf(int cmd, union bpf_attr *attr) {
        return (int)syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static int map_create(__u32 type, __u32 value_size, __u32 max_entries, __u32 flags) {
        union bpf_attr a = { .map_type = type,
                             .key_size = type == BPF_MAP_TYPE_RINGBUF ? 0 : 4,
                             .value_size = value_size,
                             .max_entries = max_entries,
                             .map_flags = flags };

        return sys_bpf(BPF_MAP_CREATE, &a);
}

/* func_info (n entries, with btf_fd) only for a program with a subprogram: the slow injector's. */
static int prog_load_btf(const struct bpf_insn *insns, size_t n, int btf_fd,
                         const struct bpf_func_info *func_info, size_t n_func_info) {
        static char log[16384];
        union bpf_attr a = { .prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT,
                             .insns = (__u64)(unsigned long)insns,
                             .insn_cnt = (__u32)n,
                             .license = (__u64)(unsigned long)"GPL",
                             .log_buf = (__u64)(unsigned long)log,
                             .log_size = sizeof(log),
                             .log_level = 1 };
        int fd;

        if (btf_fd >= 0) {
                a.prog_btf_fd = (__u32)btf_fd;
                a.func_info_rec_size = sizeof(*func_info);
                a.func_info = (__u64)(unsigned long)func_info;
                a.func_info_cnt = (__u32)n_func_info;
        }
        fd = sys_bpf(BPF_PROG_LOAD, &a);
        if (fd < 0 && log[0])
                fprintf(stderr, "probe-inject: the verifier said:\n%s\n", log);
        return fd;
}

static int prog_load(const struct bpf_insn *insns, size_t n) {
        return prog_load_btf(insns, n, -1, NULL, 0);
}

/* ring_output(ring, &slot.record, sizeof(record), slot.flags): the probe's submit, on cue. */
static int load_injector(int ring_fd, int array_fd) {
        const struct bpf_insn insns[] = {
                { .code = BPF_LD | BPF_DW | BPF_IMM,
                  .dst_reg = BPF_REG_1,
                  .src_reg = BPF_PSEUDO_MAP_FD,
                  .imm = ring_fd },
                {},
                { .code = BPF_LD | BPF_DW | BPF_IMM,
                  .dst_reg = BPF_REG_2,
                  .src_reg = BPF_PSEUDO_MAP_VALUE,
                  .imm = array_fd },
                { .imm = 0 }, /* offset 0 in the value */
                { .code = BPF_LDX | BPF_MEM | BPF_DW,
                  .dst_reg = BPF_REG_4,
                  .src_reg = BPF_REG_2,
                  .off = offsetof(struct slot, flags) },
                { .code = BPF_ALU64 | BPF_MOV | BPF_K,
                  .dst_reg = BPF_REG_3,
                  .imm = sizeof(struct write_probe_record) },
                { .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ringbuf_output },
                { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
                { .code = BPF_JMP | BPF_EXIT },
        };

        return prog_load(insns, sizeof(insns) / sizeof(insns[0]));
}

#define INSN(c, d, s, o, i)                                                                                 \
        ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV_IMM(d, i)     INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_REG(d, s)     INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_IMM(d, i)     INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define ADD_REG(d, s)     INSN(BPF_ALU64 | BPF_ADD | BPF_X, d, s, 0, 0)
#define LOAD_DW(d, s, o)  INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define STORE_DW(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define CALL(f)           INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT              INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/*
 * A program with a subprogram (bpf_loop()'s callback) needs BTF that
 * names its two functions: the least there is, one signed 64-bit integer,
 * a prototype of no argument returning it, and the two static functions.
 */
static int load_btf(void) {
        static const char strings[] = "\0slow\0stop_at\0long";
        struct {
                struct btf_header h;
                struct btf_type t_long;
                __u32 long_bits;
                struct btf_type t_proto, t_slow, t_stop_at;
                char strings[sizeof(strings)];
        } __attribute__((packed)) b = {
                .h = { .magic = BTF_MAGIC,
                       .version = BTF_VERSION,
                       .hdr_len = sizeof(struct btf_header),
                       .type_off = 0,
                       .type_len = offsetof(__typeof__(b), strings) - sizeof(struct btf_header),
                       .str_off = offsetof(__typeof__(b), strings) - sizeof(struct btf_header),
                       .str_len = sizeof(strings) },
                /* [1] long, [2] long (void), [3] slow, [4] stop_at */
                .t_long = { .name_off = 14, .info = BTF_KIND_INT << 24, .size = 8 },
                .long_bits = BTF_INT_SIGNED << 24 | 64,
                .t_proto = { .info = BTF_KIND_FUNC_PROTO << 24, .type = 1 },
                .t_slow = { .name_off = 1, .info = BTF_KIND_FUNC << 24, .type = 2 },
                .t_stop_at = { .name_off = 6, .info = BTF_KIND_FUNC << 24, .type = 2 },
        };
        static char log[4096];
        union bpf_attr a = {};

        memcpy(b.strings, strings, sizeof(strings));
        a.btf = (__u64)(unsigned long)&b;
        a.btf_size = sizeof(b);
        a.btf_log_buf = (__u64)(unsigned long)log;
        a.btf_log_size = sizeof(log);
        a.btf_log_level = 1;
        int fd = sys_bpf(BPF_BTF_LOAD, &a);

        if (fd < 0 && log[0])
                fprintf(stderr, "probe-inject: BTF refused:\n%s\n", log);
        return fd;
}

/*
 * The slow injector: reserve a record in the ring, fill it from the slot,
 * keep it busy until slot.busy_ns from now (bpf_loop(), a callback that
 * reads the clock and stops at the deadline; four calls of at most 2^23
 * turns each, so that a fast CPU does not run out first), then submit it.
 */
static int load_slow_injector(int ring_fd, int array_fd) {
        struct bpf_insn p[80];
        size_t n = 0, to_out, loops[4], out, stop_at;
        int btf = load_btf(), fd;

        if (btf < 0)
                return -1;
        p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_6, BPF_PSEUDO_MAP_VALUE, 0, array_fd);
        p[n++] = INSN(0, 0, 0, 0, 0); /* offset 0 in the value */
        p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, ring_fd);
        p[n++] = INSN(0, 0, 0, 0, 0);
        p[n++] = MOV_IMM(BPF_REG_2, sizeof(struct write_probe_record));
        p[n++] = MOV_IMM(BPF_REG_3, 0);
        p[n++] = CALL(BPF_FUNC_ringbuf_reserve);
        to_out = n;
        p[n++] = INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 0, 0); /* to out, set below */
        p[n++] = MOV_REG(BPF_REG_7, BPF_REG_0);
        p[n++] = MOV_REG(BPF_REG_1, BPF_REG_7);
        p[n++] = MOV_IMM(BPF_REG_2, sizeof(struct write_probe_record));
        p[n++] = MOV_REG(BPF_REG_3, BPF_REG_6);
        p[n++] = CALL(BPF_FUNC_probe_read_kernel);
        /* The deadline, on the stack at -8, for the callback. */
        p[n++] = CALL(BPF_FUNC_ktime_get_ns);
        p[n++] = LOAD_DW(BPF_REG_1, BPF_REG_6, offsetof(struct slot, busy_ns));
        p[n++] = ADD_REG(BPF_REG_0, BPF_REG_1);
        p[n++] = STORE_DW(BPF_REG_10, BPF_REG_0, -8);
        for (size_t i = 0; i < ELEMENTSOF(loops); i++) {
                p[n++] = MOV_IMM(BPF_REG_1, 1 << 23);
                loops[i] = n;
                p[n++] =
                    INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_2, BPF_PSEUDO_FUNC, 0, 0); /* stop_at, below */
                p[n++] = INSN(0, 0, 0, 0, 0);
                p[n++] = MOV_REG(BPF_REG_3, BPF_REG_10);
                p[n++] = ADD_IMM(BPF_REG_3, -8);
                p[n++] = MOV_IMM(BPF_REG_4, 0);
                p[n++] = CALL(HELPER_BPF_LOOP);
        }
        p[n++] = MOV_REG(BPF_REG_1, BPF_REG_7);
        p[n++] = LOAD_DW(BPF_REG_2, BPF_REG_6, offsetof(struct slot, flags));
        p[n++] = CALL(BPF_FUNC_ringbuf_submit);
        out = n;
        p[n++] = MOV_IMM(BPF_REG_0, 0);
        p[n++] = EXIT;
        /* stop_at(index, deadline): 1, which ends the loop, once the clock is past it. */
        stop_at = n;
        p[n++] = MOV_REG(BPF_REG_6, BPF_REG_2);
        p[n++] = CALL(BPF_FUNC_ktime_get_ns);
        p[n++] = LOAD_DW(BPF_REG_1, BPF_REG_6, 0);
        p[n++] = INSN(BPF_JMP | BPF_JGE | BPF_X, BPF_REG_0, BPF_REG_1, 2, 0);
        p[n++] = MOV_IMM(BPF_REG_0, 0);
        p[n++] = EXIT;
        p[n++] = MOV_IMM(BPF_REG_0, 1);
        p[n++] = EXIT;

        p[to_out].off = (__s16)(out - (to_out + 1));
        for (size_t i = 0; i < ELEMENTSOF(loops); i++)
                p[loops[i]].imm = (__s32)(stop_at - (loops[i] + 1));
        {
                const struct bpf_func_info fi[] = { { .insn_off = 0, .type_id = 3 },
                                                    { .insn_off = (__u32)stop_at, .type_id = 4 } };

                fd = prog_load_btf(p, n, btf, fi, ELEMENTSOF(fi));
        }
        close(btf);
        return fd;
}

/* A link the daemon can hold, as it holds the probe's: a program that does nothing, on a rare tracepoint. */
static int make_link(void) {
        const struct bpf_insn insns[] = {
                { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
                { .code = BPF_JMP | BPF_EXIT },
        };
        int prog = prog_load(insns, 2), link;
        union bpf_attr a = {};

        if (prog < 0)
                return -1;
        a.raw_tracepoint.name = (__u64)(unsigned long)"task_rename";
        a.raw_tracepoint.prog_fd = (__u32)prog;
        link = sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
        close(prog);
        return link;
}

/* value=: the bytes written, with \n for a newline and \\ for a backslash. */
static void parse_value(const char *s, struct write_probe_record *r) {
        __u32 n = 0;

        for (; *s && n < sizeof(r->value); s++) {
                char c = *s;

                if (c == '\\' && s[1] == 'n')
                        c = '\n', s++;
                else if (c == '\\' && s[1] == '\\')
                        s++;
                r->value[n++] = c;
        }
        r->value_len = n;
        r->ret = n;
}

/* What the daemon wrote into the config map (struct write_probe_config); zeros where nothing. */
static struct write_probe_config config_said(int config_fd) {
        struct write_probe_config c = {};
        __u32 key = 0;
        union bpf_attr a = { .map_fd = (__u32)config_fd,
                             .key = (__u64)(unsigned long)&key,
                             .value = (__u64)(unsigned long)&c };

        if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) < 0)
                return (struct write_probe_config){};
        return c;
}

/* CLOCK_MONOTONIC in ns, bpf_ktime_get_ns()'s clock. */
static __u64 monotonic_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (__u64)ts.tv_sec * 1000000000u + (__u64)ts.tv_nsec;
}

/* The last "mark" line's time: at=mark dates a record's write then. */
static __u64 mark_ns;

static int parse_line(char *line, __u32 own_sb_dev, int config_fd, struct slot *ret) {
        struct slot s = { .record = { .cgroup_depth = 0 }, .cpu = -1 };
        int quiet = -1, entry = 0;

        s.record.sb_dev = own_sb_dev;
        s.record.ktime_ns = s.record.ktime_end_ns = monotonic_ns();
        for (char *save = NULL, *kv = strtok_r(line, " \n", &save); kv; kv = strtok_r(NULL, " \n", &save)) {
                char *v = strchr(kv, '=');

                if (!v)
                        return -EINVAL;
                *v++ = '\0';
                if (strcmp(kv, "ino") == 0)
                        s.record.ino = strtoull(v, NULL, 10);
                else if (strcmp(kv, "sb") == 0)
                        s.record.sb_dev = strcmp(v, "own") == 0 ? own_sb_dev : own_sb_dev + 1;
                else if (strcmp(kv, "quiet") == 0)
                        quiet = atoi(v);
                else if (strcmp(kv, "pid") == 0)
                        s.record.tgid = s.record.ns_tgid = (__u32)strtoul(v, NULL, 10);
                else if (strcmp(kv, "pidns") == 0)
                        s.record.pidns = (__u32)strtoul(v, NULL, 10);
                else if (strcmp(kv, "comm") == 0)
                        snprintf(s.record.comm, sizeof(s.record.comm), "%s", v);
                else if (strcmp(kv, "value") == 0)
                        parse_value(v, &s.record);
                else if (strcmp(kv, "busy_ms") == 0)
                        s.busy_ns = strtoull(v, NULL, 10) * 1000 * 1000;
                else if (strcmp(kv, "cpu") == 0)
                        s.cpu = strtol(v, NULL, 10);
                else if (strcmp(kv, "lost") == 0)
                        s.record.lost = (__u32)strtoul(v, NULL, 10);
                else if (strcmp(kv, "ago") == 0) /* the write began this many ms before the line */
                        s.record.ktime_ns = s.record.ktime_end_ns -= strtoull(v, NULL, 10) * 1000000u;
                else if (strcmp(kv, "at") == 0 && strcmp(v, "mark") == 0)
                        s.record.ktime_ns = s.record.ktime_end_ns = mark_ns;
                else if (strcmp(kv, "entry") == 0)
                        entry = atoi(v);
                else
                        return -EINVAL;
        }
        if (entry && s.record.ret == 0)
                s.record.ret = 7; /* "always\n" asked for, no value shown: the kprobe hook's */
        if (entry)
                s.record.ktime_end_ns = 0; /* made before the write: its end is not known */
        if (quiet < 0) {
                __u32 said = config_said(config_fd).quiet_sb_dev;

                quiet = said != 0 && said == s.record.sb_dev;
        }
        s.record.flags = (quiet ? WRITE_PROBE_RECORD_QUIET : 0) | (entry ? WRITE_PROBE_RECORD_AT_ENTRY : 0);
        s.flags = quiet ? BPF_RB_NO_WAKEUP : 0;
        *ret = s;
        return 0;
}

/* The programs that put a record in: at once, and after keeping it busy (-1: none could be loaded). */
typedef struct Injectors {
        int now;
        int slow;
} Injectors;

static int inject(const Injectors *progs, int array_fd, const struct slot *s) {
        int prog_fd = s->busy_ns ? progs->slow : progs->now;
        __u32 key = 0;
        union bpf_attr up = { .map_fd = (__u32)array_fd,
                              .key = (__u64)(unsigned long)&key,
                              .value = (__u64)(unsigned long)s };
        union bpf_attr run = {};

        cpu_set_t was, on;
        int r;

        if (prog_fd < 0)
                return -ENOTSUP;
        if (sys_bpf(BPF_MAP_UPDATE_ELEM, &up) < 0)
                return -errno;
        if (s->cpu >= 0) {
                CPU_ZERO(&on);
                CPU_SET((int)s->cpu, &on);
                if (sched_getaffinity(0, sizeof(was), &was) < 0 || sched_setaffinity(0, sizeof(on), &on) < 0)
                        return -errno;
        }
        run.test.prog_fd = (__u32)prog_fd;
        r = sys_bpf(BPF_PROG_TEST_RUN, &run) < 0 ? -errno : 0;
        if (s->cpu >= 0)
                (void)sched_setaffinity(0, sizeof(was), &was);
        return r;
}

/*
 * One line: its record into the ring, and "ok quiet" or "ok wake", then the
 * tgid the daemon said it has ("self=N", 0: not said), or "error", on the
 * ack FIFO.
 */
static void inject_line(char *line, __u32 own_sb_dev, const Injectors *progs, int array_fd, int config_fd,
                        int ack) {
        char answer[64] = "error\n";
        struct slot s;
        int r = parse_line(line, own_sb_dev, config_fd, &s);

        if (r == 0)
                r = inject(progs, array_fd, &s);
        if (r < 0)
                fprintf(stderr, "probe-inject: record not injected: %s\n", strerror(-r));
        else
                snprintf(answer, sizeof(answer), "ok %s self=%u\n", s.flags ? "quiet" : "wake",
                         config_said(config_fd).self_tgid);
        (void)!write(ack, answer, strlen(answer));
}

/* The child: one record a line, until the daemon (our parent) is gone. */
static int serve(const char *fifo, pid_t parent, __u32 own_sb_dev, const Injectors *progs, int array_fd,
                 int config_fd) {
        char ack_path[4096], buf[4096];
        size_t have = 0;
        int in, ack;
        struct pollfd p[2];

        snprintf(ack_path, sizeof(ack_path), "%s.ack", fifo);
        /* Read-write: neither end ever sees the other close, so nobody blocks in open(). */
        in = open(fifo, O_RDWR | O_CLOEXEC);
        ack = open(ack_path, O_RDWR | O_CLOEXEC);
        /*
         * Not PR_SET_PDEATHSIG: the daemon confines itself with Landlock,
         * whose signal scope keeps it from signalling us, its death signal
         * included. Its pidfd says when it is gone.
         */
        p[1].fd = (int)syscall(SYS_pidfd_open, parent, 0);
        if (in < 0 || ack < 0 || p[1].fd < 0) {
                fprintf(stderr, "probe-inject: %s: %s\n",
                        in < 0    ? fifo
                        : ack < 0 ? ack_path
                                  : "pidfd_open",
                        strerror(errno));
                return 1;
        }
        p[0] = (struct pollfd){ .fd = in, .events = POLLIN };
        p[1].events = POLLIN;
        while (poll(p, 2, -1) >= 0 && !(p[1].revents & POLLIN)) {
                ssize_t n = read(in, buf + have, sizeof(buf) - 1 - have);
                char *nl;

                if (n <= 0)
                        continue;
                have += (size_t)n;
                while ((nl = memchr(buf, '\n', have))) {
                        size_t len = (size_t)(nl - buf) + 1;

                        *nl = '\0';
                        if (strcmp(buf, "mark") == 0) {
                                mark_ns = monotonic_ns();
                                (void)!write(ack, "ok mark\n", 8);
                        } else if (buf[0] != '\0')
                                inject_line(buf, own_sb_dev, progs, array_fd, config_fd, ack);
                        memmove(buf, buf + len, have - len);
                        have -= len;
                }
                if (have == sizeof(buf) - 1) /* a line longer than any record: dropped */
                        have = 0;
        }
        return 0;
}

int main(int argc, char **argv) {
        int ring_fd, array_fd, config_fd, link_fd, enter_fd;
        Injectors progs = { -1, -1 };
        struct stat st;
        __u32 own_sb_dev;
        char pid[32];
        pid_t parent = getpid(), child;

        if (argc < 4) {
                fprintf(stderr, "usage: probe-inject THP_DIR FIFO CMD [ARG...]\n");
                return 2;
        }
        if (stat(argv[1], &st) < 0) {
                fprintf(stderr, "probe-inject: %s: %s\n", argv[1], strerror(errno));
                return 2;
        }
        own_sb_dev = major(st.st_dev) << 20 | minor(st.st_dev);
        ring_fd = map_create(BPF_MAP_TYPE_RINGBUF, 0, WRITE_PROBE_RING_BYTES, 0);
        array_fd = map_create(BPF_MAP_TYPE_ARRAY, sizeof(struct slot), 1, 0);
        config_fd = map_create(BPF_MAP_TYPE_ARRAY, sizeof(struct write_probe_config), 1, BPF_F_MMAPABLE);
        progs.now = ring_fd >= 0 && array_fd >= 0 && config_fd >= 0 ? load_injector(ring_fd, array_fd) : -1;
        link_fd = progs.now >= 0 ? make_link() : -1;
        enter_fd = link_fd >= 0 ? make_link() : -1;
        if (enter_fd < 0) {
                fprintf(stderr, "probe-inject: no BPF here: %s\n", strerror(errno));
                return 125;
        }
        /* Only for busy_ms=: without it (an old kernel, no bpf_loop()), every other record still goes in. */
        progs.slow = load_slow_injector(ring_fd, array_fd);
        if (progs.slow < 0)
                fprintf(stderr, "probe-inject: no slow injector (busy_ms= fails): %s\n", strerror(errno));

        child = fork();
        if (child < 0) {
                perror("probe-inject: fork");
                return 125;
        }
        if (child == 0) {
                int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

                close(ring_fd);
                close(link_fd);
                close(enter_fd);
                /* Not the test's stdout: whoever reads it to its end must not wait for us. */
                if (null >= 0)
                        dup2(null, STDOUT_FILENO);
                _exit(serve(argv[2], parent, own_sb_dev, &progs, array_fd, config_fd));
        }
        close(progs.now);
        if (progs.slow >= 0)
                close(progs.slow);
        close(array_fd);
        /* As the fd store passes them: the ring at 3, the link at 4, the config at 5, no close-on-exec. */
        ring_fd = fcntl(ring_fd, F_DUPFD, 10);
        link_fd = fcntl(link_fd, F_DUPFD, 10);
        config_fd = fcntl(config_fd, F_DUPFD, 10);
        enter_fd = fcntl(enter_fd, F_DUPFD, 10);
        if (ring_fd < 0 || link_fd < 0 || config_fd < 0 || enter_fd < 0 || dup2(ring_fd, 3) != 3 ||
            dup2(link_fd, 4) != 4 || dup2(config_fd, 5) != 5 || dup2(enter_fd, 6) != 6) {
                perror("probe-inject: fds 3 to 6");
                return 125;
        }
        close(ring_fd);
        close(link_fd);
        close(config_fd);
        close(enter_fd);
        snprintf(pid, sizeof(pid), "%d", (int)getpid());
        setenv("LISTEN_FDS", "4", 1);
        setenv("LISTEN_PID", pid, 1);
        setenv("LISTEN_FDNAMES",
               WRITE_PROBE_FDNAME_RING ":" WRITE_PROBE_FDNAME_LINK ":" WRITE_PROBE_FDNAME_CONFIG
                                       ":" WRITE_PROBE_FDNAME_ENTER,
               1);
        execvp(argv[3], argv + 3);
        fprintf(stderr, "probe-inject: %s: %s\n", argv[3], strerror(errno));
        return 127;
}
