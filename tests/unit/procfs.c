/* SPDX-License-Identifier: MIT */
/* The /proc parsers on buffers: real reads from a 6.18 machine, then hostile ones. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "thpguard/procfs.h"

#define LIT(s) s, sizeof(s) - 1

static const char meminfo_real[] = "MemTotal:       24683620 kB\n"
                                   "MemFree:        24416904 kB\n"
                                   "MemAvailable:   24383836 kB\n"
                                   "Buffers:            1268 kB\n"
                                   "Active(anon):       1528 kB\n"
                                   "AnonPages:         10024 kB\n"
                                   "Shmem:              8952 kB\n"
                                   "VmallocTotal:   34359738367 kB\n"
                                   "AnonHugePages:      4096 kB\n"
                                   "ShmemHugePages:        0 kB\n"
                                   "ShmemPmdMapped:        0 kB\n"
                                   "FileHugePages:         0 kB\n"
                                   "FilePmdMapped:         0 kB\n"
                                   "HugePages_Total:       0\n"
                                   "Hugepagesize:       2048 kB\n"
                                   "DirectMap2M:    25135104 kB\n";

static void test_meminfo_real(void **state) {
        ProcMeminfo m;

        assert_int_equal(procfs_parse_meminfo(LIT(meminfo_real), &m), 0);
        assert_int_equal(m.mem_total_kb, 24683620);
        assert_int_equal(m.anon_pages_kb, 10024);
        assert_int_equal(m.anon_huge_pages_kb, 4096);
        assert_int_equal(m.shmem_pmd_mapped_kb, 0);
        assert_int_equal(m.hugepagesize_kb, 2048);

        /* A kernel without THP prints no AnonHugePages: unknown, not 0. */
        assert_int_equal(procfs_parse_meminfo(LIT("MemTotal: 100 kB\n"), &m), 0);
        assert_true(m.anon_huge_pages_kb == PROCFS_UNKNOWN);
}

static void test_meminfo_hostile(void **state) {
        ProcMeminfo m = { .mem_total_kb = 42 };

        assert_int_equal(procfs_parse_meminfo(LIT(""), &m), -EBADMSG);
        assert_int_equal(procfs_parse_meminfo(NULL, 0, &m), -EBADMSG);
        assert_int_equal(procfs_parse_meminfo(LIT("MemFree: 1 kB\n"), &m), -EBADMSG);  /* no MemTotal */
        assert_int_equal(procfs_parse_meminfo(LIT("MemTotal: 100 kB"), &m), -EBADMSG); /* cut mid-line */
        assert_int_equal(procfs_parse_meminfo(LIT("MemTotal: 1\0 kB\n"), &m), -EBADMSG);
        assert_int_equal(procfs_parse_meminfo(LIT("MemTotal: 1 kB\nMemTotal: 2 kB\n"), &m), -EBADMSG);
        assert_int_equal(procfs_parse_meminfo(LIT("MemTotal: 99999999999999999999999 kB\n"), &m), -EBADMSG);
        assert_int_equal(procfs_parse_meminfo(LIT("MemTotal: 12 MB\n"), &m), -EBADMSG);
        assert_int_equal(procfs_parse_meminfo(LIT("MemTotal: -12 kB\n"), &m), -EBADMSG);
        assert_int_equal(procfs_parse_meminfo(LIT("MemTotal:\n"), &m), -EBADMSG);
        assert_int_equal(procfs_parse_meminfo(LIT("MemTotal: 1 kB\nAnonHugePages: x kB\n"), &m), -EBADMSG);
        assert_int_equal(m.mem_total_kb, 42); /* untouched on failure */

        /* Lines we do not know may hold anything but a NUL. */
        assert_int_equal(procfs_parse_meminfo(LIT("garbage\nX: y z\n:::\nMemTotal: 5 kB\n"), &m), 0);
        assert_int_equal(m.mem_total_kb, 5);
}

