/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for fanotify_groups_next(): each input is one read() of a
 * fanotify group. The kernel writes it, but the parser must not trust a
 * length: every record is checked against the buffer before it is used.
 */
#include "fuzz-common.h"
#include "thpguard/fanotify-groups.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        size_t offset = 0, last = 0;
        FanotifyEvent ev;
        int r, n = 0;

        while ((r = fanotify_groups_next(data, size, &offset, &ev)) > 0) {
                /* Every record moves on, and stays inside the buffer. */
                FUZZ_ASSERT(offset > last && offset <= size);
                FUZZ_ASSERT(!ev.overflow || (ev.fd == -1 && !ev.permission));
                last = offset;
                FUZZ_ASSERT(++n <= (int)(size / 24) + 1);
        }
        FUZZ_ASSERT(r == 0 || r == -EBADMSG);
        FUZZ_ASSERT(r != -EBADMSG || offset == size);
        FUZZ_ASSERT(fanotify_groups_next(data, size, &offset, &ev) == 0);
        return 0;
}
