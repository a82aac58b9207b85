/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "thpguard/fanotify-groups.h"
#include "thpguard/fileio.h"
#include "thpguard/writer.h"

#define POD "1b2c3d4e-5f60-7a8b-9c0d-e1f2a3b4c5d6"
#define CID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* ---- fanotify_groups_next(): records as a read() of the group returns them ---- */

static size_t put_event(char *buf, size_t at, unsigned event_len, unsigned metadata_len, uint64_t mask,
                        int fd, int pid) {
        struct fanotify_event_metadata m = {
                .event_len = event_len,
                .vers = FANOTIFY_METADATA_VERSION,
                .metadata_len = (uint16_t)metadata_len,
                .mask = mask,
                .fd = fd,
                .pid = pid,
        };

        memcpy(buf + at, &m, sizeof(m));
        return at + event_len;
}

static void test_events_next(void **state) {
        const size_t M = sizeof(struct fanotify_event_metadata);
        char buf[256] = {};
        size_t len = 0, offset = 0;
        FanotifyEvent ev;

        len = put_event(buf, len, M, M, FAN_MODIFY, 7, 4242);
        /* An info record after the metadata (FAN_REPORT_* groups) is skipped whole. */
        len = put_event(buf, len, M + 16, M, FAN_MODIFY, 8, 4243);
        len = put_event(buf, len, M, M, FAN_Q_OVERFLOW, FAN_NOFD, 0);

        assert_int_equal(fanotify_groups_next(buf, len, &offset, &ev), 1);
        assert_false(ev.overflow);
        assert_int_equal(ev.pid, 4242);
        assert_int_equal(ev.fd, 7);
        assert_int_equal(fanotify_groups_next(buf, len, &offset, &ev), 1);
        assert_int_equal(ev.pid, 4243);
        assert_int_equal(ev.fd, 8);
        assert_int_equal(fanotify_groups_next(buf, len, &offset, &ev), 1);
        assert_true(ev.overflow);
        assert_int_equal(ev.fd, -1);
        assert_int_equal(fanotify_groups_next(buf, len, &offset, &ev), 0);
        assert_int_equal(offset, len);
}

/* FAN_REPORT_PIDFD: an info record with the writer's pidfd, or word that it had exited. */
static void put_pidfd(char *buf, size_t at, int32_t pidfd) {
        struct fanotify_event_info_header h = { .info_type = 4 /* FAN_EVENT_INFO_TYPE_PIDFD */, .len = 8 };

        memcpy(buf + at, &h, sizeof(h));
        memcpy(buf + at + sizeof(h), &pidfd, sizeof(pidfd));
}

static void test_events_pidfd(void **state) {
        const size_t M = sizeof(struct fanotify_event_metadata);
        char buf[256] = {};
        size_t len = 0, offset = 0;
        FanotifyEvent ev;

        len = put_event(buf, len, M + 8, M, FAN_MODIFY, 7, 4242);
        put_pidfd(buf, M, 9);
        len = put_event(buf, len, M + 8, M, FAN_MODIFY, 8, 4243);
        put_pidfd(buf, len - 8, -1); /* FAN_NOPIDFD: the writer had exited */
        len = put_event(buf, len, M + 8, M, FAN_MODIFY, 10, 4244);
        put_pidfd(buf, len - 8, -2); /* FAN_EPIDFD: no pidfd could be made; nothing is known */
        len = put_event(buf, len, M, M, FAN_MODIFY, 11, 4245);

        assert_int_equal(fanotify_groups_next(buf, len, &offset, &ev), 1);
        assert_int_equal(ev.pid, 4242);
        assert_int_equal(ev.pidfd, 9);
        assert_false(ev.pid_gone);
        assert_int_equal(fanotify_groups_next(buf, len, &offset, &ev), 1);
        assert_int_equal(ev.pidfd, -1);
        assert_true(ev.pid_gone);
        assert_int_equal(fanotify_groups_next(buf, len, &offset, &ev), 1);
        assert_int_equal(ev.pidfd, -1);
        assert_false(ev.pid_gone);
        assert_int_equal(fanotify_groups_next(buf, len, &offset, &ev), 1);
        assert_int_equal(ev.pid, 4245);
        assert_int_equal(ev.pidfd, -1);
        assert_false(ev.pid_gone);
        assert_int_equal(fanotify_groups_next(buf, len, &offset, &ev), 0);
}