static const char vmstat_real[] = "nr_free_pages 6104226\n"
                                  "nr_anon_transparent_hugepages 2\n"
                                  "thp_migration_success 0\n"
                                  "compact_stall 7\n"
                                  "compact_fail 0\n"
                                  "thp_fault_alloc 138\n"
                                  "thp_fault_fallback 3\n"
                                  "thp_collapse_alloc 13\n"
                                  "thp_split_page 1\n"
                                  "thp_deferred_split_page 13\n"
                                  "pgfault 123456\n"
                                  "thp_swpout_fallback 0\n";

static void test_vmstat_real(void **state) {
        ProcVmstat *v = malloc(sizeof(*v));

        assert_non_null(v);
        assert_int_equal(procfs_parse_vmstat(LIT(vmstat_real), v), 0);
        assert_int_equal(v->n_counters, 10);
        assert_false(v->truncated);
        assert_string_equal(v->counters[0].name, "nr_anon_transparent_hugepages");
        assert_int_equal(procfs_vmstat_get(v, "thp_fault_alloc"), 138);
        assert_int_equal(procfs_vmstat_get(v, "compact_stall"), 7);
        assert_true(procfs_vmstat_get(v, "pgfault") == PROCFS_UNKNOWN);
        assert_true(procfs_vmstat_get(v, "thp_nonexistent") == PROCFS_UNKNOWN);
        free(v);
}

static void test_vmstat_hostile(void **state) {
        ProcVmstat *v = calloc(1, sizeof(*v));
        char *big;
        size_t len = 0;

        assert_non_null(v);
        assert_int_equal(procfs_parse_vmstat(LIT(""), v), -EBADMSG);
        assert_int_equal(procfs_parse_vmstat(LIT("thp_fault_alloc 1"), v), -EBADMSG);
        assert_int_equal(procfs_parse_vmstat(LIT("thp_fault_alloc\n"), v), -EBADMSG);
        assert_int_equal(procfs_parse_vmstat(LIT("thp_fault_alloc -1\n"), v), -EBADMSG);
        assert_int_equal(procfs_parse_vmstat(LIT("thp_fault_alloc 1 2\n"), v), -EBADMSG);
        assert_int_equal(procfs_parse_vmstat(LIT("thp_fault_alloc  1\n"), v), -EBADMSG);
        assert_int_equal(procfs_parse_vmstat(LIT("thp_fault_alloc 18446744073709551616\n"), v), -EBADMSG);
        assert_int_equal(procfs_parse_vmstat(LIT("thp_a 1\nthp_a 2\n"), v), -EBADMSG);
        assert_int_equal(procfs_parse_vmstat(LIT("thp_A 1\n"), v), -EBADMSG);
        assert_int_equal(procfs_parse_vmstat(LIT("thp_a 1\n\0"), v), -EBADMSG);
        /* Another subsystem's odd line does not cost us the THP counters. */
        assert_int_equal(procfs_parse_vmstat(LIT("nr_weird x y z\n\nthp_a 18446744073709551615\n"), v), 0);
        assert_int_equal(v->n_counters, 1);
        assert_true(v->counters[0].value == UINT64_MAX);

        /* More counters than fit: the first ones are kept and the result says so. */
        big = malloc(200 * 64);
        assert_non_null(big);
        for (int i = 0; i < 200; i++)
                len += (size_t)sprintf(big + len, "thp_c%d %d\n", i, i);
        assert_int_equal(procfs_parse_vmstat(big, len, v), 0);
        assert_int_equal(v->n_counters, PROCFS_VMSTAT_MAX);
        assert_true(v->truncated);
        assert_int_equal(procfs_vmstat_get(v, "thp_c127"), 127);

        /* A name too long to keep is skipped, not cut into a different name. */
        len = (size_t)sprintf(big, "thp_%0100d 1\nthp_b 2\n", 0);
        assert_int_equal(procfs_parse_vmstat(big, len, v), 0);
        assert_int_equal(v->n_counters, 1);
        assert_true(v->truncated);
        free(big);
        free(v);
}

