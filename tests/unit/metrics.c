/* SPDX-License-Identifier: MIT */
/*
 * The metrics renderer (exact text, escaping, HELP/TYPE for every family),
 * the file written atomically and only where it may be, and the liveness
 * check (the kernel's figures: metrics-kernel.c). The syntax is also checked by a real parser in
 * metrics-parse.sh; these pin down what we mean to write.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch-dir.h"

#include "metrics.h"
#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/path.h"

#define SEC UINT64_C(1000000)

static char *render(const MetricsSnapshot *s) {
        char *text = NULL;
        size_t len = 0;

        assert_int_equal(metrics_render_string(s, &text, &len), 0);
        assert_non_null(text);
        assert_int_equal(strlen(text), len);
        return text;
}

static MetricsKnob knob(const char *path) {
        return (MetricsKnob){ .knob = path, .compliant = true, .supported = true };
}

static void test_exact(void **state) {
        MetricsKnob k[] = { knob("enabled"), knob("hugepages-64kB/enabled") };
        MetricsSnapshot s = {
                .up = true,
                .recheck_interval_sec = 30,
                .knobs = k,
                .n_knobs = 2,
                .rechecks = 7,
                .reloads_ok = 2,
                .reloads_failed = 1,
                .last_correction_usec = UINT64_C(1717000000000042),
        };
        _cleanup_free_ char *text = NULL;

        k[0].corrections[TRIGGER_INOTIFY] = 3;
        k[0].corrections[TRIGGER_STARTUP] = 1;
        k[1].compliant = false;
        k[1].supported = false;
        k[1].failures = 4;
        k[1].fights = 5;
        k[0].writes = &(WriterTallies){ .top = { { "tuned.service", 3 }, { "sh", 1 } }, .n = 2, .other = 2 };
        text = render(&s);
        assert_string_equal(
            text,
            "# HELP thpguard_up 1 while thpguardd runs and keeps this file current; 0 after a clean stop.\n"
            "# TYPE thpguard_up gauge\n"
            "thpguard_up 1\n"
            "# HELP thpguard_recheck_interval_seconds Seconds between full rechecks; while thpguardd runs, "
            "this file is rewritten at least that often.\n"
            "# TYPE thpguard_recheck_interval_seconds gauge\n"
            "thpguard_recheck_interval_seconds 30\n"
            "# HELP thpguard_knob_compliant 1 if the knob held the policy's value at its last check; 0 if "
            "it drifted (audit mode, a failed correction, a writer fight), is unsupported or unreadable.\n"
            "# TYPE thpguard_knob_compliant gauge\n"
            "thpguard_knob_compliant{knob=\"enabled\"} 1\n"
            "thpguard_knob_compliant{knob=\"hugepages-64kB/enabled\"} 0\n"
            "# HELP thpguard_knob_supported 1 if this kernel has the knob and offers the policy's value; 0 "
            "if it is skipped.\n"
            "# TYPE thpguard_knob_supported gauge\n"
            "thpguard_knob_supported{knob=\"enabled\"} 1\n"
            "thpguard_knob_supported{knob=\"hugepages-64kB/enabled\"} 0\n"
            "# HELP thpguard_corrections_total Drifts corrected since thpguardd started, by knob and by "
            "what "
            "found them: startup, inotify, recheck, reload or bpf (the BPF write probe: a write through "
            "another sysfs mount).\n"
            "# TYPE thpguard_corrections_total counter\n"
            "thpguard_corrections_total{knob=\"enabled\",trigger=\"startup\"} 1\n"
            "thpguard_corrections_total{knob=\"enabled\",trigger=\"inotify\"} 3\n"
            "thpguard_corrections_total{knob=\"enabled\",trigger=\"recheck\"} 0\n"
            "thpguard_corrections_total{knob=\"enabled\",trigger=\"reload\"} 0\n"
            "thpguard_corrections_total{knob=\"enabled\",trigger=\"bpf\"} 0\n"
            "thpguard_corrections_total{knob=\"hugepages-64kB/enabled\",trigger=\"startup\"} 0\n"
            "thpguard_corrections_total{knob=\"hugepages-64kB/enabled\",trigger=\"inotify\"} 0\n"
            "thpguard_corrections_total{knob=\"hugepages-64kB/enabled\",trigger=\"recheck\"} 0\n"
            "thpguard_corrections_total{knob=\"hugepages-64kB/enabled\",trigger=\"reload\"} 0\n"
            "thpguard_corrections_total{knob=\"hugepages-64kB/enabled\",trigger=\"bpf\"} 0\n"
            "# HELP thpguard_correction_failures_total Corrections that failed: the write was refused or "
            "the value did not stick.\n"
            "# TYPE thpguard_correction_failures_total counter\n"
            "thpguard_correction_failures_total{knob=\"enabled\"} 0\n"
            "thpguard_correction_failures_total{knob=\"hugepages-64kB/enabled\"} 4\n"
            "# HELP thpguard_writer_fights_total Writer fights: another writer kept resetting the knob, and "
            "thpguardd backed off.\n"
            "# TYPE thpguard_writer_fights_total counter\n"
            "thpguard_writer_fights_total{knob=\"enabled\"} 0\n"
            "thpguard_writer_fights_total{knob=\"hugepages-64kB/enabled\"} 5\n"
            "# HELP thpguard_foreign_writes_total Writes to the knob by other processes, by writer: its "
            "systemd unit, else its comm. The first 16 writers of a knob have their own series, the rest "
            "count as \"other\". Back-to-back writes by one process may count once. Absent when "
            "attribution is off.\n"
            "# TYPE thpguard_foreign_writes_total counter\n"
            "thpguard_foreign_writes_total{knob=\"enabled\",writer=\"tuned.service\"} 3\n"
            "thpguard_foreign_writes_total{knob=\"enabled\",writer=\"sh\"} 1\n"
            "thpguard_foreign_writes_total{knob=\"enabled\",writer=\"other\"} 2\n"
            "# HELP thpguard_last_correction_timestamp_seconds Unix time of the last correction since "
            "thpguardd started; 0 if none.\n"
            "# TYPE thpguard_last_correction_timestamp_seconds gauge\n"
            "thpguard_last_correction_timestamp_seconds 1717000000.000042\n"
            "# HELP thpguard_policy_reloads_total Policy reloads, by result: ok, or failed (the last good "
            "policy was kept).\n"
            "# TYPE thpguard_policy_reloads_total counter\n"
            "thpguard_policy_reloads_total{result=\"ok\"} 2\n"
            "thpguard_policy_reloads_total{result=\"failed\"} 1\n"
            "# HELP thpguard_rechecks_total Full rechecks of every managed knob: the periodic timer and "
            "inotify queue overflows.\n"
            "# TYPE thpguard_rechecks_total counter\n"
            "thpguard_rechecks_total 7\n");
}

/* Every sample's family was announced with # HELP and # TYPE before it, once. */
static void assert_every_family_documented(const char *text) {
        char help[64][80] = {}, type[64][80] = {};
        size_t n_help = 0, n_type = 0;
        const char *line = text;

        while (*line) {
                const char *nl = strchr(line, '\n');
                size_t len;
                char name[80];

                assert_non_null(nl); /* every line ends in a newline, the last one too */
                len = (size_t)(nl - line);
                if (strncmp(line, "# HELP ", 7) == 0 || strncmp(line, "# TYPE ", 7) == 0) {
                        size_t nlen = strcspn(line + 7, " \n");
                        char(*list)[80] = line[2] == 'H' ? help : type;
                        size_t *n = line[2] == 'H' ? &n_help : &n_type;

                        assert_true(nlen < sizeof(name));
                        memcpy(name, line + 7, nlen);
                        name[nlen] = '\0';
                        for (size_t i = 0; i < *n; i++)
                                assert_string_not_equal(list[i], name);
                        assert_true(*n < 64);
                        snprintf(list[(*n)++], sizeof(list[0]), "%s", name);
                        /* Neither is empty. */
                        assert_true(len > 7 + nlen + 1);
                } else {
                        size_t nlen = strcspn(line, "{ ");
                        bool found_help = false, found_type = false;

                        assert_true(line[0] != '#');
                        assert_true(nlen > 0 && nlen < sizeof(name));
                        memcpy(name, line, nlen);
                        name[nlen] = '\0';
                        for (size_t i = 0; i < n_help; i++)
                                found_help |= strcmp(help[i], name) == 0;
                        for (size_t i = 0; i < n_type; i++)
                                found_type |= strcmp(type[i], name) == 0;
                        if (!found_help || !found_type)
                                fail_msg("sample %s comes without # HELP and # TYPE", name);
                }
                line = nl + 1;
        }
        assert_int_equal(n_help, n_type);
}

