/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for procfs_parse_meminfo(): each input is one read of /proc/meminfo. */
#include "fuzz-common.h"
#include "thpguard/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        ProcMeminfo m;
        int r;

        FUZZ_POISON(&m);
        r = procfs_parse_meminfo((const char *)data, size, &m);
        if (r < 0) {
                FUZZ_ASSERT(FUZZ_PROCFS_ERROR(r));
                FUZZ_ASSERT(FUZZ_UNTOUCHED(&m));
                return 0;
        }
        FUZZ_ASSERT(r == 0);
        /* The kernel ends every line; a truncated read is refused. */
        FUZZ_ASSERT(size > 0 && data[size - 1] == '\n' && !memchr(data, '\0', size));
        FUZZ_ASSERT(m.mem_total_kb != PROCFS_UNKNOWN);
        return 0;
}
