/* SPDX-License-Identifier: MIT */
/*
 * thpguard-write-source: run by thpguardd.service as ExecStartPre=-+, with
 * the privileges the daemon does not get. Loads the BPF write probe, or
 * where it cannot opens the writer attribution's two fanotify groups, and
 * leaves them in the service's file descriptor store, where systemd hands
 * them to thpguardd (thpguardd(8), WRITE SOURCES). Reads nothing but the
 * THP directory's listing (the probe's filter) and, given --config, the
 * policy's write_probe_hook, which a child that has dropped every
 * capability parses (the policy is input, and no privilege is needed to
 * read it). Never fails the start: without them the daemon still enforces
 * the policy, without naming writers.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "thpguard/capability.h"
#include "thpguard/diag.h"
#include "thpguard/policy.h"
#include "thpguard/write-source-fds.h"

static void usage(FILE *f) {
        fprintf(f, "Usage: thpguard-write-source [--config FILE] [--write-source=auto|bpf|fanotify|none]\n"
                   "                              [--write-probe-hook=auto|fexit|kprobe|syscall-exit]\n"
                   "Run by thpguardd.service (ExecStartPre=): loads thpguardd's write source into the\n"
                   "service's file descriptor store. The hook is --write-probe-hook, else the policy's\n"
                   "write_probe_hook (--config), else auto. See thpguardd(8), WRITE SOURCES.\n");
}

/*
 * The policy's write_probe_hook, and whether its mode is lock, read by a
 * child with nothing of root left; auto and no where the policy is missing
 * or invalid (the daemon refuses it then, saying why). Only two numbers
 * cross back.
 */
static WriteProbeHook policy_hook(const char *config, bool *ret_lock) {
        WriteProbeHook hook = WRITE_PROBE_HOOK_AUTO;
        int sv[2];

        *ret_lock = false;
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return hook;
        pid = fork();
        if (pid == 0) {
                _cleanup_diag_ Diag diag = {};
                _cleanup_policy_ Policy *p = NULL;
                char why[256];
                uint32_t h[2] = { WRITE_PROBE_HOOK_AUTO, 0 };

                close(sv[0]);
                if (capability_drop_all() < 0 || capability_check_dropped(why, sizeof(why)) < 0)
                        _exit(1);
                if (policy_load(config, &diag, &p) >= 0) {
                        h[0] = (uint32_t)p->write_probe_hook;
                        h[1] = p->mode == POLICY_MODE_LOCK;
                }
                (void)!write(sv[1], h, sizeof(h));
                _exit(0);
        }
        close(sv[1]);
        if (pid > 0) {
                uint32_t h[2];

                if (read(sv[0], h, sizeof(h)) == (ssize_t)sizeof(h) && h[0] < _WRITE_PROBE_HOOK_MAX) {
                        hook = (WriteProbeHook)h[0];
                        *ret_lock = h[1] == 1;
                }
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        close(sv[0]);
        return hook;
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "write-source", required_argument, NULL, 's' },
                { "write-probe-hook", required_argument, NULL, 'k' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        WriteSourceWant want = { .source = WRITE_SOURCE_AUTO, .hook = _WRITE_PROBE_HOOK_MAX };
        const char *config = NULL;
        WriteSourceFds g;
        int c, r;

        while ((c = getopt_long(argc, argv, "c:h", options, NULL)) >= 0)
                switch (c) {
                case 'c':
                        config = optarg;
                        break;
                case 's':
                        if (write_source_from_string(optarg, &want.source) < 0) {
                                fprintf(stderr,
                                        "thpguard-write-source: --write-source: invalid value '%s'\n",
                                        optarg);
                                return 2;
                        }
                        break;
                case 'k':
                        if (write_probe_hook_from_string(optarg, &want.hook) < 0) {
                                fprintf(stderr,
                                        "thpguard-write-source: --write-probe-hook: invalid value '%s'\n",
                                        optarg);
                                return 2;
                        }
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        if (optind < argc) {
                usage(stderr);
                return 2;
        }
        if (config) {
                WriteProbeHook h = policy_hook(config, &want.lock);

                if (want.hook == _WRITE_PROBE_HOOK_MAX)
                        want.hook = h;
        } else if (want.hook == _WRITE_PROBE_HOOK_MAX)
                want.hook = WRITE_PROBE_HOOK_AUTO;
        if (want.source == WRITE_SOURCE_NONE && !want.lock)
                return 0;
        r = write_source_fds_store(&want, &g);
        if (want.lock && g.lock_fd < 0)
                fprintf(stderr,
                        "thpguard-write-source: no lock group for thpguardd: %s; no write is refused\n",
                        strerror(-g.lock_fd));
        if (r == 0 && g.probe_error == 0)
                return 0;
        if (g.probe_error < 0)
                fprintf(stderr,
                        "thpguard-write-source: no BPF write probe: %s; fanotify names writers instead\n",
                        g.probe_why);
        if (r == 0)
                return 0;
        if (g.probe_error == 0)
                fprintf(stderr, "thpguard-write-source: cannot pass the BPF write probe to thpguardd: %s\n",
                        strerror(-r));
        else if (g.write_fd < 0)
                fprintf(
                    stderr,
                    "thpguard-write-source: no write group for thpguardd: %s; writer attribution is off\n",
                    strerror(-g.write_fd));
        else
                fprintf(
                    stderr,
                    "thpguard-write-source: no open group for thpguardd: %s; one-shot writers are named by "
                    "pid only\n",
                    strerror(-g.open_fd));
        /* ENOTCONN: not run by systemd; nothing was left anywhere. */
        return r == -ENOTCONN ? 1 : 0;
}