static void test_escaping(void **state) {
        MetricsKnob k[] = { knob("a\"b\\c\nd") };
        MetricsSnapshot s = { .up = true, .recheck_interval_sec = 1, .knobs = k, .n_knobs = 1 };
        _cleanup_free_ char *text = render(&s);

        assert_non_null(strstr(text, "thpguard_knob_compliant{knob=\"a\\\"b\\\\c\\nd\"} 1\n"));
        assert_non_null(
            strstr(text, "thpguard_corrections_total{knob=\"a\\\"b\\\\c\\nd\",trigger=\"reload\"} 0\n"));
        /* The raw newline never reaches the file: each line is still one sample. */
        assert_null(strstr(text, "c\nd"));
        assert_every_family_documented(text);
}

static void test_stopped_and_empty(void **state) {
        MetricsSnapshot s = { .up = false, .recheck_interval_sec = 30 };
        _cleanup_free_ char *text = render(&s);

        assert_non_null(strstr(text, "\nthpguard_up 0\n"));
        assert_non_null(strstr(text, "\nthpguard_last_correction_timestamp_seconds 0.000000\n"));
        /* No knobs: the families are still announced, with no samples. */
        assert_non_null(strstr(text, "# TYPE thpguard_knob_compliant gauge\n"));
        assert_null(strstr(text, "thpguard_knob_compliant{"));
        assert_null(strstr(text, "thpguard_vmstat_total"));
        assert_every_family_documented(text);
}