static const char rollup_real[] =
    "5601318bb000-7ffc595bd000 ---p 00000000 00:00 0                          [rollup]\n"
    "Rss:                1716 kB\n"
    "Pss:                 478 kB\n"
    "Pss_Dirty:           112 kB\n"
    "Pss_Anon:            112 kB\n"
    "Pss_File:            366 kB\n"
    "Pss_Shmem:             0 kB\n"
    "Shared_Clean:       1532 kB\n"
    "Shared_Dirty:          0 kB\n"
    "Private_Clean:        72 kB\n"
    "Private_Dirty:       112 kB\n"
    "Referenced:         1716 kB\n"
    "Anonymous:           112 kB\n"
    "KSM:                   0 kB\n"
    "LazyFree:              0 kB\n"
    "AnonHugePages:      2048 kB\n"
    "ShmemPmdMapped:        0 kB\n"
    "FilePmdMapped:         0 kB\n"
    "Shared_Hugetlb:        0 kB\n"
    "Private_Hugetlb:       0 kB\n"
    "Swap:                  0 kB\n"
    "SwapPss:               0 kB\n"
    "Locked:                0 kB\n";

static void test_rollup_real(void **state) {
        ProcSmapsRollup r;

        assert_int_equal(procfs_parse_smaps_rollup(LIT(rollup_real), &r), 0);
        assert_int_equal(r.rss_kb, 1716);
        assert_int_equal(r.pss_kb, 478);
        assert_int_equal(r.anon_huge_pages_kb, 2048);
        assert_int_equal(r.anonymous_kb, 112);
        assert_int_equal(r.swap_kb, 0);
}

static void test_rollup_truncated(void **state) {
        const char *ahp = strstr(rollup_real, "AnonHugePages:");
        size_t ahp_end = (size_t)(strchr(ahp, '\n') - rollup_real) + 1;
        ProcSmapsRollup r = { .rss_kb = 7 };

        /* Every prefix: before the AnonHugePages line ends, the read is refused. */
        for (size_t len = 0; len < sizeof(rollup_real) - 1; len++) {
                int ret = procfs_parse_smaps_rollup(rollup_real, len, &r);

                if (len < ahp_end || rollup_real[len - 1] != '\n')
                        assert_int_equal(ret, -EBADMSG);
                else
                        assert_int_equal(ret, 0);
        }
}

static void test_rollup_hostile(void **state) {
        ProcSmapsRollup r = { .rss_kb = 7 };

        assert_int_equal(procfs_parse_smaps_rollup(LIT(""), &r), -EBADMSG); /* exiting process */
        assert_int_equal(procfs_parse_smaps_rollup(LIT("Rss: 1 kB\nPss: 1 kB\nAnonHugePages: 0 kB\n"), &r),
                         -EBADMSG); /* no header: not a rollup */
        assert_int_equal(procfs_parse_smaps_rollup(LIT("0-1 ---p 0 0:0 0 [rollup]\nRss: 1 kB\nPss: 1 kB\n"
                                                       "AnonHugePages: 0 kB\nno colon here\n"),
                                                   &r),
                         -EBADMSG);
        assert_int_equal(
            procfs_parse_smaps_rollup(LIT("0-1 ---p 0 0:0 0 [rollup]\nRss: 1 kB\nRss: 1 kB\nPss: 1 kB\n"
                                          "AnonHugePages: 0 kB\n"),
                                      &r),
            -EBADMSG);
        assert_int_equal(procfs_parse_smaps_rollup(LIT("0-1 ---p 0 0:0 0 [rollup]\nRss: 1 kB\nPss: 1 kB\n"
                                                       "AnonHugePages: 0x10 kB\n"),
                                                   &r),
                         -EBADMSG);
        assert_int_equal(r.rss_kb, 7);
}

