/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The THP knobs thpguard may manage, typed. Everything under
 * /sys/kernel/mm/transparent_hugepage that is writable has an entry here;
 * read-only files (hpage_pmd_size, khugepaged/full_scans, .../stats/) do not,
 * so they can never be managed. A knob is named by its path relative to the
 * transparent_hugepage directory, which is also its name in logs and metrics.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest knob path: "hugepages-" + 10 digits + "kB/" + "shmem_enabled". */
#define KNOB_PATH_MAX 64
/* Longest value word the kernel prints or accepts for any knob, plus NUL. */
#define KNOB_VALUE_MAX 32

typedef enum KnobType {
        KNOB_CHOICE, /* "always [madvise] never": write the bare word */
        KNOB_BOOL,   /* "0" / "1"; true/false in the policy */
        KNOB_UINT,   /* decimal unsigned */
} KnobType;

typedef enum KnobBound {
        KNOB_BOUND_NONE,
        KNOB_BOUND_PTES, /* upper bound is hpage_pmd_size / page size - 1 */
} KnobBound;

typedef struct KnobSpec {
        const char *name; /* the file's name in its directory, and the policy key in its group */
        KnobType type;
        const char *const *vocabulary; /* KNOB_CHOICE: NULL-terminated */
        uint64_t min;                  /* KNOB_UINT */
        KnobBound bound;               /* KNOB_UINT */
} KnobSpec;

typedef enum KnobGroup {
        KNOB_GROUP_TOP,        /* thp = { ... } */
        KNOB_GROUP_KHUGEPAGED, /* thp.khugepaged = { ... } */
        KNOB_GROUP_SIZE,       /* thp.sizes = ( { size = "64kB"; ... } ) */
        _KNOB_GROUP_MAX,
} KnobGroup;

/* The specs that live in one policy group; NULL if key is not one of them. */
const KnobSpec *knob_spec_find(KnobGroup group, const char *key);

/* Every key of a group (with thp's subgroups) as "a, b or c", for error messages. */
int knob_group_keys(KnobGroup group, char *buf, size_t size);

/* True if word is in the spec's vocabulary (KNOB_CHOICE only). */
bool knob_spec_accepts_word(const KnobSpec *spec, const char *word);

/* The vocabulary as "a, b or c", for error messages. */
int knob_spec_vocabulary_string(const KnobSpec *spec, char *buf, size_t size);

/* A per-size directory name must be "<digits>kB"; nothing else may reach a path. */
bool knob_size_is_valid(const char *size);

/*
 * Builds the knob path ("enabled", "khugepaged/defrag",
 * "hugepages-64kB/enabled"). size is used only for KNOB_GROUP_SIZE and must
 * have passed knob_size_is_valid().
 */
int knob_path_build(KnobGroup group, const char *size, const KnobSpec *spec, char *buf, size_t size_buf);

/* Upper bound of max_ptes_* for a PMD of hpage_pmd_size bytes on pages of page_size bytes. */
uint64_t knob_ptes_max(uint64_t hpage_pmd_size, uint64_t page_size);

/* The length of a knob path's directory part: 0 for "enabled", 10 for "khugepaged/defrag". */
size_t knob_dir_len(const char *path);

/*
 * True if the knob's file lies directly in the directory rel ("" for
 * transparent_hugepage/ itself, "khugepaged", "hugepages-64kB"); its file
 * name in *ret_name. No copy: it runs per inotify event.
 */
bool knob_in_dir(const char *path, const char *rel, const char **ret_name);

#define UINT_KNOB_MAX UINT32_MAX /* khugepaged values are unsigned int in the kernel */
