/* SPDX-License-Identifier: MIT */
/*
 * The enforcing daemon's centre: setup (daemon_new(), daemon_start(), one
 * helper per event source), the loop (daemon_loop()), the knob checks every
 * trigger goes through and their records (written at once, or when the
 * writer's fanotify event is in), and the triggers themselves: inotify on
 * the knob directories, the periodic recheck, a writer fight's backoff, the
 * exit signals. It calls its parts, listed in daemon-internal.h: the policy
 * and its reloads (daemon-reload.c, the one part that calls back), the
 * metrics file (daemon-metrics.c), the feature file (daemon-nfd.c), the
 * writers (daemon-writers.c) and the confinement (daemon-sandbox.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include <linux/capability.h>

#include "daemon-internal.h"
#include "priority.h"
#include "thpguard/capability.h"
#include "thpguard/compliance.h"
#include "thpguard/fileio.h"
#include "thpguard/message-ids.h"
#include "thpguard/path.h"
#include "thpguard/sysfs.h"

static void tracked_knobs_free(TrackedKnob *k, size_t n) {
        for (size_t i = 0; k && i < n; i++) {
                sysfs_handle_close(&k[i].file);
                knob_attribution_done(&k[i].attribution);
                fight_done(&k[i].fight);
        }
        free(k);
}

static FightConfig fight_config_for(const Policy *p) {
        return (FightConfig){
                .threshold = p->fight_threshold,
                .window_usec = (uint64_t)p->fight_window_sec * USEC_PER_SEC,
                .backoff_max_usec = (uint64_t)p->recheck_interval_sec * USEC_PER_SEC,
        };
}

/* Per-knob state for a new policy; counters and fights carry over by knob path. */
static int tracked_knobs_new(const Policy *p, const FightConfig *fc, const TrackedKnob *old, size_t n_old,
                             const FightConfig *old_fc, TrackedKnob **ret) {
        TrackedKnob *k = calloc(p->n_knobs ? p->n_knobs : 1, sizeof(*k));

        if (!k)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_knobs; i++) {
                snprintf(k[i].path, sizeof(k[i].path), "%s", p->knobs[i].path);
                k[i].file = SYSFS_HANDLE_CLOSED;
                knob_attribution_init(&k[i].attribution);
                corrector_knob_init(&k[i].corrector);
                if (fight_init(&k[i].fight, fc) < 0) {
                        tracked_knobs_free(k, i);
                        return -ENOMEM;
                }
                for (size_t j = 0; j < n_old; j++) {
                        if (strcmp(old[j].path, k[i].path) != 0)
                                continue;
                        memcpy(k[i].corrections, old[j].corrections, sizeof(k[i].corrections));
                        k[i].failures = old[j].failures;
                        k[i].fights = old[j].fights;
                        knob_attribution_carry_over(&k[i].attribution, &old[j].attribution);
                        fight_carry_over(&k[i].fight, fc, &old[j].fight, old_fc->threshold);
                }
        }
        *ret = k;
        return 0;
}

/* "inotify; written by tuned.service, pid 812, /usr/sbin/tuned", or "inotify" alone. */
static void describe_cause(const char *trigger, const Writer *w, char *buf, size_t size) {
        char who[WRITER_LABEL_MAX + WRITER_EXE_MAX + 32];

        if (!w) {
                snprintf(buf, size, "%s", trigger);
                return;
        }
        writer_describe(w, who, sizeof(who));
        snprintf(buf, size, "%s%swritten by %s", trigger, trigger[0] ? "; " : "", who);
}

