/* SPDX-License-Identifier: MIT */
#include "thpguard/procfs.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thpguard/escape.h"
#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/number.h"

/*
 * How much of each file a reader takes: room for kernels to come, a bound
 * for a forged --proc-root. 6.18 prints about 1.5 kB of meminfo, 4 kB of
 * vmstat, 1.5 kB of PID/status, 350 bytes of PID/stat, under 1 kB of
 * smaps_rollup and two 50-byte lines of pressure/memory; the kernel's
 * command line is at most COMMAND_LINE_SIZE (2048 on x86, 4096 on arm64),
 * and a JVM with a large heap has tens of thousands of mappings in smaps.
 */
#define MEMINFO_SIZE_MAX      (64 * 1024)
#define VMSTAT_SIZE_MAX       (256 * 1024)
#define CMDLINE_SIZE_MAX      (64 * 1024)
#define STATUS_SIZE_MAX       8192
#define STAT_SIZE_MAX         4096
#define SMAPS_ROLLUP_SIZE_MAX 4096
#define SMAPS_SIZE_MAX        (64 * 1024 * 1024)
#define PRESSURE_SIZE_MAX     1024

/* proc_root/name, or proc_root/PID/name for pid > 0, whole, into a heap buffer of at most max bytes. */
static int read_text(const char *proc_root, uint64_t pid, const char *name, size_t max, char **ret,
                     size_t *ret_len) {
        char rel[64];

        if (pid > 0) {
                snprintf(rel, sizeof(rel), "%" PRIu64 "/%s", pid, name);
                name = rel;
        }
        return read_file_below_alloc(proc_root, name, max, ret, ret_len);
}

/* A read_text() then the parser, for every procfs_read_X() but smaps's. */
#define READ_AND_PARSE(proc_root, pid, name, max, parse, ret)                                               \
        ({                                                                                                  \
                _cleanup_free_ char *_text = NULL;                                                          \
                size_t _len;                                                                                \
                int _r = read_text(proc_root, pid, name, max, &_text, &_len);                               \
                _r < 0 ? _r : parse(_text, _len, ret);                                                      \
        })

/*
 * Everything the kernel prints in these files is lines. A read that was cut
 * short ends without its newline; the kernel never prints that, so such a
 * buffer is refused instead of being half believed.
 */
typedef struct LineReader {
        const char *pos, *end;
} LineReader;

static int lines_begin(const char *buf, size_t len, LineReader *ret) {
        if (!buf || len == 0 || memchr(buf, '\0', len))
                return -EBADMSG;
        if (buf[len - 1] != '\n')
                return -EBADMSG;
        *ret = (LineReader){ .pos = buf, .end = buf + len };
        return 0;
}