static const char status_real[] = "Name:\tcat\n"
                                  "Umask:\t0022\n"
                                  "State:\tR (running)\n"
                                  "Tgid:\t5181\n"
                                  "Ngid:\t0\n"
                                  "Pid:\t5181\n"
                                  "PPid:\t5176\n"
                                  "Kthread:\t0\n"
                                  "VmRSS:\t    1708 kB\n"
                                  "RssAnon:\t     116 kB\n"
                                  "CoreDumping:\t0\n"
                                  "THP_enabled:\t1\n"
                                  "untag_mask:\t0xffffffffffffffff\n"
                                  "Cpus_allowed_list:\t0-1\n";

static void test_status_real(void **state) {
        ProcStatus s;

        assert_int_equal(procfs_parse_status(LIT(status_real), &s), 0);
        assert_string_equal(s.name, "cat");
        assert_int_equal(s.pid, 5181);
        assert_int_equal(s.ppid, 5176);
        assert_int_equal(s.kthread, 0);
        assert_int_equal(s.thp_enabled, 1);
        assert_int_equal(s.vm_rss_kb, 1708);
        assert_int_equal(s.rss_anon_kb, 116);

        /* A kernel thread on a 4.x kernel: no VmRSS, no Kthread, no THP_enabled. */
        assert_int_equal(procfs_parse_status(LIT("Name:\tkhugepaged\nPPid:\t2\n"), &s), 0);
        assert_int_equal(s.kthread, -1);
        assert_int_equal(s.thp_enabled, -1);
        assert_true(s.vm_rss_kb == PROCFS_UNKNOWN);
}

static void test_status_binary_comm(void **state) {
        ProcStatus s;

        /* Byte for byte what 6.18 prints after prctl(PR_SET_NAME, "a\x01\xff\tb\\c\n d"). */
        assert_int_equal(procfs_parse_status(LIT("Name:\ta\x01\xff\tb\\\\c\\n d\nTHP_enabled:\t0\n"), &s),
                         0);
        /* The kernel's own escapes undone, then escaped once: the comm's bytes as /proc/PID/comm has them.
         */
        assert_string_equal(s.name, "a\\x01\\xff\\x09b\\\\c\\x0a d");
        assert_int_equal(s.thp_enabled, 0);
        /* Kernels before 5.x escape in octal. */
        assert_int_equal(procfs_parse_status(LIT("Name:\tb\\134c\\012d\nPPid:\t2\n"), &s), 0);
        assert_string_equal(s.name, "b\\\\c\\x0ad");

        /* A 64-byte kthread name: cut at a whole character, never mid-escape. */
        assert_int_equal(
            procfs_parse_status(LIT("Name:\t\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
                                    "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\n"),
                                &s),
            0);
        assert_int_equal(strlen(s.name) % 4, 0);
        assert_true(strlen(s.name) < PROCFS_NAME_MAX);
}

static void test_status_hostile(void **state) {
        ProcStatus s = { .pid = 9 };

        assert_int_equal(procfs_parse_status(LIT(""), &s), -EBADMSG);
        assert_int_equal(procfs_parse_status(LIT("Pid:\t1\n"), &s), -EBADMSG);            /* no Name */
        assert_int_equal(procfs_parse_status(LIT("Name:\tx\nName:\ty\n"), &s), -EBADMSG); /* twice */
        assert_int_equal(procfs_parse_status(LIT("Name: x\n"), &s), -EBADMSG);            /* no tab */
        assert_int_equal(procfs_parse_status(LIT("Name:\tx\nTHP_enabled:\t2\n"), &s), -EBADMSG);
        assert_int_equal(procfs_parse_status(LIT("Name:\tx\nTHP_enabled:\t\n"), &s), -EBADMSG);
        assert_int_equal(procfs_parse_status(LIT("Name:\tx\nTHP_enabled:\t1\nTHP_enabled:\t1\n"), &s),
                         -EBADMSG);
        assert_int_equal(procfs_parse_status(LIT("Name:\tx\nVmRSS:\tlots kB\n"), &s), -EBADMSG);
        assert_int_equal(procfs_parse_status(LIT("Name:\tx\0y\n"), &s), -EBADMSG);
        assert_int_equal(procfs_parse_status(LIT("Name:\tx\nPid:\t1"), &s), -EBADMSG);
        assert_int_equal(s.pid, 9);
}

