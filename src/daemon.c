/* SPDX-License-Identifier: MIT */
#include "thpguard/daemon.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "thpguard/compliance.h"
#include "thpguard/enforce.h"
#include "thpguard/event-util.h"
#include "thpguard/fight.h"
#include "thpguard/message-ids.h"
#include "thpguard/metrics.h"
#include "thpguard/path.h"
#include "thpguard/policy.h"
#include "thpguard/sysfs.h"
#include "thpguard/watch.h"

/* Editors and the kubelet touch a policy several times per change; reload once. */
#define RELOAD_DEBOUNCE_USEC (100 * USEC_PER_MSEC)
/*
 * A writer looping flat out raises IN_MODIFY as fast as it writes. Past this
 * rate sd-event pauses the inotify source and the kernel coalesces the
 * queued events, so the loop stays cheap; drift is still seen.
 */
#define INOTIFY_RATELIMIT_INTERVAL_USEC USEC_PER_SEC
#define INOTIFY_RATELIMIT_BURST         5000
/*
 * While a fight is on, the knob in backoff is not even read, so each event
 * is pure overhead: a flat-out writer would wake us thousands of times a
 * second. Other knobs' drift may then wait up to the rest of the second.
 */
#define INOTIFY_RATELIMIT_BURST_FIGHT 50
/* The metrics file is rewritten after corrections and rechecks, at most this often. */
#define METRICS_MIN_INTERVAL_USEC USEC_PER_SEC

typedef struct KnobRuntime {
        char path[KNOB_PATH_MAX]; /* same as the policy knob's; the key across reloads */
        SysfsHandle file;         /* kept open: pread() is ~7x cheaper than open+read+close here */
        Fight fight;
        KnobState state; /* as last seen */
        bool state_known;
        int reported_errno;            /* failure already logged; 0 when none */
        char reported[KNOB_VALUE_MAX]; /* observed value already logged as audit drift or failure */
        uint64_t corrections[_TRIGGER_MAX];
        uint64_t failures;
        uint64_t fights;
} KnobRuntime;

typedef struct Daemon {
        const DaemonOptions *options;
        sd_event *event;
        Logger log;
        Sysfs *sysfs;
        uint64_t ptes_max;

        Policy *policy;
        KnobRuntime *knobs; /* parallel to policy->knobs */
        FightConfig fight_config;

        Watches *watches;
        Watches *config_watch; /* the policy file's directory */
        const char *config_name;
        sd_event_source *thp_source, *config_source;
        EventRateLimit thp_ratelimit;
        sd_event_source *recheck_timer, *reload_timer, *backoff_timer;
        sd_event_source *sigterm, *sigint, *sighup;
        bool watch_lost_logged;
        bool unseen_drift_logged;

        uint64_t rechecks;
        uint64_t reloads_ok, reloads_failed;
        uint64_t last_correction_usec; /* CLOCK_REALTIME; 0: none since start */

        /* The metrics file (--metrics-file, else the policy's metrics_file, else none). */
        char proc_root[PATH_MAX];
        sd_event_source *metrics_timer; /* the trailing write of a burst */
        uint64_t metrics_written_usec;  /* CLOCK_MONOTONIC; 0: never */
        bool metrics_dirty;
        int metrics_error; /* the write error already logged; 0 when none */
        bool stopped;
} Daemon;

/* The time the loop woke at: every handler of one wakeup sees the same. */
static uint64_t loop_now_usec(Daemon *d) {
        uint64_t t;

        if (sd_event_now(d->event, CLOCK_MONOTONIC, &t) < 0)
                return now_usec(CLOCK_MONOTONIC);
        return t;
}

