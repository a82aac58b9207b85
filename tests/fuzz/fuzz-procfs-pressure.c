/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for procfs_parse_pressure(): each input is one read of
 * a PSI file (/proc/pressure/memory): "some ... total=N" and "full ...".
 */
#include "fuzz-common.h"
#include "thpguard/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        ProcPressure p;
        int r;

        FUZZ_POISON(&p);
        r = procfs_parse_pressure((const char *)data, size, &p);
        if (r < 0) {
                FUZZ_ASSERT(FUZZ_PROCFS_ERROR(r));
                FUZZ_ASSERT(FUZZ_UNTOUCHED(&p));
                return 0;
        }
        FUZZ_ASSERT(r == 0);
        FUZZ_ASSERT((size >= 5 && memcmp(data, "some ", 5) == 0) || memmem(data, size, "\nsome ", 6));
        FUZZ_ASSERT(data[size - 1] == '\n' && !memchr(data, '\0', size));
        /* A "full" total only if there is a "full" line. */
        FUZZ_ASSERT(p.full_total_usec == PROCFS_UNKNOWN || (size >= 5 && memcmp(data, "full ", 5) == 0) ||
                    memmem(data, size, "\nfull ", 6));
        return 0;
}
