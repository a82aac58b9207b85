/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "thpguard/policy.h"

#define F "test.conf"

static int parse(const char *text, Diag *d, Policy **ret) {
        return policy_parse(F, text, strlen(text), d, ret);
}

/* Asserts that text is rejected and that diag holds exactly the given lines. */
static void expect_errors(const char *text, const char *const *want, size_t n_want) {
        _cleanup_diag_ Diag d = {};
        Policy *p = NULL;

        assert_int_equal(parse(text, &d, &p), -EINVAL);
        assert_null(p);
        if (d.n_entries != n_want)
                for (size_t i = 0; i < d.n_entries; i++)
                        print_message("  got: %s\n", d.entries[i].text);
        assert_int_equal(d.n_entries, n_want);
        for (size_t i = 0; i < n_want; i++)
                assert_string_equal(d.entries[i].text, want[i]);
}
#define EXPECT(text, ...)                                                                                   \
        do {                                                                                                \
                const char *const _w[] = { __VA_ARGS__ };                                                   \
                expect_errors(text, _w, sizeof(_w) / sizeof(_w[0]));                                        \
        } while (0)

static const char full[] = "mode = \"enforce\";\n"
                           "recheck_interval = 30;\n"
                           "thp = {\n"
                           "  enabled = \"madvise\";\n"
                           "  defrag = \"madvise\";\n"
                           "  shmem_enabled = \"never\";\n"
                           "  use_zero_page = true;\n"
                           "  shrink_underused = true;\n"
                           "  khugepaged = {\n"
                           "    defrag = false;\n"
                           "    pages_to_scan = 4096;\n"
                           "    scan_sleep_millisecs = 10000;\n"
                           "    alloc_sleep_millisecs = 60000;\n"
                           "    max_ptes_none = 511;\n"
                           "    max_ptes_swap = 64;\n"
                           "    max_ptes_shared = 256;\n"
                           "  };\n"
                           "  sizes = (\n"
                           "    { size = \"64kB\"; enabled = \"never\"; },\n"
                           "    { size = \"2048kB\"; enabled = \"inherit\"; shmem_enabled = \"inherit\"; }\n"
                           "  );\n"
                           "};\n";

static void test_full_example(void **state) {
        _cleanup_diag_ Diag d = {};
        _cleanup_policy_ Policy *p = NULL;
        static const struct {
                const char *path, *desired;
                unsigned line;
        } want[] = {
                { "enabled", "madvise", 4 },
                { "defrag", "madvise", 5 },
                { "shmem_enabled", "never", 6 },
                { "use_zero_page", "1", 7 },
                { "shrink_underused", "1", 8 },
                { "khugepaged/defrag", "0", 10 },
                { "khugepaged/pages_to_scan", "4096", 11 },
                { "khugepaged/scan_sleep_millisecs", "10000", 12 },
                { "khugepaged/alloc_sleep_millisecs", "60000", 13 },
                { "khugepaged/max_ptes_none", "511", 14 },
                { "khugepaged/max_ptes_swap", "64", 15 },
                { "khugepaged/max_ptes_shared", "256", 16 },
                { "hugepages-64kB/enabled", "never", 19 },
                { "hugepages-2048kB/enabled", "inherit", 20 },
                { "hugepages-2048kB/shmem_enabled", "inherit", 20 },
        };

        assert_int_equal(parse(full, &d, &p), 0);
        assert_int_equal(d.n_entries, 0);
        assert_int_equal(p->mode, POLICY_MODE_ENFORCE);
        assert_int_equal(p->recheck_interval_sec, 30);
        assert_null(p->metrics_file);
        assert_int_equal(p->n_knobs, sizeof(want) / sizeof(want[0]));
        for (size_t i = 0; i < p->n_knobs; i++) {
                assert_string_equal(p->knobs[i].path, want[i].path);
                assert_string_equal(p->knobs[i].desired, want[i].desired);
                assert_int_equal(p->knobs[i].line, want[i].line);
        }
}

