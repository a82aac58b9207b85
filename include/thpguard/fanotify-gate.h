/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The gate: a small process of its own that answers the open group's
 * permission events (fanotify-groups.h). The kernel holds each open() of a
 * knob file until the gate has read the opener's comm, uid, exe and cgroup
 * from /proc, so even a one-shot `sh -c 'echo ... > enabled'` is named; it
 * then lets the open go on. The daemon finds the writer of a FAN_MODIFY
 * event among the gate's last openers, kept in memory both processes share:
 * no message, no wakeup of the daemon's loop.
 *
 * Why a process and not a thread: a stopped daemon (a debugger, SIGSTOP,
 * Ctrl-Z in a terminal) must not hold every opener of the knob files. The
 * gate runs in its own process group, never reads what can block (the
 * command line waits for the process's memory lock, which a writer can hold
 * for ever: a thread of the gate reads it with a 1 ms budget and is
 * abandoned when stuck), and lifts its mark from a file that one writer
 * opens flat out (a fight), so a writer cannot make it burn CPU.
 *
 * The daemon watches it without a timer of its own while nothing opens a
 * knob file. A stopped gate is reported by the kernel to its parent
 * (SIGCHLD, CLD_STOPPED), which kills it at once. A gate that is traced and
 * stopped by its tracer (reported to the tracer only) or stuck holds
 * nobody until an open comes: the group itself turns readable then, and
 * only then the daemon arms a check for FANOTIFY_GATE_STALL_USEC later (not
 * on the notice pipe below: the gate writes it as it answers, so a gate
 * that answers nothing never writes it). A gate that by then has answered
 * none of what waited, is stopped or traced while opens wait, or has held
 * one batch that long, is killed and its group closed, which lets every
 * held open go on at once. Writers wait about that long, at most about
 * twice (a gate that answered some since the last check is given another
 * period). One gap: a batch the gate took before the loop saw the group
 * readable is judged with the next open only, so a gate that a tracer
 * stops in the midst of a batch holds that batch's openers until then.
 * The gate dies with the daemon (PR_SET_PDEATHSIG), and with it the group:
 * a crashed or killed daemon holds no one.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "thpguard/macro.h"
#include "thpguard/writer.h"

#define FANOTIFY_GATE_STALL_USEC (500 * 1000)

typedef struct FanotifyGate FanotifyGate;

typedef struct FanotifyGateCounters {
        uint64_t opens;             /* opens answered: let through, or refused (lock mode) */
        uint64_t refused;           /* lock mode: opens refused */
        uint64_t unseen;            /* lock mode: opens let through unjudged (outside our PID namespace) */
        uint64_t lookups;           /* processes looked up: one per process, not per open */
        uint64_t cmdline_abandoned; /* command-line reads given up (the process held its memory lock) */
        uint64_t floods;            /* times a file's mark was lifted for a writer opening it flat out */
} FanotifyGateCounters;

typedef enum FanotifyGateHealth {
        FANOTIFY_GATE_RUNNING,
        FANOTIFY_GATE_EXITED,  /* it died: fanotify_gate_stop() closes our copy of its group */
        FANOTIFY_GATE_STALLED, /* stopped, traced or stuck: killed; fanotify_gate_stop() closes the group */
} FanotifyGateHealth;

/*
 * Starts the gate on group_fd (the open group; the gate owns it from here
 * on, on failure too). Opens by daemon_pid, ours, are let through unlooked.
 * Call it with no other thread running, as it forks, and with SIGCHLD
 * blocked, as its stop is told by SIGCHLD (fanotify_gate_child_changed()).
 *
 * notice_fd (or -1) is the write end of a non-blocking pipe, which the
 * caller keeps: for each open by another process, the gate writes a byte
 * to it before it lets the open go on. The opener is about to write, and
 * the gate runs on its CPU while it waits: a pipe wakes its reader as a
 * synchronous wakeup, which the scheduler places on the waker's CPU when
 * the waker is alone there, so the reader is next to the writer, and warm,
 * when the write comes (daemon-corrector.c).
 */
int fanotify_gate_new(int group_fd, int notice_fd, const char *proc_root, pid_t daemon_pid,
                      FanotifyGate **ret);

/*
 * Lock mode: the gate judges every open (lock-verdict.h) and refuses, with
 * FAN_DENY, one that would write; group_fd must be a lock group
 * (fanotify_groups_open_lock()). The gate makes CAP_SYS_PTRACE effective,
 * which the caller must have permitted (it reads the opener's system call),
 * and keeps nothing else; the caller drops it once this returns.
 * refusal_fd is the write end of a non-blocking pipe the caller keeps: a
 * byte after each refusal, which fanotify_gate_take_refusals() then gives.
 * Its flood guard never lifts a mark: a writer in a loop is refused each
 * time, and the lookup of it is made once.
 */
