/* SPDX-License-Identifier: MIT */
/*
 * Reads thpguardd's foreign-write records back from the journal with
 * sd-journal: the entries of its drift and writer-fight MESSAGE_IDs since a
 * time, each datum handed to foreign.c, which bounds and escapes it. Only
 * calls that libsystemd 239 has (tests/floor/symbols.sh checks the build).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

#include "ctl.h"
#include "thpguard/escape.h"
#include "thpguard/macro.h"
#include "thpguard/message-ids.h"

/* Where journald keeps the local journal. */
static const char *const journal_dirs[] = { "/run/log/journal", "/var/log/journal" };

#define NO_JOURNAL_HINT "(in a pod, mount the host's /var/log/journal and pass --journal-dir)"

/* Longer values are read cut: no field of ours needs more (CTL_FIELD_MAX escaped). */
#define DATA_THRESHOLD 4096

static int dir_check(const char *path) {
        struct stat st;

        if (stat(path, &st) < 0)
                return -errno;
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int journal_open(const char *dir, sd_journal **ret, char *why, size_t why_size) {
        _cleanup_(sd_journal_closep) sd_journal *j = NULL;
        char where[4 * 256];
        uint64_t bytes = 0;
        int r;

        if (dir) {
                escape_str(dir, where, sizeof(where));
                r = dir_check(dir);
                if (r < 0) {
                        snprintf(why, why_size, "--journal-dir %s: %s", where, strerror(-r));
                        return r;
                }
                r = sd_journal_open_directory(&j, dir, 0);
        } else {
                snprintf(where, sizeof(where), "%s or %s", journal_dirs[0], journal_dirs[1]);
                if (dir_check(journal_dirs[0]) < 0 && dir_check(journal_dirs[1]) < 0) {
                        snprintf(why, why_size,
                                 "no systemd journal on this node: neither %s nor %s exists %s",
                                 journal_dirs[0], journal_dirs[1], NO_JOURNAL_HINT);
                        return -ENOMEDIUM;
                }
                r = sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY);
        }
        if (r < 0) {
                snprintf(why, why_size, "cannot open the journal in %s: %s", where, strerror(-r));
                return r;
        }
        /* sd-journal opens a directory without journal files, or with none it may read, as empty. */
        r = sd_journal_get_usage(j, &bytes);
        if (r < 0 || bytes == 0) {
                snprintf(why, why_size, "no systemd journal on this node: no journal file %sin %s %s",
                         geteuid() == 0 ? "" : "readable by this user ", where, NO_JOURNAL_HINT);
                return -ENOMEDIUM;
        }
        *ret = TAKE_PTR(j);
        return 0;
}

/*
 * The entries of our MESSAGE_IDs (one field: sd-journal ORs them) logged by
 * root (a trusted field, which journald sets from the sender's credentials):
 * anyone may send an entry with our MESSAGE_ID, only root writes THP knobs.
 */
static int add_matches(sd_journal *j) {
        static const char *const matches[] = {
                "MESSAGE_ID=" THPGUARD_MESSAGE_CORRECTED,
                "MESSAGE_ID=" THPGUARD_MESSAGE_CORRECTION_FAILED,
                "MESSAGE_ID=" THPGUARD_MESSAGE_AUDIT_DRIFT,
                "MESSAGE_ID=" THPGUARD_MESSAGE_WRITER_FIGHT,
                "_UID=0",
        };

        for (size_t i = 0; i < ELEMENTSOF(matches); i++) {
                int r = sd_journal_add_match(j, matches[i], 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int read_entry(sd_journal *j, CtlRecord *ret) {
        CtlRecord rec = {};
        const void *data;
        size_t len;
        int r;

        r = sd_journal_get_realtime_usec(j, &rec.usec);
        if (r < 0)
                return r;
        sd_journal_restart_data(j);
        /* A datum that cannot be read (corrupt, compressed with an unknown algorithm) ends the entry. */
        while (sd_journal_enumerate_data(j, &data, &len) > 0)
                ctl_record_take(&rec, data, len);
        *ret = rec;
        return 0;
}

int ctl_journal_read(const char *dir, uint64_t since_usec, CtlForeign *ret, char *why, size_t why_size) {
        _cleanup_(sd_journal_closep) sd_journal *j = NULL;
        _cleanup_(ctl_foreign_done) CtlForeign f = { .since_usec = since_usec };
        int r;

        r = journal_open(dir, &j, why, why_size);
        if (r < 0)
                return r;
        r = sd_journal_set_data_threshold(j, DATA_THRESHOLD);
        if (r >= 0)
                r = add_matches(j);
        if (r >= 0)
                r = sd_journal_seek_realtime_usec(j, since_usec);
        while (r >= 0) {
                CtlRecord rec;

                r = sd_journal_next(j);
                if (r <= 0)
                        break;
                /* A damaged entry is skipped; the others still count. */
                if (read_entry(j, &rec) < 0)
                        continue;
                r = ctl_foreign_add(&f, &rec);
        }
        if (r < 0) {
                snprintf(why, why_size, "cannot read the journal: %s", strerror(-r));
                return r;
        }
        ctl_foreign_sort(&f);
        *ret = f;
        f = (CtlForeign){};
        return 0;
}
