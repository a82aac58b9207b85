/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The long-running enforcer: sd-event loop with inotify on the knob
 * directories, a periodic full recheck, SIGHUP / policy-file reload,
 * sd_notify and watchdog, fight protection.
 */

#include <stdbool.h>

#include "thpguard/log.h"

typedef struct DaemonOptions {
        const char *config;
        const char *sysfs_root;
        bool audit; /* --audit: overrides the policy's mode */
        LogTarget log_target;
        const char *metrics_file;      /* --metrics-file: overrides the policy's metrics_file */
        const char *nfd_features_file; /* --nfd-features-file: overrides the policy's nfd_features_file */
} DaemonOptions;

/* Runs until SIGTERM/SIGINT. Returns the process exit status. */
int daemon_run(const DaemonOptions *o);