static void test_defaults_and_empty(void **state) {
        _cleanup_diag_ Diag d = {};
        _cleanup_policy_ Policy *p = NULL;

        assert_int_equal(parse("mode = \"audit\";\nmetrics_file = \"/var/lib/node_exporter/thp.prom\";\n"
                               "thp = { enabled = \"never\"; };\n",
                               &d, &p),
                         0);
        assert_int_equal(p->mode, POLICY_MODE_AUDIT);
        assert_int_equal(p->recheck_interval_sec, POLICY_RECHECK_DEFAULT);
        assert_string_equal(p->metrics_file, "/var/lib/node_exporter/thp.prom");
        assert_null(p->nfd_features_file);
        assert_int_equal(p->write_probe_hook, WRITE_PROBE_HOOK_AUTO);
        assert_int_equal(p->write_probe_hook_line, 0);
        assert_int_equal(p->n_knobs, 1);
        assert_int_equal(d.n_entries, 0);
        p = policy_free(p);

        /* Each hook by name; the line is kept for the daemon's word on a hook it cannot change. */
        for (WriteProbeHook h = 0; h < _WRITE_PROBE_HOOK_MAX; h++) {
                char text[128];

                snprintf(text, sizeof(text), "thp = { enabled = \"never\"; };\nwrite_probe_hook = \"%s\";\n",
                         write_probe_hook_to_string(h));
                assert_int_equal(parse(text, &d, &p), 0);
                assert_int_equal(p->write_probe_hook, h);
                assert_int_equal(p->write_probe_hook_line, 2);
                p = policy_free(p);
        }

        /* An empty (truncated) file, or one with no knob, must not replace a good policy. */
        EXPECT("", F ": manages no knob; set at least one key in thp = { ... }");
        EXPECT("mode = \"audit\";\nthp = { sizes = ( { size = \"64kB\"; } ); };\n",
               F ": manages no knob; set at least one key in thp = { ... }");
}

static void test_unknown_keys(void **state) {
        EXPECT("modee = \"enforce\";\n",
               F ":1: policy: unknown key \"modee\" (expected mode, recheck_interval, fight_threshold, "
                 "fight_window, metrics_file, nfd_features_file, write_probe_hook or thp)");
        EXPECT("thp = {\n  enable = \"never\";\n};\n",
               F ":2: thp: unknown key \"enable\" (expected enabled, defrag, shmem_enabled, use_zero_page, "
                 "shrink_underused, khugepaged or sizes)");
        EXPECT(
            "thp = { khugepaged = {\n defragg = false; }; };\n", F
            ":2: thp.khugepaged: unknown key \"defragg\" (expected defrag, pages_to_scan, "
            "scan_sleep_millisecs, alloc_sleep_millisecs, max_ptes_none, max_ptes_swap or max_ptes_shared)");
        EXPECT("thp = { sizes = ( { size = \"64kB\";\n defrag = \"never\"; } ); };\n",
               F ":2: thp.sizes[0]: unknown key \"defrag\" (expected enabled or shmem_enabled)");
        /* Read-only files are not keys either. */
        EXPECT("thp = {\n hpage_pmd_size = 2097152; };\n",
               F ":2: thp: unknown key \"hpage_pmd_size\" (expected enabled, defrag, shmem_enabled, "
                 "use_zero_page, "
                 "shrink_underused, khugepaged or sizes)");
}

static void test_wrong_types(void **state) {
        EXPECT("recheck_interval = \"30\";\n", F ":1: recheck_interval: expected an integer, got a string");
        EXPECT("mode = 1;\n", F ":1: mode: expected a string, got an integer");
        EXPECT("write_probe_hook = 1;\n", F ":1: write_probe_hook: expected a string, got an integer");
        EXPECT("thp = {\n enabled = true; };\n", F ":2: thp.enabled: expected a string, got a boolean");
        EXPECT("thp = { khugepaged = {\n defrag = 0; }; };\n",
               F ":2: thp.khugepaged.defrag: expected a boolean (true or false), got an integer");
        EXPECT("thp = { khugepaged = {\n pages_to_scan = 1.5; }; };\n",
               F ":2: thp.khugepaged.pages_to_scan: expected an integer, got a float");
        EXPECT("thp = \"madvise\";\n", F ":1: thp: expected a group, thp = { ... }, got a string");
        EXPECT("thp = { sizes = \"64kB\"; };\n",
               F ":1: thp.sizes: expected a list of groups, ( { size = \"64kB\"; ... } ), got a string");
        EXPECT("thp = { sizes = ( \"64kB\" ); };\n",
               F ":1: thp.sizes[0]: expected a group, { size = \"64kB\"; ... }, got a string");
}