static void test_cmdline_every_param(void **state) {
        ProcCmdline c;

        assert_int_equal(procfs_parse_cmdline(LIT("BOOT_IMAGE=/vmlinuz ro transparent_hugepage=never "
                                                  "transparent-hugepage-shmem=advise "
                                                  "thp_anon=16K-64K:always;128K,512K:inherit;2M:never "
                                                  "\"thp_shmem=64K:always;2M:advise\" quiet "
                                                  "-- transparent_hugepage=always\n"),
                                              &c),
                         0);
        assert_true(c.set[PROC_CMDLINE_THP]);
        assert_string_equal(c.value[PROC_CMDLINE_THP], "never"); /* after "--" is init's */
        assert_string_equal(c.value[PROC_CMDLINE_THP_SHMEM], "advise");
        assert_string_equal(c.value[PROC_CMDLINE_THP_ANON], "16K-64K:always;128K,512K:inherit;2M:never");
        assert_string_equal(c.value[PROC_CMDLINE_THP_SHMEM_SIZES], "64K:always;2M:advise");
        assert_string_equal(procfs_cmdline_param_name(PROC_CMDLINE_THP_SHMEM), "transparent_hugepage_shmem");
        assert_null(procfs_cmdline_param_name(_PROC_CMDLINE_PARAM_MAX));
}

static void test_cmdline_tokenizing(void **state) {
        ProcCmdline c;
        char big[2048];

        /* The real cmdline of this machine: nothing set. */
        assert_int_equal(
            procfs_parse_cmdline(LIT("console=ttyS0 quiet reboot=k panic=1 -- --firecracker-init\n"), &c),
            0);
        for (int p = 0; p < _PROC_CMDLINE_PARAM_MAX; p++)
                assert_false(c.set[p]);

        /* The last one wins; a bare name is not the parameter; quoted value; no newline. */
        assert_int_equal(procfs_parse_cmdline(LIT("transparent_hugepage=always transparent_hugepage "
                                                  "transparent_hugepage=\"madvise\""),
                                              &c),
                         0);
        assert_string_equal(c.value[PROC_CMDLINE_THP], "madvise");
        /* Quotes keep spaces inside one token; a prefix does not match. */
        assert_int_equal(procfs_parse_cmdline(
                             LIT("a=\"x transparent_hugepage=always\" xtransparent_hugepage=never\n"), &c),
                         0);
        assert_false(c.set[PROC_CMDLINE_THP]);
        /* Empty value and an unknown value are handed back as they are; judging is the caller's. */
        assert_int_equal(procfs_parse_cmdline(LIT("transparent_hugepage= thp_anon=\x01\n"), &c), 0);
        assert_string_equal(c.value[PROC_CMDLINE_THP], "");
        assert_string_equal(c.value[PROC_CMDLINE_THP_ANON], "\\x01");
        assert_int_equal(procfs_parse_cmdline(LIT(""), &c), 0);

        assert_int_equal(procfs_parse_cmdline(LIT("transparent_hugepage=ne\0ver\n"), &c), -EBADMSG);
        memcpy(big, "thp_anon=", 9);
        memset(big + 9, 'K', sizeof(big) - 9);
        assert_int_equal(procfs_parse_cmdline(big, sizeof(big), &c), -EBADMSG); /* would be cut */
        memset(big, 'x', sizeof(big));
        assert_int_equal(procfs_parse_cmdline(big, sizeof(big), &c), 0); /* long, but not ours */
}

