/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The long-running enforcer: a corrector thread asleep on the knob
 * directories' inotify watch (and the write probe's ring), which corrects
 * a drift before the loop hears of it; an sd-event loop that records the
 * corrections, rechecks every knob periodically, reloads the policy on
 * SIGHUP or a change of its file, and does sd_notify, the watchdog and
 * fight protection.
 */

#include <stdbool.h>

#include "thpguard/log.h"
#include "thpguard/macro.h"
#include "thpguard/policy.h"
#include "thpguard/write-source.h"

typedef struct DaemonOptions {
        const char *config;
        const char *sysfs_root;
        PolicyMode mode;                 /* --audit, --lock; _POLICY_MODE_UNSET: the policy's */
        const char *metrics_file;        /* --metrics-file: overrides the policy's metrics_file */
        const char *nfd_features_file;   /* --nfd-features-file: overrides the policy's nfd_features_file */
        WriteSource write_source;        /* --write-source: what may tell of writes (write-source.h) */
        WriteProbeHook write_probe_hook; /* --write-probe-hook; _WRITE_PROBE_HOOK_MAX: the policy's */
} DaemonOptions;

typedef struct Daemon Daemon;

/*
 * Everything that does not depend on the policy: the sysfs root, the event
 * loop, the knobs' watch, the write source the service's fd store passed
 * in or else the loader that will load it (write-source-fds.h); then every
 * privilege dropped. o must outlive the daemon. Each failure is logged.
 */
int daemon_new(const DaemonOptions *o, const Logger *log, Daemon **ret);

/*
 * Loads the policy (an invalid one: every error logged, nothing written),
 * applies it, sets up every event source, and tells systemd we are ready.
 * The write source joins when the loader has it (daemon-writers.c): the
 * policy is in force before, never after.
 */
int daemon_start(Daemon *d);

/*
 * Runs the event loop until SIGTERM or SIGINT, then writes the records
 * still waiting and the metrics of a stopped daemon. Returns the process
 * exit status.
 */
int daemon_loop(Daemon *d);

Daemon *daemon_free(Daemon *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(Daemon *, daemon_free);