static void log_correction(Daemon *d, size_t i, const EnforceOutcome *o, Trigger t, const Writer *w) {
        const PolicyKnob *k = &d->policy->knobs[i];
        const char *result = o->action == ENFORCE_CORRECTED ? "corrected"
                             : o->action == ENFORCE_AUDIT   ? "audit"
                                                            : "failed";
        char errno_str[16], why[256], cause[WRITER_LABEL_MAX + WRITER_EXE_MAX + 64];
        WriterFields wf;

        writer_fields(w, &wf);
        LogField f[] = {
                { "THPGUARD_KNOB", k->path },
                { "THPGUARD_OBSERVED", o->before.actual },
                { "THPGUARD_DESIRED", k->desired },
                { "THPGUARD_TRIGGER", trigger_to_string(t) },
                { "THPGUARD_RESULT", result },
                { "THPGUARD_ERRNO", o->action == ENFORCE_FAILED ? errno_str : NULL },
                WRITER_FIELDS(wf),
        };

        describe_cause(trigger_to_string(t), w, cause, sizeof(cause));
        switch (o->action) {
        case ENFORCE_CORRECTED:
                log_event(&d->log, LOG_NOTICE, THPGUARD_MESSAGE_CORRECTED, f, ELEMENTSOF(f),
                          "corrected %s: %s -> %s (%s)", k->path, o->before.actual, k->desired, cause);
                break;
        case ENFORCE_AUDIT:
                log_event(&d->log, LOG_WARNING, THPGUARD_MESSAGE_AUDIT_DRIFT, f, ELEMENTSOF(f),
                          "drift on %s: %s, policy wants %s (audit mode, not corrected; %s)", k->path,
                          o->before.actual, k->desired, cause);
                break;
        case ENFORCE_FAILED:
                snprintf(errno_str, sizeof(errno_str), "%d", -o->error);
                enforce_describe_failure(o, why, sizeof(why));
                log_event(&d->log, LOG_ERR, THPGUARD_MESSAGE_CORRECTION_FAILED, f, ELEMENTSOF(f),
                          "failed to correct %s: %s -> %s (%s): %s", k->path, o->before.actual, k->desired,
                          cause, why);
                break;
        case ENFORCE_NONE:
                break;
        }
}

/* Logs a knob turning unsupported or unreadable, or coming back, once per change. */
static void note_state(Daemon *d, size_t i, const KnobStatus *st) {
        TrackedKnob *rt = &d->knobs[i];
        const PolicyKnob *k = &d->policy->knobs[i];
        bool was_bad =
            rt->state_known && (rt->state == KNOB_STATE_UNSUPPORTED || rt->state == KNOB_STATE_ERROR);
        LogField f[] = { { "THPGUARD_KNOB", k->path } };

        if (rt->state_known && rt->state == st->state)
                return;
        if (st->state == KNOB_STATE_UNSUPPORTED || st->state == KNOB_STATE_ERROR)
                log_event(&d->log, LOG_WARNING, NULL, f, ELEMENTSOF(f), "%s is %s: %s; skipping it", k->path,
                          knob_state_to_string(st->state), st->reason);
        else if (was_bad)
                log_event(&d->log, LOG_INFO, NULL, f, ELEMENTSOF(f), "%s can be enforced again", k->path);
        rt->state = st->state;
        rt->state_known = true;
}

static void arm_backoff_timer(Daemon *d);
static void rearm_recheck(Daemon *d);
static void await_writers(Daemon *d, bool on);
static void flush_records(Daemon *d, bool expired);

static void log_fight_begins(Daemon *d, size_t i, const char *foreign, const Writer *w) {
        const PolicyKnob *k = &d->policy->knobs[i];
        char cause[WRITER_LABEL_MAX + WRITER_EXE_MAX + 64];
        WriterFields wf;

        writer_fields(w, &wf);
        LogField f[] = {
                { "THPGUARD_KNOB", k->path },
                { "THPGUARD_OBSERVED", foreign },
                { "THPGUARD_DESIRED", k->desired },
                WRITER_FIELDS(wf),
        };

        describe_cause("", w, cause, sizeof(cause));
        log_event(&d->log, LOG_WARNING, THPGUARD_MESSAGE_WRITER_FIGHT, f, ELEMENTSOF(f),
                  "writer fight on %s: another writer keeps setting %s (more than %u corrections in %us); "
                  "backing off%s%s%s",
                  k->path, foreign, d->fight_config.threshold, d->policy->fight_window_sec, w ? " (" : "",
                  cause, w ? ")" : "");
}

/* A record, and the fight it starts, naming the writer w (NULL: unknown). */
static void write_record(Daemon *d, size_t i, const PendingRecord *r, const Writer *w) {
        if (r->log)
                log_correction(d, i, &r->outcome, r->trigger, w);
        if (r->fight)
                log_fight_begins(d, i, r->outcome.before.actual, w);
        /*
         * One write, one record: its writer names no later drift. A record
         * that waited for its writer is written after the knob read
         * compliant again, and nothing else would forget that writer.
         */
        if (w)
                daemon_writer_used(d, i);
}

/*
 * Writes a record now if its writer is known; else, for a drift inotify
 * announced, keeps it until the writer's event is in, or for at most
 * WRITER_LATE_EVENT_USEC (WRITE_PROBE_LATE_RECORD_USEC for the probe's
 * record: await_writers()). inotify and fanotify hear of a
 * write in the same kernel call, inotify first: a writer preempted in
 * between (a busy CPU, a throttled cgroup) queues its fanotify event late.
 * The loop never waits for it.
 */