/* The probe's lost records: a counter while the probe is the write source, absent otherwise. */
static void test_write_probe_lost(void **state) {
        MetricsSnapshot s = { .up = true, .recheck_interval_sec = 30, .write_source = "fanotify" };
        _cleanup_free_ char *without = render(&s), *with = NULL;

        assert_null(strstr(without, "thpguard_write_probe_lost_records_total"));
        s.write_source = "bpf";
        s.write_source_hook = "syscall-exit";
        s.write_probe = true;
        s.write_probe_lost = 1234;
        with = render(&s);
        assert_non_null(strstr(with, "\n# TYPE thpguard_write_probe_lost_records_total counter\n"
                                     "thpguard_write_probe_lost_records_total 1234\n"));
        assert_every_family_documented(with);
}

/* Lock mode's two families: present in lock mode only, refusals by knob and writer. */
static void test_lock(void **state) {
        WriterTallies refused = { .top = { { "sh", 7 }, { "tuned.service", 500 } }, .n = 2, .other = 1 };
        MetricsKnob knobs[] = { { .knob = "enabled", .supported = true, .refused = &refused },
                                { .knob = "defrag", .supported = true } };
        MetricsSnapshot s = { .up = true, .recheck_interval_sec = 30, .knobs = knobs, .n_knobs = 2 };
        _cleanup_free_ char *without = render(&s), *with = NULL;

        assert_null(strstr(without, "thpguard_lock"));
        assert_null(strstr(without, "thpguard_refused_writes_total"));
        s.lock = "fanotify";
        with = render(&s);
        assert_non_null(
            strstr(with, "\n# TYPE thpguard_lock gauge\nthpguard_lock{mechanism=\"fanotify\"} 1\n"));
        assert_non_null(
            strstr(with, "\n# TYPE thpguard_refused_writes_total counter\n"
                         "thpguard_refused_writes_total{knob=\"enabled\",writer=\"sh\"} 7\n"
                         "thpguard_refused_writes_total{knob=\"enabled\",writer=\"tuned.service\"} 500\n"
                         "thpguard_refused_writes_total{knob=\"enabled\",writer=\"other\"} 1\n#"));
        assert_every_family_documented(with);
}

static void test_kernel(void **state) {
        MetricsKernel k = {
                .anon_huge_pages_bytes = 4096 * 1024,
                .shmem_huge_pages_bytes = METRICS_UNKNOWN,
                .n_vmstat = 2,
                .vmstat = { { "thp_fault_alloc", 12 }, { "compact_stall", 3 } },
                .khugepaged_cpu_usec = METRICS_UNKNOWN,
                .memory_some_stall_usec = METRICS_UNKNOWN,
                .memory_full_stall_usec = METRICS_UNKNOWN,
        };
        MetricsSnapshot s = { .up = true, .recheck_interval_sec = 30, .kernel = &k };
        _cleanup_free_ char *text = render(&s);

        assert_non_null(strstr(text, "\nthpguard_anon_huge_pages_bytes 4194304\n"));
        /* Unknown: the family is left out, not reported as 0. */
        assert_null(strstr(text, "thpguard_shmem_huge_pages_bytes"));
        assert_null(strstr(text, "thpguard_khugepaged_cpu_seconds_total"));
        assert_null(strstr(text, "thpguard_memory_pressure_stalled_seconds_total"));
        assert_non_null(strstr(text, "# TYPE thpguard_vmstat_total counter\n"
                                     "thpguard_vmstat_total{counter=\"thp_fault_alloc\"} 12\n"
                                     "thpguard_vmstat_total{counter=\"compact_stall\"} 3\n"));
        assert_every_family_documented(text);
}