static void runtime_free(KnobRuntime *k, size_t n) {
        for (size_t i = 0; k && i < n; i++) {
                sysfs_handle_close(&k[i].file);
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
static int runtime_new(const Policy *p, const FightConfig *fc, const KnobRuntime *old, size_t n_old,
                       const FightConfig *old_fc, KnobRuntime **ret) {
        KnobRuntime *k = calloc(p->n_knobs ? p->n_knobs : 1, sizeof(*k));

        if (!k)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_knobs; i++) {
                snprintf(k[i].path, sizeof(k[i].path), "%s", p->knobs[i].path);
                k[i].file = SYSFS_HANDLE_CLOSED;
                if (fight_init(&k[i].fight, fc) < 0) {
                        runtime_free(k, i);
                        return -ENOMEM;
                }
                for (size_t j = 0; j < n_old; j++) {
                        if (strcmp(old[j].path, k[i].path) != 0)
                                continue;
                        memcpy(k[i].corrections, old[j].corrections, sizeof(k[i].corrections));
                        k[i].failures = old[j].failures;
                        k[i].fights = old[j].fights;
                        fight_carry_over(&k[i].fight, fc, &old[j].fight, old_fc->threshold);
                }
        }
        *ret = k;
        return 0;
}

static PolicyMode effective_mode(const Daemon *d) {
        return d->options->audit ? POLICY_MODE_AUDIT : d->policy->mode;
}

static void log_correction(Daemon *d, const PolicyKnob *k, const EnforceOutcome *o, Trigger t) {
        const char *result = o->action == ENFORCE_CORRECTED ? "corrected"
                             : o->action == ENFORCE_AUDIT   ? "audit"
                                                            : "failed";
        char errno_str[16], why[256];
        LogField f[] = {
                { "THPGUARD_KNOB", k->path },       { "THPGUARD_OBSERVED", o->before.actual },
                { "THPGUARD_DESIRED", k->desired }, { "THPGUARD_TRIGGER", trigger_to_string(t) },
                { "THPGUARD_RESULT", result },      { "THPGUARD_ERRNO", errno_str },
        };

        switch (o->action) {
        case ENFORCE_CORRECTED:
                log_event(&d->log, LOG_NOTICE, THPGUARD_MESSAGE_CORRECTED, f, 5,
                          "corrected %s: %s -> %s (%s)", k->path, o->before.actual, k->desired,
                          trigger_to_string(t));
                break;
        case ENFORCE_AUDIT:
                log_event(&d->log, LOG_WARNING, THPGUARD_MESSAGE_AUDIT_DRIFT, f, 5,
                          "drift on %s: %s, policy wants %s (audit mode, not corrected; %s)", k->path,
                          o->before.actual, k->desired, trigger_to_string(t));
                break;
        case ENFORCE_FAILED:
                snprintf(errno_str, sizeof(errno_str), "%d", o->error);
                enforce_describe_failure(o, why, sizeof(why));
                log_event(&d->log, LOG_ERR, THPGUARD_MESSAGE_CORRECTION_FAILED, f, 6,
                          "failed to correct %s: %s -> %s (%s): %s", k->path, o->before.actual, k->desired,
                          trigger_to_string(t), why);
                break;
        case ENFORCE_NONE:
                break;
        }
}

/* Logs a knob turning unsupported or unreadable, or coming back, once per change. */
static void note_state(Daemon *d, size_t i, const KnobStatus *st) {
        KnobRuntime *rt = &d->knobs[i];
        const PolicyKnob *k = &d->policy->knobs[i];
        bool was_bad =
            rt->state_known && (rt->state == KNOB_STATE_UNSUPPORTED || rt->state == KNOB_STATE_ERROR);
        LogField f[] = { { "THPGUARD_KNOB", k->path } };

        if (rt->state_known && rt->state == st->state)
                return;
        d->metrics_dirty = true;
        if (st->state == KNOB_STATE_UNSUPPORTED || st->state == KNOB_STATE_ERROR)
                log_event(&d->log, LOG_WARNING, NULL, f, 1, "%s is %s: %s; skipping it", k->path,
                          knob_state_to_string(st->state), st->reason);
        else if (was_bad)
                log_event(&d->log, LOG_INFO, NULL, f, 1, "%s can be enforced again", k->path);
        rt->state = st->state;
        rt->state_known = true;
}

static void arm_backoff_timer(Daemon *d);
static void metrics_update(Daemon *d);

/* Enforces one knob and logs what happened. True if it was corrected, or drifted in audit mode. */
static bool enforce_and_log(Daemon *d, size_t i, Trigger t, uint64_t now) {
        KnobRuntime *rt = &d->knobs[i];
        const PolicyKnob *k = &d->policy->knobs[i];
        EnforceOutcome o;

        enforce_knob(d->sysfs, k, &rt->file, d->ptes_max, effective_mode(d), &o);
        note_state(d, i, &o.before);
        if (o.action != ENFORCE_NONE)
                d->metrics_dirty = true;

        switch (o.action) {
        case ENFORCE_NONE:
                if (o.before.state == KNOB_STATE_OK) {
                        rt->reported_errno = 0;
                        rt->reported[0] = '\0';
                }
                return false;
        case ENFORCE_AUDIT:
                /* Report a drift once, not at every recheck while it lasts. */
                if (strcmp(rt->reported, o.before.actual) != 0)
                        log_correction(d, k, &o, t);
                snprintf(rt->reported, sizeof(rt->reported), "%s", o.before.actual);
                return true;
        case ENFORCE_FAILED:
                rt->failures++;
                /* No storm: the same failure on the same value is logged once. */
                if (rt->reported_errno != o.error || strcmp(rt->reported, o.before.actual) != 0)
                        log_correction(d, k, &o, t);
                rt->reported_errno = o.error;
                snprintf(rt->reported, sizeof(rt->reported), "%s", o.before.actual);
                break;
        case ENFORCE_CORRECTED:
                rt->corrections[t]++;
                sd_event_now(d->event, CLOCK_REALTIME, &d->last_correction_usec);
                rt->reported_errno = 0;
                rt->reported[0] = '\0';
                rt->state = KNOB_STATE_OK;
                log_correction(d, k, &o, t);
                break;
        }

        /*
         * Every write that went through counts towards a fight, kept or not:
         * a write undone before our read-back is the surest sign of another
         * writer, and a write that never sticks raises IN_MODIFY of its own,
         * which without this would loop.
         */
        if (o.written && fight_note_correction(&rt->fight, &d->fight_config, now, o.before.actual)) {
                LogField f[] = { { "THPGUARD_KNOB", k->path },
                                 { "THPGUARD_OBSERVED", o.before.actual },
                                 { "THPGUARD_DESIRED", k->desired } };
                rt->fights++;
                log_event(
                    &d->log, LOG_WARNING, THPGUARD_MESSAGE_WRITER_FIGHT, f, 3,
                    "writer fight on %s: another writer keeps setting %s (more than %u corrections in %us); "
                    "backing off",
                    k->path, o.before.actual, d->fight_config.threshold, d->policy->fight_window_sec);
                arm_backoff_timer(d);
        }
        return o.action == ENFORCE_CORRECTED;
}

/* The one place a trigger checks a knob. In a fight's backoff we do not even read it. */
static bool check_knob(Daemon *d, size_t i, Trigger t) {
        uint64_t now = loop_now_usec(d);

        if (fight_in_backoff(&d->knobs[i].fight)) {
                fight_note_suppressed(&d->knobs[i].fight);
                return false;
        }
        return enforce_and_log(d, i, t, now);
}

static unsigned check_all(Daemon *d, Trigger t) {
        unsigned corrected = 0;

        for (size_t i = 0; i < d->policy->n_knobs; i++)
                corrected += check_knob(d, i, t);
        return corrected;
}

static void arm_backoff_timer(Daemon *d) {
        uint64_t next = UINT64_MAX;

        for (size_t i = 0; i < d->policy->n_knobs; i++)
                if (d->knobs[i].fight.active && d->knobs[i].fight.until_usec < next)
                        next = d->knobs[i].fight.until_usec;
        if (d->thp_source)
                event_ratelimit_set_burst(&d->thp_ratelimit, next == UINT64_MAX
                                                                 ? INOTIFY_RATELIMIT_BURST
                                                                 : INOTIFY_RATELIMIT_BURST_FIGHT);
        if (next == UINT64_MAX) {
                sd_event_source_set_enabled(d->backoff_timer, SD_EVENT_OFF);
                return;
        }
        sd_event_source_set_time(d->backoff_timer, next);
        sd_event_source_set_enabled(d->backoff_timer, SD_EVENT_ONESHOT);
}

static int on_backoff_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;
        uint64_t now = loop_now_usec(d);

        for (size_t i = 0; i < d->policy->n_knobs; i++) {
                KnobRuntime *rt = &d->knobs[i];
                const PolicyKnob *k = &d->policy->knobs[i];
                LogField f[] = { { "THPGUARD_KNOB", k->path }, { "THPGUARD_OBSERVED", rt->fight.foreign } };
                uint64_t suppressed;
                KnobStatus st;

                if (!rt->fight.active || rt->fight.until_usec > now)
                        continue;
                knob_status_read(d->sysfs, k, &rt->file, d->ptes_max, &st);
                if (fight_window_closed(&rt->fight, &d->fight_config, now, st.state == KNOB_STATE_DRIFT,
                                        &suppressed) == FIGHT_ENDED) {
                        log_event(&d->log, LOG_NOTICE, THPGUARD_MESSAGE_WRITER_FIGHT, f, 2,
                                  "writer fight on %s ended; %" PRIu64 " corrections were suppressed",
                                  k->path, suppressed);
                        d->metrics_dirty = true;
                        continue;
                }
                log_event(&d->log, LOG_WARNING, THPGUARD_MESSAGE_WRITER_FIGHT, f, 2,
                          "writer fight on %s goes on: %" PRIu64
                          " corrections suppressed; correcting and backing "
                          "off %" PRIu64 "s",
                          k->path, suppressed, rt->fight.backoff_usec / USEC_PER_SEC);
                /* Correct once at the window's end; the next window has already begun. */
                enforce_and_log(d, i, TRIGGER_RECHECK, now);
        }
        arm_backoff_timer(d);
        metrics_update(d);
        return 0;
}

