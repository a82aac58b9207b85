/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * sd-event calls newer than libsystemd 239 (RHEL 8), each with a fallback
 * of the same observable behaviour. CMake decides which side is built
 * (HAVE_* from check_symbol_exists, or all fallbacks with
 * -DTHPGUARD_LIBSYSTEMD_API=239); callers never see the difference.
 */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>
#include <time.h>

#define USEC_PER_SEC  UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)

/* Now on a clock, in microseconds, like systemd's now(); in nanoseconds, as BPF's bpf_ktime_get_ns()
 * (CLOCK_MONOTONIC). */
uint64_t now_usec(clockid_t clock);
uint64_t now_nsec(clockid_t clock);

/*
 * The loop's cached time, as sd_event_*_relative() use: the time its
 * handlers were woken at, so every handler of one wakeup sees the same.
 */
uint64_t event_now(sd_event *e, clockid_t clock);

/*
 * Arms a timer once, for an absolute time on its clock. A timer that cannot
 * fire would silently stop its work: on failure the loop is told to exit
 * with EXIT_FAILURE (systemd restarts us), and the error is returned for
 * the caller to say which timer it was.
 */
int event_arm_timer(sd_event_source *timer, uint64_t usec);

/* sd_event_add_time_relative() (libsystemd 247). */
int event_add_time_relative(sd_event *e, sd_event_source **ret, clockid_t clock, uint64_t usec,
                            uint64_t accuracy, sd_event_time_handler_t callback, void *userdata);

/* sd_event_source_set_time_relative() (libsystemd 247). */
int event_source_set_time_relative(sd_event_source *s, uint64_t usec);

/* sd_event_source_disable_unref() (libsystemd 243). Returns NULL. */
sd_event_source *event_source_disable_unref(sd_event_source *s);

/*
 * sd_event_add_signal() with SD_EVENT_SIGNAL_PROCMASK (libsystemd 252):
 * blocks the signal in this thread first, as sd-event requires.
 */
int event_add_signal(sd_event *e, sd_event_source **ret, int sig, sd_event_signal_handler_t callback,
                     void *userdata);
