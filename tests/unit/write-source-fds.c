/* SPDX-License-Identifier: MIT */
/*
 * The fanotify groups through systemd's fd store: what thpguard-write-source
 * sends (FDSTORE=1 with a name, the fd attached) and what the daemon takes
 * from LISTEN_FDS (only fanotify groups under our names, then FDSTOREREMOVE=1).
 * The service manager is played by a datagram socket at $NOTIFY_SOCKET.
 * fanotify_init() needs CAP_SYS_ADMIN: the cases that need a real group are
 * skipped without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <systemd/sd-daemon.h>

#include "thpguard/fanotify-groups.h"
#include "thpguard/write-source-fds.h"

typedef struct Manager {
        char dir[32];
        char path[64];
        int fd;
} Manager;

/* A stand-in for the service manager's notification socket, set as $NOTIFY_SOCKET. */
static void manager_start(Manager *m) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        snprintf(m->dir, sizeof(m->dir), "/tmp/write-source-fds.XXXXXX");
        assert_non_null(mkdtemp(m->dir));
        snprintf(m->path, sizeof(m->path), "%s/notify", m->dir);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", m->path);
        m->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        assert_true(m->fd >= 0);
        assert_int_equal(bind(m->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(setenv("NOTIFY_SOCKET", m->path, 1), 0);
}

static void manager_stop(Manager *m) {
        unsetenv("NOTIFY_SOCKET");
        close(m->fd);
        unlink(m->path);
        rmdir(m->dir);
}

/* The next message, and the fd it carried (-1 if none); false when none is queued. */
static bool manager_receive(Manager *m, char *text, size_t size, int *ret_fd) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * 4)];
        } control = {};
        struct iovec iov = { .iov_base = text, .iov_len = size - 1 };
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control)
        };
        ssize_t n = recvmsg(m->fd, &mh, MSG_CMSG_CLOEXEC);

        if (n < 0)
                return false;
        text[n] = '\0';
        *ret_fd = -1;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
                        memcpy(ret_fd, CMSG_DATA(c), sizeof(int));
        return true;
}

static bool fd_open(int fd) {
        return fcntl(fd, F_GETFD) >= 0;
}

/* Puts fds[] at 3, 4, ... as systemd passes them, with LISTEN_* naming them. */
static void pass_fds(int *fds, int n, const char *names) {
        char buf[32];

        /* Out of the way first: a new fd may already sit at 3 or 4. */
        for (int i = 0; i < n; i++) {
                int high = fcntl(fds[i], F_DUPFD, 10);

                assert_true(high >= 10);
                close(fds[i]);
                fds[i] = high;
        }
        for (int i = 0; i < n; i++) {
                assert_int_equal(dup2(fds[i], SD_LISTEN_FDS_START + i), SD_LISTEN_FDS_START + i);
                close(fds[i]);
        }
        snprintf(buf, sizeof(buf), "%d", n);
        setenv("LISTEN_FDS", buf, 1);
        snprintf(buf, sizeof(buf), "%d", (int)getpid());
        setenv("LISTEN_PID", buf, 1);
        setenv("LISTEN_FDNAMES", names, 1);
}

static int group_or_skip(void) {
        int fd = fanotify_groups_open();

        if (fd == -EPERM)
                skip(); /* no CAP_SYS_ADMIN */
        assert_true(fd >= 0);
        return fd;
}

static int setup(void **state) {
        (void)state;
        /* Where systemd would pass fds; whatever a test runner left there is not ours to keep. */
        close(SD_LISTEN_FDS_START);
        close(SD_LISTEN_FDS_START + 1);
        return 0;
}

static int teardown(void **state) {
        (void)state;
        close(SD_LISTEN_FDS_START);
        close(SD_LISTEN_FDS_START + 1);
        unsetenv("LISTEN_FDS");
        unsetenv("LISTEN_PID");
        unsetenv("LISTEN_FDNAMES");
        return 0;
}

static void test_take_nothing_passed(void **state) {
        WriteSourceFds g = { .write_fd = 99, .open_fd = 99 };

        (void)state;
        assert_int_equal(write_source_fds_take_stored(&g), 0);
        assert_int_equal(g.write_fd, 99); /* untouched when nothing came */
}