static void record(Daemon *d, size_t i, const PendingRecord *r) {
        const Writer *w = daemon_writer_of(d, i);

        if (w || r->trigger != TRIGGER_INOTIFY || !daemon_writers_on(d)) {
                write_record(d, i, r, w);
                return;
        }
        d->knobs[i].pending = *r;
        d->knobs[i].record_pending = true;
        daemon_corrector_await(d, i);
        await_writers(d, true);
}

/* Writes the records that wait for their writer: those whose writer is in, or all of them if expired. */
static void flush_records(Daemon *d, bool expired) {
        bool waiting = false;

        for (size_t i = 0; i < d->policy->n_knobs; i++) {
                TrackedKnob *rt = &d->knobs[i];
                const Writer *w;

                if (!rt->record_pending)
                        continue;
                w = daemon_writer_of(d, i);
                if (!w && !expired) {
                        waiting = true;
                        continue;
                }
                if (!w)
                        w = daemon_writer_late(d, i);
                rt->record_pending = false;
                write_record(d, i, &rt->pending, w);
        }
        if (!waiting)
                await_writers(d, false);
}

static int on_late_write(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        flush_records(userdata, false);
        return 0;
}

static int on_late_write_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        flush_records(userdata, true);
        return 0;
}

/*
 * on: flushes the records when the write group has events, and all of them
 * once WRITER_LATE_EVENT_USEC (the probe: WRITE_PROBE_LATE_RECORD_USEC)
 * have passed; off: stops that.
 */
static void await_writers(Daemon *d, bool on) {
        uint64_t usec = event_now(d->event, CLOCK_MONOTONIC) + daemon_writers_late_usec(d);
        int r = 0, enabled = SD_EVENT_OFF, late_event_fd = daemon_writers_late_event_fd(d);

        if (!on) {
                (void)sd_event_source_set_enabled(d->late_write_source, SD_EVENT_OFF);
                (void)sd_event_source_set_enabled(d->late_write_timer, SD_EVENT_OFF);
                return;
        }
        /* The probe's records come through the corrector thread, which wakes the loop itself
         * (take_corrections()). */
        if (!d->late_write_source && late_event_fd >= 0) {
                r = sd_event_add_io(d->event, &d->late_write_source, late_event_fd, EPOLLIN, on_late_write,
                                    d);
                if (r >= 0)
                        (void)sd_event_source_set_description(d->late_write_source, "writer-late-event");
        }
        if (r >= 0 && !d->late_write_timer) {
                r = sd_event_add_time(d->event, &d->late_write_timer, CLOCK_MONOTONIC, usec, USEC_PER_MSEC,
                                      on_late_write_timer, d);
                if (r >= 0)
                        (void)sd_event_source_set_description(d->late_write_timer,
                                                              "writer-late-event-timer");
        }
        if (r >= 0 && d->late_write_source)
                r = sd_event_source_set_enabled(d->late_write_source, SD_EVENT_ON);
        if (r < 0) {
                /* Nothing would ever write the record: write it now, writer unknown. */
                log_error_errno(&d->log, r, "cannot wait for a writer's event");
                flush_records(d, true);
                return;
        }
        /* A later record does not push back an earlier one's deadline. */
        (void)sd_event_source_get_enabled(d->late_write_timer, &enabled);
        if (enabled != SD_EVENT_OFF)
                return;
        r = event_arm_timer(d->late_write_timer, usec);
        if (r < 0)
                log_error_errno(&d->log, r, "cannot arm the writer's late-event timer; exiting");
}

/* What one correction leaves to do: its record, and its fight. True if corrected, or drifted in audit mode.
 */