static void test_values_and_ranges(void **state) {
        EXPECT("mode = \"fix\";\n", F ":1: mode: invalid value \"fix\" (expected enforce, audit or lock)");
        EXPECT("thp = {\n enabled = \"bogus\"; };\n",
               F ":2: thp.enabled: invalid value \"bogus\" (expected always, madvise or never)");
        EXPECT("thp = {\n enabled = \"[madvise]\"; };\n",
               F ":2: thp.enabled: invalid value \"[madvise]\" (expected always, madvise or never)");
        EXPECT("thp = {\n enabled = \"inherit\"; };\n",
               F ":2: thp.enabled: invalid value \"inherit\" (expected always, madvise or never)");
        EXPECT("thp = {\n defrag = \"defer + madvise\"; };\n",
               F ":2: thp.defrag: invalid value \"defer + madvise\" (expected always, defer, defer+madvise, "
                 "madvise or never)");
        EXPECT("recheck_interval = 0;\n", F ":1: recheck_interval: 0 is out of range 1..86400");
        EXPECT("recheck_interval = 86401;\n", F ":1: recheck_interval: 86401 is out of range 1..86400");
        EXPECT("thp = { khugepaged = {\n pages_to_scan = 0; }; };\n",
               F ":2: thp.khugepaged.pages_to_scan: 0 is out of range 1..4294967295");
        EXPECT("thp = { khugepaged = {\n max_ptes_none = -1; }; };\n",
               F ":2: thp.khugepaged.max_ptes_none: -1 is out of range 0..4294967295");
        EXPECT("thp = { khugepaged = {\n scan_sleep_millisecs = 4294967296L; }; };\n",
               F ":2: thp.khugepaged.scan_sleep_millisecs: 4294967296 is out of range 0..4294967295");
        EXPECT("fight_threshold = 1001;\n", F ":1: fight_threshold: 1001 is out of range 0..1000");
        EXPECT("write_probe_hook = \"tracepoint\";\n",
               F ":1: write_probe_hook: invalid value \"tracepoint\" (expected auto, fexit, kprobe or "
                 "syscall-exit)");
        EXPECT(
            "write_probe_hook = \"KPROBE\";\n", F
            ":1: write_probe_hook: invalid value \"KPROBE\" (expected auto, fexit, kprobe or syscall-exit)");
        EXPECT("fight_window = 0;\n", F ":1: fight_window: 0 is out of range 1..86400");
        EXPECT("metrics_file = \"thp.prom\";\n", F ":1: metrics_file: \"thp.prom\" is not an absolute path");
        /* Only a Prometheus textfile: the rename would replace any other file. */
        EXPECT("metrics_file = \"/etc/passwd\";\n",
               F ":1: metrics_file: \"/etc/passwd\" is not a NAME.prom file");
        EXPECT("metrics_file = \"/x/.prom\";\n", F ":1: metrics_file: \"/x/.prom\" is not a NAME.prom file");
        EXPECT("metrics_file = \"/x/.hidden.prom\";\n",
               F ":1: metrics_file: \"/x/.hidden.prom\" is not a NAME.prom file");
        EXPECT("metrics_file = \"/x/y.prom.bak\";\n",
               F ":1: metrics_file: \"/x/y.prom.bak\" is not a NAME.prom file");
        EXPECT("nfd_features_file = \"thpguard\";\n",
               F ":1: nfd_features_file: \"thpguard\" is not an absolute path");
        EXPECT("nfd_features_file = 3;\n", F ":1: nfd_features_file: expected a string, got an integer");
}

static void test_sizes(void **state) {
        EXPECT("thp = { sizes = (\n { size = \"64k\"; enabled = \"never\"; } ); };\n",
               F ":2: thp.sizes[0].size: malformed size \"64k\" (expected <digits>kB, such as \"64kB\")");
        /* Path traversal through a size never reaches a path. */
        EXPECT("thp = { sizes = (\n { size = \"../../power/state\"; enabled = \"never\"; } ); };\n",
               F ":2: thp.sizes[0].size: malformed size \"../../power/state\" (expected <digits>kB, such as "
                 "\"64kB\")");
        EXPECT("thp = { sizes = (\n { size = \"64kB/../../..\"; enabled = \"never\"; } ); };\n",
               F ":2: thp.sizes[0].size: malformed size \"64kB/../../..\" (expected <digits>kB, such as "
                 "\"64kB\")");
        EXPECT("thp = { sizes = (\n { enabled = \"never\"; } ); };\n",
               F ":2: thp.sizes[0]: missing key \"size\"");
        EXPECT("thp = { sizes = (\n { size = 64; } ); };\n",
               F ":2: thp.sizes[0].size: expected a string such as \"64kB\", got an integer");
        EXPECT("thp = { sizes = (\n"
               "  { size = \"64kB\"; enabled = \"never\"; },\n"
               "  { size = \"64kB\"; enabled = \"always\"; }\n"
               "); };\n",
               F ":3: thp.sizes[1].size: duplicate size \"64kB\" (first given at line 2)");
        EXPECT(
            "thp = { sizes = (\n { size = \"64kB\";\n shmem_enabled = \"deny\"; } ); };\n", F
            ":3: thp.sizes[0].shmem_enabled: invalid value \"deny\" (expected always, inherit, within_size, "
            "advise or never)");
}

