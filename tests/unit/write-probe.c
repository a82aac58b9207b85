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
        write_probe_writer(&r, &w);
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
        assert_false(w.exited);
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
        write_probe_writer(&r, &w);
        assert_string_equal(w.comm, "\\x1b]0;pwned\\x07xxxxxx");
        assert_int_equal(strlen(w.cmdline), WRITER_CMDLINE_MAX - 1);
        assert_string_equal(w.cmdline + strlen(w.cmdline) - 3, "...");
        /* Ancestors that did not fit are said, and the escape is escaped. */
        assert_string_equal(w.cgroup, "/.../a/b/leaf\\x1b[31m");

        /* Lengths the program never writes are bounded, not trusted. */
        r.cmdline_len = 100000;
        r.cgroup_depth = 1000;
        write_probe_writer(&r, &w);
        assert_string_equal(w.cmdline + strlen(w.cmdline) - 3, "...");
        /* No cgroup below the root: "/". */
        r.cgroup_depth = 0;
        r.cgroup_truncated = 0;
        write_probe_writer(&r, &w);
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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_record_sets),    cmocka_unit_test(test_fdinfo),
                cmocka_unit_test(test_link_type),      cmocka_unit_test(test_writer),
                cmocka_unit_test(test_writer_hostile), cmocka_unit_test(test_record_is),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