static bool report_one(Daemon *d, size_t i, Trigger t, uint64_t now, const EnforceOutcome *o) {
        TrackedKnob *rt = &d->knobs[i];
        PendingRecord r = { .outcome = *o, .trigger = t };
        bool drifted = false;

        /*
         * A record still waiting for its writer goes first when the knob
         * drifted again (this drift may have another writer); our own write's
         * echo, a compliant read, leaves it waiting.
         */
        if (rt->record_pending && o->action != ENFORCE_NONE) {
                rt->record_pending = false;
                write_record(d, i, &rt->pending, daemon_writer_of(d, i));
        }
        daemon_writers_mark(d, i);
        note_state(d, i, &o->before);
        if (o->action != ENFORCE_NONE)

                switch (o->action) {
                case ENFORCE_NONE:
                        if (o->before.state == KNOB_STATE_OK) {
                                rt->reported_errno = 0;
                                rt->reported[0] = '\0';
                                /* Its writer is needed yet: forgotten once the waiting record is written. */
                                if (rt->record_pending)
                                        flush_records(d, false);
                                if (!rt->record_pending)
                                        daemon_writer_forget(d, i);
                        }
                        return false;
                case ENFORCE_AUDIT:
                        /* Report a drift once, not at every recheck while it lasts. */
                        r.log = strcmp(rt->reported, o->before.actual) != 0;
                        snprintf(rt->reported, sizeof(rt->reported), "%s", o->before.actual);
                        drifted = true;
                        break;
                case ENFORCE_FAILED:
                        rt->failures++;
                        /* No storm: the same failure on the same value is logged once. */
                        r.log =
                            rt->reported_errno != o->error || strcmp(rt->reported, o->before.actual) != 0;
                        rt->reported_errno = o->error;
                        snprintf(rt->reported, sizeof(rt->reported), "%s", o->before.actual);
                        break;
                case ENFORCE_CORRECTED:
                        rt->corrections[t]++;
                        sd_event_now(d->event, CLOCK_REALTIME, &d->last_correction_usec);
                        rt->reported_errno = 0;
                        rt->reported[0] = '\0';
                        rt->state = KNOB_STATE_OK;
                        r.log = true;
                        drifted = true;
                        break;
                }

        /*
         * Every write that went through counts towards a fight, kept or not:
         * a write undone before our read-back is the surest sign of another
         * writer, and a write that never sticks raises IN_MODIFY of its own,
         * which without this would loop.
         */
        if (o->written && fight_note_correction(&rt->fight, &d->fight_config, now, o->before.actual)) {
                rt->fights++;
                r.fight = true;
                arm_backoff_timer(d);
        }
        if (r.log || r.fight)
                record(d, i, &r);
        return drifted;
}

/*
 * The one place a trigger checks knobs (all, or those marked in which):
 * every one is corrected before any record is written, so a drift of two
 * knobs at once (TuneD writes enabled and defrag back to back) waits for
 * no record.
 */
static unsigned check_knobs(Daemon *d, const bool *which, Trigger t) {
        size_t n = d->policy->n_knobs;
        EnforceOutcome o[n + 1];
        bool checked[n + 1], wrote = false;
        uint64_t now = event_now(d->event, CLOCK_MONOTONIC);
        unsigned corrected = 0;

        for (size_t i = 0; i < n; i++) {
                checked[i] = (!which || which[i]) && daemon_correct_knob(d, i, &o[i]);
                /* Read under the lock: no record can come between this read and its report. */
                daemon_writers_outcome_read(d, i, daemon_writers_records_seen(d, i));
                wrote |= checked[i] && o[i].written;
        }
        /* Our write woke whoever waits on the knob, most likely onto this CPU: let them see the fix first.
         */
        if (wrote)
                sched_yield();
        for (size_t i = 0; i < n; i++)
                if (checked[i])
                        corrected += report_one(d, i, t, now, &o[i]);
        return corrected;
}

unsigned daemon_check_all(Daemon *d, Trigger t) {
        return check_knobs(d, NULL, t);
}

static void arm_backoff_timer(Daemon *d) {
        uint64_t next = UINT64_MAX;
        int r;

        for (size_t i = 0; i < d->policy->n_knobs; i++)
                if (d->knobs[i].fight.active && d->knobs[i].fight.until_usec < next)
                        next = d->knobs[i].fight.until_usec;
        daemon_corrector_fight(d, next != UINT64_MAX);
        if (next == UINT64_MAX) {
                (void)sd_event_source_set_enabled(d->backoff_timer,
                                                  SD_EVENT_OFF); /* cannot fail on a live source */
                return;
        }
        r = event_arm_timer(d->backoff_timer, next);
        if (r < 0)
                log_error_errno(&d->log, r, "cannot arm the writer-fight backoff timer; exiting");
}

