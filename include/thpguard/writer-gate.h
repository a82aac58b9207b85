/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The gate: a small process of its own that answers the open group's
 * permission events (writer-events.h). The kernel holds each open() of a
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
 * opens flat out (a fight), so a writer cannot make it burn CPU. The daemon
 * checks it twice a second; a gate that is stopped, traced, or holds an
 * open longer than WRITER_GATE_STALL_USEC is killed, and its group closed,
 * which lets every held open go on at once: writers then wait at most
 * about that long. The gate dies with the daemon (PR_SET_PDEATHSIG), and
 * with it the group: a crashed or killed daemon holds no one.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "thpguard/macro.h"
#include "thpguard/writer.h"

#define WRITER_GATE_CHECK_USEC (500 * 1000)
#define WRITER_GATE_STALL_USEC (500 * 1000)

typedef struct WriterGate WriterGate;

typedef struct WriterGateCounters {
        uint64_t opens;             /* opens let through */
        uint64_t lookups;           /* processes looked up: one per process, not per open */
        uint64_t cmdline_abandoned; /* command-line reads given up (the process held its memory lock) */
        uint64_t floods;            /* times a file's mark was lifted for a writer opening it flat out */
} WriterGateCounters;

typedef enum WriterGateHealth {
        WRITER_GATE_RUNNING,
        WRITER_GATE_EXITED,  /* it died: its group is closed */
        WRITER_GATE_STALLED, /* stopped, traced or stuck: killed, its group closed */
} WriterGateHealth;

/*
 * Starts the gate on group_fd (the open group; the gate owns it from here
 * on, on failure too). Opens by daemon_pid, ours, are let through unlooked.
 * Call it with no other thread running: it forks.
 *
 * notice_fd (or -1) is the write end of a non-blocking pipe, which the
 * caller keeps: for each open by another process, the gate writes a byte
 * to it before it lets the open go on. The opener is about to write, and
 * the gate runs on its CPU while it waits: a pipe wakes its reader as a
 * synchronous wakeup, which the scheduler places on the waker's CPU when
 * the waker is alone there, so the reader is next to the writer, and warm,
 * when the write comes (daemon-corrector.c).
 */
int writer_gate_new(int group_fd, int notice_fd, const char *proc_root, pid_t daemon_pid, WriterGate **ret);

/* Kills the gate and closes the group, so no open is held. */
WriterGate *writer_gate_free(WriterGate *g);
DEFINE_TRIVIAL_CLEANUP_FUNC(WriterGate *, writer_gate_free);

/* Marks a knob file: every open of it waits for the gate from now on. */
int writer_gate_mark(WriterGate *g, int file_fd);

/* Readable (POLLHUP) once the gate has exited. */
int writer_gate_exit_fd(const WriterGate *g);

/* Whether the gate still answers; a stalled one is killed here. now is CLOCK_MONOTONIC. */
WriterGateHealth writer_gate_check(WriterGate *g, uint64_t now);

/* The gate's pid, for messages. */
pid_t writer_gate_pid(const WriterGate *g);

/* The newest opener with this pid that the gate looked up; false if none. Never blocks. */
bool writer_gate_find(WriterGate *g, pid_t pid, Writer *ret);

void writer_gate_counters(const WriterGate *g, WriterGateCounters *ret);