/* The next line without its newline; false at the end. */
static bool lines_next(LineReader *lr, const char **ret_line, size_t *ret_len) {
        const char *nl;

        if (lr->pos >= lr->end)
                return false;
        nl = memchr(lr->pos, '\n', (size_t)(lr->end - lr->pos));
        /* lines_begin() made sure the buffer ends in '\n'. */
        *ret_line = lr->pos;
        *ret_len = (size_t)(nl - lr->pos);
        lr->pos = nl + 1;
        return true;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* "   1234 kB" or "   0": blanks, digits, an optional " kB", nothing else. */
static int parse_kb_value(const char *s, size_t n, uint64_t *ret) {
        size_t i = 0, start;

        while (i < n && is_blank(s[i]))
                i++;
        start = i;
        while (i < n && is_digit(s[i]))
                i++;
        if (i - start == 0)
                return -EBADMSG;
        if (i < n && !(n - i == 3 && memcmp(s + i, " kB", 3) == 0))
                return -EBADMSG;
        return number_parse_u64(s + start, i - start, ret);
}

/* Splits "Key:<value>"; false if the line has no colon. */
static bool split_key(const char *line, size_t len, const char **ret_key, size_t *ret_key_len,
                      const char **ret_value, size_t *ret_value_len) {
        const char *colon = memchr(line, ':', len);

        if (!colon)
                return false;
        *ret_key = line;
        *ret_key_len = (size_t)(colon - line);
        *ret_value = colon + 1;
        *ret_value_len = len - *ret_key_len - 1;
        return true;
}

static bool key_is(const char *key, size_t key_len, const char *want) {
        return strlen(want) == key_len && memcmp(key, want, key_len) == 0;
}

/*
 * A table of "Key:" -> uint64_t field, shared by meminfo, smaps_rollup and
 * status. A field printed twice is refused: the kernel never does, and
 * which of the two to believe would be a guess.
 */
typedef struct KbField {
        const char *key;
        size_t offset;
} KbField;

static int kb_fields_apply(const KbField *fields, size_t n_fields, bool *seen, void *dest, const char *key,
                           size_t key_len, const char *value, size_t value_len) {
        for (size_t i = 0; i < n_fields; i++) {
                uint64_t v;
                int r;

                if (!key_is(key, key_len, fields[i].key))
                        continue;
                if (seen[i])
                        return -EBADMSG;
                r = parse_kb_value(value, value_len, &v);
                if (r < 0)
                        return r;
                seen[i] = true;
                memcpy((char *)dest + fields[i].offset, &v, sizeof(v));
                return 0;
        }
        return 0;
}

/* Every field of the table starts unknown: a line the file lacks must not read as 0. */
static void kb_fields_init(const KbField *fields, size_t n_fields, void *dest) {
        const uint64_t unknown = PROCFS_UNKNOWN;

        for (size_t i = 0; i < n_fields; i++)
                memcpy((char *)dest + fields[i].offset, &unknown, sizeof(unknown));
}

/*
 * Applies the remaining "Key: value" lines of lr to the table. A line
 * without a colon is skipped, or refused where every line must have one.
 */
static int kb_fields_parse(LineReader *lr, const KbField *fields, size_t n_fields, void *dest,
                           bool colon_required) {
        bool seen[n_fields];
        const char *line, *key, *value;
        size_t line_len, key_len, value_len;

        memset(seen, 0, sizeof(seen));
        while (lines_next(lr, &line, &line_len)) {
                int r;

                if (!split_key(line, line_len, &key, &key_len, &value, &value_len)) {
                        if (colon_required)
                                return -EBADMSG;
                        continue;
                }
                r = kb_fields_apply(fields, n_fields, seen, dest, key, key_len, value, value_len);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- /proc/meminfo ------------------------------------------------------ */

/*
 * "Key:   <decimal> kB" lines (a few without " kB"); a real read of 6.18 is
 * tests/fuzz/corpus/fuzz-procfs-meminfo/host--meminfo. Lines we do not
 * know are skipped whatever they hold: kernels add fields.
 */
int procfs_parse_meminfo(const char *buf, size_t len, ProcMeminfo *ret) {
        static const KbField fields[] = {
                { "MemTotal", offsetof(ProcMeminfo, mem_total_kb) },
                { "MemFree", offsetof(ProcMeminfo, mem_free_kb) },
                { "MemAvailable", offsetof(ProcMeminfo, mem_available_kb) },
                { "AnonPages", offsetof(ProcMeminfo, anon_pages_kb) },
                { "Shmem", offsetof(ProcMeminfo, shmem_kb) },
                { "AnonHugePages", offsetof(ProcMeminfo, anon_huge_pages_kb) },
                { "ShmemHugePages", offsetof(ProcMeminfo, shmem_huge_pages_kb) },
                { "ShmemPmdMapped", offsetof(ProcMeminfo, shmem_pmd_mapped_kb) },
                { "FileHugePages", offsetof(ProcMeminfo, file_huge_pages_kb) },
                { "FilePmdMapped", offsetof(ProcMeminfo, file_pmd_mapped_kb) },
                { "Hugepagesize", offsetof(ProcMeminfo, hugepagesize_kb) },
        };
        ProcMeminfo m = {};
        LineReader lr;
        int r;

        kb_fields_init(fields, ELEMENTSOF(fields), &m);
        r = lines_begin(buf, len, &lr);
        if (r < 0)
                return r;
        r = kb_fields_parse(&lr, fields, ELEMENTSOF(fields), &m, false);
        if (r < 0)
                return r;
        if (m.mem_total_kb == PROCFS_UNKNOWN)
                return -EBADMSG;
        *ret = m;
        return 0;
}

int procfs_read_meminfo(const char *proc_root, ProcMeminfo *ret) {
        return READ_AND_PARSE(proc_root, 0, "meminfo", MEMINFO_SIZE_MAX, procfs_parse_meminfo, ret);
}

/* ---- /proc/vmstat ------------------------------------------------------- */

/*
 * "name value", one space; a real read of 6.18 is
 * tests/fuzz/corpus/fuzz-procfs-vmstat/host--vmstat. Only the THP and
 * compaction lines are kept and checked: another subsystem's odd line must
 * not cost us the THP counters.
 */
bool procfs_vmstat_is_thp_counter(const char *name, size_t len) {
        static const char suffix[] = "_hugepages";

        if ((len > 4 && memcmp(name, "thp_", 4) == 0) || (len > 8 && memcmp(name, "compact_", 8) == 0))
                return true;
        return len > 3 + STRLEN(suffix) && memcmp(name, "nr_", 3) == 0 &&
               memcmp(name + len - STRLEN(suffix), suffix, STRLEN(suffix)) == 0;
}

static bool is_counter_name(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || is_digit(s[i]) || s[i] == '_'))
                        return false;
        return n > 0;
}

int procfs_parse_vmstat(const char *buf, size_t len, ProcVmstat *ret) {
        ProcVmstat *v;
        const char *line;
        size_t line_len;
        LineReader lr;
        int r;

        r = lines_begin(buf, len, &lr);
        if (r < 0)
                return r;
        /* ProcVmstat is 9 kB: build it on the heap, not in a fuzzer's small stack frames twice. */
        v = calloc(1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        while (lines_next(&lr, &line, &line_len)) {
                const char *sp = memchr(line, ' ', line_len);
                size_t name_len;
                uint64_t value;

                name_len = sp ? (size_t)(sp - line) : line_len;
                if (!procfs_vmstat_is_thp_counter(line, name_len))
                        continue;
                if (!sp || !is_counter_name(line, name_len) ||
                    number_parse_u64(sp + 1, line_len - name_len - 1, &value) < 0) {
                        free(v);
                        return -EBADMSG;
                }
                for (size_t i = 0; i < v->n_counters; i++)
                        if (key_is(line, name_len, v->counters[i].name)) {
                                free(v);
                                return -EBADMSG;
                        }
                if (name_len >= PROCFS_COUNTER_NAME_MAX || v->n_counters == PROCFS_VMSTAT_MAX) {
                        v->truncated = true;
                        continue;
                }
                memcpy(v->counters[v->n_counters].name, line, name_len);
                v->counters[v->n_counters].name[name_len] = '\0';
                v->counters[v->n_counters].value = value;
                v->n_counters++;
        }
        *ret = *v;
        free(v);
        return 0;
}

int procfs_read_vmstat(const char *proc_root, ProcVmstat *ret) {
        return READ_AND_PARSE(proc_root, 0, "vmstat", VMSTAT_SIZE_MAX, procfs_parse_vmstat, ret);
}

uint64_t procfs_vmstat_get(const ProcVmstat *v, const char *name) {
        for (size_t i = 0; i < v->n_counters; i++)
                if (strcmp(v->counters[i].name, name) == 0)
                        return v->counters[i].value;
        return PROCFS_UNKNOWN;
}

/* ---- /proc/PID/smaps_rollup --------------------------------------------- */

/*
 * A "[rollup]" header line, then "Key:   <decimal> kB" lines; a real read
 * of 6.18 is tests/fuzz/corpus/fuzz-procfs-smaps-rollup/host--self--smaps_rollup.
 * A kernel thread's read fails with ESRCH; a process with no mappings left
 * (exiting) reads empty. Both are for the caller to skip.
 */
int procfs_parse_smaps_rollup(const char *buf, size_t len, ProcSmapsRollup *ret) {
        static const KbField fields[] = {
                { "Rss", offsetof(ProcSmapsRollup, rss_kb) },
                { "Pss", offsetof(ProcSmapsRollup, pss_kb) },
                { "AnonHugePages", offsetof(ProcSmapsRollup, anon_huge_pages_kb) },
                { "Anonymous", offsetof(ProcSmapsRollup, anonymous_kb) },
                { "ShmemPmdMapped", offsetof(ProcSmapsRollup, shmem_pmd_mapped_kb) },
                { "FilePmdMapped", offsetof(ProcSmapsRollup, file_pmd_mapped_kb) },
                { "Swap", offsetof(ProcSmapsRollup, swap_kb) },
        };
        ProcSmapsRollup s = {};
        const char *line;
        size_t line_len;
        LineReader lr;
        int r;

        kb_fields_init(fields, ELEMENTSOF(fields), &s);
        r = lines_begin(buf, len, &lr);
        if (r < 0)
                return r;
        /* The header line names the rollup; without it this is some other file. */
        if (!lines_next(&lr, &line, &line_len) || line_len < 8 ||
            memcmp(line + line_len - 8, "[rollup]", 8) != 0)
                return -EBADMSG;
        r = kb_fields_parse(&lr, fields, ELEMENTSOF(fields), &s, true);
        if (r < 0)
                return r;
        /* A rollup cut before these lines would read as a process without huge pages. */
        if (s.rss_kb == PROCFS_UNKNOWN || s.pss_kb == PROCFS_UNKNOWN ||
            s.anon_huge_pages_kb == PROCFS_UNKNOWN)
                return -EBADMSG;
        *ret = s;
        return 0;
}

int procfs_read_smaps_rollup(const char *proc_root, uint64_t pid, ProcSmapsRollup *ret) {
        return READ_AND_PARSE(proc_root, pid, "smaps_rollup", SMAPS_ROLLUP_SIZE_MAX,
                              procfs_parse_smaps_rollup, ret);
}

/* ---- /proc/PID/status --------------------------------------------------- */

/*
 * The kernel escapes a comm's backslash and newline in "Name:" ("\\\\" and
 * "\\n" since 5.x, "\\134" and "\\012" before): undone here, so that the name
 * is escaped once, as /proc/PID/comm's bytes would be. Never longer than src.
 */
static size_t unescape_status_name(const char *src, size_t len, char *buf) {
        size_t n = 0;

        for (size_t i = 0; i < len; i++) {
                if (src[i] == '\\' && i + 1 < len && (src[i + 1] == '\\' || src[i + 1] == 'n')) {
                        buf[n++] = src[i + 1] == 'n' ? '\n' : '\\';
                        i++;
                } else if (src[i] == '\\' && i + 3 < len && src[i + 1] >= '0' && src[i + 1] <= '3' &&
                           src[i + 2] >= '0' && src[i + 2] <= '7' && src[i + 3] >= '0' &&
                           src[i + 3] <= '7') {
                        buf[n++] =
                            (char)((src[i + 1] - '0') << 6 | (src[i + 2] - '0') << 3 | (src[i + 3] - '0'));
                        i += 3;
                } else
                        buf[n++] = src[i];
        }
        return n;
}

/*
 * "Key:\t<value>" lines; real reads of 6.18 are
 * tests/fuzz/corpus/fuzz-procfs-status/host--*--status (Kthread and
 * THP_enabled among them).
 *
 * Name is the comm with only '\\' and '\n' escaped: after
 * prctl(PR_SET_NAME, "a\x01\xff\tb\\c\n d") it reads, byte for byte,
 * "Name:\ta\x01\xff\tb\\\\c\\n d\n". So it may hold a tab, control bytes
 * and invalid UTF-8; we hand it back sanitized.
 *
 * THP_enabled is 0 only after prctl(PR_SET_THP_DISABLE, 1, 0): with
 * PR_THP_DISABLE_EXCEPT_ADVISED (6.18) it still reads 1.
 */
int procfs_parse_status(const char *buf, size_t len, ProcStatus *ret) {
        static const KbField fields[] = {
                { "Pid", offsetof(ProcStatus, pid) },
                { "PPid", offsetof(ProcStatus, ppid) },
                { "VmRSS", offsetof(ProcStatus, vm_rss_kb) },
                { "RssAnon", offsetof(ProcStatus, rss_anon_kb) },
        };
        ProcStatus s = {
                .kthread = -1,
                .thp_enabled = -1,
        };
        bool seen[ELEMENTSOF(fields)] = {}, have_name = false;
        const char *line, *key, *value;
        size_t line_len, key_len, value_len;
        LineReader lr;
        int r;

        kb_fields_init(fields, ELEMENTSOF(fields), &s);
        r = lines_begin(buf, len, &lr);
        if (r < 0)
                return r;
        while (lines_next(&lr, &line, &line_len)) {
                if (!split_key(line, line_len, &key, &key_len, &value, &value_len))
                        continue;
                if (key_is(key, key_len, "Name")) {
                        /* "Name:\t<comm>": the tab is the separator, the comm may hold tabs. */
                        if (have_name || value_len == 0 || value[0] != '\t')
                                return -EBADMSG;
                        char raw[sizeof(s.name)];
                        size_t raw_len = unescape_status_name(
                            value + 1, value_len - 1 < sizeof(raw) ? value_len - 1 : sizeof(raw), raw);

                        escape_printable(raw, raw_len, s.name, sizeof(s.name));
                        have_name = true;
                        continue;
                }
                if (key_is(key, key_len, "THP_enabled") || key_is(key, key_len, "Kthread")) {
                        int *dest = key[0] == 'T' ? &s.thp_enabled : &s.kthread;
                        uint64_t v;

                        if (*dest != -1 || parse_kb_value(value, value_len, &v) < 0 || v > 1)
                                return -EBADMSG;
                        *dest = (int)v;
                        continue;
                }
                r = kb_fields_apply(fields, ELEMENTSOF(fields), seen, &s, key, key_len, value, value_len);
                if (r < 0)
                        return r;
        }
        if (!have_name)
                return -EBADMSG;
        *ret = s;
        return 0;
}

int procfs_read_status(const char *proc_root, uint64_t pid, ProcStatus *ret) {
        return READ_AND_PARSE(proc_root, pid, "status", STATUS_SIZE_MAX, procfs_parse_status, ret);
}

/* ---- /proc/cmdline ------------------------------------------------------ */

/*
 * One line of space-separated parameters; a real read (6.18, no THP
 * parameter) is tests/fuzz/corpus/fuzz-procfs-cmdline/host--cmdline.
 * Everything after "--" belongs to init, so a "transparent_hugepage=" there
 * is not the kernel's.
 */
static const char *const cmdline_param_names[_PROC_CMDLINE_PARAM_MAX] = {
        [PROC_CMDLINE_THP] = "transparent_hugepage",
        [PROC_CMDLINE_THP_SHMEM] = "transparent_hugepage_shmem",
        [PROC_CMDLINE_THP_ANON] = "thp_anon",
        [PROC_CMDLINE_THP_SHMEM_SIZES] = "thp_shmem",
};

const char *procfs_cmdline_param_name(ProcCmdlineParam p) {
        if ((unsigned)p >= _PROC_CMDLINE_PARAM_MAX)
                return NULL;
        return cmdline_param_names[p];
}

static bool is_space(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* parameq(): '-' and '_' are interchangeable in parameter names. */
static bool param_eq(const char *s, size_t n, const char *name) {
        if (strlen(name) != n)
                return false;
        for (size_t i = 0; i < n; i++) {
                char a = s[i] == '-' ? '_' : s[i], b = name[i] == '-' ? '_' : name[i];
                if (a != b)
                        return false;
        }
        return true;
}

int procfs_parse_cmdline(const char *buf, size_t len, ProcCmdline *ret) {
        ProcCmdline c = {};
        size_t i = 0;

        if (!buf || memchr(buf, '\0', len))
                return -EBADMSG;
        for (;;) {
                size_t start, end, value, value_end;
                bool quoted = false, in_quote;
                const char *eq;

                while (i < len && is_space(buf[i]))
                        i++;
                if (i == len)
                        break;
                /* next_arg(): a leading quote is dropped; inside quotes spaces do not split. */
                if (buf[i] == '"') {
                        quoted = true;
                        i++;
                }
                start = i;
                in_quote = quoted;
                while (i < len && (in_quote || !is_space(buf[i]))) {
                        if (buf[i] == '"')
                                in_quote = !in_quote;
                        i++;
                }
                end = i;
                if (end - start == 2 && memcmp(buf + start, "--", 2) == 0)
                        break;
                eq = memchr(buf + start, '=', end - start);
                if (!eq)
                        continue;
                value = (size_t)(eq - buf) + 1;
                value_end = end;
                /* One quote after '=' is dropped, and then one at the end, as next_arg() does. */
                if (value < value_end && buf[value] == '"') {
                        value++;
                        if (value < value_end && buf[value_end - 1] == '"')
                                value_end--;
                } else if (quoted && value < value_end && buf[value_end - 1] == '"')
                        value_end--;
                for (ProcCmdlineParam p = 0; p < _PROC_CMDLINE_PARAM_MAX; p++) {
                        if (!param_eq(buf + start, (size_t)(eq - (buf + start)), cmdline_param_names[p]))
                                continue;
                        /* Cut short, "16K-2M:never" could read as "16K-2M:nev": refuse instead. */
                        if (!escape_printable(buf + value, value_end - value, c.value[p],
                                              sizeof(c.value[p])))
                                return -EBADMSG;
                        c.set[p] = true;
                }
        }
        *ret = c;
        return 0;
}

int procfs_read_cmdline(const char *proc_root, ProcCmdline *ret) {
        return READ_AND_PARSE(proc_root, 0, "cmdline", CMDLINE_SIZE_MAX, procfs_parse_cmdline, ret);
}

/* memparse(): digits then an optional K, M or G; returns kB. */
static int parse_size_kb(const char *s, size_t n, uint64_t *ret) {
        uint64_t v, mult = 0;
        size_t digits = 0;
        int r;

        while (digits < n && is_digit(s[digits]))
                digits++;
        r = number_parse_u64(s, digits, &v);
        if (r < 0)
                return r;
        if (n - digits > 1)
                return -EBADMSG;
        if (n == digits) {
                if (v % 1024 != 0)
                        return -EBADMSG;
                *ret = v / 1024;
                return 0;
        }
        switch (s[digits]) {
        case 'K':
        case 'k':
                mult = 1;
                break;
        case 'M':
        case 'm':
                mult = 1024;
                break;
        case 'G':
        case 'g':
                mult = 1024 * 1024;
                break;
        default:
                return -EBADMSG;
        }
        if (v > UINT64_MAX / mult)
                return -EBADMSG;
        *ret = v * mult;
        return 0;
}

int procfs_thp_sizes_lookup(const char *spec, uint64_t size_kb, char *buf, size_t size) {
        const char *p = spec, *found = NULL;
        size_t found_len = 0;

        if (!spec || !*spec)
                return -EBADMSG;
        while (*p) {
                const char *end = strchrnul(p, ';'), *colon = memchr(p, ':', (size_t)(end - p));
                const char *q;
                bool match = false;

                if (!colon || colon == p || colon + 1 == end)
                        return -EBADMSG;
                for (q = p;;) {
                        const char *item_end = memchr(q, ',', (size_t)(colon - q)), *dash;
                        uint64_t lo, hi;

                        if (!item_end)
                                item_end = colon;
                        /* An empty item (",," or a trailing comma) fails in parse_size_kb(). */
                        dash = memchr(q, '-', (size_t)(item_end - q));
                        if (dash) {
                                if (parse_size_kb(q, (size_t)(dash - q), &lo) < 0 ||
                                    parse_size_kb(dash + 1, (size_t)(item_end - dash - 1), &hi) < 0 ||
                                    lo > hi)
                                        return -EBADMSG;
                        } else {
                                if (parse_size_kb(q, (size_t)(item_end - q), &lo) < 0)
                                        return -EBADMSG;
                                hi = lo;
                        }
                        if (size_kb >= lo && size_kb <= hi)
                                match = true;
                        if (item_end == colon)
                                break;
                        q = item_end + 1;
                }
                for (q = colon + 1; q < end; q++)
                        if (!((*q >= 'a' && *q <= 'z') || *q == '_'))
                                return -EBADMSG;
                if (match) {
                        found = colon + 1;
                        found_len = (size_t)(end - colon - 1);
                }
                p = *end ? end + 1 : end;
        }
        if (!found)
                return 0;
        if (found_len >= size)
                return -ENOBUFS;
        memcpy(buf, found, found_len);
        buf[found_len] = '\0';
        return 1;
}

/* ---- /proc/PID/smaps ---------------------------------------------------- */

/*
 * Per mapping, a header line then "Key:   <decimal> kB" lines, THPeligible
 * and VmFlags; a real read of 6.18 is
 * tests/fuzz/corpus/fuzz-procfs-smaps/host--self--smaps. After VmFlags comes
 * the next mapping's header. A field line's first word ends in ':';
 * a header's is "start-end" in hex. A path may hold spaces and ends the line.
 */

/* The next blank-separated word of line[*pos..len). */
static bool next_word(const char *line, size_t len, size_t *pos, const char **ret, size_t *ret_len) {
        size_t i = *pos, start;

        while (i < len && is_blank(line[i]))
                i++;
        start = i;
        while (i < len && !is_blank(line[i]))
                i++;
        *pos = i;
        *ret = line + start;
        *ret_len = i - start;
        return i > start;
}

static int parse_mapping_header(const char *line, size_t len, ProcMapping *ret) {
        ProcMapping m = { .thp_eligible = -1 };
        const char *w, *dash;
        size_t pos = 0, wl;
        int r;

        if (!next_word(line, len, &pos, &w, &wl))
                return -EBADMSG;
        dash = memchr(w, '-', wl);
        if (!dash)
                return -EBADMSG;
        r = number_parse_hex_u64(w, (size_t)(dash - w), &m.start);
        if (r < 0)
                return r;
        r = number_parse_hex_u64(dash + 1, wl - (size_t)(dash - w) - 1, &m.end);
        if (r < 0 || m.end < m.start)
                return -EBADMSG;
        if (!next_word(line, len, &pos, &w, &wl) || wl != 4)
                return -EBADMSG;
        memcpy(m.perms, w, 4);
        m.perms[4] = '\0';
        /* offset, device, inode */
        for (int i = 0; i < 3; i++)
                if (!next_word(line, len, &pos, &w, &wl))
                        return -EBADMSG;
        while (pos < len && is_blank(line[pos]))
                pos++;
        escape_printable(line + pos, len - pos, m.name, sizeof(m.name));
        *ret = m;
        return 0;
}

static void smaps_offer_top(ProcSmaps *s, size_t top_n, const ProcMapping *m) {
        size_t i;

        if (m->anon_huge_pages_kb == 0 || top_n == 0)
                return;
        if (s->n_top == top_n && s->top[top_n - 1].anon_huge_pages_kb >= m->anon_huge_pages_kb)
                return;
        if (s->n_top < top_n)
                s->n_top++;
        /* Insertion into a short sorted array: top_n is at most 16. */
        for (i = s->n_top - 1; i > 0 && s->top[i - 1].anon_huge_pages_kb < m->anon_huge_pages_kb; i--)
                s->top[i] = s->top[i - 1];
        s->top[i] = *m;
}

/*
 * Totals saturate (number.h) below PROCFS_UNKNOWN: a hostile file must not make a sum wrap below its
 * parts, nor read as unknown.
 */
static uint64_t total_add(uint64_t total, uint64_t part) {
        uint64_t sum = u64_sat_add(total, part);

        return sum == PROCFS_UNKNOWN ? PROCFS_UNKNOWN - 1 : sum;
}

static void smaps_finish_mapping(ProcSmaps *s, size_t top_n, const ProcMapping *m) {
        s->n_mappings++;
        if (m->rss_kb != PROCFS_UNKNOWN)
                s->rss_kb = total_add(s->rss_kb, m->rss_kb);
        if (m->anon_huge_pages_kb != PROCFS_UNKNOWN)
                s->anon_huge_pages_kb = total_add(s->anon_huge_pages_kb, m->anon_huge_pages_kb);
        if (m->advised_huge) {
                s->n_advised_huge++;
                s->advised_huge_kb = total_add(s->advised_huge_kb, (m->end - m->start) / 1024);
        }
        if (m->advised_nohuge)
                s->n_advised_nohuge++;
        if (m->thp_eligible == 1)
                s->n_thp_eligible++;
        if (strstr(m->name, "/libjvm.so"))
                s->uses_libjvm = true;
        if (m->anon_huge_pages_kb != PROCFS_UNKNOWN)
                smaps_offer_top(s, top_n, m);
}

static int smaps_vmflags(const char *value, size_t len, ProcMapping *m) {
        const char *w;
        size_t pos = 0, wl;

        while (next_word(value, len, &pos, &w, &wl)) {
                if (wl != 2)
                        return -EBADMSG;
                if (memcmp(w, "hg", 2) == 0)
                        m->advised_huge = true;
                else if (memcmp(w, "nh", 2) == 0)
                        m->advised_nohuge = true;
        }
        return 0;
}

int procfs_parse_smaps(const char *buf, size_t len, size_t top_n, ProcSmaps *ret) {
        _cleanup_free_ ProcSmaps *s = NULL;
        ProcMapping cur;
        bool in_mapping = false;
        const char *line, *key, *value;
        size_t line_len, key_len, value_len;
        LineReader lr;
        int r;

        if (top_n > PROCFS_SMAPS_TOP_MAX)
                top_n = PROCFS_SMAPS_TOP_MAX;
        /* A process with no mappings left (exiting, a zombie) reads empty: nothing to report. */
        if (len == 0) {
                *ret = (ProcSmaps){};
                return 0;
        }
        r = lines_begin(buf, len, &lr);
        if (r < 0)
                return r;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        while (lines_next(&lr, &line, &line_len)) {
                const char *w;
                size_t pos = 0, wl;

                if (!next_word(line, line_len, &pos, &w, &wl))
                        return -EBADMSG;
                if (w[wl - 1] != ':') {
                        if (in_mapping)
                                smaps_finish_mapping(s, top_n, &cur);
                        r = parse_mapping_header(line, line_len, &cur);
                        if (r < 0)
                                return r;
                        cur.rss_kb = PROCFS_UNKNOWN;
                        cur.anon_huge_pages_kb = PROCFS_UNKNOWN;
                        in_mapping = true;
                        continue;
                }
                if (!in_mapping || !split_key(line, line_len, &key, &key_len, &value, &value_len))
                        return -EBADMSG;
                if (key_is(key, key_len, "Rss") || key_is(key, key_len, "AnonHugePages")) {
                        uint64_t *dest = key[0] == 'R' ? &cur.rss_kb : &cur.anon_huge_pages_kb;

                        if (*dest != PROCFS_UNKNOWN || parse_kb_value(value, value_len, dest) < 0)
                                return -EBADMSG;
                } else if (key_is(key, key_len, "THPeligible")) {
                        uint64_t v;

                        if (parse_kb_value(value, value_len, &v) < 0 || v > 1)
                                return -EBADMSG;
                        cur.thp_eligible = (int)v;
                } else if (key_is(key, key_len, "VmFlags")) {
                        r = smaps_vmflags(value, value_len, &cur);
                        if (r < 0)
                                return r;
                }
        }
        if (in_mapping)
                smaps_finish_mapping(s, top_n, &cur);
        *ret = *s;
        return 0;
}

int procfs_read_smaps(const char *proc_root, uint64_t pid, size_t top_n, ProcSmaps *ret) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        r = read_text(proc_root, pid, "smaps", SMAPS_SIZE_MAX, &text, &len);
        if (r < 0)
                return r;
        return procfs_parse_smaps(text, len, top_n, ret);
}

/* ---- /proc/PID/stat ----------------------------------------------------- */

/*
 * A real read on this machine (6.18), khugepaged's (one line; the comm is
 * between the first '(' and the last ')'):
 *
 *   18223 (khugepaged) S 2 0 0 0 -1 2097216 0 0 0 0 0 0 0 0 39 19 1 0 1034562 0 0
 *   18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 *
 * (wrapped here). After the comm come the state and then only decimal
 * numbers (tpgid, priority, nice and cutime may be negative). The fields we
 * keep, counted after the state from 0: ppid 0, flags 5, utime 10, stime 11.
 */
enum {
        STAT_PPID = 0,
        STAT_FLAGS = 5,
        STAT_UTIME = 10,
        STAT_STIME = 11,
        STAT_PROCESSOR = 35,
};

int procfs_parse_stat(const char *buf, size_t len, ProcStat *ret) {
        ProcStat st = { .processor = -1 };
        const char *open, *close = NULL, *p, *end;
        size_t field = 0;
        LineReader lr;
        int r;

        /* Only for the checks: the comm may hold newlines, so this is not read line by line. */
        r = lines_begin(buf, len, &lr);
        if (r < 0)
                return r;
        end = buf + len - 1; /* the newline */
        open = memchr(buf, ' ', len);
        if (!open || open + 1 >= end || open[1] != '(' ||
            number_parse_u64(buf, (size_t)(open - buf), &st.pid) < 0)
                return -EBADMSG;
        open++;
        for (p = end; p > open; p--)
                if (*p == ')') {
                        close = p;
                        break;
                }
        if (!close || (size_t)(close - open - 1) > PROCFS_STAT_COMM_MAX)
                return -EBADMSG;
        escape_printable(open + 1, (size_t)(close - open - 1), st.comm, sizeof(st.comm));

        /* " S 2 0 ...": the state, one letter, then numbers, one space apart. */
        p = close + 1;
        if (end - p < 2 || p[0] != ' ' || !((p[1] >= 'A' && p[1] <= 'Z') || (p[1] >= 'a' && p[1] <= 'z')))
                return -EBADMSG;
        st.state = p[1];
        for (p += 2; p < end; field++) {
                bool negative = false;
                const char *num;
                uint64_t v;

                if (*p != ' ')
                        return -EBADMSG;
                p++;
                if (p < end && *p == '-') {
                        negative = true;
                        p++;
                }
                num = p;
                while (p < end && is_digit(*p))
                        p++;
                if (number_parse_u64(num, (size_t)(p - num), &v) < 0)
                        return -EBADMSG;
                /* Negative where the kernel prints a signed number; never in a field we keep. */
                if (negative && (field == STAT_PPID || field == STAT_FLAGS || field == STAT_UTIME ||
                                 field == STAT_STIME || field == STAT_PROCESSOR))
                        return -EBADMSG;
                if (field == STAT_PPID)
                        st.ppid = v;
                else if (field == STAT_FLAGS)
                        st.flags = v;
                else if (field == STAT_UTIME)
                        st.utime_ticks = v;
                else if (field == STAT_STIME)
                        st.stime_ticks = v;
                else if (field == STAT_PROCESSOR && v <= INT32_MAX)
                        st.processor = (int64_t)v;
        }
        if (field <= STAT_STIME)
                return -EBADMSG;
        *ret = st;
        return 0;
}

int procfs_read_stat(const char *proc_root, uint64_t pid, ProcStat *ret) {
        return READ_AND_PARSE(proc_root, pid, "stat", STAT_SIZE_MAX, procfs_parse_stat, ret);
}

bool procfs_stat_is_khugepaged(const ProcStat *st, uint64_t pid) {
        return st->pid == pid && strcmp(st->comm, "khugepaged") == 0 && st->ppid == 2 &&
               (st->flags & PROCFS_PF_KTHREAD);
}

int procfs_find_khugepaged(const char *proc_root, uint64_t *ret_pid, ProcStat *ret_stat) {
        _cleanup_free_ uint64_t *pids = NULL;
        size_t n;
        int r;

        r = procfs_list_pids(proc_root, &pids, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                ProcStat st;

                if (procfs_read_stat(proc_root, pids[i], &st) >= 0 &&
                    procfs_stat_is_khugepaged(&st, pids[i])) {
                        *ret_pid = pids[i];
                        *ret_stat = st;
                        return 0;
                }
        }
        return -ENOENT;
}

/* ---- /proc/pressure/memory ---------------------------------------------- */

/*
 * A real read on this machine (6.18, booted with psi=1), /proc/pressure/memory:
 *
 *   some avg10=0.00 avg60=0.00 avg300=0.00 total=0
 *   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
 *
 * and /proc/pressure/io, the same shape with figures:
 *
 *   some avg10=0.26 avg60=0.33 avg300=2.14 total=828138668
 *   full avg10=0.07 avg60=0.20 avg300=1.52 total=243974335
 *
 * total is in microseconds. Each line is a kind, then key=value words, one
 * space apart; keys are [a-z0-9]+, values digits and dots.
 */
static bool is_lower_word(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || is_digit(s[i])))
                        return false;
        return n > 0;
}