static int on_backoff_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;
        uint64_t now = event_now(d->event, CLOCK_MONOTONIC);

        for (size_t i = 0; i < d->policy->n_knobs; i++) {
                TrackedKnob *rt = &d->knobs[i];
                const PolicyKnob *k = &d->policy->knobs[i];
                LogField f[] = { { "THPGUARD_KNOB", k->path }, { "THPGUARD_OBSERVED", rt->fight.foreign } };
                uint64_t suppressed;
                EnforceOutcome o;
                KnobStatus st;

                if (!rt->fight.active || rt->fight.until_usec > now)
                        continue;
                compliance_read(d->sysfs, k, &rt->file, &st);
                if (fight_window_closed(&rt->fight, &d->fight_config, now, st.state == KNOB_STATE_DRIFT,
                                        &suppressed) == FIGHT_ENDED) {
                        log_event(&d->log, LOG_NOTICE, THPGUARD_MESSAGE_WRITER_FIGHT, f, ELEMENTSOF(f),
                                  "writer fight on %s ended; %" PRIu64 " corrections were suppressed",
                                  k->path, suppressed);
                        continue;
                }
                log_event(&d->log, LOG_WARNING, THPGUARD_MESSAGE_WRITER_FIGHT, f, ELEMENTSOF(f),
                          "writer fight on %s goes on: %" PRIu64
                          " corrections suppressed; correcting and backing "
                          "off %" PRIu64 "s",
                          k->path, suppressed, rt->fight.backoff_usec / USEC_PER_SEC);
                /* Correct once at the window's end; the next window has already begun. */
                daemon_enforce_knob(d, i, &o);
                daemon_writers_outcome_read(d, i, daemon_writers_records_seen(d, i));
                report_one(d, i, TRIGGER_RECHECK, now, &o);
        }
        arm_backoff_timer(d);
        return 0;
}

void daemon_notify_status(Daemon *d, const char *prefix, unsigned corrected, const char *when) {
        size_t n = d->policy->n_knobs;
        bool audit = d->policy->mode == POLICY_MODE_AUDIT;

        sd_notifyf(0, "%sSTATUS=%s %zu knob%s, %u %s at %s", prefix, audit ? "auditing" : "enforcing", n,
                   n == 1 ? "" : "s", corrected, audit ? "drifted" : "corrected", when);
}

static void rearm_recheck(Daemon *d) {
        uint64_t interval = (uint64_t)d->policy->recheck_interval_sec * USEC_PER_SEC;
        int r;

        r = event_arm_timer(d->recheck_timer, event_now(d->event, CLOCK_MONOTONIC) + interval);
        if (r < 0)
                log_error_errno(&d->log, r, "cannot arm the recheck timer; exiting");
}

/* A file unlinked and recreated (fixture trees, a swapped mount) is reopened by path. */
static void close_stale_handles(Daemon *d) {
        for (size_t i = 0; i < d->policy->n_knobs; i++)
                if (sysfs_handle_is_stale(d->sysfs, d->knobs[i].path, &d->knobs[i].file))
                        sysfs_handle_close(&d->knobs[i].file);
}

/*
 * Every directory is watched and no event was queued, yet the recheck found
 * a drift: no inotify event announced it. The writer went through a sysfs
 * of another network namespace, which is another superblock (PrivateNetwork=
 * on systemd >= 254, a container's own /sys). Said once: each such drift
 * waits for the recheck, and that will not change.
 */
static void warn_unseen_drift(Daemon *d) {
        d->unseen_drift_logged = true;
        log_plain(&d->log, LOG_WARNING,
                  "the recheck corrected a drift that no inotify event announced: the writer used a sysfs "
                  "this watch cannot see (another network namespace's /sys, such as PrivateNetwork=yes "
                  "on systemd >= 254 or a container's own sysfs), so corrections wait up to %us; run "
                  "thpguardd in the host's network namespace, or on a bind mount of the host's /sys",
                  d->policy->recheck_interval_sec);
}

static int on_recheck(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;
        bool all_watched_and_quiet = false;
        size_t readded;

        /* A new count rewrites the metrics file (daemon-metrics.c): its age is the liveness signal. */
        d->rechecks++;
        readded = watches_readd(d->watches, d->sysfs);
        if (readded > 0) {
                log_plain(&d->log, LOG_INFO, "re-added %zu lost inotify watch%s", readded,
                          readded == 1 ? "" : "es");
                d->watch_lost_logged = false;
        }
        /*
         * While every directory is watched, IN_CREATE/IN_DELETE close a file
         * that was replaced; without a watch, nothing tells us, so look.
         */
        if (readded > 0 || watches_lost(d->watches) > 0)
                close_stale_handles(d);
        /* Looked at before our own corrections raise IN_MODIFY on the watch. */
        if (readded == 0 && watches_lost(d->watches) == 0 && !d->unseen_drift_logged)
                all_watched_and_quiet = watches_quiet(d->watches) && !daemon_corrector_busy(d);
        if (daemon_check_all(d, TRIGGER_RECHECK) > 0 && all_watched_and_quiet)
                warn_unseen_drift(d);
        rearm_recheck(d);
        return 0;
}

