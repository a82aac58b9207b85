/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the kernel command line: procfs_parse_cmdline(),
 * then procfs_thp_sizes_lookup() on every thp_anon=/thp_shmem= value found,
 * for the sizes a kernel can have. The raw input also goes to
 * procfs_thp_sizes_lookup() (as a string) and escape_printable() directly.
 */
#include "fuzz-common.h"
#include "thpguard/escape.h"
#include "thpguard/procfs.h"

static const uint64_t sizes_kb[] = {
        0, 1, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 1048576, UINT64_MAX
};

static void check_lookup(const char *spec) {
        for (size_t i = 0; i < sizeof(sizes_kb) / sizeof(sizes_kb[0]); i++) {
                char word[PROCFS_CMDLINE_VALUE_MAX], tiny[2];
                int r;

                memset(word, 0x5a, sizeof(word));
                r = procfs_thp_sizes_lookup(spec, sizes_kb[i], word, sizeof(word));
                FUZZ_ASSERT(r == -EBADMSG || r == -ENOBUFS || r == 0 || r == 1);
                if (r == 1) {
                        size_t n;

                        FUZZ_ASSERT(fuzz_terminated(word, sizeof(word)));
                        n = strlen(word);
                        FUZZ_ASSERT(n > 0 && strspn(word, "abcdefghijklmnopqrstuvwxyz_") == n);
                        FUZZ_ASSERT(strstr(spec, word));
                }
                r = procfs_thp_sizes_lookup(spec, sizes_kb[i], tiny, sizeof(tiny));
                FUZZ_ASSERT(r == -EBADMSG || r == -ENOBUFS || r == 0 || r == 1);
                if (r == 1)
                        FUZZ_ASSERT(strlen(tiny) == 1);
        }
}

static void check_sanitize(const uint8_t *data, size_t size) {
        static const size_t lens[] = { 0, 1, 2, 5, 72, 4096 };
        size_t full = 0;

        for (size_t i = 0; i < size; i++)
                full += data[i] == '\\' ? 2 : data[i] >= 0x20 && data[i] < 0x7f ? 1 : 4;
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
                char *buf = malloc(lens[i] ? lens[i] : 1);
                bool whole;

                FUZZ_ASSERT(buf);
                whole = escape_printable((const char *)data, size, buf, lens[i]);
                if (lens[i] == 0) {
                        FUZZ_ASSERT(whole == (size == 0));
                } else {
                        FUZZ_ASSERT(fuzz_printable(buf, lens[i]));
                        FUZZ_ASSERT(whole == (full < lens[i]));
                        if (whole)
                                FUZZ_ASSERT(strlen(buf) == full);
                }
                free(buf);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static ProcCmdline c; /* 2 kB */
        char *spec;
        int r;

        FUZZ_POISON(&c);
        r = procfs_parse_cmdline((const char *)data, size, &c);
        if (r < 0) {
                FUZZ_ASSERT(FUZZ_PROCFS_ERROR(r));
                FUZZ_ASSERT(FUZZ_UNTOUCHED(&c));
        } else {
                FUZZ_ASSERT(r == 0);
                FUZZ_ASSERT(!memchr(data, '\0', size));
                for (ProcCmdlineParam p = 0; p < _PROC_CMDLINE_PARAM_MAX; p++) {
                        const char *name = procfs_cmdline_param_name(p);

                        FUZZ_ASSERT(name);
                        FUZZ_ASSERT(c.set[p] == true || c.set[p] == false);
                        FUZZ_ASSERT(fuzz_printable(c.value[p], sizeof(c.value[p])));
                        if (!c.set[p])
                                FUZZ_ASSERT(c.value[p][0] == '\0');
                        if (c.set[p] && (p == PROC_CMDLINE_THP_ANON || p == PROC_CMDLINE_THP_SHMEM_SIZES))
                                check_lookup(c.value[p]);
                }
                FUZZ_ASSERT(!procfs_cmdline_param_name(_PROC_CMDLINE_PARAM_MAX));
        }

        /* The lookup takes a C string: hand it the input up to its first NUL. */
        spec = strndup((const char *)data, size);
        FUZZ_ASSERT(spec);
        check_lookup(spec);
        free(spec);

        check_sanitize(data, size);
        return 0;
}