static const char *metrics_path(const Daemon *d) {
        if (d->options->metrics_file)
                return d->options->metrics_file;
        return d->policy ? d->policy->metrics_file : NULL;
}

static void metrics_write(Daemon *d) {
        const char *path = metrics_path(d);
        _cleanup_free_ MetricsKnob *knobs = NULL;
        _cleanup_free_ MetricsKernel *kernel = NULL;
        int r = -ENOMEM;

        knobs = calloc(d->policy->n_knobs ? d->policy->n_knobs : 1, sizeof(*knobs));
        kernel = malloc(sizeof(*kernel));
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
                };

                for (size_t i = 0; i < d->policy->n_knobs; i++) {
                        const KnobRuntime *rt = &d->knobs[i];

                        knobs[i] = (MetricsKnob){
                                .knob = rt->path,
                                /* In a fight's backoff the knob is left drifted on purpose. */
                                .compliant = rt->state_known && rt->state == KNOB_STATE_OK &&
                                             !fight_in_backoff(&rt->fight),
                                .supported = !(rt->state_known && rt->state == KNOB_STATE_UNSUPPORTED),
                                .failures = rt->failures,
                                .fights = rt->fights,
                        };
                        memcpy(knobs[i].corrections, rt->corrections, sizeof(knobs[i].corrections));
                }
                /* Best effort: what the kernel does not offer is left out of the file. */
                (void)metrics_read_kernel(d->proc_root, kernel);
                r = metrics_write_file(path, &s);
        }
        /* One line when writing starts failing and one when it works again, not one per write. */
        if (r < 0 && r != d->metrics_error)
                log_plain(&d->log, LOG_WARNING, "cannot write the metrics file %s: %s; retrying later", path,
                          strerror(-r));
        else if (r >= 0 && d->metrics_error != 0)
                log_plain(&d->log, LOG_INFO, "the metrics file %s is written again", path);
        d->metrics_error = r < 0 ? r : 0;
        d->metrics_written_usec = loop_now_usec(d);
        d->metrics_dirty = false;
}