/*
 * The corrector thread's outcomes (daemon-corrector.c), under the lock: its
 * records, and whatever it left to the loop. Every knob it named was
 * corrected before this runs; the records are written here.
 */
static void take_corrections(Daemon *d) {
        size_t n = d->policy->n_knobs;
        EnforceOutcome o[n + 1];
        bool recheck[n + 1], any_recheck = false;
        uint64_t now = event_now(d->event, CLOCK_MONOTONIC);
        CorrectorNews news;

        for (size_t i = 0; i < n; i++) {
                Trigger t;

                if (daemon_corrector_take(d, i, &o[i], &t, &recheck[i]))
                        report_one(d, i, t, now, &o[i]);
                any_recheck |= recheck[i];
        }
        daemon_corrector_take_news(d, &news);
        if (news.lost_dir[0] && !d->watch_lost_logged) {
                log_plain(
                    &d->log, LOG_WARNING,
                    "lost the inotify watch on %s/%s; relying on the %us recheck until it can be re-added",
                    d->sysfs->thp_dir, news.lost_dir, d->policy->recheck_interval_sec);
                d->watch_lost_logged = true;
        }
        if (news.overflow) {
                log_plain(&d->log, LOG_WARNING, "inotify queue overflowed; rechecking every knob");
                d->rechecks++;
                /* The lost events may have said that a file was replaced. */
                close_stale_handles(d);
                daemon_check_all(d, TRIGGER_RECHECK);
        } else if (any_recheck)
                check_knobs(d, recheck, TRIGGER_INOTIFY);
        /* The probe's record of a write may come after inotify's event: a record waiting for it goes now. */
        if (daemon_writers_by_record(d))
                flush_records(d, false);
}

static int on_corrector(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Daemon *d = userdata;
        uint64_t wakeups;

        (void)!read(fd, &wakeups, sizeof(wakeups)); /* an eventfd: one read takes them all */
        if (daemon_corrector_error(d) < 0) {
                log_error_errno(&d->log, daemon_corrector_error(d),
                                "cannot read the knob directories' watch; exiting");
                return sd_event_exit(d->event, EXIT_FAILURE);
        }
        take_corrections(d);
        return 0;
}

/* Makes p the policy in force. Nothing is left half-swapped on failure. */
int daemon_install_policy(Daemon *d, Policy *p) {
        FightConfig fc = fight_config_for(p);
        TrackedKnob *k = NULL;
        int r;

        /* The records of the policy going out are written under it, the corrector thread's too. */
        if (d->knobs) {
                take_corrections(d);
                flush_records(d, true);
        }
        r = tracked_knobs_new(p, &fc, d->knobs, d->policy ? d->policy->n_knobs : 0, &d->fight_config, &k);
        if (r < 0)
                return r;
        /* Another metrics file: checked before its first write, and what is wrong with it is news. */
        if (!d->options->metrics_file && d->policy && d->policy->metrics_file &&
            (!p->metrics_file || strcmp(d->policy->metrics_file, p->metrics_file) != 0)) {
                d->metrics_error = 0;
                d->metrics_ours = false;
        }
        tracked_knobs_free(d->knobs, d->policy ? d->policy->n_knobs : 0);
        policy_free(d->policy);
        d->policy = p;
        d->knobs = k;
        d->fight_config = fc;

        if (watches_sync(d->watches, d->sysfs, p) > 0 && !d->watch_lost_logged) {
                log_plain(&d->log, LOG_WARNING,
                          "could not watch every knob directory; relying on the %us recheck",
                          p->recheck_interval_sec);
                d->watch_lost_logged = true;
        }
        if (d->recheck_timer)
                rearm_recheck(d);
        if (d->backoff_timer)
                arm_backoff_timer(d);
        return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Daemon *d = userdata;

        log_plain(&d->log, LOG_INFO, "received %s; exiting, knobs left as they are",
                  strsignal((int)si->ssi_signo));
        sd_event_exit(d->event, EXIT_SUCCESS);
        return 0;
}

/* ---- Setup: one helper per event source, each naming what failed ---------- */

/* Signals first, so a SIGTERM during the startup apply waits for the loop and exits cleanly. */
static int setup_exit_signals(Daemon *d) {
        int r;

        r = event_add_signal(d->event, &d->sigterm, SIGTERM, on_exit_signal, d);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot handle SIGTERM");
        (void)sd_event_source_set_description(d->sigterm, "sigterm");
        r = event_add_signal(d->event, &d->sigint, SIGINT, on_exit_signal, d);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot handle SIGINT");
        (void)sd_event_source_set_description(d->sigint, "sigint");
        return 0;
}

