/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus textfile: a snapshot of the daemon's counters and the
 * kernel's THP figures, rewritten after corrections and at every recheck
 * (its age is the liveness signal), at most once a second. Each write
 * reads the per-size stats anew: some 160 small sysfs files, whose cost
 * bench/README.md gives ("The metrics write").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon-internal.h"
#include "metrics.h"
#include "thpguard/fileio.h"

/* The metrics file is rewritten after corrections and rechecks, at most this often. */
#define METRICS_MIN_INTERVAL_USEC USEC_PER_SEC

const char *daemon_metrics_path(const Daemon *d) {
        if (d->options->metrics_file)
                return d->options->metrics_file;
        return d->policy ? d->policy->metrics_file : NULL;
}

void daemon_log_kept_file(Daemon *d, const char *what, const char *path, int was, int r, const char *why) {
        if (r < 0 && r != was)
                log_plain(&d->log, LOG_WARNING, "cannot write the %s %s: %s; retrying later", what, path,
                          why ? why : fileio_strerror(-r));
        else if (r > 0 && was != 0)
                log_plain(&d->log, LOG_INFO, "the %s %s is written again", what, path);
}

/* One FNV-1a step over the 8 bytes of v. */
static uint64_t fingerprint_mix(uint64_t h, uint64_t v) {
        for (int i = 0; i < 8; i++, v >>= 8) {
                h ^= v & 0xff;
                h *= UINT64_C(0x100000001b3);
        }
        return h;
}

/* A knob's writer tallies (NULL: none kept) folded in. */
static uint64_t fingerprint_tallies(uint64_t h, const WriterTallies *t) {
        if (!t)
                return h;
        h = fingerprint_mix(h, t->n);
        h = fingerprint_mix(h, t->other);
        for (size_t j = 0; j < t->n; j++)
                h = fingerprint_mix(h, t->top[j].writes);
        return h;
}

/*
 * What the file says of the daemon, folded into one number: the file is
 * due when it changes. So no handler has to remember to say that it
 * changed something the file shows, and none can forget. The kernel's
 * figures are not in it: they are read at each write, which a recheck
 * (its count is in it) makes at least every recheck_interval.
 */
static uint64_t metrics_fingerprint(const Daemon *d) {
        uint64_t h = UINT64_C(0xcbf29ce484222325);
        WriterAttributionMetrics w;

        daemon_writers_metrics(d, &w);
        h = fingerprint_mix(h, d->stopped);
        h = fingerprint_mix(h, (uintptr_t)d->policy); /* a reload's new policy */
        h = fingerprint_mix(h, d->rechecks);
        h = fingerprint_mix(h, d->reloads_ok);
        h = fingerprint_mix(h, d->reloads_failed);
        h = fingerprint_mix(h, d->last_correction_usec);
        h = fingerprint_mix(h, w.source);
        h = fingerprint_mix(h, w.hook[0]);
        h = fingerprint_mix(h, w.probe);
        h = fingerprint_mix(h, w.probe_lost);
        h = fingerprint_mix(h, w.gate_up);
        h = fingerprint_mix(h, w.gate_ran);
        h = fingerprint_mix(h, w.lock_asked);
        h = fingerprint_mix(h, w.lock);
        for (size_t i = 0; i < d->policy->n_knobs; i++) {
                const TrackedKnob *rt = &d->knobs[i];
                const WriterTallies *writes = daemon_writers_tallies(d, i);

                h = fingerprint_mix(h, rt->state_known);
                h = fingerprint_mix(h, rt->state);
                h = fingerprint_mix(h, fight_in_backoff(&rt->fight));
                h = fingerprint_mix(h, rt->failures);
                h = fingerprint_mix(h, rt->fights);
                for (size_t t = 0; t < ELEMENTSOF(rt->corrections); t++)
                        h = fingerprint_mix(h, rt->corrections[t]);
                h = fingerprint_tallies(h, writes);
                h = fingerprint_tallies(h, daemon_writers_refused(d, i));
        }
        return h;
}

