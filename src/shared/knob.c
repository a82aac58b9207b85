/* SPDX-License-Identifier: MIT */
#include "thpguard/knob.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "thpguard/macro.h"

/* Vocabularies as documented in Documentation/admin-guide/mm/transhuge.rst. */
static const char *const enabled_words[] = { "always", "madvise", "never", NULL };
static const char *const defrag_words[] = { "always", "defer", "defer+madvise", "madvise", "never", NULL };
static const char *const shmem_words[] = {
        "always", "within_size", "advise", "never", "deny", "force", NULL
};
static const char *const size_enabled_words[] = { "always", "inherit", "madvise", "never", NULL };
static const char *const size_shmem_words[] = {
        "always", "inherit", "within_size", "advise", "never", NULL
};

static const KnobSpec top_specs[] = {
        { "enabled", KNOB_CHOICE, enabled_words, 0, KNOB_BOUND_NONE },
        { "defrag", KNOB_CHOICE, defrag_words, 0, KNOB_BOUND_NONE },
        { "shmem_enabled", KNOB_CHOICE, shmem_words, 0, KNOB_BOUND_NONE },
        { "use_zero_page", KNOB_BOOL, NULL, 0, KNOB_BOUND_NONE },
        { "shrink_underused", KNOB_BOOL, NULL, 0, KNOB_BOUND_NONE },
};

static const KnobSpec khugepaged_specs[] = {
        { "defrag", KNOB_BOOL, NULL, 0, KNOB_BOUND_NONE },
        { "pages_to_scan", KNOB_UINT, NULL, 1, KNOB_BOUND_NONE },
        { "scan_sleep_millisecs", KNOB_UINT, NULL, 0, KNOB_BOUND_NONE },
        { "alloc_sleep_millisecs", KNOB_UINT, NULL, 0, KNOB_BOUND_NONE },
        { "max_ptes_none", KNOB_UINT, NULL, 0, KNOB_BOUND_PTES },
        { "max_ptes_swap", KNOB_UINT, NULL, 0, KNOB_BOUND_PTES },
        { "max_ptes_shared", KNOB_UINT, NULL, 0, KNOB_BOUND_PTES },
};

static const KnobSpec size_specs[] = {
        { "enabled", KNOB_CHOICE, size_enabled_words, 0, KNOB_BOUND_NONE },
        { "shmem_enabled", KNOB_CHOICE, size_shmem_words, 0, KNOB_BOUND_NONE },
};

static const struct {
        const KnobSpec *specs;
        size_t n;
} groups[_KNOB_GROUP_MAX] = {
        [KNOB_GROUP_TOP] = { top_specs, ELEMENTSOF(top_specs) },
        [KNOB_GROUP_KHUGEPAGED] = { khugepaged_specs, ELEMENTSOF(khugepaged_specs) },
        [KNOB_GROUP_SIZE] = { size_specs, ELEMENTSOF(size_specs) },
};

const KnobSpec *knob_spec_find(KnobGroup group, const char *key) {
        for (size_t i = 0; i < groups[group].n; i++)
                if (strcmp(groups[group].specs[i].name, key) == 0)
                        return &groups[group].specs[i];
        return NULL;
}

/* Joins words as "a, b or c". */
static int join_words(const char *const *words, size_t n, char *buf, size_t size) {
        size_t used = 0;

        if (size == 0)
                return -ENOBUFS;
        buf[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
                int r = snprintf(buf + used, size - used, "%s%s", sep, words[i]);
                if (r < 0 || (size_t)r >= size - used)
                        return -ENOBUFS;
                used += (size_t)r;
        }
        return 0;
}

int knob_group_keys(KnobGroup group, char *buf, size_t size) {
        const char *words[16];
        size_t n = 0;

        for (size_t i = 0; i < groups[group].n && n < ELEMENTSOF(words); i++)
                words[n++] = groups[group].specs[i].name;
        if (group == KNOB_GROUP_TOP) {
                words[n++] = "khugepaged";
                words[n++] = "sizes";
        }
        return join_words(words, n, buf, size);
}

bool knob_spec_accepts_word(const KnobSpec *spec, const char *word) {
        if (spec->type != KNOB_CHOICE)
                return false;
        for (const char *const *w = spec->vocabulary; *w; w++)
                if (strcmp(*w, word) == 0)
                        return true;
        return false;
}

int knob_spec_vocabulary_string(const KnobSpec *spec, char *buf, size_t size) {
        size_t n = 0;

        if (spec->type != KNOB_CHOICE)
                return -EINVAL;
        while (spec->vocabulary[n])
                n++;
        return join_words((const char *const *)spec->vocabulary, n, buf, size);
}

bool knob_size_is_valid(const char *size) {
        size_t digits = strspn(size, "0123456789");

        /* "0kB" and leading zeros name no directory the kernel creates. */
        if (digits == 0 || digits > 10 || size[0] == '0')
                return false;
        return strcmp(size + digits, "kB") == 0;
}

int knob_path_build(KnobGroup group, const char *size, const KnobSpec *spec, char *buf, size_t size_buf) {
        int r;

        switch (group) {
        case KNOB_GROUP_TOP:
                r = snprintf(buf, size_buf, "%s", spec->name);
                break;
        case KNOB_GROUP_KHUGEPAGED:
                r = snprintf(buf, size_buf, "khugepaged/%s", spec->name);
                break;
        case KNOB_GROUP_SIZE:
                if (!size || !knob_size_is_valid(size))
                        return -EINVAL;
                r = snprintf(buf, size_buf, "hugepages-%s/%s", size, spec->name);
                break;
        default:
                return -EINVAL;
        }
        if (r < 0 || (size_t)r >= size_buf)
                return -ENAMETOOLONG;
        return 0;
}

uint64_t knob_ptes_max(uint64_t hpage_pmd_size, uint64_t page_size) {
        if (page_size == 0 || hpage_pmd_size < page_size)
                return 0;
        return hpage_pmd_size / page_size - 1;
}

_hot_ size_t knob_dir_len(const char *path) {
        const char *slash = strrchr(path, '/');

        return slash ? (size_t)(slash - path) : 0;
}

_hot_ bool knob_in_dir(const char *path, const char *rel, const char **ret_name) {
        size_t len = knob_dir_len(path);

        if (strlen(rel) != len || strncmp(path, rel, len) != 0)
                return false;
        *ret_name = len > 0 ? path + len + 1 : path;
        return true;
}
