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
