/* SPDX-License-Identifier: MIT */
#include "fight.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thpguard/macro.h"

int fight_init(Fight *f, const FightConfig *c) {
        *f = (Fight){ 0 };
        if (c->threshold == 0)
                return 0;
        f->recent = calloc(c->threshold, sizeof(*f->recent));
        return f->recent ? 0 : -ENOMEM;
}

void fight_done(Fight *f) {
        free(f->recent);
        *f = (Fight){ 0 };
}

void fight_carry_over(Fight *f, const FightConfig *c, const Fight *old, unsigned old_threshold) {
        unsigned keep;

        if (c->threshold == 0 || old_threshold == 0)
                return;
        /* The newest `keep` entries of old's ring, oldest first. */
        keep = old->n_recent < c->threshold ? old->n_recent : c->threshold;
        for (unsigned i = 0; i < keep; i++)
                f->recent[i] = old->recent[(old->head + old_threshold - keep + i) % old_threshold];
        f->n_recent = keep;
        f->head = keep % c->threshold;

        f->active = old->active;
        f->backoff_usec = old->backoff_usec < c->backoff_max_usec ? old->backoff_usec : c->backoff_max_usec;
        f->until_usec = old->until_usec;
        f->suppressed = old->suppressed;
        f->suppressed_total = old->suppressed_total;
        memcpy(f->foreign, old->foreign, sizeof(f->foreign));
}

bool fight_note_correction(Fight *f, const FightConfig *c, uint64_t now, const char *foreign) {
        uint64_t oldest;

        if (c->threshold == 0 || f->active)
                return false;

        /* The ring holds the last `threshold` corrections; with this one there are threshold + 1. */
        oldest = f->recent[f->head];
        f->recent[f->head] = now;
        f->head = (f->head + 1) % c->threshold;
        if (f->n_recent < c->threshold) {
                f->n_recent++;
                return false;
        }
        if (now - oldest > c->window_usec)
                return false;

        f->active = true;
        f->backoff_usec = FIGHT_BACKOFF_INITIAL_USEC < c->backoff_max_usec ? FIGHT_BACKOFF_INITIAL_USEC
                                                                           : c->backoff_max_usec;
        f->until_usec = now + f->backoff_usec;
        f->suppressed = f->suppressed_total = 0;
        snprintf(f->foreign, sizeof(f->foreign), "%s", foreign);
        return true;
}

_hot_ bool fight_in_backoff(const Fight *f) {
        /*
         * Until the window-close handler has looked, not merely until the
         * deadline: otherwise an event dispatched just before that handler
         * corrects the knob and the fight looks over when it is not.
         */
        return f->active;
}

void fight_note_suppressed(Fight *f) {
        f->suppressed++;
        f->suppressed_total++;
}

FightVerdict fight_window_closed(Fight *f, const FightConfig *c, uint64_t now, bool drifted,
                                 uint64_t *ret_suppressed) {
        if (!drifted) {
                *ret_suppressed = f->suppressed_total;
                f->active = false;
                f->n_recent = 0;
                f->head = 0;
                return FIGHT_ENDED;
        }
        f->backoff_usec *= 2;
        if (f->backoff_usec > c->backoff_max_usec)
                f->backoff_usec = c->backoff_max_usec;
        f->until_usec = now + f->backoff_usec;
        *ret_suppressed = f->suppressed;
        f->suppressed = 0;
        return FIGHT_CONTINUES;
}
