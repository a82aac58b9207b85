/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for what the BPF write probe hands the daemon: a record
 * (write_probe_writer(): comm, argv and cgroup names are the writer's own
 * bytes, the lengths the kernel's; write_probe_record_sets(): the value
 * written, from the writer's memory) and the fdinfo text a passed fd is
 * checked by (write_probe_fdinfo_parse()). The input is both: the first
 * sizeof(record) bytes the record, zero-filled when short, all of it fdinfo.
 */
#include "fuzz-common.h"
#include "thpguard/write-probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct write_probe_record r = {};
        WriteProbeFdinfo info;
        Writer w;

        memcpy(&r, data, size < sizeof(r) ? size : sizeof(r));
        write_probe_writer(NULL, &r, &w);
        /* Everything that leaves is printable ASCII, and bounded by its buffer. */
        FUZZ_ASSERT(strnlen(w.comm, sizeof(w.comm)) < sizeof(w.comm));
        FUZZ_ASSERT(strnlen(w.cmdline, sizeof(w.cmdline)) < sizeof(w.cmdline));
        FUZZ_ASSERT(strnlen(w.cgroup, sizeof(w.cgroup)) < sizeof(w.cgroup));
        for (const char *s = w.cgroup; *s; s++)
                FUZZ_ASSERT(*s >= 0x20 && *s < 0x7f);
        for (const char *s = w.cmdline; *s; s++)
                FUZZ_ASSERT(*s >= 0x20 && *s < 0x7f);
        FUZZ_ASSERT(w.pid == (pid_t)r.tgid && w.netns == r.netns);
        /* The value is read within its slot whatever its length says; only a whole one can match. */
        if (write_probe_record_sets(&r, KNOB_CHOICE, "madvise"))
                FUZZ_ASSERT(r.value_len <= sizeof(r.value) && r.ret == (int64_t)r.value_len);
        (void)write_probe_record_sets(&r, KNOB_UINT, "511");

        if (write_probe_fdinfo_parse((const char *)data, size, &info) == 0)
                FUZZ_ASSERT(strnlen(info.link_type, sizeof(info.link_type)) < sizeof(info.link_type));
        return 0;
}
