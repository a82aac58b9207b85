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
#include "thpguard/write-probe.h"
#include "thpguard/writer-gate.h"
#include "thpguard/writer-groups.h"
#include "thpguard/writer.h"
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

        /* Who writes it (daemon-writers.c). */
        unsigned marked_opened; /* file.opened when its inode was marked; 0: not marked */
        dev_t marked_dev;
        ino_t marked_ino;
        Writer writer;             /* the last foreign writer seen */
        int writer_dirfd;          /* its /proc/PID, where the loop looked it up itself; -1 */
        uint64_t writer_seen_usec; /* CLOCK_MONOTONIC: when its last write was read */
        bool writer_fresh;         /* seen since the knob last read compliant */
        PendingRecord pending;
        bool record_pending;
        WriterTallies writes;

        /* The probe's last record of a foreign write to it, kept by the corrector for the loop
         * (daemon-writers.c). */
        struct write_probe_record probe_record;
        /*
         * Records kept for it so far (probe_record is number probe_seq), the
         * number of the last one the loop took as its writer (a newer one is
         * fresh), and how many there were when the outcome being reported was
         * read: a compliant read forgets the writers of records before it only,
         * not of one that came while its outcome waited for the loop.
         */
        uint64_t probe_seq, probe_taken_seq, read_probe_seq;
        KnobReads reads; /* the last reads of it, while the probe is in force (knob_reads_judge()) */
        /* A record that said the policy's own value: a drift's writer only if nothing else names it. */
        struct write_probe_record weak_record;
        bool has_weak_record;

        /* The corrector's (daemon-corrector.c), under Daemon.lock. */
        Trigger corrector_trigger;   /* what woke it: inotify or the probe */
        bool corrector_has_outcome;  /* corrector_outcome waits for the loop */
        uint64_t corrector_read_seq; /* probe_seq when the corrector read it */
        bool corrector_recheck;      /* an event came while it waited: the loop checks the knob */
        /*
         * A drift was corrected (by the thread, or by the loop) that no
         * record had named yet: on the syscall-exit hook the writer's record
         * comes when the writer leaves write(2), unannounced
         * (write-probe-record.h: WRITE_PROBE_RECORD_QUIET), so the thread
         * looks for it on a timer until it is in.
         */
        bool corrector_awaits_record;
        /*
         * A kprobe's record (WRITE_PROBE_RECORD_AT_ENTRY) of a write through
         * another superblock: made at the write's entry, before the kernel
         * stored the value, and no inotify event follows. The thread reads
         * the knob again on the same timer until it finds the drift, and
         * gives the knob to the loop to check when the time is up (a write
         * the kernel refused changes nothing).
         */
        bool corrector_entry_pending;
        EnforceOutcome corrector_outcome;
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
         * The corrector thread (daemon-corrector.c). lock guards everything
         * here that it touches: the policy, the knobs, the watches and the
         * fields below. The loop holds it whenever it dispatches.
         */
        pthread_mutex_t lock;
        pthread_t corrector_thread;
        bool corrector_running;
        atomic_bool corrector_stop;        /* the thread is to return */
        int corrector_fd;                  /* eventfd: the thread has outcomes for the loop */
        int corrector_wake_fd;             /* eventfd: the loop has the thread look for a record */
        sd_event_source *corrector_source; /* the loop's end of it */
        RateLimit corrector_ratelimit;     /* the thread's wakeups; its burst lowered in a fight */
        atomic_bool corrector_busy;        /* the thread holds events it has not decoded yet */
        bool corrector_await_new;          /* a knob's record is newly awaited (daemon-corrector.c) */
        bool corrector_overflow;           /* the queue overflowed: the loop checks every knob */
        char corrector_lost_dir[PATH_MAX]; /* a directory whose watch is gone: the loop says so */
        int corrector_error;               /* read() failed: the loop stops the daemon */
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

        /* Writer attribution (daemon-writers.c): the probe, else the fanotify groups; off when neither. */
        WriteSource write_source;   /* in force: bpf, fanotify or none */
        char write_source_hook[16]; /* the probe's: "fexit", "kprobe" or "syscall-exit"; "" */
        WriterGroups stored;        /* what the service's fd store passed in, until daemon_start() */
        bool have_stored;
        /*
         * Where nothing was stored: the loader forked by daemon_new() while
         * it still had the privileges, asked by daemon_start() once the
         * policy is read, and its answer taken between two dispatches
         * (daemon_writers_join()). Until then inotify and the corrector
         * enforce as ever; nobody is named.
         */
        WriterLoader *loader;
        sd_event_source *loader_source, *loader_timer;
        bool loader_answered;         /* in, or given up on: join at the end of this dispatch */
        uint64_t loader_started_usec; /* CLOCK_MONOTONIC */
        WriteProbe *probe;            /* read by the corrector thread, under the lock */
        uint32_t self_pidns;          /* our PID namespace's inode: our own writes are not foreign */
        uint64_t probe_lost;        /* records the ring had no room for (the corrector's, under the lock) */
        uint64_t probe_lost_logged; /* probe_lost at the last line that said so */
        uint64_t probe_lost_logged_usec;   /* CLOCK_MONOTONIC of that line; 0: none yet */
        sd_event_source *probe_lost_timer; /* the next line, held back by its rate limit: when it is due */
        int write_fd;                      /* the write group, read when a record is written */
        int gate_fd;      /* the open group: opened by daemon_new() while it may, taken by the gate in
                             daemon_start() */
        WriterGate *gate; /* NULL: none, or it was lost */
        /*
         * The gate's notice of each foreign open (writer_gate_new()), read
         * by the corrector thread; -1: none. Both ends stay open while the
         * daemon lives, so a lost gate leaves a pipe that is merely quiet.
         */
        int open_notice_fd, open_notice_write_fd;
        WriterGateCounters gate_counters; /* a lost gate's last */
        bool gate_lost;
        pid_t gate_unreaped; /* a lost gate not reaped yet (its tracer holds its zombie); 0: none */
        /*
         * Its supervision, none of which wakes an idle daemon: its exit, its
         * stop (SIGCHLD), and its group turning readable, which arms the
         * one-shot gate_timer while opens wait (writer-gate.h).
         */
        sd_event_source *gate_exit_source, *gate_child_source, *gate_queue_source, *gate_timer;
        sd_event_source *late_write_source,
            *late_write_timer; /* records waiting for their writer (daemon.c) */
        pid_t self_pid;
        bool writer_overflow_logged;

        SandboxResult sandbox; /* what daemon-sandbox.c applied */
};