/*
 * Writes the metrics file if something changed, at most once per
 * METRICS_MIN_INTERVAL_USEC: a change within that second arms one trailing
 * write, so the file never lags more than a second and a writer fight costs
 * one write per second, not one per correction.
 */
static void metrics_update(Daemon *d) {
        uint64_t due = d->metrics_written_usec + METRICS_MIN_INTERVAL_USEC;
        int enabled = SD_EVENT_OFF;

        if (!d->metrics_dirty || !metrics_path(d) || !d->metrics_timer)
                return;
        if (d->metrics_written_usec == 0 || loop_now_usec(d) >= due) {
                metrics_write(d);
                return;
        }
        sd_event_source_get_enabled(d->metrics_timer, &enabled);
        if (enabled != SD_EVENT_OFF)
                return;
        sd_event_source_set_time(d->metrics_timer, due);
        sd_event_source_set_enabled(d->metrics_timer, SD_EVENT_ONESHOT);
}

static int on_metrics_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;

        if (d->metrics_dirty && metrics_path(d))
                metrics_write(d);
        return 0;
}

static void notify_status(Daemon *d, const char *prefix, unsigned corrected, const char *when) {
        size_t n = d->policy->n_knobs;
        bool audit = effective_mode(d) == POLICY_MODE_AUDIT;

        sd_notifyf(0, "%sSTATUS=%s %zu knob%s, %u %s at %s", prefix, audit ? "auditing" : "enforcing", n,
                   n == 1 ? "" : "s", corrected, audit ? "drifted" : "corrected", when);
}

