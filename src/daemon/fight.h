/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Fight protection. Another writer (TuneD, a vendor oneshot, an
 * initContainer) may keep rewriting a knob; correcting it each time would
 * spin and flood the journal. When one knob needs more than `threshold`
 * corrections within `window`, it is a fight: we stop correcting that knob
 * and look again only when an exponential backoff window closes (1 s, 2 s,
 * ... capped at the recheck interval). Pure logic; the caller passes the
 * monotonic time in microseconds.
 */

#include <stdbool.h>
#include <stdint.h>

#include "thpguard/knob.h"

#define FIGHT_BACKOFF_INITIAL_USEC UINT64_C(1000000)

typedef struct FightConfig {
        unsigned threshold; /* corrections allowed within window; 0 turns protection off */
        uint64_t window_usec;
        uint64_t backoff_max_usec; /* the recheck interval */
} FightConfig;

typedef struct Fight {
        uint64_t *recent; /* ring of the last `threshold` correction times */
        unsigned n_recent, head;
        bool active;
        uint64_t backoff_usec;
        uint64_t until_usec;          /* end of the current backoff window */
        uint64_t suppressed;          /* drifts left alone in this window */
        uint64_t suppressed_total;    /* over the whole fight */
        char foreign[KNOB_VALUE_MAX]; /* the value the other writer keeps setting */
} Fight;

int fight_init(Fight *f, const FightConfig *c);
void fight_done(Fight *f);

/*
 * A reload keeps a knob's fight: f (fresh from fight_init() with the new
 * config c) takes over old's backoff and its most recent corrections, so a
 * SIGHUP neither restarts the war at once nor loses the summary. Turning
 * protection off (threshold 0) ends the fight.
 */
void fight_carry_over(Fight *f, const FightConfig *c, const Fight *old, unsigned old_threshold);

/* A correction was made at now, undoing `foreign`. True if this starts a fight. */
bool fight_note_correction(Fight *f, const FightConfig *c, uint64_t now, const char *foreign);

/* True while drift on this knob must be left alone: from the fight's start until a window closes without
 * drift. */
bool fight_in_backoff(const Fight *f);

void fight_note_suppressed(Fight *f);

typedef enum FightVerdict {
        FIGHT_CONTINUES, /* drifted again: correct once more, backoff doubled */
        FIGHT_ENDED,     /* nobody rewrote it during the window */
} FightVerdict;

/*
 * The backoff window closed; drifted says whether the knob was found
 * drifted. ret_suppressed gets the drifts left alone: in this window when the
 * fight continues, over the whole fight when it ended.
 */
FightVerdict fight_window_closed(Fight *f, const FightConfig *c, uint64_t now, bool drifted,
                                 uint64_t *ret_suppressed);
