/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "lock-verdict.h"

#define DAEMON 4000

/* A real /proc/TID/status (Linux 6.18), the lines the parser reads among the rest. */
static const char status_root[] = "Name:\tsh\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nNgid:\t0\n"
                                  "Pid:\t4243\nPPid:\t1\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n"
                                  "CapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\n"
                                  "CapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n";

static void test_parse_creds(void **state) {
        OpenerCreds c;
        char buf[512];

        assert_int_equal(lock_parse_creds(status_root, strlen(status_root), &c), 0);
        assert_int_equal(c.tgid, 4242);
        assert_int_equal(c.fsuid, 0);
        assert_true(c.cap_effective == UINT64_C(0x1ffffffffff));

        /* The fsuid is the fourth field. */
        snprintf(buf, sizeof(buf), "Tgid:\t7\nUid:\t0\t0\t0\t65534\nCapEff:\t0000000000000000\n");
        assert_int_equal(lock_parse_creds(buf, strlen(buf), &c), 0);
        assert_int_equal(c.fsuid, 65534);
        assert_true(c.cap_effective == 0);

        /* Missing, repeated or malformed: refused whole. */
        static const char *const bad[] = {
                "Tgid:\t7\nUid:\t0\t0\t0\t0\n",
                "Tgid:\t7\nCapEff:\t0\nUid:\t0\t0\t0\n",
                "Tgid:\t7\nTgid:\t8\nUid:\t0\t0\t0\t0\nCapEff:\t0\n",
                "Tgid:\t-7\nUid:\t0\t0\t0\t0\nCapEff:\t0\n",
                "Tgid:\t7\nUid:\t0\t0\t0\t0\t0\nCapEff:\t0\n",
                "Tgid:\t7\nUid:\t0\t0\t0\t4294967296\nCapEff:\t0\n",
                "Tgid:\t7\nUid:\t0\t0\t0\t0\nCapEff:\t0x1\n",
                "Tgid:\t7 8\nUid:\t0\t0\t0\t0\nCapEff:\t0\n",
                "",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(lock_parse_creds(bad[i], strlen(bad[i]), &c), -EBADMSG);
}

static void test_parse_syscall(void **state) {
        /* A shell blocked in `echo always > enabled`'s openat(), read from /proc/TID/syscall. */
        static const char openat[] =
            "257 0xffffff9c 0x55ca6e118948 0x241 0x1b6 0x7f11b8d17c70 0x1 0x7fff817f4c30 0x7f11b8c3c011\n";
        OpenerSyscall s;

        assert_int_equal(lock_parse_syscall(openat, strlen(openat), &s), 0);
        assert_int_equal(s.nr, 257);
        assert_true(s.arg[0] == 0xffffff9c);
        assert_true(s.arg[2] == 0x241);
        assert_true(s.arg[5] == 0x1);

        assert_int_equal(lock_parse_syscall("-1 0x7ffd 0x4011\n", 17, &s), 0);
        assert_int_equal(s.nr, -1);
        assert_int_equal(lock_parse_syscall("running\n", 8, &s), -EBUSY);

        static const char *const bad[] = {
                "257 0x1 0x2 0x3\n",
                "257 1 2 3 4 5 6 7 8\n",
                "257 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 0x9\n",
                "-2 0x1 0x2\n",
                "x 0x1 0x2\n",
                "257 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0xG\n",
                "",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(lock_parse_syscall(bad[i], strlen(bad[i]), &s), -EBADMSG);
}

/* The files as this kernel writes them: our own thread, reading its own syscall file with read(). */
static void test_parse_this_kernel(void **state) {
        char buf[4096];
        OpenerSyscall s;
        OpenerCreds c;
        ssize_t n;
        int fd;

        fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        n = read(fd, buf, sizeof(buf));
        close(fd);
        assert_true(n > 0);
        assert_int_equal(lock_parse_creds(buf, (size_t)n, &c), 0);
        assert_int_equal(c.tgid, getpid());
        assert_int_equal(c.fsuid, getuid());

        fd = open("/proc/thread-self/syscall", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                skip(); /* CONFIG_HAVE_ARCH_TRACEHOOK off */
        n = read(fd, buf, sizeof(buf));
        close(fd);
        assert_true(n > 0);
        assert_int_equal(lock_parse_syscall(buf, (size_t)n, &s), 0);
        assert_int_equal(s.nr, SYS_read);
}

static LockOpener root_opener(long nr, uint64_t flags) {
        LockOpener o = {
                .tid = 4243,
                .creds = { .tgid = 4242, .fsuid = 0, .cap_effective = UINT64_C(0x1ffffffffff) },
                .syscall = { .nr = nr },
                .file_mode = S_IFREG | 0644,
                .file_uid = 0,
        };

        o.syscall.arg[0] = (uint64_t)AT_FDCWD;
        if (nr == SYS_openat)
                o.syscall.arg[2] = flags;
        else
                o.syscall.arg[1] = flags;
        return o;
}

static void test_judge(void **state) {
        const char *why;
        LockOpener o;

        /* root reading: let through; root writing, truncating or read-writing: refused. */
        o = root_opener(SYS_openat, O_RDONLY | O_CLOEXEC);
        assert_true(lock_needs_syscall(&o, DAEMON));
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_ALLOW_READ);
        o = root_opener(SYS_openat, O_WRONLY | O_CREAT | O_TRUNC);
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);
        assert_string_equal(why, "opened for writing");
        assert_int_equal(root_opener(SYS_openat, O_RDWR).syscall.arg[2], O_RDWR);
        o = root_opener(SYS_openat, O_RDWR);
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);
        o = root_opener(SYS_openat, O_RDONLY | O_TRUNC);
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);
        o = root_opener(SYS_openat, O_ACCMODE);
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);
#ifdef SYS_open
        o = root_opener(SYS_open, O_RDONLY);
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_ALLOW_READ);
        o = root_opener(SYS_open, O_WRONLY);
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);
#endif
        /* A call whose flags are not in a register, or another table's number: refused. */
        o = root_opener(437 /* openat2 */, O_RDONLY);
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);
        assert_string_equal(why, "opened by a call whose flags cannot be told");
        o = root_opener(426 /* io_uring_enter */, O_RDONLY);
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);
        o = root_opener(-1, O_RDONLY);
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);
        o = root_opener(SYS_openat | 0x40000000 /* x32 */, O_RDONLY);
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);

        /* Unreadable files: refused; a thread still running (EBUSY) too. */
        o = root_opener(SYS_openat, O_RDONLY);
        o.syscall_error = -EPERM;
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);
        o.syscall_error = -EBUSY;
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);
        o = root_opener(SYS_openat, O_RDONLY);
        o.creds_error = -ENOENT;
        assert_false(lock_needs_syscall(&o, DAEMON));
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);

        /* The daemon's own threads, whatever they open with. */
        o = root_opener(SYS_openat, O_WRONLY);
        o.creds.tgid = DAEMON;
        o.tid = DAEMON + 1;
        assert_false(lock_needs_syscall(&o, DAEMON));
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_ALLOW_OWN);

        /* Someone who cannot write passed the permission check for a read: no syscall needed. */
        o = root_opener(SYS_openat, O_WRONLY);
        o.creds.fsuid = 65534;
        o.creds.cap_effective = 0;
        o.syscall_error = -EACCES;
        assert_false(lock_needs_syscall(&o, DAEMON));
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_ALLOW_READ);
        /* ... unless the file lets others write, or it holds CAP_DAC_OVERRIDE. */
        o.file_mode = S_IFREG | 0666;
        assert_true(lock_needs_syscall(&o, DAEMON));
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);
        o.file_mode = S_IFREG | 0644;
        o.creds.cap_effective = UINT64_C(1) << 1; /* CAP_DAC_OVERRIDE */
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);
        /* root with no capability at all owns the file: it can write (MACHINE-FACTS). */
        o = root_opener(SYS_openat, O_WRONLY);
        o.creds.cap_effective = 0;
        assert_true(lock_needs_syscall(&o, DAEMON));
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_DENY);

        /* Outside our PID namespace: nothing to judge by. */
        o = root_opener(SYS_openat, O_WRONLY);
        o.tid = 0;
        assert_false(lock_needs_syscall(&o, DAEMON));
        assert_int_equal(lock_judge(&o, DAEMON, &why), LOCK_ALLOW_UNSEEN);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_creds),
                cmocka_unit_test(test_parse_syscall),
                cmocka_unit_test(test_parse_this_kernel),
                cmocka_unit_test(test_judge),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