/* A file unlinked and recreated (fixture trees, a swapped mount) is reopened by path. */
static void close_stale_handles(Daemon *d) {
        for (size_t i = 0; i < d->policy->n_knobs; i++)
                if (sysfs_handle_is_stale(&d->knobs[i].file))
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
        int queued = 0;

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
        if (readded == 0 && watches_lost(d->watches) == 0 && !d->unseen_drift_logged &&
            ioctl(d->watches->fd, FIONREAD, &queued) >= 0)
                all_watched_and_quiet = queued == 0;
        if (check_all(d, TRIGGER_RECHECK) > 0 && all_watched_and_quiet)
                warn_unseen_drift(d);
        event_source_set_time_relative(s, (uint64_t)d->policy->recheck_interval_sec * USEC_PER_SEC);
        sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        /* Every recheck rewrites the file: its age is the liveness signal. */
        d->metrics_dirty = true;
        metrics_update(d);
        return 0;
}

static void close_dir_handles(Daemon *d, const char *rel) {
        for (size_t i = 0; i < d->policy->n_knobs; i++) {
                const char *name;

                if (knob_in_dir(d->policy->knobs[i].path, rel, &name))
                        sysfs_handle_close(&d->knobs[i].file);
        }
}

/* Marks the knobs one event concerns as pending. Returns true on a queue overflow. */
static bool note_thp_event(Daemon *d, const struct inotify_event *ev, bool *pending) {
        WatchDir *dir;

        if (ev->mask & IN_Q_OVERFLOW)
                return true;
        dir = watches_find(d->watches, ev->wd);
        if (!dir)
                return false;
        if (ev->mask & IN_IGNORED) {
                /* The directory went away (or was unmounted): the recheck re-adds it. */
                dir->wd = -1;
                close_dir_handles(d, dir->rel);
                if (!d->watch_lost_logged)
                        log_plain(
                            &d->log, LOG_WARNING,
                            "lost the inotify watch on %s/%s; relying on the %us recheck until it can be "
                            "re-added",
                            d->sysfs->thp_dir, dir->rel, d->policy->recheck_interval_sec);
                d->watch_lost_logged = true;
                return false;
        }
        for (size_t i = 0; i < d->policy->n_knobs; i++) {
                const char *name;

                if (!knob_in_dir(d->policy->knobs[i].path, dir->rel, &name) ||
                    !(ev->len == 0 || ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF) ||
                      strcmp(ev->name, name) == 0))
                        continue;
                /* A file that came or went is a new inode: read it by path again. */
                if (ev->mask & (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF))
                        sysfs_handle_close(&d->knobs[i].file);
                pending[i] = true;
        }
        return false;
}

static int on_thp_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
        Daemon *d = userdata;
        bool pending[d->policy->n_knobs + 1], overflow = false;
        ssize_t n;

        if (event_ratelimit_over(&d->thp_ratelimit))
                return 0;
        memset(pending, 0, sizeof(pending));
        /*
         * One read per wakeup, not a read until EAGAIN: the source is
         * level-triggered, so whatever is left wakes us again at once, and a
         * drift costs one syscall less before the correction.
         */
        do
                n = read(fd, buf, sizeof(buf));
        while (n < 0 && errno == EINTR);
        for (char *p = buf; n > 0 && p < buf + n;) {
                const struct inotify_event *ev = (const struct inotify_event *)p;

                p += sizeof(*ev) + ev->len;
                overflow |= note_thp_event(d, ev, pending);
        }

        if (overflow) {
                log_plain(&d->log, LOG_WARNING, "inotify queue overflowed; rechecking every knob");
                d->rechecks++;
                /* The lost events may have said that a file was replaced. */
                close_stale_handles(d);
                check_all(d, TRIGGER_RECHECK);
                d->metrics_dirty = true;
                metrics_update(d);
                return 0;
        }
        for (size_t i = 0; i < d->policy->n_knobs; i++)
                if (pending[i])
                        check_knob(d, i, TRIGGER_INOTIFY);
        metrics_update(d);
        return 0;
}