void daemon_metrics_write(Daemon *d) {
        const char *path = daemon_metrics_path(d);
        _cleanup_free_ MetricsKnob *knobs = NULL;
        _cleanup_free_ MetricsKernel *kernel = NULL;
        WriterAttributionMetrics w;
        char why[256] = "";
        int r;

        /*
         * Never over a file we did not write: until the first write, the
         * check is made anew each time, so that a fix is seen. From then on
         * the file is ours, and whatever root puts at its name is replaced.
         */
        r = d->metrics_ours ? 0 : metrics_file_check_ours(path, why, sizeof(why));
        if (r >= 0) {
                r = -ENOMEM;
                why[0] = '\0';
                knobs = calloc(d->policy->n_knobs ? d->policy->n_knobs : 1, sizeof(*knobs));
                kernel = malloc(sizeof(*kernel));
        }
        daemon_writers_metrics(d, &w);
        if (knobs && kernel) {
                MetricsSnapshot s = {
                        .up = !d->stopped,
                        .recheck_interval_sec = d->policy->recheck_interval_sec,
                        .knobs = knobs,
                        .n_knobs = d->policy->n_knobs,
                        .rechecks = d->rechecks,
                        .reloads_ok = d->reloads_ok,
                        .reloads_failed = d->reloads_failed,
                        .last_correction_usec = d->last_correction_usec,
                        .kernel = kernel,
                        .write_source = write_source_to_string(w.source),
                        .write_source_hook = w.hook,
                        .write_probe = w.probe,
                        .write_probe_lost = w.probe_lost,
                        .gate_up = w.gate_up,
                        .lock = w.lock_asked ? lock_mechanism_to_string(w.lock) : NULL,
                        .gate = w.gate_ran ? &w.gate : NULL,
                };

                for (size_t i = 0; i < d->policy->n_knobs; i++) {
                        const TrackedKnob *rt = &d->knobs[i];

                        knobs[i] = (MetricsKnob){
                                .knob = rt->path,
                                /* In a fight's backoff the knob is left drifted on purpose. */
                                .compliant = rt->state_known && rt->state == KNOB_STATE_OK &&
                                             !fight_in_backoff(&rt->fight),
                                .supported = !(rt->state_known && rt->state == KNOB_STATE_UNSUPPORTED),
                                .failures = rt->failures,
                                .fights = rt->fights,
                                .writes = daemon_writers_tallies(d, i),
                                .refused = daemon_writers_refused(d, i),
                        };
                        memcpy(knobs[i].corrections, rt->corrections, sizeof(knobs[i].corrections));
                }
                /* Best effort: what the kernel does not offer is left out of the file. */
                (void)metrics_read_kernel(d->proc_root, kernel);
                /* hugepages-*kB/stats/ (6.10+), through the same root as the knobs: absent is none. */
                (void)metrics_read_sizes(d->sysfs->root, kernel);
                (void)metrics_read_khugepaged(d->proc_root, &d->khugepaged,
                                              event_now(d->event, CLOCK_MONOTONIC),
                                              &kernel->khugepaged_cpu_usec);
                r = metrics_write_file(path, &s);
        }
        daemon_log_kept_file(d, "metrics file", path, d->metrics_error, r < 0 ? r : 1, why[0] ? why : NULL);
        d->metrics_error = r < 0 ? r : 0;
        d->metrics_ours |= r >= 0;
        d->metrics_written_usec = event_now(d->event, CLOCK_MONOTONIC);
        d->metrics_written_fingerprint = metrics_fingerprint(d);
}

/*
 * Writes the metrics file if something changed, at most once per
 * METRICS_MIN_INTERVAL_USEC: a change within that second arms one trailing
 * write, so the file never lags more than a second and a writer fight costs
 * one write per second, not one per correction.
 */
void daemon_metrics_update(Daemon *d) {
        uint64_t due = d->metrics_written_usec + METRICS_MIN_INTERVAL_USEC;
        int r, enabled = SD_EVENT_OFF;

        if (!daemon_metrics_path(d) ||
            (d->metrics_written_usec != 0 && metrics_fingerprint(d) == d->metrics_written_fingerprint))
                return;
        if (d->metrics_written_usec == 0 || event_now(d->event, CLOCK_MONOTONIC) >= due) {
                daemon_metrics_write(d);
                return;
        }
        if (sd_event_source_get_enabled(d->metrics_timer, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;
        r = event_arm_timer(d->metrics_timer, due);
        if (r < 0)
                log_error_errno(&d->log, r, "cannot arm the metrics timer; exiting");
}

/* Only wakes the loop for a trailing write: the post source below, which runs after it, writes. */
static int on_metrics_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        return 0;
}

/*
 * After every dispatch of any other source, once: whatever a handler
 * changed (a correction, a recheck, a reload, a writer's event, a lost
 * gate) reaches the files here, and no handler has to say so: the
 * fingerprint of what the metrics file shows tells; the feature file is
 * rewritten only when its text changes, so it is not rate-limited.
 */
static int on_metrics_post(sd_event_source *s, void *userdata) {
        daemon_nfd_update(userdata);
        daemon_metrics_update(userdata);
        return 0;
}

int daemon_setup_metrics(Daemon *d) {
        int r;

        r = sd_event_add_time(d->event, &d->metrics_timer, CLOCK_MONOTONIC, 0, USEC_PER_MSEC * 10,
                              on_metrics_timer, d);
        if (r >= 0)
                r = sd_event_source_set_enabled(d->metrics_timer, SD_EVENT_OFF);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot create the metrics timer");
        (void)sd_event_source_set_description(d->metrics_timer, "metrics-timer");
        r = sd_event_add_post(d->event, &d->metrics_post, on_metrics_post, d);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot add the metrics update to the event loop");
        (void)sd_event_source_set_description(d->metrics_post, "metrics-update");
        return 0;
}