static void test_thp_sizes_lookup(void **state) {
        const char *spec = "16K-64K:always;128K,512K:inherit;256K:madvise;1M-2M:never";
        char w[32];

        assert_int_equal(procfs_thp_sizes_lookup(spec, 16, w, sizeof(w)), 1);
        assert_string_equal(w, "always");
        assert_int_equal(procfs_thp_sizes_lookup(spec, 32, w, sizeof(w)), 1);
        assert_string_equal(w, "always");
        assert_int_equal(procfs_thp_sizes_lookup(spec, 512, w, sizeof(w)), 1);
        assert_string_equal(w, "inherit");
        assert_int_equal(procfs_thp_sizes_lookup(spec, 256, w, sizeof(w)), 1);
        assert_string_equal(w, "madvise");
        assert_int_equal(procfs_thp_sizes_lookup(spec, 2048, w, sizeof(w)), 1);
        assert_string_equal(w, "never");
        assert_int_equal(procfs_thp_sizes_lookup(spec, 8, w, sizeof(w)), 0);
        /* Later entries override; bare numbers are bytes; a trailing ';' is harmless. */
        assert_int_equal(procfs_thp_sizes_lookup("16K-2M:always;64K:never;", 64, w, sizeof(w)), 1);
        assert_string_equal(w, "never");
        assert_int_equal(procfs_thp_sizes_lookup("65536:madvise", 64, w, sizeof(w)), 1);
        assert_string_equal(w, "madvise");
        assert_int_equal(procfs_thp_sizes_lookup("1G:never", 1024 * 1024, w, sizeof(w)), 1);

        assert_int_equal(procfs_thp_sizes_lookup("", 64, w, sizeof(w)), -EBADMSG);
        assert_int_equal(procfs_thp_sizes_lookup("64K", 64, w, sizeof(w)), -EBADMSG);
        assert_int_equal(procfs_thp_sizes_lookup("64K:", 64, w, sizeof(w)), -EBADMSG);
        assert_int_equal(procfs_thp_sizes_lookup(":always", 64, w, sizeof(w)), -EBADMSG);
        assert_int_equal(procfs_thp_sizes_lookup("64X:always", 64, w, sizeof(w)), -EBADMSG);
        assert_int_equal(procfs_thp_sizes_lookup("64K,:always", 64, w, sizeof(w)), -EBADMSG);
        assert_int_equal(procfs_thp_sizes_lookup("64K,,128K:always", 64, w, sizeof(w)), -EBADMSG);
        assert_int_equal(procfs_thp_sizes_lookup("2M-64K:always", 64, w, sizeof(w)), -EBADMSG);
        assert_int_equal(procfs_thp_sizes_lookup("-64K:always", 64, w, sizeof(w)), -EBADMSG);
        assert_int_equal(procfs_thp_sizes_lookup("64K:Always", 64, w, sizeof(w)), -EBADMSG);
        assert_int_equal(procfs_thp_sizes_lookup("100:always", 64, w, sizeof(w)),
                         -EBADMSG); /* not whole kB */
        assert_int_equal(procfs_thp_sizes_lookup("99999999999999999999G:always", 64, w, sizeof(w)),
                         -EBADMSG);
        assert_int_equal(procfs_thp_sizes_lookup("17592186044416G:always", 64, w, sizeof(w)), -EBADMSG);
        assert_int_equal(procfs_thp_sizes_lookup("64K:always", 64, w, 3), -ENOBUFS);
}

