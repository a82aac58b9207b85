/* SPDX-License-Identifier: MIT */
#pragma once

/* The one number parser for what the kernel prints: sysfs knobs, /proc files, /proc's PID names, fdinfo. */

#include <stddef.h>
#include <stdint.h>

/* Decimal digits, all of s[0..n): no sign, no blanks, no overflow. -EBADMSG otherwise, n == 0 too. */
int number_parse_u64(const char *s, size_t n, uint64_t *ret);
/* The same in lower-case hex digits as the kernel prints them, no "0x" (smaps, fdinfo): at most 16. */
int number_parse_hex_u64(const char *s, size_t n, uint64_t *ret);

/*
 * Figures derived from kernel counters, which a forged --proc-root (or a
 * buggy kernel) may set anywhere in 0..UINT64_MAX: a sum or product that
 * does not fit is UINT64_MAX, a difference below zero is 0. Never a wrap.
 */
static inline uint64_t u64_sat_add(uint64_t a, uint64_t b) {
        uint64_t r;

        return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t u64_sat_sub(uint64_t a, uint64_t b) {
        return a > b ? a - b : 0;
}

static inline uint64_t u64_sat_mul(uint64_t a, uint64_t b) {
        uint64_t r;

        return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/*
 * part as a share of whole in whole percent, rounded down, exact for every
 * input: 0..100, a part above whole counting as all of it. 0 when whole is 0.
 */
unsigned number_percent(uint64_t part, uint64_t whole);
