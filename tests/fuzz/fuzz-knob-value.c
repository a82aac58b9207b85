/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the sysfs value parser (knob-value.h). Every input
 * is parsed as each of the three knob types and as a plain u64 file, so the
 * corpus holds raw sysfs reads with no framing byte.
 *
 * Beyond "does not crash", it checks what callers rely on: a failed parse
 * leaves the output untouched, and a successful one yields NUL-terminated
 * words of the documented shape. The input then goes through the daemon's
 * decision (compliance_evaluate()) for a choice, a boolean and a bounded
 * numeric knob: "ok" must mean the kernel holds exactly the desired value,
 * and "drift" (which makes the daemon write) only a value it can write.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "thpguard/compliance.h"
#include "thpguard/knob-value.h"

static bool is_word(const char *s) {
        size_t n = strnlen(s, KNOB_VALUE_MAX);

        if (n == 0 || n >= KNOB_VALUE_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
                      s[i] == '+' || s[i] == '-'))
                        return false;
        return true;
}

static void check_choice(const uint8_t *data, size_t size) {
        KnobValue v, sentinel;
        char offered[KNOB_OFFERED_MAX * KNOB_VALUE_MAX + 1], small[8];
        int r;

        memset(&sentinel, 0xa5, sizeof(sentinel));
        v = sentinel;
        r = knob_value_parse(KNOB_CHOICE, (const char *)data, size, &v);
        if (r < 0) {
                FUZZ_ASSERT(r == -EBADMSG);
                FUZZ_ASSERT(memcmp(&v, &sentinel, sizeof(v)) == 0);
                return;
        }
        FUZZ_ASSERT(r == 0);
        FUZZ_ASSERT(size > 0 && size <= KNOB_READ_MAX);
        FUZZ_ASSERT(v.n_offered >= 1 && v.n_offered <= KNOB_OFFERED_MAX);
        FUZZ_ASSERT(is_word(v.active));
        FUZZ_ASSERT(knob_value_offers(&v, v.active));
        for (size_t i = 0; i < v.n_offered; i++)
                FUZZ_ASSERT(is_word(v.offered[i]));
        /* The active word appears bracketed in the input. */
        FUZZ_ASSERT(fuzz_memmem_word(data, size, v.active, '[', ']'));

        knob_value_offered_string(&v, offered, sizeof(offered));
        FUZZ_ASSERT(strlen(offered) < sizeof(offered));
        knob_value_offered_string(&v, small, sizeof(small));
        FUZZ_ASSERT(strlen(small) < sizeof(small));
        knob_value_offered_string(&v, small, 0);
}

static void check_number(KnobType type, const uint8_t *data, size_t size) {
        KnobValue v, sentinel;
        uint64_t u = 0;
        int r, ru;

        memset(&sentinel, 0x5a, sizeof(sentinel));
        v = sentinel;
        r = knob_value_parse(type, (const char *)data, size, &v);
        ru = knob_value_parse_u64((const char *)data, size, &u);
        if (r < 0) {
                FUZZ_ASSERT(r == -EBADMSG);
                FUZZ_ASSERT(memcmp(&v, &sentinel, sizeof(v)) == 0);
                /* A bool fails where u64 succeeds only for values above 1. */
                FUZZ_ASSERT(ru < 0 || (type == KNOB_BOOL && u > 1));
                return;
        }
        FUZZ_ASSERT(r == 0 && ru == 0);
        FUZZ_ASSERT(v.n_offered == 0);
        /* The active value is the canonical decimal of what u64 parsing read. */
        {
                char canon[32];
                snprintf(canon, sizeof(canon), "%llu", (unsigned long long)u);
                FUZZ_ASSERT(strcmp(v.active, canon) == 0);
        }
        if (type == KNOB_BOOL)
                FUZZ_ASSERT(u <= 1);
}

static void check_status(KnobGroup group, const char *key, const char *desired, const uint8_t *data,
                         size_t size) {
        static const uint64_t ptes_max[] = { 511, PTES_MAX_UNKNOWN };
        PolicyKnob k = { .line = 1 };
        KnobStatus st;

        k.spec = knob_spec_find(group, key);
        FUZZ_ASSERT(k.spec);
        snprintf(k.desired, sizeof(k.desired), "%s", desired);
        FUZZ_ASSERT(knob_path_build(group, group == KNOB_GROUP_SIZE ? "64kB" : NULL, k.spec, k.path,
                                    sizeof(k.path)) == 0);

        for (size_t i = 0; i < sizeof(ptes_max) / sizeof(ptes_max[0]); i++) {
                memset(&st, 0x5a, sizeof(st));
                compliance_evaluate(&k, 0, (const char *)data, size, ptes_max[i], &st);
                FUZZ_ASSERT(fuzz_terminated(st.actual, sizeof(st.actual)));
                FUZZ_ASSERT(st.state == KNOB_STATE_OK || st.state == KNOB_STATE_DRIFT ||
                            st.state == KNOB_STATE_UNSUPPORTED || st.state == KNOB_STATE_ERROR);
                FUZZ_ASSERT(knob_state_to_string(st.state));
                if (st.state == KNOB_STATE_OK)
                        FUZZ_ASSERT(strcmp(st.actual, k.desired) == 0);
                if (st.state == KNOB_STATE_DRIFT) {
                        KnobValue v;

                        FUZZ_ASSERT(strcmp(st.actual, k.desired) != 0);
                        FUZZ_ASSERT(knob_value_parse(k.spec->type, (const char *)data, size, &v) == 0);
                        if (k.spec->type == KNOB_CHOICE)
                                FUZZ_ASSERT(knob_value_offers(&v, k.desired));
                        if (k.spec->bound == KNOB_BOUND_PTES && ptes_max[i] != PTES_MAX_UNKNOWN)
                                FUZZ_ASSERT(strtoull(k.desired, NULL, 10) <= ptes_max[i]);
                }
                if (st.state == KNOB_STATE_UNSUPPORTED || st.state == KNOB_STATE_ERROR)
                        FUZZ_ASSERT(fuzz_terminated(st.reason, sizeof(st.reason)) && st.reason[0]);
        }
        /* A read error is reported as such whatever the buffer holds. */
        compliance_evaluate(&k, -ENOENT, (const char *)data, size, 511, &st);
        FUZZ_ASSERT(st.state == KNOB_STATE_UNSUPPORTED);
        compliance_evaluate(&k, -EIO, (const char *)data, size, 511, &st);
        FUZZ_ASSERT(st.state == KNOB_STATE_ERROR);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint64_t u = 42;

        check_choice(data, size);
        check_number(KNOB_BOOL, data, size);
        check_number(KNOB_UINT, data, size);
        if (knob_value_parse_u64((const char *)data, size, &u) < 0)
                FUZZ_ASSERT(u == 42);

        /* shmem_enabled has the largest vocabulary. */
        for (const char *const *w = knob_spec_find(KNOB_GROUP_TOP, "shmem_enabled")->vocabulary; *w; w++)
                check_status(KNOB_GROUP_TOP, "shmem_enabled", *w, data, size);
        check_status(KNOB_GROUP_SIZE, "enabled", "inherit", data, size);
        check_status(KNOB_GROUP_TOP, "use_zero_page", "1", data, size);
        check_status(KNOB_GROUP_KHUGEPAGED, "max_ptes_none", "511", data, size);
        check_status(KNOB_GROUP_KHUGEPAGED, "max_ptes_none", "512", data, size);
        return 0;
}