/* khugepaged's CPU time and the PSI totals, microseconds as seconds with six decimals. */
static void test_kernel_cpu_and_pressure(void **state) {
        MetricsKernel k = {
                .anon_huge_pages_bytes = METRICS_UNKNOWN,
                .shmem_huge_pages_bytes = METRICS_UNKNOWN,
                .khugepaged_cpu_usec = UINT64_C(12340000),
                .memory_some_stall_usec = UINT64_C(6819663209),
                .memory_full_stall_usec = 7,
        };
        MetricsSnapshot s = { .up = true, .recheck_interval_sec = 30, .kernel = &k };
        _cleanup_free_ char *text = render(&s), *text2 = NULL;

        assert_non_null(strstr(text, "# TYPE thpguard_khugepaged_cpu_seconds_total counter\n"
                                     "thpguard_khugepaged_cpu_seconds_total 12.340000\n"));
        assert_non_null(strstr(text,
                               "# TYPE thpguard_memory_pressure_stalled_seconds_total counter\n"
                               "thpguard_memory_pressure_stalled_seconds_total{kind=\"some\"} 6819.663209\n"
                               "thpguard_memory_pressure_stalled_seconds_total{kind=\"full\"} 0.000007\n"));
        assert_every_family_documented(text);

        /* A kernel whose PSI file has no "full" line: "some" alone. */
        k.memory_full_stall_usec = METRICS_UNKNOWN;
        text2 = render(&s);
        assert_non_null(
            strstr(text2, "thpguard_memory_pressure_stalled_seconds_total{kind=\"some\"} 6819.663209\n"));
        assert_null(strstr(text2, "{kind=\"full\"}"));
        assert_every_family_documented(text2);
}

static size_t count_of(const char *text, const char *needle) {
        size_t n = 0;

        for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
                n++;
        return n;
}

/* A MetricsKernel with every node-wide figure unknown: only what a test adds is written. */
static MetricsKernel *kernel_unknown(void) {
        MetricsKernel *k = calloc(1, sizeof(*k));

        assert_non_null(k);
        k->anon_huge_pages_bytes = k->shmem_huge_pages_bytes = METRICS_UNKNOWN;
        k->khugepaged_cpu_usec = k->memory_some_stall_usec = k->memory_full_stall_usec = METRICS_UNKNOWN;
        return k;
}

/* name = value in size kb's stats, after those added before; a new size after the others. */
static void size_add(MetricsKernel *k, uint64_t kb, const char *name, uint64_t value) {
        MetricsSize *z = &k->sizes[k->n_sizes - (k->n_sizes > 0)];

        if (k->n_sizes == 0 || z->size_kb != kb) {
                z = &k->sizes[k->n_sizes++];
                *z = (MetricsSize){ .size_kb = kb };
        }
        snprintf(z->stats[z->n_stats].name, sizeof(z->stats[0].name), "%s", name);
        z->stats[z->n_stats++].value = value;
}

/*
 * The per-size stats: every counter in one family, every nr_* in a gauge
 * family of its own (kind without the nr_), each family's samples
 * together, sizes ascending; a family with no sample is left out.
 */
static void test_kernel_sizes(void **state) {
        _cleanup_free_ MetricsKernel *k = kernel_unknown();
        MetricsSnapshot s = { .up = true, .recheck_interval_sec = 30, .kernel = k };
        _cleanup_free_ char *text = NULL, *counters_only = NULL, *none = NULL;

        size_add(k, 16, "anon_fault_alloc", 5);
        size_add(k, 16, "anon_fault_fallback", 1);
        size_add(k, 16, "nr_anon", 2);
        size_add(k, 16, "split", 0);
        size_add(k, 2048, "anon_fault_alloc", UINT64_C(18446744073709551615));
        size_add(k, 2048, "nr_anon", 4);
        size_add(k, 2048, "nr_anon_partially_mapped", 1);
        size_add(k, 2048, "zswpout", 3);
        text = render(&s);
        assert_non_null(
            strstr(text, "\n# TYPE thpguard_thp_size_events_total counter\n"
                         "thpguard_thp_size_events_total{size=\"16kB\",counter=\"anon_fault_alloc\"} 5\n"
                         "thpguard_thp_size_events_total{size=\"16kB\",counter=\"anon_fault_fallback\"} 1\n"
                         "thpguard_thp_size_events_total{size=\"16kB\",counter=\"split\"} 0\n"
                         "thpguard_thp_size_events_total{size=\"2048kB\",counter=\"anon_fault_alloc\"} "
                         "18446744073709551615\n"
                         "thpguard_thp_size_events_total{size=\"2048kB\",counter=\"zswpout\"} 3\n"
                         "# HELP thpguard_thp_size_pages "));
        assert_non_null(
            strstr(text, "\n# TYPE thpguard_thp_size_pages gauge\n"
                         "thpguard_thp_size_pages{size=\"16kB\",kind=\"anon\"} 2\n"
                         "thpguard_thp_size_pages{size=\"2048kB\",kind=\"anon\"} 4\n"
                         "thpguard_thp_size_pages{size=\"2048kB\",kind=\"anon_partially_mapped\"} 1\n"));
        assert_int_equal(count_of(text, "# TYPE thpguard_thp_size_events_total "), 1);
        assert_int_equal(count_of(text, "# TYPE thpguard_thp_size_pages "), 1);
        assert_int_equal(count_of(text, "\nthpguard_thp_size_"), 8);
        assert_every_family_documented(text);

        /* No nr_* (6.8's stats/: anon_* only): no gauge family. */
        k->n_sizes = 0;
        size_add(k, 64, "anon_fault_alloc", 1);
        counters_only = render(&s);
        assert_non_null(
            strstr(counters_only,
                   "\nthpguard_thp_size_events_total{size=\"64kB\",counter=\"anon_fault_alloc\"} 1\n"));
        assert_null(strstr(counters_only, "thpguard_thp_size_pages"));
        assert_every_family_documented(counters_only);

        /* No stats/ at all (before 6.8): neither family, no line rather than a 0. */
        k->n_sizes = 0;
        none = render(&s);
        assert_null(strstr(none, "thpguard_thp_size"));
        assert_every_family_documented(none);
}

