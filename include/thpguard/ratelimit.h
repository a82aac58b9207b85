/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A window rate limit: at most burst events per interval. Pure: the caller
 * gives the time and sleeps, so a thread and a test use it alike.
 */

#include <stdint.h>

typedef struct RateLimit {
        uint64_t interval_usec;
        unsigned burst;
        uint64_t window_start_usec;
        unsigned counted;
} RateLimit;

#define RATELIMIT_INIT(interval, n) ((RateLimit){ .interval_usec = (interval), .burst = (n) })

/*
 * Counts one event at now (any monotonic clock, in microseconds). Returns 0
 * within the limit; over it, the time the window ends, until which the
 * caller should take no more.
 */
uint64_t ratelimit_count(RateLimit *rl, uint64_t now);
