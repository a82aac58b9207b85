/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Parser for what reading a THP sysfs file returns. It works on a buffer so
 * that tests and fuzzers feed it without a kernel.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "thpguard/knob.h"

/* The most words any THP choice file has listed (shmem_enabled: 6). */
#define KNOB_OFFERED_MAX 16
/* A sysfs attribute is at most one page; anything longer is not a knob. */
#define KNOB_READ_MAX 4096

typedef struct KnobValue {
        char active[KNOB_VALUE_MAX]; /* bare word or canonical decimal */
        size_t n_offered;            /* KNOB_CHOICE only */
        char offered[KNOB_OFFERED_MAX][KNOB_VALUE_MAX];
} KnobValue;

/*
 * Parses the content of a knob file of the given type. Returns 0, or
 * -EBADMSG for anything the kernel would not have printed: no or two
 * bracketed words, an empty buffer, an embedded NUL, stray characters,
 * an over-long word, a number out of range.
 */
int knob_value_parse(KnobType type, const char *buf, size_t len, KnobValue *ret);

/* True if a choice read offered word. */
bool knob_value_offers(const KnobValue *value, const char *word);

/* The offered words as "a b c", for messages. */
void knob_value_offered_string(const KnobValue *value, char *buf, size_t size);

/*
 * Whether writing buf (len bytes, as write(2) was given them) to a knob of
 * this type sets it to word (a policy's: a bare word, or canonical
 * decimal), as the kernel would parse it: the word with at most one
 * trailing newline, or the number. False for anything else, cut or not.
 */
bool knob_value_write_sets(KnobType type, const char *buf, size_t len, const char *word);

/* Parses a plain decimal file such as hpage_pmd_size ("2097152\n"). */
int knob_value_parse_u64(const char *buf, size_t len, uint64_t *ret);