static char *slurp(const char *path) {
        FILE *f = fopen(path, "re");
        char *buf = calloc(1, 1 << 16);
        size_t n;

        assert_non_null(f);
        assert_non_null(buf);
        n = fread(buf, 1, (1 << 16) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

static size_t count_entries(const char *dir) {
        char cmd[600];
        FILE *p;
        size_t n = 0;
        int c;

        snprintf(cmd, sizeof(cmd), "ls -A '%s'", dir);
        p = popen(cmd, "r");
        assert_non_null(p);
        while ((c = fgetc(p)) != EOF)
                n += c == '\n';
        pclose(p);
        return n;
}

static void test_write_file(void **state) {
        _cleanup_free_ char *dir = tmpdir(), *expected = NULL, *got = NULL, *got2 = NULL;
        MetricsKnob k[] = { knob("enabled") };
        MetricsSnapshot s = { .up = true, .recheck_interval_sec = 30, .knobs = k, .n_knobs = 1 };
        char path[512], missing[512];
        struct stat st1, st2;
        mode_t old_umask;

        snprintf(path, sizeof(path), "%s/thpguard.prom", dir);
        old_umask = umask(077);
        assert_int_equal(metrics_write_file(path, &s), 0);
        umask(old_umask);
        assert_int_equal(stat(path, &st1), 0);
        /* Readable by node-exporter's user, whatever our umask. */
        assert_int_equal(st1.st_mode & 07777, 0644);
        expected = render(&s);
        got = slurp(path);
        assert_string_equal(got, expected);
        assert_int_equal(count_entries(dir), 1);

        /* A rewrite replaces the file (a new inode by rename), never edits it in place. */
        k[0].corrections[TRIGGER_RECHECK] = 9;
        assert_int_equal(metrics_write_file(path, &s), 0);
        assert_int_equal(stat(path, &st2), 0);
        assert_int_not_equal(st1.st_ino, st2.st_ino);
        got2 = slurp(path);
        assert_non_null(strstr(got2, "trigger=\"recheck\"} 9\n"));
        assert_int_equal(count_entries(dir), 1);

        /* A directory that does not exist: an error, and nothing is left anywhere. */
        snprintf(missing, sizeof(missing), "%s/nope/thpguard.prom", dir);
        assert_int_equal(metrics_write_file(missing, &s), -ENOENT);
        assert_int_equal(count_entries(dir), 1);
        remove_tree(dir);
}

/* The daemon replaces only a file it wrote itself: the rename would replace anything else. */
static void test_file_check_ours(void **state) {
        _cleanup_free_ char *dir = tmpdir();
        MetricsSnapshot s = { .up = true, .recheck_interval_sec = 30 };
        char path[512], other[512], link[512], why[128];
        FILE *f;

        snprintf(path, sizeof(path), "%s/thpguard.prom", dir);
        /* Not there yet: it will be ours. */
        assert_int_equal(metrics_file_check_ours(path, why, sizeof(why)), 0);
        assert_int_equal(metrics_write_file(path, &s), 0);
        assert_int_equal(metrics_file_check_ours(path, why, sizeof(why)), 0);

        /* Someone else's file with the name: refused, and left as it is. */
        snprintf(other, sizeof(other), "%s/node.prom", dir);
        f = fopen(other, "w");
        assert_non_null(f);
        fputs("# HELP node_thing Another collector's file.\nnode_thing 1\n", f);
        fclose(f);
        assert_int_equal(metrics_file_check_ours(other, why, sizeof(why)), -EPERM);
        assert_string_equal(why, "exists and does not start like a file thpguardd wrote");
        /* A file shorter than the line. */
        f = fopen(other, "w");
        fclose(f);
        assert_int_equal(metrics_file_check_ours(other, why, sizeof(why)), -EPERM);
        /* A symlink to our own file is not followed. */
        snprintf(link, sizeof(link), "%s/link.prom", dir);
        assert_int_equal(symlink(path, link), 0);
        assert_true(metrics_file_check_ours(link, why, sizeof(why)) < 0);
        /* A directory with the name. */
        snprintf(link, sizeof(link), "%s/d.prom", dir);
        assert_int_equal(mkdir(link, 0755), 0);
        assert_true(metrics_file_check_ours(link, why, sizeof(why)) < 0);
        /* Not a .prom name at all. */
        assert_int_equal(metrics_file_check_ours("/etc/passwd", why, sizeof(why)), -EINVAL);
        assert_false(path_is_textfile_name("/x/.thpguard.prom.AbC123"));
        assert_true(path_is_textfile_name("/x/t.prom"));
        remove_tree(dir);
}

static void make_dir(const char *dir, const char *rel, mode_t mode, uid_t uid, char *buf, size_t size) {
        snprintf(buf, size, "%s/%s", dir, rel);
        assert_int_equal(mkdir(buf, mode), 0);
        assert_int_equal(chmod(buf, mode), 0);
        assert_int_equal(chown(buf, uid, (gid_t)-1), 0);
}

/*
 * Whoever owns a parent of the metrics directory swaps the
 * directory, or the parent itself, for a symlink to another directory: the
 * writer follows neither and creates nothing there.
 */
static void test_write_file_symlink_swap(void **state) {
        _cleanup_free_ char *dir = tmpdir();
        MetricsSnapshot s = { .up = true, .recheck_interval_sec = 30 };
        char parent[256], metrics[256], target[256], path[300], moved[400], held[300];

        if (geteuid() != 0)
                skip();
        /* Debian's layout: a root-owned 0755 textfile directory in a directory another user owns. */
        make_dir(dir, "parent", 0755, 65534, parent, sizeof(parent));
        make_dir(dir, "parent/metrics", 0755, 0, metrics, sizeof(metrics));
        make_dir(dir, "target", 0755, 0, target, sizeof(target));
        snprintf(path, sizeof(path), "%s/thpguard.prom", metrics);
        assert_int_equal(metrics_write_file(path, &s), 0);
        assert_int_equal(count_entries(metrics), 1);

        /* The directory itself becomes a symlink. */
        snprintf(moved, sizeof(moved), "%s/metrics.old", parent);
        assert_int_equal(rename(metrics, moved), 0);
        assert_int_equal(symlink(target, metrics), 0);
        assert_int_equal(metrics_write_file(path, &s), -ELOOP);
        assert_int_equal(count_entries(target), 0);
        assert_non_null(strstr(fileio_strerror(ELOOP), "symbolic link"));

        /* A component higher up: parent a symlink to a directory holding a "metrics" that is root's. */
        assert_int_equal(unlink(metrics), 0);
        assert_int_equal(rename(moved, metrics), 0);
        snprintf(held, sizeof(held), "%s/parent.real", dir);
        assert_int_equal(rename(parent, held), 0);
        assert_int_equal(symlink(held, parent), 0);
        assert_int_equal(metrics_write_file(path, &s), -ELOOP);
        snprintf(moved, sizeof(moved), "%s/metrics", held);
        assert_int_equal(count_entries(moved), 1); /* only the first write's file */
        remove_tree(dir);
}

/* A directory that belongs to another user is refused, whatever its mode, and nothing is created in it. */
static void test_write_file_foreign_dir(void **state) {
        _cleanup_free_ char *dir = tmpdir();
        MetricsSnapshot s = { .up = true, .recheck_interval_sec = 30 };
        const mode_t modes[] = { 0755, 0700, 0777 };
        char m[256], path[300];

        if (geteuid() != 0)
                skip();
        make_dir(dir, "m", 0755, 65534, m, sizeof(m));
        snprintf(path, sizeof(path), "%s/thpguard.prom", m);
        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                assert_int_equal(chmod(m, modes[i]), 0);
                assert_int_equal(metrics_write_file(path, &s), -FILEIO_EUNSAFE_DIR);
                assert_int_equal(count_entries(m), 0);
        }
        assert_non_null(strstr(fileio_strerror(FILEIO_EUNSAFE_DIR), "written by a user other than root"));
        /* Root's again, and only root may write it: written. */
        assert_int_equal(chown(m, 0, (gid_t)-1), 0);
        assert_int_equal(chmod(m, 0755), 0);
        assert_int_equal(metrics_write_file(path, &s), 0);
        assert_int_equal(count_entries(m), 1);
        /* A relative path is no metrics path. */
        assert_int_equal(metrics_write_file("thpguard.prom", &s), -EINVAL);
        remove_tree(dir);
}

/*
 * A root-owned directory that others may write (a Kubernetes emptyDir is
 * 0777, /tmp 1777) is refused too: whoever can write it could plant what we
 * would then present as ours. In a safe one, a symlink left at the file's
 * name is replaced, not followed.
 */
static void test_write_file_shared_dir(void **state) {
        _cleanup_free_ char *dir = tmpdir();
        MetricsSnapshot s = { .up = true, .recheck_interval_sec = 30 };
        const mode_t modes[] = { 0777, 01777, 0775, 0757 };
        char m[256], path[300], outside[256], victim[300];
        _cleanup_free_ char *text = NULL;
        struct stat st;

        if (geteuid() != 0)
                skip();
        make_dir(dir, "m", 0777, 0, m, sizeof(m));
        make_dir(dir, "outside", 0755, 0, outside, sizeof(outside));
        write_text(outside, "victim", "untouched\n");
        snprintf(victim, sizeof(victim), "%s/victim", outside);
        snprintf(path, sizeof(path), "%s/thpguard.prom", m);
        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                assert_int_equal(chmod(m, modes[i]), 0);
                assert_int_equal(metrics_write_file(path, &s), -FILEIO_EUNSAFE_DIR);
                assert_int_equal(count_entries(m), 0);
        }

        assert_int_equal(chmod(m, 0755), 0);
        assert_int_equal(symlink(victim, path), 0);
        assert_int_equal(metrics_write_file(path, &s), 0);
        text = slurp(victim);
        assert_string_equal(text, "untouched\n");
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_uid, 0);
        assert_int_equal(count_entries(m), 1);
        remove_tree(dir);
}

