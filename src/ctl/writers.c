/* SPDX-License-Identifier: MIT */
/*
 * thpguardctl writers: who wrote the THP knobs, from the records thpguardd
 * left in the journal (journal.c reads them, foreign.c groups them by
 * writer, output-*.c print them).
 */
#include <errno.h>
#include <stdio.h>

#include "ctl.h"

int ctl_writers_run(const CtlWritersOptions *o) {
        _cleanup_(ctl_foreign_done) CtlForeign w = {};
        CtlJournalSource src = { o->journal_dir, o->machine_id, o->daemon_exe, false }; /* no write source */
        char why[1024];
        int r;

        r = ctl_journal_read(&src, o->since_usec, &w, why, sizeof(why));
        if (r < 0) {
                fprintf(stderr, "thpguardctl writers: %s\n", why);
                return r == -ENOMEDIUM ? CTL_EXIT_NO_JOURNAL : CTL_EXIT_FAILURE;
        }
        if (!o->json) {
                ctl_writers_print_text(stdout, o, &w);
                return CTL_EXIT_OK;
        }
        if (ctl_writers_print_json(stdout, o, &w) < 0) {
                fprintf(stderr, "thpguardctl: cannot write the JSON document\n");
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}
