/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * One enforcement step on one knob: read, compare, and only on drift write
 * the desired word and read it back. An equal value is never rewritten:
 * every write to "enabled" can make the kernel recompute min_free_kbytes.
 */

#include "thpguard/compliance.h"
#include "thpguard/policy.h"
#include "thpguard/sysfs.h"

typedef enum EnforceAction {
        ENFORCE_NONE,      /* nothing to do, or nothing we may do (unsupported, unreadable) */
        ENFORCE_CORRECTED, /* written and read back equal */
        ENFORCE_FAILED,    /* the write failed, or the value did not stick */
        ENFORCE_AUDIT,     /* drift seen in audit mode; not written */
} EnforceAction;

typedef struct EnforceOutcome {
        EnforceAction action;
        KnobStatus before;          /* before.actual is the value observed */
        int error;                  /* -errno, for ENFORCE_FAILED */
        bool written;               /* the write went through (whether or not it stuck) */
        char after[KNOB_VALUE_MAX]; /* read back after the write, "" if unknown */
} EnforceOutcome;

/* h, when not NULL, is the knob's open file (the daemon's); NULL reads and writes by path. */
void enforce_knob(const Sysfs *s, const PolicyKnob *k, SysfsHandle *h, PolicyMode mode, EnforceOutcome *ret);

/* "write failed: sysfs is read-only here (...)" and the like, for logs. */
void enforce_describe_failure(const EnforceOutcome *o, char *buf, size_t size);
