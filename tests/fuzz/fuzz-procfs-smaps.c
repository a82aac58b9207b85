/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for procfs_parse_smaps(): each input is one read of
 * /proc/PID/smaps, parsed keeping the top 16 and the top 2 mappings; the two
 * results must agree.
 */
#include "fuzz-common.h"
#include "thpguard/procfs.h"

static void check_smaps(const ProcSmaps *s, size_t top_n) {
        FUZZ_ASSERT(s->n_top <= top_n && s->n_top <= s->n_mappings);
        FUZZ_ASSERT(s->n_advised_huge <= s->n_mappings);
        FUZZ_ASSERT(s->n_advised_nohuge <= s->n_mappings);
        FUZZ_ASSERT(s->n_thp_eligible <= s->n_mappings);
        for (size_t i = 0; i < s->n_top; i++) {
                const ProcMapping *m = &s->top[i];

                FUZZ_ASSERT(m->anon_huge_pages_kb > 0 && m->anon_huge_pages_kb != PROCFS_UNKNOWN);
                if (i > 0)
                        FUZZ_ASSERT(s->top[i - 1].anon_huge_pages_kb >= m->anon_huge_pages_kb);
                /* A total below one of its parts means a sum wrapped. */
                FUZZ_ASSERT(s->anon_huge_pages_kb >= m->anon_huge_pages_kb);
                if (m->rss_kb != PROCFS_UNKNOWN)
                        FUZZ_ASSERT(s->rss_kb >= m->rss_kb);
                FUZZ_ASSERT(m->start <= m->end);
                FUZZ_ASSERT(fuzz_terminated(m->perms, sizeof(m->perms)) && strlen(m->perms) == 4);
                FUZZ_ASSERT(fuzz_printable(m->name, sizeof(m->name)));
                FUZZ_ASSERT(m->thp_eligible >= -1 && m->thp_eligible <= 1);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static ProcSmaps all, two;
        int r, r2;

        FUZZ_POISON(&all);
        r = procfs_parse_smaps((const char *)data, size, PROCFS_SMAPS_TOP_MAX + 5, &all);
        if (r < 0) {
                FUZZ_ASSERT(FUZZ_PROCFS_ERROR(r));
                FUZZ_ASSERT(FUZZ_UNTOUCHED(&all));
                return 0;
        }
        FUZZ_ASSERT(r == 0);
        FUZZ_ASSERT(size == 0 || (data[size - 1] == '\n' && !memchr(data, '\0', size)));
        check_smaps(&all, PROCFS_SMAPS_TOP_MAX);

        r2 = procfs_parse_smaps((const char *)data, size, 2, &two);
        FUZZ_ASSERT(r2 == 0);
        check_smaps(&two, 2);
        FUZZ_ASSERT(two.n_mappings == all.n_mappings && two.rss_kb == all.rss_kb &&
                    two.anon_huge_pages_kb == all.anon_huge_pages_kb &&
                    two.n_advised_huge == all.n_advised_huge && two.advised_huge_kb == all.advised_huge_kb &&
                    two.n_advised_nohuge == all.n_advised_nohuge &&
                    two.n_thp_eligible == all.n_thp_eligible && two.uses_libjvm == all.uses_libjvm);
        FUZZ_ASSERT(two.n_top == (all.n_top < 2 ? all.n_top : 2));
        for (size_t i = 0; i < two.n_top; i++)
                FUZZ_ASSERT(two.top[i].anon_huge_pages_kb == all.top[i].anon_huge_pages_kb);
        return 0;
}
