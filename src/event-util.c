/* SPDX-License-Identifier: MIT */
#include "thpguard/event-util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include "thpguard/number.h"

uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

uint64_t event_now(sd_event *e, clockid_t clock) {
        uint64_t t;

        if (sd_event_now(e, clock, &t) < 0)
                return now_usec(clock);
        return t;
}

int event_arm_timer(sd_event_source *timer, uint64_t usec) {
        int r;

        r = sd_event_source_set_time(timer, usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(timer, SD_EVENT_ONESHOT);
        if (r < 0)
                (void)sd_event_exit(sd_event_source_get_event(timer), EXIT_FAILURE);
        return r;
}

int event_add_time_relative(sd_event *e, sd_event_source **ret, clockid_t clock, uint64_t usec,
                            uint64_t accuracy, sd_event_time_handler_t callback, void *userdata) {
#if HAVE_SD_EVENT_ADD_TIME_RELATIVE
        return sd_event_add_time_relative(e, ret, clock, usec, accuracy, callback, userdata);
#else
        return sd_event_add_time(e, ret, clock, u64_sat_add(event_now(e, clock), usec), accuracy, callback,
                                 userdata);
#endif
}

int event_source_set_time_relative(sd_event_source *s, uint64_t usec) {
#if HAVE_SD_EVENT_SOURCE_SET_TIME_RELATIVE
        return sd_event_source_set_time_relative(s, usec);
#else
        clockid_t clock;
        int r;

        r = sd_event_source_get_time_clock(s, &clock);
        if (r < 0)
                return r;
        return sd_event_source_set_time(s,
                                        u64_sat_add(event_now(sd_event_source_get_event(s), clock), usec));
#endif
}

sd_event_source *event_source_disable_unref(sd_event_source *s) {
#if HAVE_SD_EVENT_SOURCE_DISABLE_UNREF
        return sd_event_source_disable_unref(s);
#else
        if (!s)
                return NULL;
        /* Disabled first: a source the loop still holds must not fire into freed userdata. */
        (void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
        return sd_event_source_unref(s);
#endif
}

int event_add_signal(sd_event *e, sd_event_source **ret, int sig, sd_event_signal_handler_t callback,
                     void *userdata) {
#if HAVE_SD_EVENT_SIGNAL_PROCMASK
        return sd_event_add_signal(e, ret, sig | SD_EVENT_SIGNAL_PROCMASK, callback, userdata);
#else
        sigset_t mask;

        /* sigprocmask(), not pthread_sigmask(): the daemon has one thread (its
         * writer gate is a child process of its own, not a thread), and glibc
         * before 2.34 keeps the latter in libpthread. */
        if (sigemptyset(&mask) < 0 || sigaddset(&mask, sig) < 0)
                return -EINVAL;
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        return sd_event_add_signal(e, ret, sig, callback, userdata);
#endif
}

#if !HAVE_SD_EVENT_SOURCE_SET_RATELIMIT
static int on_ratelimit_resume(sd_event_source *s, uint64_t usec, void *userdata) {
        EventRateLimit *rl = userdata;

        rl->dispatched = 0;
        rl->window_start_usec = usec;
        return sd_event_source_set_enabled(rl->source, SD_EVENT_ON);
}
#endif

int event_ratelimit_init(EventRateLimit *rl, sd_event_source *source, uint64_t interval_usec,
                         unsigned burst) {
        *rl = (EventRateLimit){ .source = source, .interval_usec = interval_usec, .burst = burst };
#if HAVE_SD_EVENT_SOURCE_SET_RATELIMIT
        return sd_event_source_set_ratelimit(source, interval_usec, burst);
#else
        int r;

        r = sd_event_add_time(sd_event_source_get_event(source), &rl->resume_timer, CLOCK_MONOTONIC, 0, 1,
                              on_ratelimit_resume, rl);
        if (r < 0)
                return r;
        (void)sd_event_source_set_description(rl->resume_timer, "ratelimit-resume");
        return sd_event_source_set_enabled(rl->resume_timer, SD_EVENT_OFF);
#endif
}

int event_ratelimit_set_burst(EventRateLimit *rl, unsigned burst) {
        rl->burst = burst;
#if HAVE_SD_EVENT_SOURCE_SET_RATELIMIT
        return sd_event_source_set_ratelimit(rl->source, rl->interval_usec, burst);
#else
        return 0;
#endif
}

bool event_ratelimit_over(EventRateLimit *rl) {
#if HAVE_SD_EVENT_SOURCE_SET_RATELIMIT
        return false; /* sd-event does not dispatch a source over its limit */
#else
        uint64_t now = event_now(sd_event_source_get_event(rl->source), CLOCK_MONOTONIC);

        if (now >= u64_sat_add(rl->window_start_usec, rl->interval_usec)) {
                rl->window_start_usec = now;
                rl->dispatched = 0;
        }
        if (++rl->dispatched <= rl->burst)
                return false;
        /* Over the limit: sleep until the window ends. If that fails, keep dispatching. */
        if (sd_event_source_set_time(rl->resume_timer,
                                     u64_sat_add(rl->window_start_usec, rl->interval_usec)) < 0 ||
            sd_event_source_set_enabled(rl->resume_timer, SD_EVENT_ONESHOT) < 0)
                return false;
        (void)sd_event_source_set_enabled(rl->source, SD_EVENT_OFF); /* the timer above turns it back on */
        return true;
#endif
}

void event_ratelimit_done(EventRateLimit *rl) {
        rl->resume_timer = event_source_disable_unref(rl->resume_timer);
}
