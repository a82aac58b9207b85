/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Writer attribution, one object of the daemon's (daemon-writers.c): the
 * write source in force (the BPF write probe, else the fanotify write group
 * and the writer gate, else none), its loader, and what it knows of each
 * knob's writers. The loop and the corrector ask it questions through the
 * functions below and never branch on which source is in force. The
 * fields of WriterAttribution and KnobAttribution are daemon-writers.c's
 * alone (tests/style/owned-fields.sh fails on a use anywhere else).
 *
 * Locking: the corrector thread calls daemon_writers_take_records() and
 * the read_begins/read_ends pair under Daemon.lock; everything else runs
 * on the loop, which holds the lock while it dispatches.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "thpguard/compliance.h"
#include "thpguard/fanotify-gate.h"
#include "thpguard/ratelimit.h"
#include "thpguard/write-probe-record.h"
#include "thpguard/write-probe.h"
#include "thpguard/write-source-fds.h"
#include "thpguard/write-source.h"
#include "thpguard/writer.h"

typedef struct Daemon Daemon;

/* What writer attribution keeps per managed knob, across reloads by knob path
 * (knob_attribution_carry_over()). */
typedef struct KnobAttribution {
        unsigned marked_opened; /* the knob's file.opened when its inode was marked; 0: not marked */
        dev_t marked_dev;
        ino_t marked_ino;
        Writer writer;             /* the last foreign writer seen */
        int writer_dirfd;          /* its /proc/PID, where the loop looked it up itself; -1 */
        uint64_t writer_seen_usec; /* CLOCK_MONOTONIC: when its last write was read */
        bool writer_fresh;         /* seen since the knob last read compliant */
        WriterTallies writes;

        /* The probe's last record of a foreign write to it, kept by the corrector for the loop. */
        struct write_probe_record record;
        /*
         * Records kept for it so far (record is number seq), the number of
         * the last one the loop took as its writer (a newer one is fresh),
         * and how many there were when the outcome being reported was read:
         * a compliant read forgets the writers of records before it only,
         * not of one that came while its outcome waited for the loop.
         */
        uint64_t seq, taken_seq, read_seq;
        KnobReads reads; /* the last reads of it, while the probe is in force (knob_reads_judge()) */
        /* A record that said the policy's own value: a drift's writer only if nothing else names it. */
        struct write_probe_record weak_record;
        bool has_weak_record;
        WriterTallies refused; /* lock mode: opens for writing refused, by writer */
} KnobAttribution;