static int load_policy(Daemon *d, Diag *diag, Policy **ret) {
        Policy *p = NULL;
        int r;

        r = policy_load(d->options->config, diag, &p);
        if (r < 0)
                return r;
        if (d->options->audit)
                p->mode = POLICY_MODE_AUDIT;
        policy_check_kernel(p, d->sysfs, d->ptes_max, diag);
        *ret = p;
        return 0;
}

/* Makes p the policy in force. Nothing is left half-swapped on failure. */
static int install_policy(Daemon *d, Policy *p) {
        FightConfig fc = fight_config_for(p);
        KnobRuntime *k = NULL;
        int r;

        r = runtime_new(p, &fc, d->knobs, d->policy ? d->policy->n_knobs : 0, &d->fight_config, &k);
        if (r < 0)
                return r;
        runtime_free(d->knobs, d->policy ? d->policy->n_knobs : 0);
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
        if (d->recheck_timer) {
                event_source_set_time_relative(d->recheck_timer,
                                               (uint64_t)p->recheck_interval_sec * USEC_PER_SEC);
                sd_event_source_set_enabled(d->recheck_timer, SD_EVENT_ONESHOT);
        }
        if (d->backoff_timer)
                arm_backoff_timer(d);
        return 0;
}

static void log_warnings(Daemon *d, const Diag *diag) {
        for (size_t i = 0; i < diag->n_entries; i++)
                log_plain(&d->log, diag->entries[i].level == DIAG_ERROR ? LOG_ERR : LOG_WARNING, "%s",
                          diag->entries[i].text);
}

static void reload(Daemon *d) {
        _cleanup_diag_ Diag diag = {};
        Policy *p = NULL;
        unsigned corrected;
        int r;

        sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=reloading %s",
                   now_usec(CLOCK_MONOTONIC), d->options->config);

        r = load_policy(d, &diag, &p);
        if (r < 0) {
                _cleanup_free_ char *errors = diag_join(&diag, DIAG_ERROR);
                LogField f[] = { { "THPGUARD_POLICY", d->options->config } };

                d->reloads_failed++;
                log_event(&d->log, LOG_ERR, THPGUARD_MESSAGE_POLICY_REJECTED, f, 1,
                          "policy rejected, keeping the last good one: %s", errors ? errors : strerror(-r));
                notify_status(d, "READY=1\n", 0, "last good policy; reload rejected,");
                return;
        }
        log_warnings(d, &diag);
        r = install_policy(d, p);
        if (r < 0) {
                policy_free(p);
                d->reloads_failed++;
                log_plain(&d->log, LOG_ERR, "cannot install the new policy: %s; keeping the last good one",
                          strerror(-r));
                sd_notify(0, "READY=1");
                return;
        }
        d->reloads_ok++;
        corrected = check_all(d, TRIGGER_RELOAD);
        {
                LogField f[] = { { "THPGUARD_POLICY", d->options->config } };
                log_event(&d->log, LOG_NOTICE, THPGUARD_MESSAGE_POLICY_RELOADED, f, 1,
                          "policy reloaded from %s: %zu knobs, mode %s, %u corrected", d->options->config,
                          d->policy->n_knobs, policy_mode_to_string(effective_mode(d)), corrected);
        }
        notify_status(d, "READY=1\n", corrected, "reload");
}

static int on_reload_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;

        reload(d);
        d->metrics_dirty = true; /* a reload counter moved, whatever the result */
        metrics_update(d);
        return 0;
}