/*
 * "12.34" -> 1234, the kernel's "%lu.%02lu" of a percentage in hundredths;
 * PROCFS_UNKNOWN for another shape, which the line's check lets through.
 */
static uint64_t pressure_avg_centi(const char *s, size_t n) {
        const char *dot = memchr(s, '.', n);
        uint64_t whole, frac, v;

        if (!dot || (size_t)(s + n - dot) != 3 || number_parse_u64(s, (size_t)(dot - s), &whole) < 0 ||
            !is_digit(dot[1]) || !is_digit(dot[2]))
                return PROCFS_UNKNOWN;
        frac = (uint64_t)(dot[1] - '0') * 10 + (uint64_t)(dot[2] - '0');
        if (__builtin_mul_overflow(whole, 100, &v) || __builtin_add_overflow(v, frac, &v) ||
            v == PROCFS_UNKNOWN)
                return PROCFS_UNKNOWN;
        return v;
}

/* "kind key=value ... total=N" -> the kind's length, N and avg10 (hundredths). */
static int pressure_line(const char *line, size_t len, size_t *ret_kind_len, uint64_t *ret_total,
                         uint64_t *ret_avg10) {
        const char *p = memchr(line, ' ', len), *end = line + len;
        bool have_total = false;
        uint64_t total = 0, avg10 = PROCFS_UNKNOWN;

        if (!p || !is_lower_word(line, (size_t)(p - line)))
                return -EBADMSG;
        while (p < end) {
                const char *key, *eq, *value;

                if (*p != ' ')
                        return -EBADMSG;
                key = ++p;
                eq = memchr(key, '=', (size_t)(end - key));
                if (!eq || !is_lower_word(key, (size_t)(eq - key)))
                        return -EBADMSG;
                p = eq;
                value = ++p;
                while (p < end && (is_digit(*p) || *p == '.'))
                        p++;
                if (p == value)
                        return -EBADMSG;
                if (key_is(key, (size_t)(eq - key), "total")) {
                        if (have_total || number_parse_u64(value, (size_t)(p - value), &total) < 0)
                                return -EBADMSG;
                        have_total = true;
                } else if (key_is(key, (size_t)(eq - key), "avg10"))
                        avg10 = pressure_avg_centi(value, (size_t)(p - value));
        }
        if (!have_total)
                return -EBADMSG;
        *ret_kind_len = (size_t)(memchr(line, ' ', len) - (const void *)line);
        *ret_total = total;
        *ret_avg10 = avg10;
        return 0;
}