/* Under our names but not fanotify groups, or under another name: closed, never used. */
static void test_take_refuses_other_fds(void **state) {
        int fds[2] = { eventfd(0, 0), eventfd(0, 0) };
        WriteSourceFds g = { .write_fd = 99, .open_fd = 99 };

        (void)state;
        pass_fds(fds, 2, WRITE_SOURCE_FDNAME_WRITE ":stranger");
        assert_int_equal(write_source_fds_take_stored(&g), 0);
        assert_int_equal(g.write_fd, 99);
        assert_false(fd_open(SD_LISTEN_FDS_START));
        assert_false(fd_open(SD_LISTEN_FDS_START + 1));
        assert_null(getenv("LISTEN_FDS")); /* unset: nothing later takes them again */
}

static void test_take_groups_and_unstore(void **state) {
        Manager m;
        int fds[2], fd;
        WriteSourceFds g;
        char text[256];

        (void)state;
        fds[0] = group_or_skip();
        fds[1] = fanotify_groups_open_gate();
        assert_true(fds[1] >= 0);
        /* Passed in either order: the names say which is which. */
        pass_fds(fds, 2, WRITE_SOURCE_FDNAME_OPEN ":" WRITE_SOURCE_FDNAME_WRITE);
        manager_start(&m);
        assert_int_equal(write_source_fds_take_stored(&g), 1);
        assert_int_equal(g.open_fd, SD_LISTEN_FDS_START);
        assert_int_equal(g.write_fd, SD_LISTEN_FDS_START + 1);
        assert_int_equal(fcntl(g.write_fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        assert_int_equal(fcntl(g.open_fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        assert_true(manager_receive(&m, text, sizeof(text), &fd));
        assert_string_equal(text, "FDSTOREREMOVE=1\nFDNAME=" WRITE_SOURCE_FDNAME_OPEN);
        assert_true(manager_receive(&m, text, sizeof(text), &fd));
        assert_string_equal(text, "FDSTOREREMOVE=1\nFDNAME=" WRITE_SOURCE_FDNAME_WRITE);
        assert_false(manager_receive(&m, text, sizeof(text), &fd));
        manager_stop(&m);
}

/* The open group alone is no use: the gate names writers for the write group's records. */
static void test_take_open_group_alone(void **state) {
        int fds[1];
        WriteSourceFds g = { .write_fd = 99, .open_fd = 99 };

        (void)state;
        close(group_or_skip());
        fds[0] = fanotify_groups_open_gate();
        assert_true(fds[0] >= 0);
        pass_fds(fds, 1, WRITE_SOURCE_FDNAME_OPEN);
        assert_int_equal(write_source_fds_take_stored(&g), 0);
        assert_false(fd_open(SD_LISTEN_FDS_START));
}

/* A BPF map or link is told by /proc/self/fdinfo: an eventfd under the probe's names is refused. */
static void test_take_refuses_fake_probe(void **state) {
        int fds[2] = { eventfd(0, 0), eventfd(0, 0) };
        WriteSourceFds g;

        (void)state;
        pass_fds(fds, 2, WRITE_PROBE_FDNAME_RING ":" WRITE_PROBE_FDNAME_LINK);
        assert_int_equal(write_source_fds_take_stored(&g), 0);
        assert_false(fd_open(SD_LISTEN_FDS_START));
        assert_false(fd_open(SD_LISTEN_FDS_START + 1));
}

/*
 * The probe, loaded as the unit's ExecStartPre= loads it (auto), else on
 * the syscall-exit hook (this project's VMs refuse fexit and kprobes); the
 * test is skipped where it cannot be had at all.
 */
static void load_probe_or_skip(WriteSourceFds *ret) {
        WriteSourceWant want = { .source = WRITE_SOURCE_BPF, .hook = WRITE_PROBE_HOOK_AUTO };

        write_source_fds_open(&want, "/sys/kernel/mm/transparent_hugepage", ret);
        if (ret->probe_error < 0) {
                want.hook = WRITE_PROBE_HOOK_SYSCALL_EXIT;
                write_source_fds_open(&want, "/sys/kernel/mm/transparent_hugepage", ret);
        }
        if (ret->probe_error < 0)
                skip(); /* no BPF write probe here: no privilege, no BTF, or built without it */
}

/* link, ring and config map, in that order, under their names; then sys_enter's link where there is one. */
static int enter_link_fd = -1;
static void pass_probe_fds(int fds[3]) {
        int all[4] = { fds[0], fds[1], fds[2], enter_link_fd };

        if (enter_link_fd >= 0)
                pass_fds(all, 4,
                         WRITE_PROBE_FDNAME_LINK ":" WRITE_PROBE_FDNAME_RING ":" WRITE_PROBE_FDNAME_CONFIG
                                                 ":" WRITE_PROBE_FDNAME_ENTER);
        else
                pass_fds(fds, 3,
                         WRITE_PROBE_FDNAME_LINK ":" WRITE_PROBE_FDNAME_RING ":" WRITE_PROBE_FDNAME_CONFIG);
}

/* The probe itself, loaded as the unit's ExecStartPre= loads it: taken, and taken out of the store. */
static void test_take_probe_and_unstore(void **state) {
        WriteSourceFds loaded, g;
        Manager m;
        int fds[3], fd;
        char text[256];

        (void)state;
        load_probe_or_skip(&loaded);
        fds[0] = loaded.probe.link_fd;
        fds[1] = loaded.probe.ring_fd;
        fds[2] = loaded.probe.config_fd;
        enter_link_fd = loaded.probe.enter_link_fd;
        pass_probe_fds(fds);
        manager_start(&m);
        assert_int_equal(write_source_fds_take_stored(&g), 1);
        assert_int_equal(g.probe_error, 0);
        assert_int_equal(g.probe.link_fd, SD_LISTEN_FDS_START);
        assert_int_equal(g.probe.ring_fd, SD_LISTEN_FDS_START + 1);
        assert_int_equal(g.probe.config_fd, SD_LISTEN_FDS_START + 2);
        assert_true(g.write_fd < 0 && g.open_fd < 0);
        assert_int_equal(fcntl(g.probe.ring_fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        assert_int_equal(fcntl(g.probe.config_fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        assert_true(manager_receive(&m, text, sizeof(text), &fd));
        assert_string_equal(text, "FDSTOREREMOVE=1\nFDNAME=" WRITE_PROBE_FDNAME_LINK);
        assert_true(manager_receive(&m, text, sizeof(text), &fd));
        assert_string_equal(text, "FDSTOREREMOVE=1\nFDNAME=" WRITE_PROBE_FDNAME_RING);
        assert_true(manager_receive(&m, text, sizeof(text), &fd));
        assert_string_equal(text, "FDSTOREREMOVE=1\nFDNAME=" WRITE_PROBE_FDNAME_CONFIG);
        if (enter_link_fd >= 0) {
                assert_true(manager_receive(&m, text, sizeof(text), &fd));
                assert_string_equal(text, "FDSTOREREMOVE=1\nFDNAME=" WRITE_PROBE_FDNAME_ENTER);
                assert_int_equal(g.probe.enter_link_fd, SD_LISTEN_FDS_START + 3);
                close(g.probe.enter_link_fd);
        }
        enter_link_fd = -1;
        manager_stop(&m);
}

/*
 * The config map is checked as the others are (a ring under its name is
 * refused), and a probe without it is still the probe: its records all wake.
 */
static void test_take_probe_bad_config(void **state) {
        WriteSourceFds loaded, g;
        int fds[3];

        (void)state;
        load_probe_or_skip(&loaded);
        fds[0] = loaded.probe.link_fd;
        fds[1] = loaded.probe.ring_fd;
        fds[2] = fcntl(loaded.probe.ring_fd, F_DUPFD_CLOEXEC, 3);
        close(loaded.probe.config_fd);
        enter_link_fd = loaded.probe.enter_link_fd;
        pass_probe_fds(fds);
        assert_int_equal(write_source_fds_take_stored(&g), 1);
        assert_int_equal(g.probe_error, 0);
        assert_int_equal(g.probe.ring_fd, SD_LISTEN_FDS_START + 1);
        assert_true(g.probe.config_fd < 0);
        assert_false(fd_open(SD_LISTEN_FDS_START + 2));
        close(g.probe.link_fd);
        close(g.probe.ring_fd);
        if (enter_link_fd >= 0)
                close(g.probe.enter_link_fd);
        enter_link_fd = -1;
}

static bool is_socket(int fd) {
        struct stat st;

        return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

/*
 * The probe through a real store's round trip. systemd closes a stored fd
 * that polls POLLHUP or POLLERR: the config map (an array map polls
 * POLLERR; a kprobe's perf event, where there is one, POLLHUP) is sent in
 * a carrier that polls nothing, the ring as it is, and the daemon takes
 * each out of what LISTEN_FDS passes it.
 */
static void test_store_carries_what_polls_hup(void **state) {
        WriteSourceWant want = { .source = WRITE_SOURCE_BPF, .hook = WRITE_PROBE_HOOK_AUTO };
        WriteSourceFds g, taken;
        int fds[4] = { -1, -1, -1, -1 }, fd;
        const char *names[] = { WRITE_PROBE_FDNAME_LINK, WRITE_PROBE_FDNAME_RING, WRITE_PROBE_FDNAME_CONFIG,
                                WRITE_PROBE_FDNAME_ENTER };
        char text[256];
        Manager m;
        int n = 0;

        (void)state;
        load_probe_or_skip(&g); /* which hook this machine gives */
        want.hook = g.probe_hook;
        write_source_fds_close(&g);
        manager_start(&m);
        assert_int_equal(write_source_fds_store(&want, &g), 0);
        while (manager_receive(&m, text, sizeof(text), &fd)) {
                struct pollfd p = { .fd = fd };

                assert_true(fd >= 0);
                /* What systemd polls for: nothing. */
                assert_int_equal(poll(&p, 1, 0), 0);
                for (int i = 0; i < 4; i++)
                        if (strcmp(text + strlen("FDSTORE=1\nFDNAME="), names[i]) == 0)
                                fds[i] = fd;
                n++;
        }
        assert_int_equal(n, want.hook == WRITE_PROBE_HOOK_SYSCALL_EXIT ? 4 : 3);
        assert_true(fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0);
        assert_false(is_socket(fds[1]));
        assert_true(is_socket(fds[2]));
        enter_link_fd = fds[3];
        pass_probe_fds(fds);
        assert_int_equal(write_source_fds_take_stored(&taken), 1);
        assert_int_equal(taken.probe_error, 0);
        assert_int_equal(taken.probe_hook, want.hook);
        assert_true(taken.probe.config_fd >= 0 && !is_socket(taken.probe.config_fd));
        assert_int_equal(fcntl(taken.probe.config_fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        /* The carrier is closed: only the map is left. */
        assert_false(fd_open(SD_LISTEN_FDS_START + 2) && is_socket(SD_LISTEN_FDS_START + 2));
        write_source_fds_close(&taken);
        enter_link_fd = -1;
        manager_stop(&m);
}

static void test_store_sends_named_groups(void **state) {
        Manager m;
        WriteSourceFds g;
        char text[256];
        int fd;

        (void)state;
        close(group_or_skip());
        manager_start(&m);
        assert_int_equal(write_source_fds_store(&(WriteSourceWant){ .source = WRITE_SOURCE_FANOTIFY }, &g),
                         0);
        assert_true(manager_receive(&m, text, sizeof(text), &fd));
        assert_string_equal(text, "FDSTORE=1\nFDNAME=" WRITE_SOURCE_FDNAME_WRITE);
        assert_true(fd >= 0);
        /* A fanotify group answers FAN_MARK_FLUSH. */
        assert_int_equal(fanotify_mark(fd, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL), 0);
        close(fd);
        assert_true(manager_receive(&m, text, sizeof(text), &fd));
        assert_string_equal(text, "FDSTORE=1\nFDNAME=" WRITE_SOURCE_FDNAME_OPEN);
        assert_int_equal(fanotify_mark(fd, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL), 0);
        close(fd);
        manager_stop(&m);
}

static void test_store_without_manager(void **state) {
        WriteSourceFds g;

        (void)state;
        close(group_or_skip());
        unsetenv("NOTIFY_SOCKET");
        assert_int_equal(write_source_fds_store(&(WriteSourceWant){ .source = WRITE_SOURCE_FANOTIFY }, &g),
                         -ENOTCONN);
        assert_int_equal(g.write_fd, -ENOTCONN);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_take_nothing_passed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_take_refuses_other_fds, setup, teardown),
                cmocka_unit_test_setup_teardown(test_take_groups_and_unstore, setup, teardown),
                cmocka_unit_test_setup_teardown(test_take_open_group_alone, setup, teardown),
                cmocka_unit_test_setup_teardown(test_take_refuses_fake_probe, setup, teardown),
                cmocka_unit_test_setup_teardown(test_take_probe_and_unstore, setup, teardown),
                cmocka_unit_test_setup_teardown(test_take_probe_bad_config, setup, teardown),
                cmocka_unit_test_setup_teardown(test_store_carries_what_polls_hup, setup, teardown),
                cmocka_unit_test_setup_teardown(test_store_sends_named_groups, setup, teardown),
                cmocka_unit_test_setup_teardown(test_store_without_manager, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
