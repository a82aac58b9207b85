/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The passes over a policy's text before libconfig sees it, for what
 * libconfig 1.5 would get wrong: an @include, an integer it would wrap, a
 * string whose token it would leak, and a number of settings it would
 * take minutes to parse. policy_parse()'s first step.
 */

#include <stddef.h>

#include "thpguard/diag.h"

typedef struct PolicyPrescan {
        unsigned *wrapped_lines; /* lines whose integer libconfig 1.5 would wrap, each reported already */
        size_t n_wrapped_lines;
        size_t n_settings;
} PolicyPrescan;

/*
 * Scans text (NUL-terminated), reporting every problem into diag: -EINVAL
 * for an @include or a string literal longer than POLICY_STRING_MAX,
 * -E2BIG for more than POLICY_SETTINGS_MAX settings, or -ENOMEM. An
 * integer too large for libconfig 1.5 is reported but no failure here: its
 * line is in ret->wrapped_lines, so that the setting is not reported again.
 */
int policy_prescan(const char *file, const char *text, Diag *diag, PolicyPrescan *ret);
void policy_prescan_done(PolicyPrescan *p);