static const char smaps_real[] =
    "56551a6bf000-56551a6c1000 r--p 00000000 fe:00 247498                     /usr/bin/head\n"
    "Size:                  8 kB\n"
    "KernelPageSize:        4 kB\n"
    "MMUPageSize:           4 kB\n"
    "Rss:                   8 kB\n"
    "Pss:                   8 kB\n"
    "AnonHugePages:         0 kB\n"
    "THPeligible:           0\n"
    "VmFlags: rd mr mw me \n"
    "7f0000000000-7f0004000000 rw-p 00000000 00:00 0 \n"
    "Size:              65536 kB\n"
    "Rss:               65536 kB\n"
    "AnonHugePages:     63488 kB\n"
    "THPeligible:           1\n"
    "VmFlags: rd wr mr mw me ac hg\n"
    "7f0010000000-7f0010800000 rw-p 00000000 00:00 0                          [anon:my heap]\n"
    "Rss:                8192 kB\n"
    "AnonHugePages:      4096 kB\n"
    "VmFlags: rd wr mr mw me ac\n"
    "7f2a10000000-7f2a11200000 r-xp 00000000 fe:00 131075                     "
    "/usr/lib/jvm/x/lib/server/libjvm.so\n"
    "Rss:                8184 kB\n"
    "AnonHugePages:         0 kB\n"
    "VmFlags: rd ex mr mw me\n"
    "7f2a20000000-7f2a20200000 rw-p 00000000 00:00 0                          /tmp/a file (deleted)\n"
    "Rss:                2048 kB\n"
    "AnonHugePages:      2048 kB\n"
    "VmFlags: rd wr mr mw me ac nh\n";

static void test_smaps_real(void **state) {
        ProcSmaps *s = malloc(sizeof(*s));

        assert_non_null(s);
        assert_int_equal(procfs_parse_smaps(LIT(smaps_real), 16, s), 0);
        assert_int_equal(s->n_mappings, 5);
        assert_int_equal(s->rss_kb, 8 + 65536 + 8192 + 8184 + 2048);
        assert_int_equal(s->anon_huge_pages_kb, 63488 + 4096 + 2048);
        assert_int_equal(s->n_advised_huge, 1);
        assert_int_equal(s->advised_huge_kb, 65536);
        assert_int_equal(s->n_advised_nohuge, 1);
        assert_int_equal(s->n_thp_eligible, 1);
        assert_true(s->uses_libjvm);
        assert_int_equal(s->n_top, 3);
        assert_int_equal(s->top[0].anon_huge_pages_kb, 63488);
        assert_true(s->top[0].advised_huge);
        assert_string_equal(s->top[0].name, "");
        assert_int_equal(s->top[0].start, 0x7f0000000000);
        assert_string_equal(s->top[0].perms, "rw-p");
        assert_string_equal(s->top[1].name, "[anon:my heap]");
        assert_string_equal(s->top[2].name, "/tmp/a file (deleted)");
        assert_true(s->top[2].advised_nohuge);

        assert_int_equal(procfs_parse_smaps(LIT(smaps_real), 1, s), 0);
        assert_int_equal(s->n_top, 1);
        assert_int_equal(s->top[0].anon_huge_pages_kb, 63488);
        assert_int_equal(procfs_parse_smaps(LIT(smaps_real), 0, s), 0);
        assert_int_equal(s->n_top, 0);

        /* An exiting process has no mappings: 0, not an error. */
        assert_int_equal(procfs_parse_smaps("", 0, 4, s), 0);
        assert_int_equal(s->n_mappings, 0);
        free(s);
}

