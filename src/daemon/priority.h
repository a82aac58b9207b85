/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The daemon's scheduling priority: nice -5, above ordinary processes.
 *
 * The writer gate holds a writer's open() and then wakes it. At the same
 * priority the writer preempts the gate on its own CPU, so the gate is
 * still runnable there when the writer's write() comes, and the scheduler
 * sends the daemon's wakeup to the other, idle CPU: a cross-CPU wakeup of a
 * halted vCPU, which doubled the time to correct a drift (tracing on a
 * 2-vCPU VM: gate runnable at the write in 7 to 11 of 30 drifts at nice 0,
 * and the daemon then always on the other CPU, median 77 to 117 us against
 * 27 to 42 us; 0 to 2 of 30 at nice -5). Above the writers, the gate finishes
 * its few microseconds first, and the correction runs on the writer's CPU.
 * The daemon itself runs microseconds per event: its priority costs others
 * nothing measurable.
 *
 * The unit sets Nice=-5. Started another way (by hand, in a pod), the
 * daemon sets it itself while it still has CAP_SYS_NICE, before it drops
 * its capabilities, and only if it was started at nice 0: a nice value
 * someone chose is kept.
 */

#define DAEMON_NICE (-5)

/*
 * Sets nice DAEMON_NICE if the process is at nice 0. 0 when set or left
 * as chosen (*ret_nice says which it is now), -errno if it could not be
 * set (no CAP_SYS_NICE): the caller goes on at the nice it has.
 */
int priority_raise(int *ret_nice);

/*
 * The corrector thread's time slice: 100 us, the least the kernel grants.
 *
 * An inotify wakeup does not preempt the writer that raised it: under
 * EEVDF (Linux 6.6+) the running task keeps the CPU until it blocks or its
 * slice is spent, so the corrector waited for the writer (or an observer)
 * to go to sleep before it could run, 20 to 25 us after its wakeup in a
 * sched trace of drifts 20 ms apart, nice -5 or not. Since Linux 6.12 a
 * task that asks for a shorter slice than the running one preempts it on
 * wakeup. The corrector runs a few microseconds per wakeup, so the short
 * slice never cuts its work; it only puts the correction ahead of the
 * writer's return. Older kernels take the request and ignore it.
 *
 * Asked for only while writer attribution is off: with it on, the writer
 * gate's notice wakes the corrector at the writer's open(), ahead of the
 * write, and a short slice would then only keep the CPU from the reader
 * our correction woke (daemon-corrector.c).
 *
 * The shipped unit refuses sched_setattr() (SystemCallFilter=~@resources)
 * and runs with attribution on, where the slice is not asked for; with the
 * drop-in that turns attribution off the request fails and the corrector
 * keeps the default slice. A pod's runtime's default seccomp profile lets
 * it through.
 */
#define CORRECTOR_SLICE_NSEC 100000ULL

/*
 * Asks for CORRECTOR_SLICE_NSEC for the calling thread, keeping its nice
 * value and policy (SCHED_OTHER). 0 when the kernel took the request
 * (whether or not it knows custom slices), -errno if it refused it.
 */
int priority_short_slice(void);
