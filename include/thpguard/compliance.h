/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Desired against actual: the state of one managed knob, decided from what
 * reading its file returned. The decision is pure, so tests feed it buffers.
 */

#include <stdint.h>

#include "thpguard/diag.h"
#include "thpguard/policy.h"
#include "thpguard/sysfs.h"

typedef enum KnobState {
        KNOB_STATE_OK,
        KNOB_STATE_DRIFT,
        KNOB_STATE_UNSUPPORTED, /* file absent, or the kernel does not offer the value */
        KNOB_STATE_ERROR,       /* unreadable or unparsable */
} KnobState;

typedef struct KnobStatus {
        KnobState state;
        char actual[KNOB_VALUE_MAX]; /* "" when not known */
        char reason[256];            /* why, for unsupported and error */
} KnobStatus;

/*
 * read_result is 0 with buf/len holding the file's content, or the -errno
 * of reading it. ptes_max bounds the max_ptes_* knobs.
 */
void compliance_evaluate(const PolicyKnob *k, int read_result, const char *buf, size_t len,
                         uint64_t ptes_max, KnobStatus *ret);

/* Reads the knob below s (through h when not NULL) and evaluates it against s's max_ptes_* bound. */
void compliance_read(const Sysfs *s, const PolicyKnob *k, SysfsHandle *h, KnobStatus *ret);

/*
 * Checks every knob of p against the kernel under s, adding a warning (with
 * the policy line) for each that will be skipped as unsupported or cannot be
 * read. Writes nothing.
 */
void compliance_check_policy(const Policy *p, const Sysfs *s, Diag *diag);

const char *knob_state_to_string(KnobState state);
