/* SPDX-License-Identifier: MIT */
/*
 * The node-feature-discovery feature file (--nfd-features-file, else the
 * policy's nfd_features_file): the node's enabled and defrag, whether it
 * complies, and the policy's mode as thpguard.io/ labels (nfd-features.c),
 * looked at whenever the metrics are (after every dispatch of the loop:
 * daemon-metrics.c's post source) and rewritten only when a label changes.
 */
#include <errno.h>
#include <string.h>

#include "daemon-internal.h"
#include "nfd-features.h"

const char *daemon_nfd_path(const Daemon *d) {
        if (d->options->nfd_features_file)
                return d->options->nfd_features_file;
        return d->policy ? d->policy->nfd_features_file : NULL;
}

/* The active word of a THP choice file, or "" when it cannot be read (no THP, a kernel without it). */
static void read_active(const Daemon *d, const char *knob, char *ret, size_t size) {
        char buf[KNOB_READ_MAX];
        KnobValue v;
        size_t len;

        ret[0] = '\0';
        if (sysfs_read(d->sysfs, knob, buf, sizeof(buf), &len) >= 0 &&
            knob_value_parse(KNOB_CHOICE, buf, len, &v) >= 0)
                snprintf(ret, size, "%s", v.active);
}

void daemon_nfd_update(Daemon *d) {
        const char *path = daemon_nfd_path(d);
        NfdLabels l = { .compliant = 1 };
        int was, r;

        if (!path || !d->policy) {
                d->nfd = nfd_file_free(d->nfd);
                return;
        }
        /* A reload may name another file: the old one is left as it is. */
        if (d->nfd && strcmp(nfd_file_path(d->nfd), path) != 0)
                d->nfd = nfd_file_free(d->nfd);
        if (!d->nfd && nfd_file_new(path, &d->nfd) < 0)
                return;

        read_active(d, "enabled", l.enabled, sizeof(l.enabled));
        read_active(d, "defrag", l.defrag, sizeof(l.defrag));
        /* As the metrics count it: a knob in a fight's backoff is left drifted on purpose. */
        for (size_t i = 0; i < d->policy->n_knobs; i++) {
                const TrackedKnob *k = &d->knobs[i];

                if (!k->state_known)
                        l.compliant = -1;
                else if (k->state == KNOB_STATE_UNSUPPORTED)
                        continue;
                else if (k->state != KNOB_STATE_OK || fight_in_backoff(&k->fight))
                        l.compliant = l.compliant < 0 ? -1 : 0;
        }
        l.policy_mode = policy_mode_to_string(d->policy->mode);

        was = nfd_file_error(d->nfd);
        r = nfd_file_update(d->nfd, &l);
        daemon_log_kept_file(d, "feature file", path, was, r, NULL);
}
