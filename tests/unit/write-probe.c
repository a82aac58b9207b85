/* SPDX-License-Identifier: MIT */
/*
 * The unprivileged half of the BPF write probe on buffers: what
 * /proc/self/fdinfo says of a passed fd, and what a record says of its
 * writer, every byte of which (comm, argv, cgroup names) the writer chose.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "thpguard/write-probe.h"

static void test_fdinfo(void **state) {
        const char ring[] =
            "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nmap_type:\t27\nkey_size:\t0\n"
            "value_size:\t0\nmax_entries:\t262144\nmap_flags:\t0x0\n";
        const char config[] =
            "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nmap_type:\t2\nkey_size:\t4\n"
            "value_size:\t8\nmax_entries:\t1\nmap_flags:\t0x400\n";
        const char link[] = "pos:\t0\nflags:\t02000000\nlink_type:\traw_tracepoint\nlink_id:\t7\n";
        WriteProbeFdinfo info;

        assert_int_equal(write_probe_fdinfo_parse(ring, strlen(ring), &info), 0);
        assert_true(info.is_map);
        assert_int_equal(info.map_type, 27);
        assert_int_equal(info.max_entries, 262144);
        assert_false(info.is_link);

        /* The config map, as Linux 6.18 prints it. */
        assert_int_equal(write_probe_fdinfo_parse(config, strlen(config), &info), 0);
        assert_int_equal(info.map_type, 2);
        assert_int_equal(info.max_entries, 1);
        assert_int_equal(info.value_size, 8);
        assert_int_equal(info.map_flags, 0x400);
        assert_int_equal(write_probe_fdinfo_parse("map_flags:\t400\n", 14, &info), -EINVAL);
        assert_int_equal(write_probe_fdinfo_parse("map_flags:\t0x\n", 13, &info), -EINVAL);

        assert_int_equal(write_probe_fdinfo_parse(link, strlen(link), &info), 0);
        assert_true(info.is_link);
        assert_string_equal(info.link_type, "raw_tracepoint");
        assert_false(info.is_map);

        /* Not a number where one belongs: refused, not read as 0. */
        assert_int_equal(write_probe_fdinfo_parse("map_type:\t27x\n", 14, &info), -EINVAL);
        assert_int_equal(write_probe_fdinfo_parse("max_entries:\t-1\n", 16, &info), -EINVAL);
        /* A pipe's fdinfo: neither. */
        assert_int_equal(write_probe_fdinfo_parse("pos:\t0\nflags:\t0\n", 16, &info), 0);
        assert_false(info.is_map || info.is_link);
}

/* Each hook by the link_type its link's fdinfo has, as the kernels of the release matrix print it. */
static void test_link_type(void **state) {
        const char perf[] =
            "pos:\t0\nflags:\t02000000\nmnt_id:\t16\nino:\t1057\nlink_type:\tperf\nlink_id:\t3\n"
            "prog_tag:\t8b5bdcfa0ef0a9b4\nprog_id:\t21\n";
        WriteProbeFdinfo info;

        /* A kprobe through a bpf_link (Linux 5.15+): BPF_LINK_TYPE_PERF_EVENT is "perf" in fdinfo. */
        assert_int_equal(write_probe_fdinfo_parse(perf, strlen(perf), &info), 0);
        assert_true(info.is_link);
        assert_int_equal(write_probe_hook_of_link_type(info.link_type), WRITE_PROBE_HOOK_KPROBE);
        assert_int_equal(write_probe_hook_of_link_type("perf_event"), WRITE_PROBE_HOOK_KPROBE);
        assert_int_equal(write_probe_hook_of_link_type("tracing"), WRITE_PROBE_HOOK_FEXIT);
        assert_int_equal(write_probe_hook_of_link_type("raw_tracepoint"), WRITE_PROBE_HOOK_SYSCALL_EXIT);
        assert_int_equal(write_probe_hook_of_link_type("kprobe_multi"), _WRITE_PROBE_HOOK_MAX);
        assert_int_equal(write_probe_hook_of_link_type(""), _WRITE_PROBE_HOOK_MAX);
}

static void set_cgroup(struct write_probe_record *r, const char *const *leaf_first, unsigned n) {
        r->cgroup_depth = n;
        for (unsigned i = 0; i < n; i++)
                snprintf(r->cgroup[i], sizeof(r->cgroup[i]), "%s", leaf_first[i]);
}