static int setup_recheck_timer(Daemon *d) {
        int r;

        r = event_add_time_relative(d->event, &d->recheck_timer, CLOCK_MONOTONIC,
                                    (uint64_t)d->policy->recheck_interval_sec * USEC_PER_SEC,
                                    USEC_PER_SEC / 10, on_recheck, d);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot create the recheck timer");
        (void)sd_event_source_set_description(d->recheck_timer, "recheck-timer");
        return 0;
}

static int setup_backoff_timer(Daemon *d) {
        int r;

        r = sd_event_add_time(d->event, &d->backoff_timer, CLOCK_MONOTONIC, 0, USEC_PER_MSEC * 10,
                              on_backoff_timer, d);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot create the writer-fight backoff timer");
        (void)sd_event_source_set_description(d->backoff_timer, "fight-backoff-timer");
        arm_backoff_timer(d);
        return 0;
}

Daemon *daemon_free(Daemon *d) {
        if (!d)
                return NULL;
        daemon_corrector_free(d); /* first: the thread touches most of what follows */
        daemon_writers_free(d);
        event_source_disable_unref(d->late_write_source);
        event_source_disable_unref(d->late_write_timer);
        nfd_file_free(d->nfd);
        event_source_disable_unref(d->config_source);
        event_source_disable_unref(d->recheck_timer);
        event_source_disable_unref(d->reload_timer);
        event_source_disable_unref(d->backoff_timer);
        event_source_disable_unref(d->metrics_timer);
        event_source_disable_unref(d->metrics_post);
        event_source_disable_unref(d->sigterm);
        event_source_disable_unref(d->sigint);
        event_source_disable_unref(d->sighup);
        sd_event_unref(d->event);
        watches_free(d->watches);
        file_watch_free(d->config_watch);
        tracked_knobs_free(d->knobs, d->policy ? d->policy->n_knobs : 0);
        policy_free(d->policy);
        sysfs_free(d->sysfs);
        pthread_mutex_destroy(&d->lock);
        free(d);
        return NULL;
}

/*
 * Once the fanotify groups are open, before the policy or any /proc file
 * is read and before the writer gate exists (it inherits what we hold):
 * nothing of root is left, and what the kernel refused is fatal. Where lock
 * mode may be asked for (--lock, or the policy's mode, not read yet),
 * CAP_SYS_PTRACE stays permitted, not in effect, for the locking gate;
 * daemon_writers_start() and the gate's start drop it (daemon-writers.c).
 */
static int drop_privileges(Daemon *d) {
        uint64_t keep = d->options->mode == POLICY_MODE_LOCK || d->options->mode == _POLICY_MODE_UNSET
                            ? UINT64_C(1) << CAP_SYS_PTRACE
                            : 0;
        char why[256];
        int r, nice;

        /* Best effort, while CAP_SYS_NICE may still be held: priority.h says why. */
        (void)priority_raise(&nice);
        r = capability_keep_only(keep);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot drop capabilities");
        r = capability_check_kept(keep, why, sizeof(why));
        if (r < 0)
                return log_error_errno(&d->log, r, "not starting with privileges left: %s", why);
        return 0;
}

int daemon_new(const DaemonOptions *o, const Logger *log, Daemon **ret) {
        _cleanup_(daemon_freep) Daemon *d = NULL;
        int r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return log_error_errno(log, -ENOMEM, "cannot allocate the daemon");
        d->options = o;
        d->log = *log;
        daemon_corrector_init(&d->corrector);
        daemon_writers_init(&d->attribution);
        r = pthread_mutex_init(&d->lock, NULL);
        if (r > 0)
                return log_error_errno(log, -r, "cannot create the daemon's lock");

        r = sysfs_new(o->sysfs_root, &d->sysfs);
        if (r == -ENODEV)
                return log_error_errno(&d->log, r, "--sysfs-root %s: %s", o->sysfs_root, sysfs_strerror(-r));
        if (r < 0)
                return log_error_errno(&d->log, r, "--sysfs-root %s", o->sysfs_root);

        r = sd_event_default(&d->event);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot create the event loop");
        r = watches_new(&d->watches);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot create the inotify instance for the knobs");
        r = path_join_root("/", "proc", d->proc_root, sizeof(d->proc_root));
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot build the path of /proc");
        /*
         * The write source needs privileges the daemon does not keep: what the
         * fd store passed in, or a loader forked now that keeps them; then
         * every privilege of ours is dropped.
         */
        daemon_writers_begin(d);
        r = drop_privileges(d);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(d);
        return 0;
}

