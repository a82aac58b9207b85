/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The policy: which knobs are managed and the value each must hold, loaded
 * from a libconfig file (see thpguard.conf(5)). Every key is optional; a
 * knob without a key is not managed and is never read or written.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "thpguard/diag.h"
#include "thpguard/knob.h"
#include "thpguard/macro.h"
#include "thpguard/write-source.h"

#define POLICY_FILE_DEFAULT "/etc/thpguard/thpguard.conf"
#define POLICY_SIZE_MAX     (1024 * 1024)
/* A real policy has a few dozen; libconfig parses in time quadratic in this. */
#define POLICY_SETTINGS_MAX 1024
/*
 * The longest string literal, in bytes of the file. A real policy's longest
 * string is a metrics_file path. libconfig 1.5 leaks the string token it
 * discards on a syntax error (upstream #142), once per failed load: this
 * bound keeps 1,000 failed reloads of any policy under 1 MiB.
 */
#define POLICY_STRING_MAX              512
#define POLICY_RECHECK_DEFAULT         30
#define POLICY_RECHECK_MIN             1
#define POLICY_RECHECK_MAX             86400
#define POLICY_FIGHT_THRESHOLD_DEFAULT 5
#define POLICY_FIGHT_THRESHOLD_MAX     1000
#define POLICY_FIGHT_WINDOW_DEFAULT    10

typedef enum PolicyMode {
        POLICY_MODE_ENFORCE,
        POLICY_MODE_AUDIT,
        /* enforce, and a write by anyone else refused where the kernel lets us (thpguardd(8), LOCK MODE) */
        POLICY_MODE_LOCK,
        _POLICY_MODE_MAX,
        _POLICY_MODE_UNSET = -1, /* no --audit or --lock: the policy's own */
} PolicyMode;

typedef struct PolicyKnob {
        char path[KNOB_PATH_MAX]; /* "enabled", "khugepaged/defrag", "hugepages-64kB/enabled" */
        const KnobSpec *spec;
        char desired[KNOB_VALUE_MAX]; /* the exact word written to sysfs */
        unsigned line;                /* where the policy sets it */
} PolicyKnob;

typedef struct Policy {
        char *file;
        PolicyMode mode;
        unsigned recheck_interval_sec;
        char *metrics_file; /* NULL unless set; a *.prom file */
        unsigned metrics_file_line;
        char *nfd_features_file;  /* NULL unless set */
        unsigned fight_threshold; /* corrections of one knob within fight_window_sec; 0: no protection */
        unsigned fight_window_sec;
        /*
         * write_probe_hook: where the BPF write probe runs (write-source.h);
         * taken at startup only, since loading needs the privileges the
         * daemon gives up at once. auto unless set.
         */
        WriteProbeHook write_probe_hook;
        unsigned write_probe_hook_line; /* 0: not set */
        size_t n_knobs;
        PolicyKnob *knobs; /* in file order */
} Policy;

Policy *policy_free(Policy *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Policy *, policy_free);
#define _cleanup_policy_ _cleanup_(policy_freep)

/*
 * Parses and validates a whole policy held in buf; file names it in the
 * messages. Every problem is added to diag. Returns -EINVAL if any was an
 * error; *ret is then untouched.
 */
int policy_parse(const char *file, const char *buf, size_t len, Diag *diag, Policy **ret);

/*
 * Opens file (following symlinks, as a ConfigMap mount needs), refuses what
 * is not a regular file or is larger than POLICY_SIZE_MAX, then parses it.
 * When euid is 0 it also refuses, naming the culprit, a file not owned by
 * root or writable by group or others, and the same of any directory its
 * path goes through, from / and along every symlink (a directory on a
 * read-only mount may have any mode). Otherwise those are warnings.
 */
int policy_load(const char *file, Diag *diag, Policy **ret);

/*
 * The policy as thpguardd runs it: policy_load(), and its mode replaced by
 * mode unless that is _POLICY_MODE_UNSET (--audit, --lock). Its metrics_file is only checked to be an
 * absolute NAME.prom path here: what the file system holds there is the daemon's to look at, at each write
 * (enforcement never waits for the metrics).
 */
int policy_load_as_daemon(const char *file, PolicyMode mode, Diag *diag, Policy **ret);

/* The StrictModes rule on an fstat() result; euid is who will trust the file. */
int policy_check_owner(const char *file, const struct stat *st, uid_t euid, Diag *diag);

const char *policy_mode_to_string(PolicyMode mode);
