/* SPDX-License-Identifier: MIT */
/*
 * Reads thpguardd's foreign-write records back from the journal with
 * sd-journal: the entries of its drift and writer-fight MESSAGE_IDs since a
 * time, and its latest write-source record, each datum handed to foreign.c,
 * which bounds, escapes or refuses it. Only
 * calls that libsystemd 239 has (tests/floor/symbols.sh checks the build).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "ctl.h"
#include "thpguard/escape.h"
#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/message-ids.h"

#define THPGUARD_DAEMON_UNIT "thpguardd.service"

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

static bool machine_id_valid(const char *s, size_t len) {
        if (len != 32)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

/* --machine-id: the ID itself, or a file holding it (the host's /etc/machine-id, mounted in a pod). */
static int machine_id_get(const char *arg, char ret[static 33], char *from, size_t from_size, char *why,
                          size_t why_size) {
        const char *file = arg ? arg : "/etc/machine-id";
        char buf[64], where[4 * 256];
        size_t len = 0;
        int r;

        if (arg && machine_id_valid(arg, strlen(arg))) {
                memcpy(ret, arg, 33);
                snprintf(from, from_size, "--machine-id");
                return 0;
        }
        escape_str(file, where, sizeof(where));
        if (file[0] != '/') {
                snprintf(why, why_size, "--machine-id %s: neither 32 hex digits nor an absolute file name",
                         where);
                return -EINVAL;
        }
        r = read_file_below("/", file + 1, buf, sizeof(buf), &len);
        while (r >= 0 && len > 0 && buf[len - 1] == '\n')
                len--;
        if (r >= 0 && !machine_id_valid(buf, len))
                r = -EBADMSG;
        if (r < 0) {
                snprintf(why, why_size,
                         "cannot tell this host's records: %s: %s (in a pod, pass --machine-id with the "
                         "host's /etc/machine-id)",
                         where, r == -EBADMSG ? "not a machine ID" : strerror(-r));
                return r;
        }
        memcpy(ret, buf, 32);
        ret[32] = '\0';
        snprintf(from, from_size, "%s", where);
        return 0;
}

/* DIR/MACHINE_ID, or DIR itself when it is that directory already. */
static int journal_subdir(const char *dir, const char *machine_id, char *buf, size_t size) {
        const char *slash = strrchr(dir, '/');
        int r;

        if (strcmp(slash ? slash + 1 : dir, machine_id) == 0)
                r = snprintf(buf, size, "%s", dir);
        else
                r = snprintf(buf, size, "%s/%s", dir, machine_id);
        return r < 0 || (size_t)r >= size ? -ENAMETOOLONG : 0;
}