int procfs_parse_pressure(const char *buf, size_t len, ProcPressure *ret) {
        ProcPressure pr = { .some_total_usec = PROCFS_UNKNOWN,
                            .full_total_usec = PROCFS_UNKNOWN,
                            .some_avg10_centi = PROCFS_UNKNOWN,
                            .full_avg10_centi = PROCFS_UNKNOWN };
        bool have_some = false, have_full = false;
        const char *line;
        size_t line_len;
        LineReader lr;
        int r;

        r = lines_begin(buf, len, &lr);
        if (r < 0)
                return r;
        while (lines_next(&lr, &line, &line_len)) {
                uint64_t total, avg10, *dest, *dest_avg10;
                size_t kind_len;
                bool *seen;

                r = pressure_line(line, line_len, &kind_len, &total, &avg10);
                if (r < 0)
                        return r;
                if (key_is(line, kind_len, "some")) {
                        dest = &pr.some_total_usec;
                        dest_avg10 = &pr.some_avg10_centi;
                        seen = &have_some;
                } else if (key_is(line, kind_len, "full")) {
                        dest = &pr.full_total_usec;
                        dest_avg10 = &pr.full_avg10_centi;
                        seen = &have_full;
                } else
                        continue;
                if (*seen)
                        return -EBADMSG;
                *seen = true;
                *dest = total;
                *dest_avg10 = avg10;
        }
        if (!have_some)
                return -EBADMSG;
        *ret = pr;
        return 0;
}

int procfs_read_pressure(const char *proc_root, ProcPressure *ret) {
        return READ_AND_PARSE(proc_root, 0, "pressure/memory", PRESSURE_SIZE_MAX, procfs_parse_pressure,
                              ret);
}

bool procfs_pid_from_name(const char *name, uint64_t *ret) {
        return name[0] != '0' && number_parse_u64(name, strlen(name), ret) == 0;
}

int procfs_list_pids(const char *proc_root, uint64_t **ret, size_t *ret_n) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_free_ uint64_t *pids = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;

        d = opendir(proc_root);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                uint64_t pid;

                if (!procfs_pid_from_name(de->d_name, &pid))
                        continue;
                if (array_grow(&pids, &cap, n, sizeof(*pids), 256, 0) < 0)
                        return -ENOMEM;
                pids[n++] = pid;
        }
        *ret = TAKE_PTR(pids);
        *ret_n = n;
        return 0;
}