static void test_smaps_hostile(void **state) {
        ProcSmaps *s = malloc(sizeof(*s));

        assert_non_null(s);
        s->n_mappings = 77;
        assert_int_equal(procfs_parse_smaps(LIT("Rss: 1 kB\n"), 4, s), -EBADMSG); /* field before header */
        assert_int_equal(procfs_parse_smaps(LIT("zz-10 rw-p 0 0:0 0\n"), 4, s), -EBADMSG);
        assert_int_equal(procfs_parse_smaps(LIT("20-10 rw-p 0 0:0 0\n"), 4, s), -EBADMSG); /* end < start */
        assert_int_equal(procfs_parse_smaps(LIT("10-20 rw-p 0 0:0\n"), 4, s), -EBADMSG);
        assert_int_equal(procfs_parse_smaps(LIT("10-20 rwxps 0 0:0 0\n"), 4, s), -EBADMSG);
        assert_int_equal(procfs_parse_smaps(LIT("10000000000000000-20 rw-p 0 0:0 0\n"), 4, s), -EBADMSG);
        assert_int_equal(procfs_parse_smaps(LIT("10-20 rw-p 0 0:0 0\nRss: 1 kB\nRss: 1 kB\n"), 4, s),
                         -EBADMSG);
        assert_int_equal(procfs_parse_smaps(LIT("10-20 rw-p 0 0:0 0\nTHPeligible: 3\n"), 4, s), -EBADMSG);
        assert_int_equal(procfs_parse_smaps(LIT("10-20 rw-p 0 0:0 0\nVmFlags: rd wrx\n"), 4, s), -EBADMSG);
        assert_int_equal(procfs_parse_smaps(LIT("10-20 rw-p 0 0:0 0\n\n"), 4, s), -EBADMSG);
        assert_int_equal(procfs_parse_smaps(LIT("10-20 rw-p 0 0:0 0\nRss: 1 kB"), 4, s), -EBADMSG);
        assert_int_equal(s->n_mappings, 77);
        /* A path with control bytes comes back printable. */
        assert_int_equal(procfs_parse_smaps(LIT("10-2010 rw-p 0 0:0 0 /tmp/\x1b[31mred\n"
                                                "AnonHugePages: 4 kB\n"),
                                            4, s),
                         0);
        assert_string_equal(s->top[0].name, "/tmp/\\x1b[31mred");
        free(s);
}

/* Random bytes into every parser: under ASan/UBSan, nothing may crash or read out of bounds. */
static void test_random_input(void **state) {
        ProcSmaps *s = malloc(sizeof(*s));
        ProcVmstat *v = malloc(sizeof(*v));
        static const char alphabet[] = "0123456789abcdefkB: \t\n-[]\"=;,KMG_\\xTHPNameRssPss\xff";
        unsigned seed = 12345;

        assert_non_null(s);
        assert_non_null(v);
        for (int i = 0; i < 20000; i++) {
                char buf[256];
                size_t len = (size_t)(rand_r(&seed) % (int)sizeof(buf));
                ProcMeminfo m;
                ProcSmapsRollup r;
                ProcStatus st;
                ProcCmdline c;
                char w[16];

                for (size_t j = 0; j < len; j++)
                        buf[j] = alphabet[rand_r(&seed) % (int)(sizeof(alphabet) - 1)];
                (void)procfs_parse_meminfo(buf, len, &m);
                (void)procfs_parse_vmstat(buf, len, v);
                (void)procfs_parse_smaps_rollup(buf, len, &r);
                (void)procfs_parse_status(buf, len, &st);
                (void)procfs_parse_cmdline(buf, len, &c);
                (void)procfs_parse_smaps(buf, len, 4, s);
                if (len > 0) {
                        buf[len - 1] = '\0';
                        (void)procfs_thp_sizes_lookup(buf, 64, w, sizeof(w));
                }
        }
        free(s);
        free(v);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_meminfo_real),        cmocka_unit_test(test_meminfo_hostile),
                cmocka_unit_test(test_vmstat_real),         cmocka_unit_test(test_vmstat_hostile),
                cmocka_unit_test(test_rollup_real),         cmocka_unit_test(test_rollup_truncated),
                cmocka_unit_test(test_rollup_hostile),      cmocka_unit_test(test_status_real),
                cmocka_unit_test(test_status_binary_comm),  cmocka_unit_test(test_status_hostile),
                cmocka_unit_test(test_cmdline_every_param), cmocka_unit_test(test_cmdline_tokenizing),
                cmocka_unit_test(test_thp_sizes_lookup),    cmocka_unit_test(test_smaps_real),
                cmocka_unit_test(test_smaps_hostile),       cmocka_unit_test(test_random_input),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
