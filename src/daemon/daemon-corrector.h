/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The corrector thread (daemon-corrector.c) and what it shares with the
 * loop. Its fields are daemon-corrector.c's alone
 * (tests/style/owned-fields.sh): the loop reads what the thread left for it
 * through the functions below. CorrectorLocked and CorrectorKnob are
 * touched only under Daemon.lock, which is what their type says; the rest
 * belongs to whoever the comment names.
 */

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "thpguard/enforce.h"
#include "thpguard/ratelimit.h"
#include "trigger.h"

typedef struct Daemon Daemon;

/* The corrector's per-knob state, under Daemon.lock. */
typedef struct CorrectorKnob {
        Trigger trigger;   /* what woke it: inotify or the probe */
        bool has_outcome;  /* outcome waits for the loop */
        uint64_t read_seq; /* daemon_writers_records_seen() when the thread read the knob */
        bool recheck;      /* an event came while it waited: the loop checks the knob */
        /*
         * A drift was corrected (by the thread, or by the loop) that no
         * record had named yet: on the syscall-exit hook the writer's record
         * comes when the writer leaves write(2), unannounced
         * (write-probe-record.h: WRITE_PROBE_RECORD_QUIET), so the thread
         * looks for it on a timer until it is in.
         */
        bool awaits_record;
        /*
         * A kprobe's record of a write through another superblock, which no
         * inotify event follows (RecordNews.at_entry): the thread reads the
         * knob again on the same timer until it finds the drift, and gives
         * the knob to the loop to check when the time is up (a write the
         * kernel refused changes nothing).
         */
        bool entry_pending;
        EnforceOutcome outcome;
} CorrectorKnob;

/* What the thread shares with the loop, under Daemon.lock. */
typedef struct CorrectorLocked {
        RateLimit ratelimit;     /* the thread's wakeups; its burst lowered in a fight */
        bool await_new;          /* a knob's record is newly awaited */
        bool overflow;           /* the queue overflowed: the loop checks every knob */
        char lost_dir[PATH_MAX]; /* a directory whose watch is gone: the loop says so */
        int error;               /* read() failed: the loop stops the daemon */
} CorrectorLocked;

typedef struct Corrector {
        pthread_t thread; /* the loop's: started and joined by it */
        bool running;
        atomic_bool stop;                /* the thread is to return */
        atomic_bool busy;                /* the thread holds events it has not decoded yet */
        int outcome_fd;                  /* eventfd: the thread has outcomes for the loop */
        int wake_fd;                     /* eventfd: the loop has the thread look for a record */
        sd_event_source *outcome_source; /* the loop's end of outcome_fd */
        CorrectorLocked locked;
} Corrector;

/* What the thread left for the loop besides the knobs' outcomes (daemon_corrector_take_news()). */
typedef struct CorrectorNews {
        bool overflow;           /* the inotify queue overflowed */
        char lost_dir[PATH_MAX]; /* "": no watch was lost */
} CorrectorNews;

void daemon_corrector_init(Corrector *c);
void corrector_knob_init(CorrectorKnob *k);
/*
 * The loop's end, before the thread is started: on_outcomes runs when the
 * thread has something for the loop, which it takes with
 * daemon_corrector_take() and daemon_corrector_take_news().
 */
int daemon_setup_corrector(Daemon *d, sd_event_io_handler_t on_outcomes);
int daemon_corrector_start(Daemon *d);
void daemon_corrector_stop(Daemon *d);
/* Stops the thread and closes the loop's end. */
void daemon_corrector_free(Daemon *d);

/* Phase one of every check: knob i corrected (or audited); false, and nothing read, in a fight's backoff. */
bool daemon_correct_knob(Daemon *d, size_t i, EnforceOutcome *ret);
/* The same, whatever the backoff says: a fight's window closing. */
void daemon_enforce_knob(Daemon *d, size_t i, EnforceOutcome *ret);
/*
 * Under the lock: a drift of knob i was corrected and its writer's record
 * is not in yet; the thread looks for it (WRITE_PROBE_AWAIT_FIRST_MSEC).
 */
void daemon_corrector_await(Daemon *d, size_t i);
/*
 * Under the lock: the thread's outcome for knob i and what woke it, if one
 * waits; *ret_recheck if the loop must look itself.
 */
bool daemon_corrector_take(Daemon *d, size_t i, EnforceOutcome *ret_outcome, Trigger *ret_trigger,
                           bool *ret_recheck);
/* Under the lock: an overflow or a lost watch the thread saw since the last take. */
void daemon_corrector_take_news(Daemon *d, CorrectorNews *ret);
/* The thread's read() failed (-errno), and it has returned; 0: no. */
int daemon_corrector_error(const Daemon *d);
/* The thread is decoding events: a recheck cannot tell whether they announced its drift. */
bool daemon_corrector_busy(const Daemon *d);
/* Under the lock: a fight is on (or over); the thread's wakeups are limited accordingly. */
void daemon_corrector_fight(Daemon *d, bool on);