typedef struct WriterAttribution {
        WriteSource source;    /* in force: bpf, fanotify or none */
        char hook[16];         /* the probe's: "fexit", "kprobe" or "syscall-exit"; "" */
        WriteSourceFds stored; /* what the service's fd store passed in, until daemon_writers_start() */
        bool have_stored;
        /*
         * Where nothing was stored: the loader forked by daemon_new() while
         * it still had the privileges, asked by daemon_writers_start() once
         * the policy is read, and its answer taken between two dispatches
         * (daemon_writers_join()). Until then inotify and the corrector
         * enforce as ever; nobody is named.
         */
        WriteSourceLoader *loader;
        sd_event_source *loader_source, *loader_timer;
        bool loader_answered;         /* in, or given up on: join at the end of this dispatch */
        uint64_t loader_started_usec; /* CLOCK_MONOTONIC */
        WriteProbe *probe;            /* read by the corrector thread, under the lock */
        pid_t self_pid;
        uint32_t self_pidns;        /* our PID namespace's inode: our own writes are not foreign */
        uint64_t probe_lost;        /* records the ring had no room for (the corrector's, under the lock) */
        uint64_t probe_lost_logged; /* probe_lost at the last line that said so */
        uint64_t probe_lost_logged_usec;   /* CLOCK_MONOTONIC of that line; 0: none yet */
        sd_event_source *probe_lost_timer; /* the next line, held back by its rate limit: when it is due */
        int write_fd;                      /* the write group, read when a record is written */
        int gate_fd;        /* the open group: opened by daemon_new() while it may, taken by the gate */
        FanotifyGate *gate; /* NULL: none, or it was lost */
        /*
         * The gate's notice of each foreign open (fanotify_gate_new()), read
         * by the corrector thread; -1: none. Both ends stay open while the
         * daemon lives, so a lost gate leaves a pipe that is merely quiet.
         */
        int open_notice_fd, open_notice_write_fd;
        FanotifyGateCounters gate_counters; /* a lost gate's last */
        bool gate_lost;
        pid_t gate_unreaped; /* a lost gate not reaped yet (its tracer holds its zombie); 0: none */
        /*
         * Its supervision, none of which wakes an idle daemon: its exit, its
         * stop (SIGCHLD), and its group turning readable, which arms the
         * one-shot gate_timer while opens wait (fanotify-gate.h).
         */
        sd_event_source *gate_exit_source, *gate_child_source, *gate_queue_source, *gate_timer;
        bool overflow_logged;

        /*
         * Lock mode: the lock group takes the open group's place (gate_fd)
         * and the gate judges every open. lock_gate: the gate is, or is to
         * be, a locking one; lock: what refuses writers now; lock_why: why
         * nothing does.
         */
        bool lock_gate;
        LockMechanism lock;
        char lock_why[256];
        int refusal_fd, refusal_write_fd; /* the gate's byte per refusal; -1 */
        sd_event_source *refusal_source, *refusal_timer;
        uint64_t refusal_seq;     /* the last refusal taken from the gate */
        uint64_t refusals_missed; /* refusals the gate wrote over before they were taken */
        struct RefusalLog {
                char label[WRITER_LABEL_MAX];
                RateLimit limit;
                uint64_t suppressed; /* refusals not logged since its last line */
                uint64_t used_usec;
        } refusal_log[16];
} WriterAttribution;

/* What the metrics file says of writer attribution (daemon-metrics.c). */
typedef struct WriterAttributionMetrics {
        WriteSource source;
        const char *hook; /* "" if none or unknown */
        bool probe;       /* the BPF write probe is in force */
        uint64_t probe_lost;
        bool gate_up;              /* the writer gate runs */
        bool gate_ran;             /* a writer gate ran at some time: gate holds its counters */
        FanotifyGateCounters gate; /* the running gate's, or the lost one's last */
        bool lock_asked;           /* mode = "lock" */
        LockMechanism lock;        /* what refuses writers */
} WriterAttributionMetrics;

/* What one take of the probe's records says of knob i (daemon_writers_take_records()). */
typedef struct RecordNews {
        bool named;       /* a record named a write to it: the knob is to be checked */
        bool other_mount; /* through another sysfs superblock than ours, which inotify never tells of */
        bool record;      /* a foreign write's record is in for it: nothing more is awaited */
        /*
         * A kprobe's record (WRITE_PROBE_RECORD_AT_ENTRY) of a write through
         * another superblock: made before the kernel stored the value, and no
         * event will tell when it has: the knob is read again on a timer.
         */
        bool at_entry;
} RecordNews;

/* Nothing in force, nothing open: what daemon_writers_free() may free at any time. */
void daemon_writers_init(WriterAttribution *a);
void knob_attribution_init(KnobAttribution *a);
void knob_attribution_done(KnobAttribution *a);
/* What a reload keeps of a knob's: its writers' tallies. */
void knob_attribution_carry_over(KnobAttribution *a, const KnobAttribution *old);

/*
 * daemon_new(), while the privileges last: what the fd store passed in, or
 * else the loader started. Never fails: without either, nobody is named.
 */
void daemon_writers_begin(Daemon *d);
/*
 * daemon_start(), the policy read and in force, before the first check:
 * the stored source installed (-EMEDIUMTYPE, logged, where it is not what
 * was asked for), or the loader asked, and its answer awaited by the loop
 * (daemon_writers_loading()).
 */