/*
 * A symbolic link on the way (/var/run -> /run) is followed where the
 * policy's path check would follow it: every directory up to it is root's
 * and only root may write it (so only root can have placed the link), as
 * /run/... is. After a directory another user owns or may write, none is.
 */
static void test_write_file_root_links(void **state) {
        char dir[] = "/run/thpguard-unit-metrics.XXXXXX", run[64], textfile[128], link[256], path[320];
        char shared[64], foreign[64], below[128], why[128];
        MetricsSnapshot s = { .up = true, .recheck_interval_sec = 30 };
        const uint64_t now = (uint64_t)time(NULL) * SEC;

        if (geteuid() != 0)
                skip();
        assert_non_null(mkdtemp(dir));
        assert_int_equal(chmod(dir, 0755), 0);
        make_dir(dir, "run", 0755, 0, run, sizeof(run));
        make_dir(dir, "run/textfile", 0755, 0, textfile, sizeof(textfile));

        /* Absolute, as Debian's /var/run -> /run, and relative. */
        snprintf(link, sizeof(link), "%s/varrun", dir);
        assert_int_equal(symlink(run, link), 0);
        snprintf(path, sizeof(path), "%s/textfile/thpguard.prom", link);
        assert_int_equal(metrics_file_check_ours(path, why, sizeof(why)), 0);
        assert_int_equal(metrics_write_file(path, &s), 0);
        assert_int_equal(count_entries(textfile), 1);
        assert_int_equal(metrics_file_check_ours(path, why, sizeof(why)), 0);
        assert_int_equal(metrics_check_alive(path, now, why, sizeof(why)), 0);
        snprintf(link, sizeof(link), "%s/rel", dir);
        assert_int_equal(symlink("run/textfile", link), 0);
        snprintf(path, sizeof(path), "%s/thpguard.prom", link);
        assert_int_equal(metrics_write_file(path, &s), 0);
        assert_int_equal(count_entries(textfile), 1);

        /* The link in a directory others may write (sticky or not): not followed, until it is safe. */
        make_dir(dir, "shared", 01777, 0, shared, sizeof(shared));
        snprintf(link, sizeof(link), "%s/l", shared);
        assert_int_equal(symlink(run, link), 0);
        snprintf(path, sizeof(path), "%s/textfile/thpguard.prom", link);
        assert_int_equal(metrics_write_file(path, &s), -ELOOP);
        assert_int_equal(metrics_file_check_ours(path, why, sizeof(why)), -ELOOP);
        assert_string_equal(why, fileio_strerror(ELOOP));
        assert_int_equal(metrics_check_alive(path, now, why, sizeof(why)), -ELOOP);
        assert_int_equal(chmod(shared, 0755), 0);
        assert_int_equal(metrics_write_file(path, &s), 0);

        /* In a directory of another user's, or anywhere below one: not followed. */
        make_dir(dir, "foreign", 0755, 65534, foreign, sizeof(foreign));
        make_dir(dir, "foreign/below", 0755, 0, below, sizeof(below));
        snprintf(link, sizeof(link), "%s/l", foreign);
        assert_int_equal(symlink(run, link), 0);
        snprintf(path, sizeof(path), "%s/textfile/thpguard.prom", link);
        assert_int_equal(metrics_write_file(path, &s), -ELOOP);
        snprintf(link, sizeof(link), "%s/l", below);
        assert_int_equal(symlink(run, link), 0);
        snprintf(path, sizeof(path), "%s/textfile/thpguard.prom", link);
        assert_int_equal(metrics_write_file(path, &s), -ELOOP);
        assert_int_equal(count_entries(textfile), 1);
        remove_tree(dir);
}

