/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for procfs_parse_stat(): each input is one read of
 * /proc/PID/stat, whose comm any process can set to any bytes but NUL
 * (prctl(PR_SET_NAME)), ')' and newlines included.
 */
#include "fuzz-common.h"
#include "thpguard/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const uint8_t *close;
        ProcStat s;
        int r;

        FUZZ_POISON(&s);
        r = procfs_parse_stat((const char *)data, size, &s);
        if (r < 0) {
                FUZZ_ASSERT(FUZZ_PROCFS_ERROR(r));
                FUZZ_ASSERT(FUZZ_UNTOUCHED(&s));
                return 0;
        }
        FUZZ_ASSERT(r == 0);
        FUZZ_ASSERT(size > 0 && data[size - 1] == '\n' && !memchr(data, '\0', size));
        /* The fields come after the last ')', where no newline but the final one may be. */
        close = memrchr(data, ')', size);
        FUZZ_ASSERT(close && memchr(close, '\n', size - (size_t)(close - data)) == data + size - 1);
        FUZZ_ASSERT(fuzz_printable(s.comm, sizeof(s.comm)));
        return 0;
}