/* Schedules a reload `delay` from now, unless one is due sooner: a burst of triggers reloads once. */
static void schedule_reload(Daemon *d, uint64_t delay) {
        uint64_t due = loop_now_usec(d) + delay, cur;
        int enabled = SD_EVENT_OFF;

        sd_event_source_get_enabled(d->reload_timer, &enabled);
        if (enabled != SD_EVENT_OFF && sd_event_source_get_time(d->reload_timer, &cur) >= 0 && cur <= due)
                return;
        sd_event_source_set_time(d->reload_timer, due);
        sd_event_source_set_enabled(d->reload_timer, SD_EVENT_ONESHOT);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        schedule_reload(userdata, 0);
        return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Daemon *d = userdata;

        log_plain(&d->log, LOG_INFO, "received %s; exiting, knobs left as they are",
                  strsignal((int)si->ssi_signo));
        sd_event_exit(d->event, EXIT_SUCCESS);
        return 0;
}

static int on_config_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        Daemon *d = userdata;
        bool relevant = false;

        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *)p;

                        p += sizeof(*ev) + ev->len;
                        /*
                         * Our file, or a ConfigMap's "..data" symlink swap: the kubelet renames
                         * ..data_tmp over ..data and never writes the file itself. Its other
                         * steps (new and removed ..<timestamp> dirs) would only reload twice.
                         */
                        if (ev->mask & IN_Q_OVERFLOW ||
                            (ev->len > 0 &&
                             (strcmp(ev->name, d->config_name) == 0 || strcmp(ev->name, "..data") == 0)))
                                relevant = true;
                }
        }
        if (relevant)
                schedule_reload(d, RELOAD_DEBOUNCE_USEC);
        return 0;
}

static int setup_config_watch(Daemon *d) {
        char dir[PATH_MAX];
        const char *slash = strrchr(d->options->config, '/');
        int r;

        d->config_name = slash ? slash + 1 : d->options->config;
        if (!slash)
                snprintf(dir, sizeof(dir), ".");
        else if (slash == d->options->config)
                snprintf(dir, sizeof(dir), "/");
        else
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - d->options->config), d->options->config);

        r = watches_new(&d->config_watch);
        if (r < 0)
                return r;
        if (inotify_add_watch(d->config_watch->fd, dir,
                              IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB |
                                  IN_MOVED_FROM) < 0) {
                log_plain(&d->log, LOG_WARNING,
                          "cannot watch %s for policy changes (%s); reload with SIGHUP", dir,
                          strerror(errno));
                return 0;
        }
        return sd_event_add_io(d->event, &d->config_source, d->config_watch->fd, EPOLLIN, on_config_inotify,
                               d);
}

static void daemon_done(Daemon *d) {
        event_ratelimit_done(&d->thp_ratelimit);
        event_source_disable_unref(d->thp_source);
        event_source_disable_unref(d->config_source);
        event_source_disable_unref(d->recheck_timer);
        event_source_disable_unref(d->reload_timer);
        event_source_disable_unref(d->backoff_timer);
        event_source_disable_unref(d->metrics_timer);
        event_source_disable_unref(d->sigterm);
        event_source_disable_unref(d->sigint);
        event_source_disable_unref(d->sighup);
        sd_event_unref(d->event);
        watches_free(d->watches);
        watches_free(d->config_watch);
        runtime_free(d->knobs, d->policy ? d->policy->n_knobs : 0);
        policy_free(d->policy);
        sysfs_free(d->sysfs);
}