int daemon_start(Daemon *d) {
        _cleanup_diag_ Diag diag = {};
        _cleanup_policy_ Policy *p = NULL;
        LogField f[] = { { "THPGUARD_POLICY", d->options->config } };
        unsigned corrected;
        int r;

        r = daemon_load_policy(d, &diag, &p);
        daemon_log_diag(d, &diag);
        if (r < 0) {
                log_event(&d->log, LOG_ERR, THPGUARD_MESSAGE_POLICY_REJECTED, f, ELEMENTSOF(f),
                          "invalid policy %s: not starting; nothing was written", d->options->config);
                return r;
        }
        r = daemon_install_policy(d, p);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot install the policy");
        TAKE_PTR(p); /* the daemon's now */
        /*
         * Confined for good before the writer gate, any event source or
         * write; in lock mode after the gate (daemon-sandbox.c says why).
         */
        r = d->policy->mode == POLICY_MODE_LOCK ? 0 : daemon_confine_files(d);
        if (r < 0)
                return r;

        r = setup_exit_signals(d);
        if (r >= 0)
                r = daemon_setup_reload(d);
        /*
         * Before the first check, which opens and marks the knob files: the
         * source the store gave, or the loader asked, whose answer the loop
         * takes once the policy is in force (daemon_writers_join()).
         */
        if (r >= 0)
                r = daemon_writers_start(d);
        if (r >= 0 && !daemon_writers_loading(d))
                r = daemon_setup_fanotify_gate(d);
        if (r >= 0 && !daemon_writers_loading(d))
                r = daemon_confine_files(d);
        if (r >= 0 && !daemon_writers_loading(d))
                r = daemon_confine_syscalls(d);
        if (r < 0)
                return r;

        corrected = daemon_check_all(d, TRIGGER_STARTUP);

        r = daemon_setup_corrector(d, on_corrector);
        if (r >= 0)
                r = setup_recheck_timer(d);
        if (r >= 0)
                r = setup_backoff_timer(d);
        if (r >= 0)
                r = daemon_setup_metrics(d);
        if (r < 0)
                return r;
        r = sd_event_set_watchdog(d->event, true);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot set up the watchdog");

        log_plain(&d->log, LOG_INFO, "started: %s %zu knobs from %s under %s, %u %s at startup",
                  d->policy->mode == POLICY_MODE_AUDIT ? "auditing" : "enforcing", d->policy->n_knobs,
                  d->options->config, d->sysfs->thp_dir, corrected,
                  d->policy->mode == POLICY_MODE_AUDIT ? "drifted" : "corrected");
        daemon_nfd_update(d);
        daemon_metrics_update(d);
        /* Last: from here on the knob state is shared. Drift queued meanwhile waits in the watch. */
        r = daemon_corrector_start(d);
        if (r < 0)
                return log_error_errno(&d->log, r,
                                       "cannot start the corrector thread on the knob directories' watch");
        daemon_notify_status(d, "READY=1\n", corrected, "startup");
        return 0;
}

/*
 * sd_event_loop(), but each dispatch under the lock the corrector thread
 * shares (daemon-corrector.c); the wait is without it.
 */
static int run_event_loop(Daemon *d) {
        int r, code;

        while (sd_event_get_state(d->event) != SD_EVENT_FINISHED) {
                r = sd_event_prepare(d->event);
                if (r == 0)
                        r = sd_event_wait(d->event, UINT64_MAX);
                if (r > 0) {
                        pthread_mutex_lock(&d->lock);
                        r = sd_event_dispatch(d->event);
                        pthread_mutex_unlock(&d->lock);
                }
                /* Outside the lock: the join stops the corrector thread, which may be waiting for it. */
                if (r >= 0 && daemon_writers_answered(d))
                        r = daemon_writers_join(d);
                if (r < 0)
                        return r;
        }
        r = sd_event_get_exit_code(d->event, &code);
        return r < 0 ? r : code;
}

int daemon_loop(Daemon *d) {
        int r;

        r = run_event_loop(d);
        if (r < 0)
                log_error_errno(&d->log, r, "the event loop failed");
        /* What the thread corrected last is recorded too. */
        daemon_corrector_stop(d);
        take_corrections(d);
        flush_records(d, true);
        /* A clean stop leaves thpguard_up 0 in the metrics, and the knobs as they are. */
        d->stopped = true;
        if (daemon_metrics_path(d))
                daemon_metrics_write(d);
        (void)sd_notify(0, "STOPPING=1");
        return r < 0 ? EXIT_FAILURE : r;
}