int daemon_writers_start(Daemon *d);
/* The loader has been asked and not answered: the gate and seccomp wait for daemon_writers_join(). */
bool daemon_writers_loading(const Daemon *d);
/* The loader answered, or was given up on, during this dispatch: daemon_writers_join() is due. */
bool daemon_writers_answered(const Daemon *d);
/*
 * Between two dispatches, without the lock, once the loader answered: the
 * corrector stopped, the source installed, the gate started, the system
 * calls confined, every knob read again (what only the probe would have
 * seen meanwhile), the corrector started again. -errno: the daemon exits.
 */
int daemon_writers_join(Daemon *d);
/* The writer gate started on the open group, where there is one; in lock mode a locking one. */
int daemon_setup_fanotify_gate(Daemon *d);
/* Lock mode's refusals of knob i's writers, by writer; NULL unless the policy's mode is lock. */
const WriterTallies *daemon_writers_refused(const Daemon *d, size_t i);
/* A reload: lock mode kept, given up or (it takes a restart) asked for anew; said once. */
void daemon_writers_reload_mode(Daemon *d, PolicyMode old_mode);
void daemon_writers_free(Daemon *d);

/* Attribution is on: some source names writers. */
bool daemon_writers_on(const Daemon *d);
/*
 * Writers are named by the probe's records, which the corrector thread
 * reads from the ring and which may come after the drift's inotify event.
 */
bool daemon_writers_by_record(const Daemon *d);
/* How long a record waits for its writer's event or record: WRITER_LATE_EVENT_USEC or the probe's. */
uint64_t daemon_writers_late_usec(const Daemon *d);
/* What turns readable when a late writer's event is in; -1 where none does (the probe wakes the loop). */
int daemon_writers_late_event_fd(const Daemon *d);
/* The probe's ring, for the corrector's poll(); -1: no probe. */
int daemon_writers_ring_fd(const Daemon *d);
/* The writer gate's notice of a foreign open, for the corrector's poll(); -1: none. */
int daemon_writers_open_notice_fd(const Daemon *d);
/* The running gate's pid, which the seccomp filter lets us kill; 0: none. */
pid_t daemon_writers_gate_pid(const Daemon *d);
void daemon_writers_metrics(const Daemon *d, WriterAttributionMetrics *ret);
/* Knob i's foreign writes by writer; NULL when attribution is off. */
const WriterTallies *daemon_writers_tallies(const Daemon *d, size_t i);

/*
 * The corrector's, under the lock: takes every record in the probe's ring
 * and keeps each foreign write's record for its knob (not one of the
 * policy's own value), saying in news[i] what came for knob i. Returns how
 * many records named a knob; *ret_busy: it stopped at a record reserved and
 * not yet submitted, which keeps the ring's fd ready until it is in
 * (write_probe_next()). Never blocks.
 */
unsigned daemon_writers_take_records(Daemon *d, RecordNews *news, bool *ret_busy);
/* Records kept for knob i so far: a number that grows with each. */
uint64_t daemon_writers_records_seen(const Daemon *d, size_t i);
/* Knob i has a record no outcome took as its writer yet. */
bool daemon_writers_has_record(const Daemon *d, size_t i);
/* The outcome about to be reported for knob i was read when records_seen() said seen. */
void daemon_writers_outcome_read(Daemon *d, size_t i, uint64_t seen);
/* Around each read of knob i: which records' writes the read saw is judged by the kernel's clock. */
uint64_t daemon_writers_read_begins(const Daemon *d);
void daemon_writers_read_ends(Daemon *d, size_t i, uint64_t began, const KnobStatus *seen);

/* Marks knob i's file, once per open, for the source in force. */
void daemon_writers_mark(Daemon *d, size_t i);
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
