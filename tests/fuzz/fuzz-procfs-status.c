/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for procfs_parse_status(): each input is one read of
 * /proc/PID/status, whose Name line is a comm any process can set to any
 * bytes (prctl(PR_SET_NAME)).
 */
#include "fuzz-common.h"
#include "thpguard/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        ProcStatus s;
        int r;

        FUZZ_POISON(&s);
        r = procfs_parse_status((const char *)data, size, &s);
        if (r < 0) {
                FUZZ_ASSERT(FUZZ_PROCFS_ERROR(r));
                FUZZ_ASSERT(FUZZ_UNTOUCHED(&s));
                return 0;
        }
        FUZZ_ASSERT(r == 0);
        FUZZ_ASSERT(size > 0 && data[size - 1] == '\n' && !memchr(data, '\0', size));
        /* Goes to terminals and JSON as is. */
        FUZZ_ASSERT(fuzz_printable(s.name, sizeof(s.name)));
        FUZZ_ASSERT(s.kthread >= -1 && s.kthread <= 1);
        FUZZ_ASSERT(s.thp_enabled >= -1 && s.thp_enabled <= 1);
        return 0;
}