int daemon_run(const DaemonOptions *o) {
        _cleanup_(daemon_done) Daemon d = { .options = o };
        _cleanup_diag_ Diag diag = {};
        unsigned corrected;
        Policy *p = NULL;
        int r;

        /*
         * A log line nobody reads (stderr piped into `head`, a closed console)
         * must never stop enforcement: a failed write returns EPIPE instead.
         */
        if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
                return EXIT_FAILURE;
        logger_init(&d.log, o->log_target, JOURNAL_SOCKET, stderr);

        r = sysfs_new(o->sysfs_root, &d.sysfs);
        if (r == -ENODEV) {
                fprintf(stderr,
                        "thpguardd: --sysfs-root %s: no " SYSFS_THP_DIR " below it "
                        "(a kernel without THP, or not a sysfs mount)\n",
                        o->sysfs_root);
                return EXIT_FAILURE;
        }
        if (r < 0) {
                fprintf(stderr, "thpguardd: --sysfs-root %s: %s\n", o->sysfs_root, strerror(-r));
                return EXIT_FAILURE;
        }
        if (sysfs_read_ptes_max(d.sysfs, &d.ptes_max) < 0)
                d.ptes_max = PTES_MAX_UNKNOWN;
        /*
         * The one place the metrics' proc root is built. In a pod /proc is the
         * pod's own, but meminfo and vmstat are node-wide there too (unless
         * lxcfs is mounted over meminfo; then AnonHugePages is the pod's).
         */
        if (path_join_root("/", "proc", d.proc_root, sizeof(d.proc_root)) < 0)
                return EXIT_FAILURE;

        /* An invalid policy: report every error, write nothing, exit 1. */
        r = load_policy(&d, &diag, &p);
        diag_print(&diag, stderr);
        if (r < 0)
                return EXIT_FAILURE;
        if (d.log.target == LOG_TARGET_JOURNAL)
                log_warnings(&d, &diag);

        r = watches_new(&d.watches);
        if (r < 0) {
                policy_free(p);
                fprintf(stderr, "thpguardd: inotify: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        r = sd_event_default(&d.event);
        if (r >= 0)
                r = install_policy(&d, p);
        if (r < 0) {
                policy_free(p);
                fprintf(stderr, "thpguardd: cannot set up: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }

        /* Signals first, so a SIGTERM during the startup apply waits for the loop and exits cleanly. */
        r = event_add_signal(d.event, &d.sigterm, SIGTERM, on_exit_signal, &d);
        if (r >= 0)
                r = event_add_signal(d.event, &d.sigint, SIGINT, on_exit_signal, &d);
        if (r >= 0)
                r = event_add_signal(d.event, &d.sighup, SIGHUP, on_sighup, &d);
        if (r < 0) {
                fprintf(stderr, "thpguardd: signals: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }

        corrected = check_all(&d, TRIGGER_STARTUP);

        r = sd_event_add_io(d.event, &d.thp_source, d.watches->fd, EPOLLIN, on_thp_inotify, &d);
        if (r >= 0)
                r = event_ratelimit_init(&d.thp_ratelimit, d.thp_source, INOTIFY_RATELIMIT_INTERVAL_USEC,
                                         INOTIFY_RATELIMIT_BURST);
        if (r >= 0)
                r = event_add_time_relative(d.event, &d.recheck_timer, CLOCK_MONOTONIC,
                                            (uint64_t)d.policy->recheck_interval_sec * USEC_PER_SEC,
                                            USEC_PER_SEC / 10, on_recheck, &d);
        if (r >= 0)
                r = sd_event_add_time(d.event, &d.reload_timer, CLOCK_MONOTONIC, 0, USEC_PER_MSEC,
                                      on_reload_timer, &d);
        if (r >= 0)
                r = sd_event_source_set_enabled(d.reload_timer, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_add_time(d.event, &d.backoff_timer, CLOCK_MONOTONIC, 0, USEC_PER_MSEC * 10,
                                      on_backoff_timer, &d);
        if (r >= 0)
                r = sd_event_add_time(d.event, &d.metrics_timer, CLOCK_MONOTONIC, 0, USEC_PER_MSEC * 10,
                                      on_metrics_timer, &d);
        if (r >= 0)
                r = sd_event_source_set_enabled(d.metrics_timer, SD_EVENT_OFF);
        if (r >= 0) {
                arm_backoff_timer(&d);
                r = setup_config_watch(&d);
        }
        if (r >= 0)
                r = sd_event_set_watchdog(d.event, true);
        if (r < 0) {
                fprintf(stderr, "thpguardd: cannot set up the event loop: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }

        log_plain(&d.log, LOG_INFO, "started: %s %zu knobs from %s under %s, %u %s at startup",
                  effective_mode(&d) == POLICY_MODE_AUDIT ? "auditing" : "enforcing", d.policy->n_knobs,
                  o->config, d.sysfs->thp_dir, corrected,
                  effective_mode(&d) == POLICY_MODE_AUDIT ? "drifted" : "corrected");
        d.metrics_dirty = true;
        metrics_update(&d);
        notify_status(&d, "READY=1\n", corrected, "startup");

        r = sd_event_loop(d.event);
        /* A clean stop leaves thpguard_up 0 in the metrics, and the knobs as they are. */
        d.stopped = true;
        if (metrics_path(&d))
                metrics_write(&d);
        sd_notify(0, "STOPPING=1");
        return r < 0 ? EXIT_FAILURE : r;
}