static void test_syntax_and_includes(void **state) {
        EXPECT("thp = {\n enabled = \"madvise\"\n defrag = ;\n};\n", F ":3: syntax error");
        EXPECT("mode = \"enforce\";\nmode = \"audit\";\n", F ":2: duplicate setting name");
        EXPECT("thp = {};\n@include \"/etc/passwd\"\n", F ":2: @include is not supported in a policy");
}

static void test_all_errors_in_one_run(void **state) {
        EXPECT("mode = \"x\";\n"
               "recheck_interval = 0;\n"
               "thp = {\n"
               "  enabled = \"sometimes\";\n"
               "  khugepaged = { defrag = \"no\"; };\n"
               "  bogus = 1;\n"
               "};\n",
               F ":1: mode: invalid value \"x\" (expected enforce, audit or lock)",
               F ":2: recheck_interval: 0 is out of range 1..86400",
               F ":4: thp.enabled: invalid value \"sometimes\" (expected always, madvise or never)",
               F ":5: thp.khugepaged.defrag: expected a boolean (true or false), got a string",
               F ":6: thp: unknown key \"bogus\" (expected enabled, defrag, shmem_enabled, use_zero_page, "
                 "shrink_underused, khugepaged or sizes)");
}

static void test_wrapped_integers(void **state) {
        /* libconfig 1.5 would read these as 1762359 and -1294967296 without a word. */
        EXPECT("thp = { khugepaged = {\n pages_to_scan = 4296729655; }; };\n", F
               ":2: integer 4296729655 is too large for libconfig without the L suffix (write 4296729655L)");
        EXPECT(
            "thp = { khugepaged = {\n scan_sleep_millisecs = 3000000000;\n max_ptes_none = 0x100000000; }; "
            "};\n",
            F ":2: integer 3000000000 is too large for libconfig without the L suffix (write 3000000000L)",
            F
            ":3: integer 0x100000000 is too large for libconfig without the L suffix (write 0x100000000L)");
        EXPECT("recheck_interval = -99999999999;\n", F ":1: integer -99999999999 is too large for libconfig "
                                                       "without the L suffix (write -99999999999L)");

        /* With L it is read right, and then range-checked as usual. */
        _cleanup_diag_ Diag d = {};
        _cleanup_policy_ Policy *p = NULL;
        assert_int_equal(
            parse("# 99999999999 in a comment\nthp = { khugepaged = { scan_sleep_millisecs = "
                  "3000000000L; pages_to_scan = 2147483647; }; sizes = ( { size = \"99999999999kB\"; "
                  "enabled = \"never\"; } ); };\n",
                  &d, &p),
            -EINVAL);
        assert_int_equal(d.n_errors, 1); /* only the size: 11 digits */
        assert_non_null(strstr(d.entries[0].text, "malformed size"));
        diag_done(&d);
        assert_int_equal(
            parse("thp = { khugepaged = { scan_sleep_millisecs = 3000000000L; x1 = 1.5e10; }; };\n", &d, &p),
            -EINVAL);
        assert_int_equal(d.n_errors, 1); /* the unknown key, not the float */
}

static void test_settings_cap(void **state) {
        _cleanup_diag_ Diag d = {};
        _cleanup_free_ char *text = malloc(POLICY_SETTINGS_MAX * 16 + 64);
        Policy *p = NULL;
        size_t used = 0;

        assert_non_null(text);
        used += (size_t)sprintf(text, "thp = { enabled = \"never\"; };\n");
        for (int i = 0; i < POLICY_SETTINGS_MAX; i++)
                used += (size_t)sprintf(text + used, "k%d = 1;\n", i);
        assert_int_equal(policy_parse(F, text, used, &d, &p), -E2BIG);
        assert_null(p);
        assert_string_equal(d.entries[0].text, F ": has 1026 settings; a policy may have at most 1024");
        /* '=' inside strings and comments is not a setting. */
        diag_done(&d);
        assert_int_equal(parse("# a = b = c\nthp = { enabled = \"never\"; }; /* x = 1 */\n", &d, &p), 0);
        policy_free(p);
}

