/* SPDX-License-Identifier: MIT */
#pragma once

/* The --verify report: one row per managed knob, as a table or as JSON. */

#include <stdio.h>

#include "thpguard/compliance.h"
#include "thpguard/policy.h"
#include "thpguard/sysfs.h"

void report_verify_text(FILE *f, const Policy *p, const KnobStatus *statuses);
int report_verify_json(FILE *f, const Policy *p, const Sysfs *s, const KnobStatus *statuses);
