/* SPDX-License-Identifier: MIT */
#include "thpguard/compliance.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thpguard/fileio.h"
#include "thpguard/knob-value.h"
#include "thpguard/macro.h"
#include "thpguard/number.h"
#include "thpguard/sysfs.h"

const char *knob_state_to_string(KnobState state) {
        static const char *const names[] = {
                [KNOB_STATE_OK] = "ok",
                [KNOB_STATE_DRIFT] = "drift",
                [KNOB_STATE_UNSUPPORTED] = "unsupported",
                [KNOB_STATE_ERROR] = "error",
        };
        return names[state];
}

_hot_ static void decide(const PolicyKnob *k, int read_result, const char *buf, size_t len,
                         uint64_t ptes_max, KnobStatus *st) {
        char offered[128];
        uint64_t desired;
        KnobValue v;

        if (read_result == -ENOENT) {
                st->state = KNOB_STATE_UNSUPPORTED;
                snprintf(st->reason, sizeof(st->reason), "not present on this kernel");
                return;
        }
        if (read_result < 0) {
                st->state = KNOB_STATE_ERROR;
                snprintf(st->reason, sizeof(st->reason), "cannot read: %s", sysfs_strerror(-read_result));
                return;
        }
        if (knob_value_parse(k->spec->type, buf, len, &v) < 0) {
                st->state = KNOB_STATE_ERROR;
                snprintf(st->reason, sizeof(st->reason), "unexpected content for a %s knob",
                         k->spec->type == KNOB_CHOICE ? "choice" : "numeric");
                return;
        }
        /* Same size, and terminated: no printf machinery on the way to a correction. */
        _Static_assert(sizeof(st->actual) == sizeof(v.active), "KnobStatus.actual holds a KnobValue's word");
        memcpy(st->actual, v.active, sizeof(st->actual));

        if (k->spec->type == KNOB_CHOICE && !knob_value_offers(&v, k->desired)) {
                knob_value_offered_string(&v, offered, sizeof(offered));
                st->state = KNOB_STATE_UNSUPPORTED;
                snprintf(st->reason, sizeof(st->reason), "\"%s\" is not offered by this kernel (offers: %s)",
                         k->desired, offered);
                return;
        }
        /* The policy let only decimal digits through; a value that still does not parse is out of bounds. */
        if (k->spec->bound == KNOB_BOUND_PTES && ptes_max != PTES_MAX_UNKNOWN &&
            (number_parse_u64(k->desired, strlen(k->desired), &desired) < 0 || desired > ptes_max)) {
                st->state = KNOB_STATE_UNSUPPORTED;
                snprintf(st->reason, sizeof(st->reason), "%s is above this kernel's maximum %" PRIu64,
                         k->desired, ptes_max);
                return;
        }
        st->state = strcmp(st->actual, k->desired) == 0 ? KNOB_STATE_OK : KNOB_STATE_DRIFT;
}

_hot_ void compliance_evaluate(const PolicyKnob *k, int read_result, const char *buf, size_t len,
                               uint64_t ptes_max, KnobStatus *ret) {
        KnobStatus st = { .state = KNOB_STATE_ERROR };

        decide(k, read_result, buf, len, ptes_max, &st);
        *ret = st;
}

_hot_ void compliance_read(const Sysfs *s, const PolicyKnob *k, SysfsHandle *h, KnobStatus *ret) {
        char buf[KNOB_READ_MAX + 1];
        size_t len = 0;
        int r;

        r = h ? sysfs_read_handle(s, k->path, h, buf, sizeof(buf), &len)
              : sysfs_read(s, k->path, buf, sizeof(buf), &len);
        compliance_evaluate(k, r, buf, len, sysfs_ptes_max(s), ret);
}

void compliance_check_policy(const Policy *p, const Sysfs *s, Diag *diag) {
        for (size_t i = 0; i < p->n_knobs; i++) {
                const PolicyKnob *k = &p->knobs[i];
                KnobStatus st;

                compliance_read(s, k, NULL, &st);
                if (st.state == KNOB_STATE_UNSUPPORTED || st.state == KNOB_STATE_ERROR)
                        diag_warning(diag, p->file, k->line, "%s: %s; this knob is skipped", k->path,
                                     st.reason);
        }
}
