/* SPDX-License-Identifier: MIT */
#include "thpguard/ratelimit.h"

#include "thpguard/macro.h"
#include "thpguard/number.h"

_hot_ uint64_t ratelimit_count(RateLimit *rl, uint64_t now) {
        if (now >= u64_sat_add(rl->window_start_usec, rl->interval_usec)) {
                rl->window_start_usec = now;
                rl->counted = 0;
        }
        if (++rl->counted <= rl->burst)
                return 0;
        return u64_sat_add(rl->window_start_usec, rl->interval_usec);
}