/*
 * libconfig 1.5 leaks the string token it discards on a syntax error: the
 * pre-scan refuses a literal longer than POLICY_STRING_MAX before libconfig
 * sees the text (the syntax error that follows is then not reported), and
 * lets one of exactly that length through.
 */
static void test_string_bound(void **state) {
        _cleanup_diag_ Diag d = {};
        _cleanup_free_ char *text = malloc(3 * POLICY_STRING_MAX + 256);
        _cleanup_free_ char *path = malloc(POLICY_STRING_MAX + 1);
        char want[128];
        Policy *p = NULL;

        assert_non_null(text);
        assert_non_null(path);
        /* The longest path that may be written, at the bound exactly. */
        memset(path, 'm', POLICY_STRING_MAX);
        path[0] = '/';
        memcpy(path + POLICY_STRING_MAX - 5, ".prom", 5);
        path[POLICY_STRING_MAX] = '\0';
        sprintf(text, "metrics_file = \"%s\";\nthp = { enabled = \"never\"; };\n", path);
        assert_int_equal(parse(text, &d, &p), 0);
        assert_int_equal(strlen(p->metrics_file), POLICY_STRING_MAX);
        policy_free(p);
        p = NULL;

        /* One byte more, on line 2, then a syntax error libconfig never gets to see; a
         * second one on line 4 (escapes count as written, and a literal may span lines). */
        sprintf(text, "thp = { enabled = \"never\"; };\nmetrics_file = \"%sx\";\n!!!\nx = \"%.*s\\\"\n\";\n",
                path, POLICY_STRING_MAX - 2, path);
        assert_int_equal(parse(text, &d, &p), -EINVAL);
        assert_null(p);
        assert_int_equal(d.n_entries, 2);
        snprintf(want, sizeof(want), F ":2: string literal longer than %d bytes", POLICY_STRING_MAX);
        assert_string_equal(d.entries[0].text, want);
        snprintf(want, sizeof(want), F ":4: string literal longer than %d bytes", POLICY_STRING_MAX);
        assert_string_equal(d.entries[1].text, want);

        /* Not a string: a quote in a comment. */
        diag_done(&d);
        memset(path, 'c', POLICY_STRING_MAX);
        sprintf(text, "# \"%s\nthp = { enabled = \"never\"; };\n", path);
        assert_int_equal(parse(text, &d, &p), 0);
        policy_free(p);
}

static void test_buffer_limits(void **state) {
        _cleanup_diag_ Diag d = {};
        _cleanup_free_ char *big = NULL;
        Policy *p = NULL;

        assert_int_equal(policy_parse(F, "mode = \"enforce\";\0x", 19, &d, &p), -EINVAL);
        assert_string_equal(d.entries[0].text, F ": contains a NUL byte; a policy is a text file");

        big = malloc(POLICY_SIZE_MAX + 1);
        assert_non_null(big);
        memset(big, '#', POLICY_SIZE_MAX + 1);
        assert_int_equal(policy_parse(F, big, POLICY_SIZE_MAX + 1, &d, &p), -EFBIG);
        assert_null(p);
}

static void test_owner_rule(void **state) {
        _cleanup_diag_ Diag d = {};
        struct stat st = { .st_uid = 0, .st_mode = S_IFREG | 0644 };

        /* A ConfigMap mount: root-owned 0644. */
        assert_int_equal(policy_check_owner(F, &st, 0, &d), 0);
        assert_int_equal(d.n_entries, 0);

        st.st_mode = S_IFREG | 0664;
        assert_int_equal(policy_check_owner(F, &st, 0, &d), -EPERM);
        assert_string_equal(d.entries[0].text,
                            F ": mode 0664 lets group or others write it; refusing it (chmod go-w)");
        st.st_mode = S_IFREG | 0646;
        assert_int_equal(policy_check_owner(F, &st, 0, &d), -EPERM);

        st = (struct stat){ .st_uid = 1000, .st_mode = S_IFREG | 0600 };
        assert_int_equal(policy_check_owner(F, &st, 0, &d), -EPERM);
        assert_string_equal(d.entries[2].text, F ": owned by uid 1000, not root; refusing it");

        /* Not root: no refusal, but a warning of what root would do. */
        diag_done(&d);
        st.st_mode = S_IFREG | 0666;
        assert_int_equal(policy_check_owner(F, &st, 1000, &d), 0);
        assert_int_equal(d.n_errors, 0);
        assert_int_equal(d.n_warnings, 2);
}