int fanotify_gate_new_locking(int group_fd, int notice_fd, int refusal_fd, const char *proc_root,
                              pid_t daemon_pid, FanotifyGate **ret);

/* A locking gate lets every open go on while not locked, as a gate that does not lock (a reload out of lock
 * mode and back). */
void fanotify_gate_set_locked(FanotifyGate *g, bool locked);

/* One refused open, as the gate saw it before it answered. */
typedef struct FanotifyGateRefusal {
        uint64_t usec; /* CLOCK_MONOTONIC */
        dev_t dev;     /* the knob file's */
        ino_t ino;
        pid_t tid;      /* the opening thread */
        Writer writer;  /* its process */
        char why[48];   /* lock_judge()'s reason */
        uint64_t count; /* the refusals it stands for: its writer's of this file since it was last taken */
} FanotifyGateRefusal;

/*
 * The refusals since the last take (*seq, 0 at first), at most n, oldest
 * first, into ret; their number. Each stands for count refusals of one
 * writer on one file (its first line, or what it counted since it was last
 * taken). *seq moves past them; *ret_missed counts entries the gate wrote
 * over before they were taken (it keeps the last 32).
 */
size_t fanotify_gate_take_refusals(FanotifyGate *g, uint64_t *seq, FanotifyGateRefusal *ret, size_t n,
                                   uint64_t *ret_missed);

/*
 * Kills the gate and closes the group, so no open is held. Never waits for
 * the gate's exit: a traced gate's zombie is its tracer's to see first, for
 * as long as the tracer likes (fanotify_gate_unreaped()).
 */
void fanotify_gate_stop(FanotifyGate *g);

/* Stops the gate (if it was not) and frees it. */
FanotifyGate *fanotify_gate_free(FanotifyGate *g);
DEFINE_TRIVIAL_CLEANUP_FUNC(FanotifyGate *, fanotify_gate_free);

/* Marks a knob file: every open of it waits for the gate from now on. */
int fanotify_gate_mark(FanotifyGate *g, int file_fd);

/* Readable (POLLHUP) once the gate has exited, traced or not. */
int fanotify_gate_exit_fd(const FanotifyGate *g);

/*
 * Readable (POLLIN) while opens wait for the gate to take them: the group
 * itself. The caller watches it only until it turns readable, and then
 * calls fanotify_gate_check() until that says nothing waits any more.
 */
int fanotify_gate_queue_fd(const FanotifyGate *g);

/*
 * On SIGCHLD (the gate is our child: block SIGCHLD in every thread and take
 * it from a signalfd): whether the gate still runs. One that has stopped is
 * killed here; one that has exited is reaped. Never waits.
 */
FanotifyGateHealth fanotify_gate_child_changed(FanotifyGate *g);

/*
 * The queue fd turned readable: from now on fanotify_gate_check() judges the
 * gate by what it answers. Returns when to call it, on CLOCK_MONOTONIC.
 */
uint64_t fanotify_gate_hold_begin(FanotifyGate *g, uint64_t now);

/*
 * While opens wait for the gate: whether it answers them. One that answered
 * none of them since the last call (or fanotify_gate_hold_begin()), that is
 * stopped or traced while they wait, or has held one batch longer than
 * FANOTIFY_GATE_STALL_USEC, is killed here. *ret_next: when to check again,
 * or 0 once nothing waits (watch the queue fd again).
 */
FanotifyGateHealth fanotify_gate_check(FanotifyGate *g, uint64_t now, uint64_t *ret_next);

/*
 * After fanotify_gate_stop(): the gate's pid if it could not be reaped yet
 * (killed but not dead yet, or a zombie its tracer still holds), else 0.
 * Its exit is a SIGCHLD to come: fanotify_gate_reap() it then.
 */
pid_t fanotify_gate_unreaped(const FanotifyGate *g);

/* Reaps such a pid: 0 once it is reaped, -EAGAIN while it has not exited. Never waits. */
int fanotify_gate_reap(pid_t pid);

/* The gate's pid, for messages. */
pid_t fanotify_gate_pid(const FanotifyGate *g);

/* The newest opener with this pid that the gate looked up; false if none. Never blocks. */
bool fanotify_gate_find(FanotifyGate *g, pid_t pid, Writer *ret);

void fanotify_gate_counters(const FanotifyGate *g, FanotifyGateCounters *ret);
