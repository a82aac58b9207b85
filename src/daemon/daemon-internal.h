/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The daemon's state, shared by its files. daemon.c is the centre: setup,
 * the knob checks and their triggers, and it calls its parts:
 * daemon-reload.c (the policy and its reloads; the one part that calls
 * back, to install a policy and check the knobs under it),
 * daemon-metrics.c (the metrics file, its rate limit, and the post source
 * that brings it and the feature file up to date after every dispatch),
 * daemon-corrector.c (the thread that corrects a knob the moment inotify
 * says it drifted; the loop writes the records),
 * daemon-nfd.c (the node-feature-discovery feature file),
 * daemon-writers.c (who wrote a knob: fanotify, the writer gate, /proc)
 * and daemon-sandbox.c (what the daemon may touch once confined). Not for
 * any other module: they take plain arguments, not a Daemon.
 */

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "daemon-corrector.h"
#include "daemon-writers.h"
#include "daemon.h"
#include "fight.h"
#include "knob-watch.h"
#include "metrics.h"
#include "nfd-features.h"
#include "thpguard/diag.h"
#include "thpguard/enforce.h"
#include "thpguard/event-util.h"
#include "thpguard/log.h"
#include "thpguard/policy.h"
#include "thpguard/ratelimit.h"
#include "thpguard/sandbox.h"
#include "thpguard/sysfs.h"
#include "trigger.h"

/*
 * How long a record of an inotify-seen drift waits for its writer's
 * fanotify event (record() in daemon.c). The correction never waits.
 */
#define WRITER_LATE_EVENT_USEC (20 * USEC_PER_MSEC)
/*
 * The same for the BPF write probe's record. On its syscall-exit hook the
 * record is made when the writer leaves write(2), after inotify has woken
 * the corrector: a writer preempted there by the correction itself, on a
 * busy CPU, leaves it for as long as the scheduler keeps it off. The
 * record then comes late, but it comes, and it is the writer's.
 */
#define WRITE_PROBE_LATE_RECORD_USEC USEC_PER_SEC
/*
 * How soon the corrector first looks for such a record, doubling each
 * time until WRITE_PROBE_LATE_RECORD_USEC: a writer that was not
 * preempted has left write(2) within microseconds, so the first look
 * mostly finds it, and one that was costs about ten wakeups at most.
 */
#define WRITE_PROBE_AWAIT_FIRST_MSEC 1

/* A record not written yet: its writer's event was not in when the knob was corrected. */
typedef struct PendingRecord {
        EnforceOutcome outcome;
        Trigger trigger;
        bool log;   /* the correction, failure or audit drift */
        bool fight; /* the writer fight it started */
} PendingRecord;

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

        PendingRecord pending; /* a record waiting for its writer (daemon.c) */
        bool record_pending;
        KnobAttribution attribution; /* daemon-writers.c's */
        CorrectorKnob corrector;     /* daemon-corrector.c's, under Daemon.lock */
} TrackedKnob;

struct Daemon {
        const DaemonOptions *options;
        sd_event *event;
        Logger log;
        Sysfs *sysfs;
        /*
         * The one place the daemon's proc root is kept (daemon_new()), for the
         * writers and the metrics. In a pod, /proc is the pod's: meminfo and
         * vmstat are node-wide there too, but only a pod with hostPID sees the
         * writers.
         */
        char proc_root[PATH_MAX];
        bool stopped; /* the loop has ended: the last metrics say thpguard_up 0 */

        Policy *policy;
        TrackedKnob *knobs; /* parallel to policy->knobs */
        FightConfig fight_config;

        Watches *watches;
        FileWatch *config_watch; /* the policy file's */
        sd_event_source *config_source;

        /*
         * lock guards everything the corrector thread (daemon-corrector.c)
         * touches: the policy, the knobs, the watches, its CorrectorLocked and
         * what writer attribution reads for it. The loop holds it whenever it
         * dispatches.
         */
        pthread_mutex_t lock;
        Corrector corrector;
        sd_event_source *recheck_timer, *reload_timer, *backoff_timer;
        sd_event_source *sigterm, *sigint, *sighup;
        bool watch_lost_logged;
        bool unseen_drift_logged;

        uint64_t rechecks;
        uint64_t reloads_ok, reloads_failed;
        uint64_t last_correction_usec; /* CLOCK_REALTIME; 0: none since start */

        /* The metrics file (--metrics-file, else the policy's metrics_file, else none). */
        sd_event_source *metrics_timer;       /* the trailing write of a burst */
        sd_event_source *metrics_post;        /* after every other dispatch: the files brought up to date */
        uint64_t metrics_written_usec;        /* CLOCK_MONOTONIC; 0: never */
        uint64_t metrics_written_fingerprint; /* metrics_fingerprint() at that write */
        int metrics_error;                    /* the write error already logged; 0 when none */
        bool metrics_ours;            /* written since startup: the file there is ours, not checked again */
        MetricsKhugepaged khugepaged; /* khugepaged's pid, kept between writes */
        NfdFile *nfd;                 /* the feature file (daemon-nfd.c); NULL when none */

        WriterAttribution attribution; /* daemon-writers.c's */
        sd_event_source *late_write_source,
            *late_write_timer; /* records waiting for their writer (daemon.c) */

        SandboxResult sandbox; /* what daemon-sandbox.c applied */
        bool files_confined;   /* Landlock applied (daemon_confine_files(), once) */
};

/* daemon.c (and daemon.h) */
unsigned daemon_check_all(Daemon *d, Trigger t);
int daemon_install_policy(Daemon *d, Policy *p);
void daemon_notify_status(Daemon *d, const char *prefix, unsigned corrected, const char *when);

/* daemon-reload.c */
int daemon_load_policy(Daemon *d, Diag *diag, Policy **ret);
void daemon_log_diag(Daemon *d, const Diag *diag);
void daemon_schedule_reload(Daemon *d, uint64_t delay);
int daemon_setup_reload(Daemon *d);

/* daemon-sandbox.c: Landlock before the writer gate and any event source, seccomp right after the gate */
int daemon_confine_files(Daemon *d);
int daemon_confine_syscalls(Daemon *d);

/* daemon-metrics.c */
const char *daemon_metrics_path(const Daemon *d);
/*
 * The log of a write of a file the daemon keeps (the metrics file, the
 * feature file), which the next write retries: one warning when writing
 * starts failing or fails anew (r is not was, the error logged last), one
 * line when it works again, nothing per attempt. r is the write's -errno
 * (why says it, or fileio_strerror() if NULL), 0 when nothing needed
 * writing, > 0 when it was written.
 */
void daemon_log_kept_file(Daemon *d, const char *what, const char *path, int was, int r, const char *why);
void daemon_metrics_write(Daemon *d);
void daemon_metrics_update(Daemon *d);
int daemon_setup_metrics(Daemon *d);

/* daemon-nfd.c */
void daemon_nfd_update(Daemon *d);
/* --nfd-features-file, else the policy's nfd_features_file; NULL: none. */
const char *daemon_nfd_path(const Daemon *d);