/* A fresh directory that passes the StrictModes rule: as root, not under /tmp (mode 1777). */
static void make_test_dir(char *buf, size_t size) {
        snprintf(buf, size, "%s/thpguard-test-XXXXXX", geteuid() == 0 ? "/run" : "/tmp");
        assert_non_null(mkdtemp(buf));
}

static void write_file(const char *path, const char *text) {
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(fchmod(fd, 0644), 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
}

static void test_load_files(void **state) {
        char dir[64], path[256];
        _cleanup_diag_ Diag d = {};
        Policy *p = NULL;
        int fd;

        make_test_dir(dir, sizeof(dir));

        snprintf(path, sizeof(path), "%s/missing.conf", dir);
        assert_int_equal(policy_load(path, &d, &p), -ENOENT);
        assert_non_null(strstr(d.entries[0].text, "missing.conf: cannot open: No such file or directory"));

        assert_int_equal(policy_load(dir, &d, &p), -EINVAL);
        assert_non_null(strstr(d.entries[1].text, ": not a regular file"));

        snprintf(path, sizeof(path), "%s/fifo.conf", dir);
        assert_int_equal(mkfifo(path, 0600), 0);
        assert_int_equal(policy_load(path, &d, &p), -EINVAL); /* and it did not block */
        unlink(path);

        snprintf(path, sizeof(path), "%s/big.conf", dir);
        fd = open(path, O_CREAT | O_WRONLY, 0600);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, 10 * 1024 * 1024), 0);
        close(fd);
        assert_int_equal(policy_load(path, &d, &p), -EFBIG);
        assert_non_null(
            strstr(d.entries[3].text, "is 10485760 bytes; a policy may be at most 1048576 bytes"));
        unlink(path);

        snprintf(path, sizeof(path), "%s/good.conf", dir);
        write_file(path, full);
        assert_int_equal(policy_load(path, &d, &p), 0);
        assert_int_equal(p->n_knobs, 15);
        policy_free(p);
        /* thpguardd --audit: audit whatever the file says; without it, the file's enforce. */
        assert_int_equal(policy_load_as_daemon(path, false, &d, &p), 0);
        assert_int_equal(p->mode, POLICY_MODE_ENFORCE);
        policy_free(p);
        assert_int_equal(policy_load_as_daemon(path, true, &d, &p), 0);
        assert_int_equal(p->mode, POLICY_MODE_AUDIT);
        policy_free(p);
        unlink(path);
        rmdir(dir);
}

/* policy_load(path) fails with EPERM and exactly one error, "<path>: directory <dir> <why>". */
static void expect_refused(const char *path, const char *dir, const char *why) {
        _cleanup_diag_ Diag d = {};
        char want[512];
        Policy *p = NULL;

        snprintf(want, sizeof(want), "%s: directory %s %s", path, dir, why);
        assert_int_equal(policy_load(path, &d, &p), -EPERM);
        assert_null(p);
        if (d.n_entries != 1 || strcmp(d.entries[0].text, want) != 0)
                for (size_t i = 0; i < d.n_entries; i++)
                        print_message("  got: %s\n  want: %s\n", d.entries[i].text, want);
        assert_int_equal(d.n_entries, 1);
        assert_string_equal(d.entries[0].text, want);
}

static void expect_loaded(const char *path) {
        _cleanup_diag_ Diag d = {};
        Policy *p = NULL;

        assert_int_equal(policy_load(path, &d, &p), 0);
        for (size_t i = 0; i < d.n_entries; i++)
                print_message("  unexpected: %s\n", d.entries[i].text);
        assert_int_equal(d.n_entries, 0);
        policy_free(p);
}

#define WRITABLE(mode) "is mode " mode ": group or others can replace the policy; refusing it"

/*
 * StrictModes on the whole path: every directory a name is
 * looked up in, from / down and along each symlink, is root-owned and not
 * writable by group or others; sticky does not help. Root only: as another
 * user these are warnings (tests/integration/policy-permissions.sh).
 */
