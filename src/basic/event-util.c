/* SPDX-License-Identifier: MIT */
#include "thpguard/event-util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include "thpguard/number.h"

uint64_t now_nsec(clockid_t clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t now_usec(clockid_t clock) {
        return now_nsec(clock) / 1000;
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

        /* Blocked for the calling thread only (on Linux sigprocmask() is
         * pthread_sigmask()): daemon_start() adds its signal sources on the
         * loop's thread before it starts the corrector thread, which inherits
         * the mask, so only the loop's signalfd takes these signals. (The
         * writer gate is a child process, not a thread.) */
        if (sigemptyset(&mask) < 0 || sigaddset(&mask, sig) < 0)
                return -EINVAL;
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        return sd_event_add_signal(e, ret, sig, callback, userdata);
#endif
}