static void test_writer(void **state) {
        static const char argv[] = "sh\0-c\0echo always > enabled\0";
        const char *const pod[] = {
                "cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope",
                "kubepods-burstable-pod1b2c3d4e_5f60_7a8b_9c0d_e1f2a3b4c5d6.slice",
                "kubepods-burstable.slice",
                "kubepods.slice",
        };
        struct write_probe_record r = { .tgid = 4242, .euid = 0, .netns = 4026532178 };
        Writer w;

        memcpy(r.comm, "sh", 3);
        memcpy(r.cmdline, argv, sizeof(argv));
        r.cmdline_len = sizeof(argv);
        set_cgroup(&r, pod, 4);
        write_probe_writer(NULL, &r, &w);
        assert_int_equal(w.pid, 4242);
        assert_string_equal(w.comm, "sh");
        assert_true(w.uid_known);
        assert_int_equal(w.uid, 0);
        assert_int_equal(w.netns, 4026532178);
        assert_string_equal(w.cmdline, "sh -c echo always > enabled");
        assert_string_equal(
            w.cgroup,
            "/kubepods.slice/kubepods-burstable.slice/"
            "kubepods-burstable-pod1b2c3d4e_5f60_7a8b_9c0d_e1f2a3b4c5d6.slice/"
            "cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope");
        assert_string_equal(w.owner.pod_uid, "1b2c3d4e-5f60-7a8b-9c0d-e1f2a3b4c5d6");
        assert_string_equal(w.owner.container_id,
                            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
        assert_false(w.cgroup_truncated);
        assert_false(w.exited);
}

static const char *field(const WriterFields *wf, const char *key) {
        for (size_t i = 0; i < _WRITER_FIELD_MAX; i++)
                if (strcmp(wf->field[i].key, key) == 0)
                        return wf->field[i].value;
        fail_msg("no field %s", key);
        return NULL;
}

/*
 * A writer 14 levels deep: its own pod's levels outside, and inside its
 * container the levels it made itself, named like another pod's. The probe
 * keeps the 10 innermost: they would name the other pod. A cut path names
 * no unit, pod or container, says it was cut, and is still shown.
 */
static void test_writer_deep(void **state) {
        const char *const inner[] = {
                "leaf",
                "n2",
                "n1",
                "cri-containerd-fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210.scope",
                "kubepods-burstable-pod99999999_8888_7777_6666_555555555555.slice",
                "kubepods-burstable.slice",
                "kubepods.slice",
                "nest4",
                "nest3",
                "nest2",
        };
        struct write_probe_record r = { .tgid = 31337, .cgroup_truncated = 1 };
        char slot[WRITE_PROBE_CGROUP_NAME];
        WriterFields wf;
        Writer w;

        set_cgroup(&r, inner, 10);
        write_probe_writer(NULL, &r, &w);
        assert_true(w.cgroup_truncated);
        assert_string_equal(w.owner.pod_uid, "");
        assert_string_equal(w.owner.container_id, "");
        assert_string_equal(w.owner.unit, "");
        assert_string_equal(
            w.cgroup, "/.../nest2/nest3/nest4/kubepods.slice/kubepods-burstable.slice/"
                      "kubepods-burstable-pod99999999_8888_7777_6666_555555555555.slice/"
                      "cri-containerd-fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210."
                      "scope/n1/n2/leaf");
        writer_fields(&w, &wf);
        assert_string_equal(field(&wf, "THPGUARD_WRITER_CGROUP_TRUNCATED"), "1");
        assert_null(field(&wf, "THPGUARD_WRITER_POD_UID"));
        assert_null(field(&wf, "THPGUARD_WRITER_CONTAINER_ID"));
        assert_null(field(&wf, "THPGUARD_WRITER_UNIT"));
        assert_string_equal(field(&wf, "THPGUARD_WRITER_CGROUP"), w.cgroup);

        /* The same levels whole (no ancestor left out): named, and not marked. */
        r.cgroup_truncated = 0;
        set_cgroup(&r, inner, 7);
        write_probe_writer(NULL, &r, &w);
        assert_false(w.cgroup_truncated);
        assert_string_equal(w.owner.pod_uid, "99999999-8888-7777-6666-555555555555");
        writer_fields(&w, &wf);
        assert_null(field(&wf, "THPGUARD_WRITER_CGROUP_TRUNCATED"));

        /*
         * A name as long as its slot may have been cut there (the program
         * keeps 111 bytes and a NUL): "...", and nothing named from it.
         */
        memset(slot, 'a', sizeof(slot) - 1);
        slot[sizeof(slot) - 1] = '\0';
        memcpy(slot, "kubepods.slice", strlen("kubepods.slice"));
        snprintf(r.cgroup[6], sizeof(r.cgroup[6]), "%s", slot);
        write_probe_writer(NULL, &r, &w);
        assert_true(w.cgroup_truncated);
        assert_string_equal(w.owner.pod_uid, "");
        assert_string_equal(
            w.cgroup + strlen("/kubepods.slice") + (sizeof(slot) - 1 - strlen("kubepods.slice")),
            ".../kubepods-burstable.slice/"
            "kubepods-burstable-pod99999999_8888_7777_6666_555555555555.slice/"
            "cri-containerd-fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210."
            "scope/n1/n2/leaf");
        /* One byte shorter is known whole. */
        r.cgroup[6][sizeof(slot) - 2] = '\0';
        write_probe_writer(NULL, &r, &w);
        assert_false(w.cgroup_truncated);
}

static void test_writer_hostile(void **state) {
        const char *const deep[] = { "leaf\x1b[31m", "b", "a" };
        struct write_probe_record r = { .tgid = 7, .cgroup_truncated = 1 };
        Writer w;

        /* A comm that fills its 16 bytes with no NUL, an escape in it, argv cut at the buffer's end. */
        memcpy(r.comm, "\x1b]0;pwned\x07xxxxxx", 16);
        memset(r.cmdline, 'A', sizeof(r.cmdline));
        r.cmdline_len = sizeof(r.cmdline);
        set_cgroup(&r, deep, 3);
        write_probe_writer(NULL, &r, &w);
        assert_string_equal(w.comm, "\\x1b]0;pwned\\x07xxxxxx");
        assert_int_equal(strlen(w.cmdline), WRITER_CMDLINE_MAX - 1);
        assert_string_equal(w.cmdline + strlen(w.cmdline) - 3, "...");
        /* Ancestors that did not fit are said, and the escape is escaped. */
        assert_string_equal(w.cgroup, "/.../a/b/leaf\\x1b[31m");

        /* Lengths the program never writes are bounded, not trusted. */
        r.cmdline_len = 100000;
        r.cgroup_depth = 1000;
        write_probe_writer(NULL, &r, &w);
        assert_string_equal(w.cmdline + strlen(w.cmdline) - 3, "...");
        /* No cgroup below the root: "/". */
        r.cgroup_depth = 0;
        r.cgroup_truncated = 0;
        write_probe_writer(NULL, &r, &w);
        assert_string_equal(w.cgroup, "/");
}

static void test_record_is(void **state) {
        struct write_probe_record r = { .tgid = 100, .ns_tgid = 5, .pidns = 4026531836 };

        assert_true(write_probe_record_is(&r, 4026531836, 5));
        /* The same pid in another PID namespace is another process. */
        assert_false(write_probe_record_is(&r, 4026532000, 5));
        assert_false(write_probe_record_is(&r, 4026531836, 100));
}

/* The value a record carries: whole or not at all, and only as the kernel parses it. */
static void test_record_sets(void **state) {
        struct write_probe_record r = { .ret = 8, .value_len = 8 };

        memcpy(r.value, "madvise\n", 8);
        assert_true(write_probe_record_sets(&r, KNOB_CHOICE, "madvise"));
        assert_false(write_probe_record_sets(&r, KNOB_CHOICE, "never"));
        /* Written longer than what was read: cut, so nothing is known of it. */
        r.ret = 40;
        assert_false(write_probe_record_sets(&r, KNOB_CHOICE, "madvise"));
        /* fexit reads no value. */
        r.ret = 8;
        r.value_len = 0;
        assert_false(write_probe_record_sets(&r, KNOB_CHOICE, "madvise"));
        /* Lengths no program writes. */
        r.value_len = sizeof(r.value) + 1;
        r.ret = (int64_t)r.value_len;
        assert_false(write_probe_record_sets(&r, KNOB_CHOICE, "madvise"));
        r.value_len = 8;
        r.ret = -22;
        assert_false(write_probe_record_sets(&r, KNOB_CHOICE, "madvise"));
        /* A full-length value that is a number, as khugepaged/defrag reads it. */
        memset(r.value, '0', sizeof(r.value));
        r.value_len = sizeof(r.value);
        r.ret = (int64_t)r.value_len;
        assert_true(write_probe_record_sets(&r, KNOB_BOOL, "0"));
}

/* Which read first saw a record's write: by the kernel's clock against ours, never by its value. */
static void test_reads_judge(void **state) {
        KnobReads h = {};

        (void)state;
        assert_int_equal(knob_reads_judge(&h, 100), RECORD_UNREAD);
        knob_reads_add(&h, 200, false); /* compliant */
        knob_reads_add(&h, 300, true);  /* drifted */
        knob_reads_add(&h, 310, false); /* our correction's echo */
        /* Began before the compliant read: seen by it, names nothing. */
        assert_int_equal(knob_reads_judge(&h, 150), RECORD_READ_COMPLIANT);
        assert_int_equal(knob_reads_judge(&h, 200), RECORD_READ_COMPLIANT);
        /* Between it and the drift's read: the drift's writer, though the echo read compliant after. */
        assert_int_equal(knob_reads_judge(&h, 250), RECORD_READ_DRIFTED);
        assert_int_equal(knob_reads_judge(&h, 305), RECORD_READ_COMPLIANT);
        /* After every read: the next one says. */
        assert_int_equal(knob_reads_judge(&h, 400), RECORD_UNREAD);

        /* Only the last KNOB_READS_KEPT are kept: a write before all of them is too old to name anything. */
        for (uint64_t t = 1000; t < 1000 + 10 * KNOB_READS_KEPT; t += 10)
                knob_reads_add(&h, t, t % 20 == 0);
        assert_int_equal(h.n, KNOB_READS_KEPT);
        assert_int_equal(knob_reads_judge(&h, 250), RECORD_OLDER_THAN_READS);
        assert_int_equal(knob_reads_judge(&h, 1000 + 10 * KNOB_READS_KEPT - 15),
                         (1000 + 10 * KNOB_READS_KEPT - 10) % 20 == 0 ? RECORD_READ_DRIFTED
                                                                      : RECORD_READ_COMPLIANT);
        assert_int_equal(knob_reads_judge(&h, 5000), RECORD_UNREAD);
}

/*
 * A ring of 4 KiB in plain memory, laid out as the kernel lays out its
 * ring buffer; the reader maps the data once, so what follows it here is
 * poison: a reader that ran past the end instead of going on at the start
 * would read it.
 */
#define RING_SIZE    4096
#define BUSY_BIT     (1U << 31)
#define DISCARD_BIT  (1U << 30)
#define RECORD_BYTES ((sizeof(struct write_probe_record) + 8 + 7) & ~(size_t)7)

typedef struct TestRing {
        unsigned long consumer, producer;
        uint8_t data[2 * RING_SIZE];
        WriteProbeRing ring;
} TestRing;

static void ring_init(TestRing *t, unsigned long at) {
        memset(t, 0, sizeof(*t));
        memset(t->data + RING_SIZE, 0xa5, RING_SIZE);
        t->consumer = t->producer = at;
        t->ring = (WriteProbeRing){ .consumer_pos = &t->consumer,
                                    .producer_pos = &t->producer,
                                    .data = t->data,
                                    .size = RING_SIZE };
}

/* bytes at ring position pos, wrapping. */
static void ring_put(TestRing *t, unsigned long pos, const void *bytes, size_t n) {
        for (size_t i = 0; i < n; i++)
                t->data[(pos + i) & (RING_SIZE - 1)] = ((const uint8_t *)bytes)[i];
}

/* A record the program reserves at the producer: its header says len and the bits; returns where it is. */
static unsigned long ring_reserve(TestRing *t, uint32_t len, uint32_t bits,
                                  const struct write_probe_record *r) {
        unsigned long at = t->producer;
        uint32_t header[2] = { len | bits, 0 };

        ring_put(t, at, header, sizeof(header));
        if (r)
                ring_put(t, at + 8, r, len < sizeof(*r) ? len : sizeof(*r));
        t->producer += (len + 8 + 7) & ~7U;
        return at;
}

/* The program submits what it reserved at pos: the busy bit goes. */
static void ring_submit(TestRing *t, unsigned long pos, uint32_t len) {
        uint32_t header = len;

        ring_put(t, pos, &header, sizeof(header));
}

static void test_ring(void **state) {
        struct write_probe_record a = { .tgid = 1, .ino = 11 }, b = { .tgid = 2, .ino = 22 }, got;
        _cleanup_free_ TestRing *t = malloc(sizeof(*t));
        unsigned long busy;

        assert_non_null(t);
        ring_init(t, 0);
        /* Empty. */
        assert_int_equal(write_probe_ring_next(&t->ring, &got), 0);

        /* One record, read once, the consumer past it. */
        ring_reserve(t, sizeof(a), 0, &a);
        assert_int_equal(write_probe_ring_next(&t->ring, &got), 1);
        assert_int_equal(got.tgid, 1);
        assert_int_equal(t->consumer, RECORD_BYTES);
        assert_int_equal(write_probe_ring_next(&t->ring, &got), 0);

        /*
         * Reserved, not submitted: busy, the consumer stays, and the record
         * behind it (already submitted) waits for it. Then both, in order.
         */
        busy = ring_reserve(t, sizeof(a), BUSY_BIT, &a);
        ring_reserve(t, sizeof(b), 0, &b);
        assert_int_equal(write_probe_ring_next(&t->ring, &got), -EBUSY);
        assert_int_equal(write_probe_ring_next(&t->ring, &got), -EBUSY);
        assert_int_equal(t->consumer, busy);
        ring_submit(t, busy, sizeof(a));
        assert_int_equal(write_probe_ring_next(&t->ring, &got), 1);
        assert_int_equal(got.tgid, 1);
        /* This one wrapped: its header at the ring's end, the record from its start. */
        assert_true((t->consumer & (RING_SIZE - 1)) + RECORD_BYTES > RING_SIZE);
        assert_int_equal(write_probe_ring_next(&t->ring, &got), 1);
        assert_int_equal(got.tgid, 2);
        assert_int_equal(got.ino, 22);
        assert_memory_equal(&got, &b, sizeof(b));
        assert_int_equal(write_probe_ring_next(&t->ring, &got), 0);

        /* Discarded, and one of a length the program never writes: skipped, the next one read. */
        ring_reserve(t, sizeof(a), DISCARD_BIT, &a);
        ring_reserve(t, 16, 0, NULL);
        ring_reserve(t, sizeof(b), 0, &b);
        assert_int_equal(write_probe_ring_next(&t->ring, &got), 1);
        assert_int_equal(got.tgid, 2);
        assert_int_equal(t->consumer, t->producer);

        /* A busy discarded record is still busy: where the next one starts is known only when it is done. */
        ring_reserve(t, sizeof(a), BUSY_BIT | DISCARD_BIT, &a);
        assert_int_equal(write_probe_ring_next(&t->ring, &got), -EBUSY);
}

static void test_ring_bad_header(void **state) {
        struct write_probe_record a = { .tgid = 1 }, got;
        _cleanup_free_ TestRing *t = malloc(sizeof(*t));
        unsigned long at;
        uint32_t header;

        assert_non_null(t);
        /* Positions far from 0: they only grow, and the data is at pos & mask. */
        ring_init(t, 7UL * RING_SIZE + 64);
        /* A length past the ring: never read past it; the ring is given up to the producer, and not stopped
         * on. */
        at = ring_reserve(t, sizeof(a), 0, &a);
        ring_reserve(t, sizeof(a), 0, &a);
        header = RING_SIZE;
        ring_put(t, at, &header, sizeof(header));
        assert_int_equal(write_probe_ring_next(&t->ring, &got), -EBADMSG);
        assert_int_equal(t->consumer, t->producer);
        assert_int_equal(write_probe_ring_next(&t->ring, &got), 0);

        /* A record past what the producer reserved: the same. */
        at = ring_reserve(t, 64, 0, NULL);
        header = sizeof(a);
        ring_put(t, at, &header, sizeof(header));
        assert_int_equal(write_probe_ring_next(&t->ring, &got), -EBADMSG);
        assert_int_equal(t->consumer, t->producer);

        /* And then records are read again. */
        ring_reserve(t, sizeof(a), 0, &a);
        assert_int_equal(write_probe_ring_next(&t->ring, &got), 1);
        assert_int_equal(got.tgid, 1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_record_sets),     cmocka_unit_test(test_fdinfo),
                cmocka_unit_test(test_link_type),       cmocka_unit_test(test_writer),
                cmocka_unit_test(test_writer_hostile),  cmocka_unit_test(test_record_is),
                cmocka_unit_test(test_writer_deep),     cmocka_unit_test(test_ring),
                cmocka_unit_test(test_ring_bad_header), cmocka_unit_test(test_reads_judge),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
