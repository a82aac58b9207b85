/* SPDX-License-Identifier: MIT */
#pragma once

/* The one decimal parser for what the kernel prints: sysfs knobs, /proc files, /proc's PID names. */

#include <stddef.h>
#include <stdint.h>

/* Decimal digits, all of s[0..n): no sign, no blanks, no overflow. -EBADMSG otherwise, n == 0 too. */
int number_parse_u64(const char *s, size_t n, uint64_t *ret);