static void test_strict_path(void **state) {
        char dir[64], sub[128], open_dir[128], path[256], link[256], target[256];

        if (geteuid() != 0)
                skip();
        make_test_dir(dir, sizeof(dir));
        snprintf(sub, sizeof(sub), "%s/sub", dir);
        snprintf(open_dir, sizeof(open_dir), "%s/open", dir);
        assert_int_equal(mkdir(sub, 0755), 0);
        assert_int_equal(mkdir(open_dir, 0755), 0);
        snprintf(target, sizeof(target), "%s/target.conf", sub);
        write_file(target, full);
        expect_loaded(target);

        /* Group- or world-writable, sticky or not, or not root's: named, refused. */
        assert_int_equal(chmod(sub, 0775), 0);
        expect_refused(target, sub, WRITABLE("0775"));
        assert_int_equal(chmod(sub, 01777), 0);
        expect_refused(target, sub, WRITABLE("1777"));
        assert_int_equal(chmod(sub, 0755), 0);
        assert_int_equal(chown(sub, 1000, 0), 0);
        expect_refused(target, sub, "is owned by uid 1000, not root; refusing it");
        assert_int_equal(chown(sub, 0, 0), 0);
        expect_loaded(target);

        /* The attack: a link in a 0777 directory, to a root-owned file in a safe one. */
        snprintf(link, sizeof(link), "%s/thpguard.conf", open_dir);
        assert_int_equal(symlink(target, link), 0);
        expect_loaded(link);
        assert_int_equal(chmod(open_dir, 0777), 0);
        expect_refused(link, open_dir, WRITABLE("0777"));
        assert_int_equal(chmod(open_dir, 0755), 0);

        /* A link's target is checked too: a safe link to a file under /tmp. */
        assert_int_equal(unlink(link), 0);
        assert_int_equal(symlink("/tmp/thpguard.conf", link), 0);
        expect_refused(link, "/tmp", WRITABLE("1777"));
        assert_int_equal(unlink(link), 0);

        /* A directory reached through a relative link and "..": named by where it really is. */
        assert_int_equal(symlink("../sub", link), 0);
        snprintf(path, sizeof(path), "%s/thpguard.conf/./target.conf", open_dir);
        expect_loaded(path);
        assert_int_equal(chmod(sub, 0777), 0);
        expect_refused(path, sub, WRITABLE("0777"));
        assert_int_equal(chmod(sub, 0755), 0);
        assert_int_equal(unlink(link), 0);

        /* A relative path starts at the working directory, whose own path is checked. */
        assert_int_equal(chdir(sub), 0);
        expect_loaded("../sub/target.conf");
        assert_int_equal(chmod(dir, 0757), 0);
        expect_refused("../sub/target.conf", dir, WRITABLE("0757"));
        assert_int_equal(chmod(dir, 0700), 0);
        assert_int_equal(chdir("/"), 0);

        assert_int_equal(unlink(target), 0);
        assert_int_equal(rmdir(sub), 0);
        assert_int_equal(rmdir(open_dir), 0);
        assert_int_equal(rmdir(dir), 0);
}

static void test_mode_lock(void **state) {
        _cleanup_diag_ Diag d = {};
        _cleanup_policy_ Policy *p = NULL;

        assert_int_equal(parse("mode = \"lock\";\nthp = { enabled = \"never\"; };\n", &d, &p), 0);
        assert_int_equal(p->mode, POLICY_MODE_LOCK);
        assert_string_equal(policy_mode_to_string(p->mode), "lock");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_mode_lock),
                cmocka_unit_test(test_full_example),
                cmocka_unit_test(test_defaults_and_empty),
                cmocka_unit_test(test_unknown_keys),
                cmocka_unit_test(test_wrong_types),
                cmocka_unit_test(test_values_and_ranges),
                cmocka_unit_test(test_sizes),
                cmocka_unit_test(test_syntax_and_includes),
                cmocka_unit_test(test_all_errors_in_one_run),
                cmocka_unit_test(test_wrapped_integers),
                cmocka_unit_test(test_settings_cap),
                cmocka_unit_test(test_string_bound),
                cmocka_unit_test(test_buffer_limits),
                cmocka_unit_test(test_owner_rule),
                cmocka_unit_test(test_load_files),
                cmocka_unit_test(test_strict_path),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
