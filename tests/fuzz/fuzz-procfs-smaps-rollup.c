/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for procfs_parse_smaps_rollup(): each input is one read of /proc/PID/smaps_rollup. */
#include "fuzz-common.h"
#include "thpguard/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        ProcSmapsRollup s;
        int r;

        FUZZ_POISON(&s);
        r = procfs_parse_smaps_rollup((const char *)data, size, &s);
        if (r < 0) {
                FUZZ_ASSERT(FUZZ_PROCFS_ERROR(r));
                FUZZ_ASSERT(FUZZ_UNTOUCHED(&s));
                return 0;
        }
        FUZZ_ASSERT(r == 0);
        FUZZ_ASSERT(size > 0 && data[size - 1] == '\n' && !memchr(data, '\0', size));
        FUZZ_ASSERT(s.rss_kb != PROCFS_UNKNOWN && s.pss_kb != PROCFS_UNKNOWN &&
                    s.anon_huge_pages_kb != PROCFS_UNKNOWN);
        return 0;
}