static void test_events_malformed(void **state) {
        const size_t M = sizeof(struct fanotify_event_metadata);
        char buf[256] = {};
        size_t offset;
        FanotifyEvent ev;

        /* Shorter than the metadata. */
        put_event(buf, 0, M, M, FAN_MODIFY, 7, 1);
        offset = 0;
        assert_int_equal(fanotify_groups_next(buf, M - 1, &offset, &ev), -EBADMSG);
        assert_int_equal(offset, M - 1);
        /* event_len past the buffer. */
        put_event(buf, 0, M + 8, M, FAN_MODIFY, 7, 1);
        offset = 0;
        assert_int_equal(fanotify_groups_next(buf, M + 4, &offset, &ev), -EBADMSG);
        /* event_len shorter than metadata_len, or metadata_len shorter than the struct: no progress. */
        put_event(buf, 0, M, M, FAN_MODIFY, 7, 1);
        ((struct fanotify_event_metadata *)(void *)buf)->event_len = 0;
        offset = 0;
        assert_int_equal(fanotify_groups_next(buf, M, &offset, &ev), -EBADMSG);
        put_event(buf, 0, M, 8, FAN_MODIFY, 7, 1);
        offset = 0;
        assert_int_equal(fanotify_groups_next(buf, M, &offset, &ev), -EBADMSG);
        /* Another metadata version. */
        put_event(buf, 0, M, M, FAN_MODIFY, 7, 1);
        ((struct fanotify_event_metadata *)(void *)buf)->vers = FANOTIFY_METADATA_VERSION + 1;
        offset = 0;
        assert_int_equal(fanotify_groups_next(buf, M, &offset, &ev), -EBADMSG);
        assert_int_equal(fanotify_groups_next(buf, M, &offset, &ev), 0);
}

/* ---- label, description and fields ---- */

static void test_label_and_describe(void **state) {
        Writer w = { .pid = 812,
                     .comm = "tuned",
                     .exe = "/usr/bin/python3.12",
                     .cmdline = "/usr/bin/python3 -Es /usr/sbin/tuned -l -P" };
        char buf[512], label[WRITER_LABEL_MAX];

        snprintf(w.owner.unit, sizeof(w.owner.unit), "tuned.service");
        writer_label(&w, buf, sizeof(buf));
        assert_string_equal(buf, "tuned.service");
        writer_describe(&w, buf, sizeof(buf));
        assert_string_equal(buf, "tuned.service, pid 812, /usr/bin/python3.12");

        /* No unit: the comm; no exe (not shown to us): argv[0]. */
        w.owner.unit[0] = '\0';
        w.exe[0] = '\0';
        writer_label(&w, buf, sizeof(buf));
        assert_string_equal(buf, "tuned");
        writer_describe(&w, buf, sizeof(buf));
        assert_string_equal(buf, "tuned, pid 812, /usr/bin/python3");

        w = (Writer){ .pid = 4242, .exited = true };
        writer_label(&w, buf, sizeof(buf));
        assert_string_equal(buf, "pid 4242");
        writer_describe(&w, buf, sizeof(buf));
        assert_string_equal(buf, "pid 4242, exited");

        w = (Writer){ .pid = 0 };
        writer_label(&w, buf, sizeof(buf));
        assert_string_equal(buf, "unknown");
        writer_describe(&w, buf, sizeof(buf));
        assert_string_equal(buf, "a process outside this PID namespace");

        /* A unit name longer than a label is cut, not overflowed. */
        memset(w.owner.unit, 'u', sizeof(w.owner.unit) - 1);
        w.owner.unit[sizeof(w.owner.unit) - 1] = '\0';
        writer_label(&w, label, sizeof(label));
        assert_int_equal(strlen(label), WRITER_LABEL_MAX - 1);
}

/* thpguardctl's cells, from a record's label, pid and exited (moved from tests/ctl/foreign.c). */
static void test_describe_table(void **state) {
        char buf[64];

        assert_string_equal(
            writer_describe_as(WRITER_FORM_TABLE, "tuned.service", 812, false, "", buf, sizeof(buf)),
            "tuned.service (pid 812)");
        assert_string_equal(writer_describe_as(WRITER_FORM_TABLE, "pid 77", 77, true, "", buf, sizeof(buf)),
                            "pid 77 (exited)");
        assert_string_equal(writer_describe_as(WRITER_FORM_TABLE, "tuned", 0, false, "", buf, sizeof(buf)),
                            "tuned");
        assert_string_equal(writer_describe_as(WRITER_FORM_TABLE, "", 5, false, "", buf, sizeof(buf)),
                            "unknown");
}

static const char *field(const WriterFields *wf, const char *key) {
        for (size_t i = 0; i < _WRITER_FIELD_MAX; i++)
                if (strcmp(wf->field[i].key, key) == 0)
                        return wf->field[i].value;
        fail_msg("no field %s", key);
        return NULL;
}

