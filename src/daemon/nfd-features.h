/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A node-feature-discovery feature file (the local source reads every file
 * in /etc/kubernetes/node-feature-discovery/features.d/): what the node's
 * THP is, as node labels Kubernetes can schedule by. NFD's format: one
 * "<namespace>/<name>=<value>" line per label, '#' lines comments; an
 * optional "# +expiry-time=" directive, which this file does not use (it
 * is rewritten only on change, so it must not expire). Labels:
 *
 *   thpguard.io/enabled=madvise     the node's effective enabled
 *   thpguard.io/defrag=defer-madvise  its defrag ('+' is no label character)
 *   thpguard.io/compliant=true      every knob the policy manages holds its value
 *   thpguard.io/policy-mode=enforce the policy's mode (audit with --audit)
 *
 * A label whose value is unknown is left out, never guessed.
 */

#include <stddef.h>

#include "thpguard/knob-value.h"

#define NFD_LABEL_PREFIX    "thpguard.io/"
#define NFD_LABEL_VALUE_MAX 64 /* Kubernetes: 63 characters */
#define NFD_FILE_MAX        1024

typedef struct NfdLabels {
        char enabled[KNOB_VALUE_MAX]; /* the active word; "" unknown */
        char defrag[KNOB_VALUE_MAX];
        int compliant;           /* 1, 0; -1 unknown */
        const char *policy_mode; /* "enforce", "audit"; NULL unknown */
} NfdLabels;

/*
 * A string as a Kubernetes label value: [A-Za-z0-9._-], at most 63, starting
 * and ending alphanumeric; every other character becomes '-'. "" if nothing
 * is left.
 */
void nfd_label_value(const char *s, char *buf, size_t size);

/* The file's text for l (pure). -ENOBUFS if it does not fit in size. */
int nfd_features_render(const NfdLabels *l, char *buf, size_t size, size_t *ret_len);

/* The file and what was last written to it. */
typedef struct NfdFile NfdFile;

/* path must be absolute; -EINVAL otherwise, -ENOMEM. */
int nfd_file_new(const char *path, NfdFile **ret);
NfdFile *nfd_file_free(NfdFile *f);
const char *nfd_file_path(const NfdFile *f);

/*
 * Rewrites the file when what l renders differs from what was last written
 * (or the last write failed): atomically and with the metrics file's safety
 * rules (write_file_atomic(), fileio.h). 1 written, 0 unchanged, -errno
 * (fileio_strerror() says why).
 */
int nfd_file_update(NfdFile *f, const NfdLabels *l);
/* The error of the last write attempt; 0 after a successful one or none yet. */
int nfd_file_error(const NfdFile *f);