static int journal_open(const char *dir, const char *machine_id, sd_journal **ret, char *where,
                        size_t where_size, char *why, size_t why_size) {
        _cleanup_(sd_journal_closep) sd_journal *j = NULL;
        char path[PATH_MAX];
        uint64_t bytes = 0;
        int r;

        if (dir) {
                escape_str(dir, where, where_size);
                r = dir_check(dir);
                if (r < 0) {
                        snprintf(why, why_size, "--journal-dir %s: %s", where, strerror(-r));
                        return r;
                }
                r = journal_subdir(dir, machine_id, path, sizeof(path));
                if (r >= 0)
                        r = dir_check(path);
                if (r < 0) {
                        snprintf(why, why_size,
                                 "--journal-dir %s has no directory for this machine (%s): %s; other "
                                 "machines' journals are not read",
                                 where, machine_id, strerror(-r));
                        return r == -ENOENT ? -ENOMEDIUM : r;
                }
                escape_str(path, where, where_size);
                r = sd_journal_open_directory(&j, path, 0);
        } else {
                snprintf(where, where_size, "%s or %s", journal_dirs[0], journal_dirs[1]);
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

/* What thpguardctl reads: the foreign writes, and which write source is in force. */
static const char *const all_ids[] = {
        "MESSAGE_ID=" THPGUARD_MESSAGE_CORRECTED,    "MESSAGE_ID=" THPGUARD_MESSAGE_CORRECTION_FAILED,
        "MESSAGE_ID=" THPGUARD_MESSAGE_AUDIT_DRIFT,  "MESSAGE_ID=" THPGUARD_MESSAGE_WRITER_FIGHT,
        "MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_SOURCE, "MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_REFUSED,
};
static const char *const write_source_ids[] = { "MESSAGE_ID=" THPGUARD_MESSAGE_WRITE_SOURCE };

/*
 * The MESSAGE_IDs ids (one field: sd-journal ORs them), _UID=0 and this
 * machine's ID, and then either our unit or our executable: two groups
 * that sd-journal ORs (a disjunction). Each is a field journald sets from
 * the sender's credentials; anyone may send an entry with our MESSAGE_ID
 * and THPGUARD_ fields, and any root process or container could forge one
 * if _UID=0 were all.
 */
static int add_matches(sd_journal *j, const char *const *ids, size_t n_ids, const char *machine_id,
                       const char *exe) {
        char machine[64], sender[2][PATH_MAX + 16];
        int r;

        snprintf(machine, sizeof(machine), "_MACHINE_ID=%s", machine_id);
        snprintf(sender[0], sizeof(sender[0]), "_SYSTEMD_UNIT=" THPGUARD_DAEMON_UNIT);
        snprintf(sender[1], sizeof(sender[1]), "_EXE=%s", exe);
        for (size_t g = 0; g < ELEMENTSOF(sender); g++) {
                if (g > 0) {
                        r = sd_journal_add_disjunction(j);
                        if (r < 0)
                                return r;
                }
                for (size_t i = 0; i < n_ids; i++) {
                        r = sd_journal_add_match(j, ids[i], 0);
                        if (r < 0)
                                return r;
                }
                r = sd_journal_add_match(j, "_UID=0", 0);
                if (r >= 0)
                        r = sd_journal_add_match(j, machine, 0);
                if (r >= 0)
                        r = sd_journal_add_match(j, sender[g], 0);
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

/*
 * The latest write-source record before since_usec, when the records from
 * it on have none: thpguardd logs one when it starts, which may be long
 * before. Newest first, and only those records, to the first that counts.
 */
static int read_write_source_before(sd_journal *j, const char *machine_id, const char *exe,
                                    uint64_t since_usec, CtlForeign *f) {
        int r;

        sd_journal_flush_matches(j);
        r = add_matches(j, write_source_ids, ELEMENTSOF(write_source_ids), machine_id, exe);
        if (r >= 0)
                r = sd_journal_seek_realtime_usec(j, since_usec);
        while (r >= 0 && f->write_source == WRITE_SOURCE_AUTO) {
                CtlRecord rec;

                r = sd_journal_previous(j);
                if (r <= 0)
                        break;
                if (read_entry(j, &rec) < 0)
                        continue;
                r = ctl_foreign_add(f, &rec);
        }
        return r < 0 ? r : 0;
}

int ctl_journal_read(const CtlJournalSource *src, uint64_t since_usec, CtlForeign *ret, char *why,
                     size_t why_size) {
        _cleanup_(sd_journal_closep) sd_journal *j = NULL;
        _cleanup_(ctl_foreign_done) CtlForeign f = { .since_usec = since_usec };
        const char *exe = src->daemon_exe ? src->daemon_exe : THPGUARD_DAEMON_EXE;
        char machine_id[33], from[4 * 256], where[4 * PATH_MAX], exe_text[4 * 256];
        int r;

        r = machine_id_get(src->machine_id, machine_id, from, sizeof(from), why, why_size);
        if (r < 0)
                return r;
        r = journal_open(src->dir, machine_id, &j, where, sizeof(where), why, why_size);
        if (r < 0)
                return r;
        snprintf(f.source, sizeof(f.source),
                 "thpguardd's records only: _SYSTEMD_UNIT=" THPGUARD_DAEMON_UNIT
                 " or _EXE=%.256s, with _UID=0 and _MACHINE_ID=%s (from %.256s), in %.1024s",
                 escape_str(exe, exe_text, sizeof(exe_text)), machine_id, from, where);
        r = sd_journal_set_data_threshold(j, DATA_THRESHOLD);
        if (r >= 0)
                r = add_matches(j, all_ids, ELEMENTSOF(all_ids), machine_id, exe);
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
        if (r >= 0 && src->write_source_before && f.write_source == WRITE_SOURCE_AUTO)
                r = read_write_source_before(j, machine_id, exe, since_usec, &f);
        if (r < 0) {
                snprintf(why, why_size, "cannot read the journal: %s", strerror(-r));
                return r;
        }
        ctl_foreign_sort(&f);
        *ret = f;
        f = (CtlForeign){};
        return 0;
}
