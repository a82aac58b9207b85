/* SPDX-License-Identifier: MIT */
#pragma once

/* The --verify report: one row per managed knob, as a table or as JSON. */

#include <stdio.h>

#include "thpguard/compliance.h"
#include "thpguard/policy.h"
#include "thpguard/sysfs.h"

void report_verify_text(FILE *f, const Policy *p, const KnobStatus *statuses);
/*
 * write_source: what a daemon started now would see writes through
 * (write-source.h), and its detail: the probe's hook, or why there is none.
 */
int report_verify_json(FILE *f, const Policy *p, const Sysfs *s, const KnobStatus *statuses,
                       const char *write_source, const char *write_source_detail);