/* daemon-corrector.c */
int daemon_corrector_start(Daemon *d);
void daemon_corrector_stop(Daemon *d);
/* Phase one of every check: knob i corrected (or audited); false, and nothing read, in a fight's backoff. */
bool daemon_correct_knob(Daemon *d, size_t i, EnforceOutcome *ret);
/*
 * Under the lock: a drift of knob i was corrected and its writer's record
 * is not in yet; the thread looks for it (WRITE_PROBE_AWAIT_FIRST_MSEC).
 */
void daemon_corrector_await(Daemon *d, size_t i);
/* The same, whatever the backoff says: a fight's window closing. */
void daemon_enforce_knob(Daemon *d, size_t i, EnforceOutcome *ret);
/*
 * Under the lock: the thread's outcome for knob i and what woke it, if one
 * waits; *ret_recheck if the loop must look itself.
 */
bool daemon_corrector_take(Daemon *d, size_t i, EnforceOutcome *ret_outcome, Trigger *ret_trigger,
                           bool *ret_recheck);

/* daemon.c (and daemon.h) */
unsigned daemon_check_all(Daemon *d, Trigger t);
int daemon_install_policy(Daemon *d, Policy *p);
void daemon_notify_status(Daemon *d, const char *prefix, unsigned corrected, const char *when);

/* daemon-reload.c */
int daemon_load_policy(Daemon *d, Diag *diag, Policy **ret);
void daemon_log_diag(Daemon *d, const Diag *diag);
void daemon_schedule_reload(Daemon *d, uint64_t delay);
int daemon_setup_reload(Daemon *d);

/* daemon-writers.c */
/*
 * daemon_new(), while the privileges last: what the fd store passed in, or
 * else the loader started. Never fails: without either, nobody is named.
 */
void daemon_writers_begin(Daemon *d);
/*
 * daemon_start(), the policy read and in force, before the first check:
 * the stored source installed (-EMEDIUMTYPE, logged, where it is not what
 * was asked for), the writer gate started and the system calls confined;
 * or the loader asked, and its answer awaited by the loop.
 */
int daemon_writers_start(Daemon *d);
/*
 * Between two dispatches, without the lock, once the loader answered: the
 * corrector stopped, the source installed, the gate started, the system
 * calls confined, every knob read again (what only the probe would have
 * seen meanwhile), the corrector started again. -errno: the daemon exits.
 */
int daemon_writers_join(Daemon *d);
/*
 * The corrector's, under the lock: takes every record in the probe's ring,
 * keeps each foreign write's record for its knob's record (not one of the
 * policy's own value), and marks in named the knobs written, in
 * other_mount those written through another sysfs superblock than ours
 * (which inotify never tells of). Returns how many records named a knob;
 * *ret_busy: it stopped at a record reserved and not yet submitted, which
 * keeps the ring's fd ready until it is in (write_probe_next()). Never
 * blocks.
 */
unsigned daemon_probe_take(Daemon *d, bool *named, bool *other_mount, bool *ret_busy);
int daemon_write_probe_fd(const Daemon *d);
int daemon_setup_writer_gate(Daemon *d);
void daemon_writer_counters(const Daemon *d, WriterGateCounters *ret);
void daemon_writers_mark(Daemon *d, size_t i);
bool daemon_writers_on(const Daemon *d);
const Writer *daemon_writer_of(Daemon *d, size_t i);
/* The writer of a write read just before the knob last read compliant, if that was moments ago. */
const Writer *daemon_writer_just_before(Daemon *d, size_t i);
/*
 * For a record whose writer's own event or record never came: the probe's
 * record that said the policy's own value, if its write drifted the knob;
 * else daemon_writer_just_before().
 */
const Writer *daemon_writer_late(Daemon *d, size_t i);
void daemon_writer_forget(Daemon *d, size_t i);
/* A record named the knob's writer: it names no later drift (a newer write's record or event does). */
void daemon_writer_used(Daemon *d, size_t i);
void daemon_writers_free(Daemon *d);

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
