/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The daemon's state, shared by its files: daemon.c (setup, the knob checks
 * and their triggers), daemon-reload.c (the policy and its reloads),
 * daemon-metrics.c (the metrics file and its rate limit) and
 * daemon-writers.c (who wrote a knob: fanotify and /proc). Not for any
 * other module: they take plain arguments, not a Daemon.
 */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "thpguard/daemon.h"
#include "thpguard/diag.h"
#include "thpguard/enforce.h"
#include "thpguard/event-util.h"
#include "thpguard/fight.h"
#include "thpguard/log.h"
#include "thpguard/metrics.h"
#include "thpguard/nfd-features.h"
#include "thpguard/policy.h"
#include "thpguard/sysfs.h"
#include "thpguard/trigger.h"
#include "thpguard/watch.h"
#include "thpguard/writer-feed.h"
#include "thpguard/writer.h"

/* What the daemon keeps per managed knob, across rechecks and reloads. */
typedef struct TrackedKnob {
        char path[KNOB_PATH_MAX]; /* same as the policy knob's; the key across reloads */
        SysfsHandle file;         /* kept open: pread() is ~7x cheaper than open+read+close */
        Fight fight;
        KnobState state; /* as last seen */
        bool state_known;
        int reported_errno;            /* failure already logged; 0 when none */
        char reported[KNOB_VALUE_MAX]; /* observed value already logged as audit drift or failure */
        uint64_t corrections[_TRIGGER_MAX];
        uint64_t failures;
        uint64_t fights;

        /* Who writes it (daemon-writers.c). */
        unsigned marked_opened; /* file.opened when its inode was marked; 0: not marked */
        dev_t marked_dev;
        ino_t marked_ino;
        Writer writer;     /* the last foreign writer seen */
        bool writer_fresh; /* seen since the knob last read compliant */
        WriterTallies writes;
} TrackedKnob;

typedef struct Daemon {
        const DaemonOptions *options;
        sd_event *event;
        Logger log;
        Sysfs *sysfs;
        uint64_t ptes_max;

        Policy *policy;
        TrackedKnob *knobs; /* parallel to policy->knobs */
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
        int metrics_error;            /* the write error already logged; 0 when none */
        MetricsKhugepaged khugepaged; /* khugepaged's pid, kept between writes */
        bool stopped;
        NfdFile *nfd; /* the feature file (daemon-nfd.c); NULL when none */

        /* Writer attribution: the group until the feed takes it; no feed when it is off. */
        int writer_events_fd;
        WriterFeed *writer_feed;
        sd_event_source *writer_source;
        EventRateLimit writer_ratelimit;
        pid_t self_pid;
        bool writer_overflow_logged;
} Daemon;

/* daemon.c */
int daemon_new(const DaemonOptions *o, const Logger *log, Daemon **ret);
int daemon_start(Daemon *d);
Daemon *daemon_free(Daemon *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(Daemon *, daemon_free);
uint64_t daemon_now(Daemon *d);
PolicyMode daemon_mode(const Daemon *d);
unsigned daemon_check_all(Daemon *d, Trigger t);
int daemon_install_policy(Daemon *d, Policy *p);
void daemon_notify_status(Daemon *d, const char *prefix, unsigned corrected, const char *when);
/* Arms a timer for an absolute CLOCK_MONOTONIC time; a failure ends the loop (systemd restarts us). */
void daemon_arm_timer(Daemon *d, sd_event_source *timer, uint64_t usec, const char *what);

/* daemon-reload.c */
int daemon_load_policy(Daemon *d, Diag *diag, Policy **ret);
void daemon_log_diag(Daemon *d, const Diag *diag);
void daemon_schedule_reload(Daemon *d, uint64_t delay);
int daemon_setup_reload(Daemon *d);

/* daemon-writers.c */
int daemon_setup_writer_events(Daemon *d);
int daemon_setup_writer_source(Daemon *d);
void daemon_writers_mark(Daemon *d, size_t i);
const Writer *daemon_writer_of(Daemon *d, size_t i, Trigger t);
void daemon_writer_forget(Daemon *d, size_t i);
void daemon_writers_free(Daemon *d);

/* daemon-metrics.c */
const char *daemon_metrics_path(const Daemon *d);
void daemon_metrics_write(Daemon *d);
void daemon_metrics_update(Daemon *d);
int daemon_setup_metrics(Daemon *d);

/* daemon-nfd.c */
void daemon_nfd_update(Daemon *d);