static void test_fields(void **state) {
        Writer w = { .pid = 77,
                     .uid_known = true,
                     .uid = 0,
                     .comm = "containerd-shim",
                     .cgroup = "/kubepods.slice/x" };
        WriterFields wf;

        snprintf(w.owner.unit, sizeof(w.owner.unit), "cri-containerd-%s.scope", CID);
        snprintf(w.owner.pod_uid, sizeof(w.owner.pod_uid), POD);
        snprintf(w.owner.container_id, sizeof(w.owner.container_id), CID);
        writer_fields(&w, &wf);
        assert_string_equal(field(&wf, "THPGUARD_WRITER_PID"), "77");
        assert_string_equal(field(&wf, "THPGUARD_WRITER_UID"), "0");
        assert_string_equal(field(&wf, "THPGUARD_WRITER_COMM"), "containerd-shim");
        assert_string_equal(field(&wf, "THPGUARD_WRITER_POD_UID"), POD);
        assert_string_equal(field(&wf, "THPGUARD_WRITER_CONTAINER_ID"), CID);
        assert_string_equal(field(&wf, "THPGUARD_WRITER_CGROUP"), "/kubepods.slice/x");
        assert_string_equal(field(&wf, "THPGUARD_WRITER"), w.owner.unit);
        assert_null(field(&wf, "THPGUARD_WRITER_EXE"));
        assert_null(field(&wf, "THPGUARD_WRITER_EXITED"));

        w = (Writer){ .pid = 9, .exited = true };
        writer_fields(&w, &wf);
        assert_string_equal(field(&wf, "THPGUARD_WRITER_PID"), "9");
        assert_string_equal(field(&wf, "THPGUARD_WRITER_EXITED"), "1");
        assert_string_equal(field(&wf, "THPGUARD_WRITER"), "pid 9");
        assert_null(field(&wf, "THPGUARD_WRITER_COMM"));
        assert_null(field(&wf, "THPGUARD_WRITER_UID"));

        /* No writer: every field is left out. */
        writer_fields(NULL, &wf);
        for (size_t i = 0; i < _WRITER_FIELD_MAX; i++) {
                assert_non_null(wf.field[i].key);
                assert_null(wf.field[i].value);
        }
}

static void test_tally(void **state) {
        WriterTallies t = {};
        char label[32];

        for (int i = 0; i < WRITER_TALLY_MAX + 3; i++) {
                snprintf(label, sizeof(label), "w%d.service", i);
                writer_tally_add(&t, label);
        }
        writer_tally_add(&t, "w0.service");
        writer_tally_add(&t, "w17.service"); /* past the cap: still "other" */
        writer_tally_add(&t, WRITER_TALLY_OTHER);
        assert_int_equal(t.n, WRITER_TALLY_MAX);
        assert_string_equal(t.top[0].label, "w0.service");
        assert_int_equal(t.top[0].writes, 2);
        assert_int_equal(t.top[1].writes, 1);
        assert_int_equal(t.other, 3 + 1 + 1);
}

/* ---- writer_lookup() on a fixture /proc ---- */

static void put_file(const char *dir, const char *name, const char *text, size_t len) {
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(text, 1, len, f), len);
        fclose(f);
}

static void test_lookup_fixture(void **state) {
        char root[] = "/tmp/test-writer-XXXXXX", pid_dir[256], cmd[600];
        const char cmdline[] = "/bin/sh\0-c\0echo \x1b[31m > enabled\0";
        const char cgroup[] = "4:memory:/x\n0::/kubepods.slice/kubepods-burstable.slice/"
                              "kubepods-burstable-pod1b2c3d4e_5f60_7a8b_9c0d_e1f2a3b4c5d6.slice/"
                              "cri-containerd-" CID ".scope\n";
        Writer w;

        assert_non_null(mkdtemp(root));
        snprintf(pid_dir, sizeof(pid_dir), "%s/4242", root);
        assert_int_equal(mkdir(pid_dir, 0755), 0);
        put_file(pid_dir, "comm", "ev\til\n", 6);
        put_file(pid_dir, "cmdline", cmdline, sizeof(cmdline) - 1);
        put_file(pid_dir, "cgroup", cgroup, sizeof(cgroup) - 1);
        /* A symlink the fixture plants is not followed: exe stays unknown, nothing breaks. */
        assert_int_equal(symlinkat("/usr/bin/hostile", AT_FDCWD, strcat(strcpy(cmd, pid_dir), "/exe")), 0);

        assert_int_equal(writer_lookup(root, 4242, &w), 0);
        assert_false(w.exited);
        assert_int_equal(w.pid, 4242);
        assert_string_equal(w.comm, "ev\\x09il");
        /* The command line waits for the process's memory lock: never read by a lookup. */
        assert_string_equal(w.cmdline, "");
        {
                _cleanup_close_ int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                _cleanup_close_ int dirfd = writer_open_pid(rootfd, 4242);

                assert_true(dirfd >= 0);
                assert_true(writer_pid_alive(dirfd));
                writer_read_cmdline(dirfd, &w);
                assert_string_equal(w.cmdline, "/bin/sh -c echo \\x1b[31m > enabled");
        }
        assert_string_equal(w.owner.pod_uid, POD);
        assert_string_equal(w.owner.container_id, CID);
        assert_string_equal(w.owner.unit, "cri-containerd-" CID ".scope");
        assert_true(w.uid_known);
        /* readlinkat() reads the symlink's text without following it: it is only a name. */
        assert_string_equal(w.exe, "/usr/bin/hostile");

        /* A pid with no directory exited before the lookup. */
        assert_int_equal(writer_lookup(root, 4243, &w), 0);
        assert_true(w.exited);
        assert_int_equal(w.pid, 4243);
        assert_string_equal(w.comm, "");

        /* pid 0: the kernel's word for a writer outside our PID namespace. */
        assert_int_equal(writer_lookup(root, 0, &w), 0);
        assert_false(w.exited);
        assert_int_equal(w.pid, 0);

        /* A root that does not exist is an error, not an exited writer. */
        assert_int_equal(writer_lookup("/nonexistent-proc-root", 1, &w), -ENOENT);

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        assert_int_equal(system(cmd), 0);
}

