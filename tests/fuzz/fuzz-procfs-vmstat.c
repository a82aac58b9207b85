/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for procfs_parse_vmstat() and procfs_vmstat_get(): each input is one read of
 * /proc/vmstat. */
#include "fuzz-common.h"
#include "thpguard/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static ProcVmstat v; /* 9 kB: not on the stack */
        int r;

        FUZZ_POISON(&v);
        r = procfs_parse_vmstat((const char *)data, size, &v);
        if (r < 0) {
                FUZZ_ASSERT(FUZZ_PROCFS_ERROR(r));
                FUZZ_ASSERT(FUZZ_UNTOUCHED(&v));
                return 0;
        }
        FUZZ_ASSERT(r == 0);
        FUZZ_ASSERT(size > 0 && data[size - 1] == '\n' && !memchr(data, '\0', size));
        FUZZ_ASSERT(v.n_counters <= PROCFS_VMSTAT_MAX);
        FUZZ_ASSERT(v.truncated == false || v.truncated == true);
        for (size_t i = 0; i < v.n_counters; i++) {
                const ProcCounter *c = &v.counters[i];
                size_t n;

                FUZZ_ASSERT(fuzz_printable(c->name, sizeof(c->name)));
                n = strlen(c->name);
                FUZZ_ASSERT(n > 0);
                FUZZ_ASSERT(procfs_vmstat_is_thp_counter(c->name, n));
                FUZZ_ASSERT(strspn(c->name, "abcdefghijklmnopqrstuvwxyz0123456789_") == n);
                /* Names are unique, so a lookup finds this very counter. */
                for (size_t j = 0; j < i; j++)
                        FUZZ_ASSERT(strcmp(v.counters[j].name, c->name) != 0);
                FUZZ_ASSERT(procfs_vmstat_get(&v, c->name) == c->value);
        }
        FUZZ_ASSERT(procfs_vmstat_get(&v, "not_a_thp_counter") == PROCFS_UNKNOWN);
        return 0;
}