/*
 * The figures an old or THP-less kernel leaves unknown (no pressure/, no
 * khugepaged: metrics-kernel.c's test_kernel_metrics_absent): the file then
 * has neither family, no line rather than a 0.
 */
static void test_kernel_metrics_absent(void **state) {
        _cleanup_free_ char *text = NULL;
        MetricsKernel k = {
                .anon_huge_pages_bytes = 2097152,
                .shmem_huge_pages_bytes = METRICS_UNKNOWN,
                .n_vmstat = 1,
                .vmstat = { { "thp_fault_alloc", 1 } },
                .khugepaged_cpu_usec = METRICS_UNKNOWN,
                .memory_some_stall_usec = METRICS_UNKNOWN,
                .memory_full_stall_usec = METRICS_UNKNOWN,
        };
        MetricsSnapshot s = { .up = true, .recheck_interval_sec = 30, .kernel = &k };

        text = render(&s);
        assert_non_null(strstr(text, "\nthpguard_anon_huge_pages_bytes 2097152\n"));
        assert_null(strstr(text, "khugepaged"));
        assert_null(strstr(text, "pressure"));
        assert_every_family_documented(text);
}

static void set_mtime(const char *path, uint64_t sec) {
        struct timespec ts[2] = { { .tv_sec = (time_t)sec }, { .tv_sec = (time_t)sec } };

        assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void test_alive(void **state) {
        _cleanup_free_ char *dir = tmpdir();
        MetricsSnapshot s = { .up = true, .recheck_interval_sec = 30 };
        const uint64_t t0 = UINT64_C(1800000000);
        char path[512], why[512];

        snprintf(path, sizeof(path), "%s/thpguard.prom", dir);
        assert_int_equal(metrics_check_alive(path, t0 * SEC, why, sizeof(why)), -ENOENT);

        assert_int_equal(metrics_write_file(path, &s), 0);
        set_mtime(path, t0);
        assert_int_equal(metrics_check_alive(path, (t0 + 5) * SEC, why, sizeof(why)), 0);
        /* 2 x 30 s + 10 s of grace. */
        assert_int_equal(metrics_check_alive(path, (t0 + 70) * SEC, why, sizeof(why)), 0);
        assert_int_equal(metrics_check_alive(path, (t0 + 71) * SEC, why, sizeof(why)), -ESTALE);
        assert_non_null(strstr(why, "stuck"));
        /* The clock went back: not a reason to kill the pod. */
        assert_int_equal(metrics_check_alive(path, (t0 - 1000) * SEC, why, sizeof(why)), 0);

        /* The bound follows the interval the file states. */
        s.recheck_interval_sec = 300;
        assert_int_equal(metrics_write_file(path, &s), 0);
        set_mtime(path, t0);
        assert_int_equal(metrics_check_alive(path, (t0 + 600) * SEC, why, sizeof(why)), 0);

        /* A clean stop wrote thpguard_up 0: not alive, however fresh. */
        s.up = false;
        assert_int_equal(metrics_write_file(path, &s), 0);
        set_mtime(path, t0);
        assert_int_equal(metrics_check_alive(path, t0 * SEC, why, sizeof(why)), -ESTALE);
        assert_non_null(strstr(why, "stopped"));

        write_text(dir, "thpguard.prom", "something_else 1\n");
        assert_int_equal(metrics_check_alive(path, t0 * SEC, why, sizeof(why)), -EBADMSG);
        remove_tree(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_exact),
                cmocka_unit_test(test_escaping),
                cmocka_unit_test(test_stopped_and_empty),
                cmocka_unit_test(test_write_probe_lost),
                cmocka_unit_test(test_lock),
                cmocka_unit_test(test_kernel),
                cmocka_unit_test(test_kernel_cpu_and_pressure),
                cmocka_unit_test(test_kernel_sizes),
                cmocka_unit_test(test_write_file),
                cmocka_unit_test(test_file_check_ours),
                cmocka_unit_test(test_write_file_symlink_swap),
                cmocka_unit_test(test_write_file_foreign_dir),
                cmocka_unit_test(test_write_file_shared_dir),
                cmocka_unit_test(test_write_file_root_links),
                cmocka_unit_test(test_kernel_metrics_absent),
                cmocka_unit_test(test_alive),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