/* The real /proc: this test itself, which is alive and has a cgroup. */
static void test_lookup_self(void **state) {
        char comm[64] = {};
        FILE *f = fopen("/proc/self/comm", "r");
        Writer w;

        assert_non_null(f);
        assert_non_null(fgets(comm, sizeof(comm), f));
        fclose(f);
        comm[strcspn(comm, "\n")] = '\0';

        assert_int_equal(writer_lookup("/proc", getpid(), &w), 0);
        assert_false(w.exited);
        assert_string_equal(w.comm, comm);
        assert_true(w.uid_known);
        assert_int_equal(w.uid, geteuid());
        assert_int_equal(w.cgroup[0], '/');
}

/*
 * Hybrid cgroup v1 prints a line per hierarchy, each up to PATH_MAX: a
 * /proc/PID/cgroup over 8 KiB, and a path over 4096 bytes, still name the
 * unit, pod and container; the path is kept cut, with "...".
 */
static void test_lookup_long_cgroup(void **state) {
        char root[] = "/tmp/test-writer-XXXXXX", pid_dir[256], cmd[600];
        size_t size = 64 * 1024 - 1, len = 0;
        char *text = malloc(size), deep[5000];
        Writer w;

        assert_non_null(text);
        assert_non_null(mkdtemp(root));
        snprintf(pid_dir, sizeof(pid_dir), "%s/4242", root);
        assert_int_equal(mkdir(pid_dir, 0755), 0);
        put_file(pid_dir, "comm", "sh\n", 3);
        for (int h = 13; h > 1; h--) {
                len += (size_t)snprintf(text + len, size - len, "%d:ctl%d:/", h, h);
                for (int i = 0; i < 800; i++)
                        text[len++] = 'v';
                text[len++] = '\n';
        }
        /* The unified path: six nested sub-cgroups of 250 characters and more, then the container's scope.
         */
        {
                size_t d =
                    (size_t)snprintf(deep, sizeof(deep),
                                     "/kubepods.slice/kubepods-burstable.slice/"
                                     "kubepods-burstable-pod1b2c3d4e_5f60_7a8b_9c0d_e1f2a3b4c5d6.slice/"
                                     "cri-containerd-" CID ".scope");
                for (int i = 0; i < 17; i++) {
                        deep[d++] = '/';
                        for (int j = 0; j < 250; j++)
                                deep[d++] = 'a' + (char)(i % 26);
                }
                deep[d] = '\0';
        }
        len += (size_t)snprintf(text + len, size - len, "0::%s\n", deep);
        assert_true(len > 8192);
        assert_true(strlen(deep) > 4096);
        put_file(pid_dir, "cgroup", text, len);

        assert_int_equal(writer_lookup(root, 4242, &w), 0);
        assert_string_equal(w.owner.pod_uid, POD);
        assert_string_equal(w.owner.container_id, CID);
        assert_string_equal(w.owner.unit, "cri-containerd-" CID ".scope");
        assert_int_equal(strncmp(w.cgroup, "/kubepods.slice/", 16), 0);
        assert_string_equal(w.cgroup + strlen(w.cgroup) - 3, "...");

        free(text);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        assert_int_equal(system(cmd), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_events_next),
                cmocka_unit_test(test_events_pidfd),
                cmocka_unit_test(test_events_malformed),
                cmocka_unit_test(test_label_and_describe),
                cmocka_unit_test(test_describe_table),
                cmocka_unit_test(test_fields),
                cmocka_unit_test(test_tally),
                cmocka_unit_test(test_lookup_fixture),
                cmocka_unit_test(test_lookup_self),
                cmocka_unit_test(test_lookup_long_cgroup),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
