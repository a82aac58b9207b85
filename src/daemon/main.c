/* SPDX-License-Identifier: MIT */
/*
 * thpguardd: argument parsing and wiring. The logic lives in the modules
 * (policy, compliance, enforce, daemon); this file only connects them.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "metrics.h"
#include "thpguard/capability.h"
#include "thpguard/compliance.h"
#include "thpguard/enforce.h"
#include "thpguard/fileio.h"
#include "thpguard/log.h"
#include "thpguard/path.h"
#include "thpguard/policy.h"
#include "thpguard/sandbox.h"
#include "thpguard/sysfs.h"
#include "thpguard/write-source-fds.h"
#include "verify-report.h"

#ifndef THPGUARD_VERSION
#define THPGUARD_VERSION "unknown"
#endif

/* --verify and --once: 0 compliant, 1 drift / not corrected, 2 error. */
enum {
        EXIT_COMPLIANT = 0,
        EXIT_DRIFT = 1,
        EXIT_ERROR = 2,
};

typedef enum Action {
        ACTION_DAEMON,
        ACTION_CHECK_CONFIG,
        ACTION_VERIFY,
        ACTION_ONCE,
        ACTION_ALIVE,
        ACTION_HELP,
        ACTION_VERSION,
} Action;

typedef struct Args {
        Action action;
        const char *config;
        const char *sysfs_root;
        bool json;
        PolicyMode mode; /* --audit, --lock; _POLICY_MODE_UNSET: the policy's */
        LogTarget log_target;
        const char *metrics_file;
        const char *nfd_features_file;
        WriteSource write_source;
        WriteProbeHook write_probe_hook; /* _WRITE_PROBE_HOOK_MAX: not given, the policy's */
} Args;

static void help(void) {
        printf("Usage: thpguardd [OPTIONS]\n"
               "Keep the Transparent Huge Page settings where the policy wants them.\n"
               "Without a mode option, runs in the foreground as the enforcing daemon.\n"
               "\n"
               "  -c, --config FILE      policy file (default " POLICY_FILE_DEFAULT ")\n"
               "      --sysfs-root DIR   where sysfs is mounted (default /sys; /host/sys in a pod)\n"
               "  -n, --check-config     validate the policy, also against this kernel; write nothing\n"
               "      --verify           compare the policy with the live values; write nothing\n"
               "      --json             with --verify: print a JSON document\n"
               "      --once             apply the policy once and exit\n"
               "      --audit            report drift but never write (overrides mode)\n"
               "      --lock             enforce, and refuse every other writer's open of a knob\n"
               "                         where the kernel lets us (overrides mode)\n"
               "      --log-target=auto|journal|console\n"
               "                         where events go; auto: the journal if its socket exists,\n"
               "                         else logfmt lines on stderr (default auto)\n"
               "      --metrics-file PATH  Prometheus textfile to keep up to date\n"
               "      --nfd-features-file PATH  node-feature-discovery feature file to keep: thpguard.io/\n"
               "                         labels of the node's enabled, defrag, compliance and mode\n"
               "      --write-source=auto|bpf|fanotify|none\n"
               "                         what tells of writes and names writers: the BPF write\n"
               "                         probe (every sysfs mount), fanotify (this mount only),\n"
               "                         or neither; auto: the probe where it loads (default auto)\n"
               "      --write-probe-hook=auto|fexit|kprobe|syscall-exit\n"
               "                         where the probe runs; auto: fexit, else a kprobe on the\n"
               "                         kernfs write; syscall-exit only by name: it taxes every\n"
               "                         system call of the node (default: the policy's, else auto)\n"
               "      --alive            liveness probe: exit 0 if the daemon keeps the metrics file\n"
               "                         (--metrics-file, else the policy's) fresh; write nothing\n"
               "  -h, --help             show this help\n"
               "  -V, --version          show the version\n"
               "\n"
               "Exit status: daemon 0 on SIGTERM/SIGINT, 1 on an invalid policy or setup error;\n"
               "--check-config 0 valid, 1 invalid; --verify and --once 0 compliant, 1 drift\n"
               "left, 2 error (such as an invalid policy, which never leads to a write);\n"
               "--alive 0 alive, 1 stale, stopped or missing metrics file, 2 error.\n"
               "See thpguardd(8) and thpguard.conf(5).\n");
}

/* One mode per run; repeating the same one (-n -n) is fine. */
static bool set_mode(Args *a, Action mode) {
        if (a->action != ACTION_DAEMON && a->action != mode)
                return false;
        a->action = mode;
        return true;
}

static int parse_argv(int argc, char **argv, Args *ret) {
        enum {
                ARG_SYSFS_ROOT = 0x100,
                ARG_VERIFY,
                ARG_JSON,
                ARG_ONCE,
                ARG_AUDIT,
                ARG_LOCK,
                ARG_LOG_TARGET,
                ARG_METRICS_FILE,
                ARG_NFD_FEATURES_FILE,
                ARG_ALIVE,
                ARG_WRITE_SOURCE,
                ARG_WRITE_PROBE_HOOK,
        };
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "sysfs-root", required_argument, NULL, ARG_SYSFS_ROOT },
                { "check-config", no_argument, NULL, 'n' },
                { "verify", no_argument, NULL, ARG_VERIFY },
                { "json", no_argument, NULL, ARG_JSON },
                { "once", no_argument, NULL, ARG_ONCE },
                { "audit", no_argument, NULL, ARG_AUDIT },
                { "lock", no_argument, NULL, ARG_LOCK },
                { "log-target", required_argument, NULL, ARG_LOG_TARGET },
                { "metrics-file", required_argument, NULL, ARG_METRICS_FILE },
                { "nfd-features-file", required_argument, NULL, ARG_NFD_FEATURES_FILE },
                { "alive", no_argument, NULL, ARG_ALIVE },
                { "write-source", required_argument, NULL, ARG_WRITE_SOURCE },
                { "write-probe-hook", required_argument, NULL, ARG_WRITE_PROBE_HOOK },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        Args a = { .action = ACTION_DAEMON,
                   .config = POLICY_FILE_DEFAULT,
                   .sysfs_root = "/sys",
                   .mode = _POLICY_MODE_UNSET,
                   .write_probe_hook = _WRITE_PROBE_HOOK_MAX };
        bool conflict = false;
        int c;

        while ((c = getopt_long(argc, argv, "c:nhV", options, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        a.config = optarg;
                        break;
                case ARG_SYSFS_ROOT:
                        a.sysfs_root = optarg;
                        break;
                case 'n':
                        conflict |= !set_mode(&a, ACTION_CHECK_CONFIG);
                        break;
                case ARG_VERIFY:
                        conflict |= !set_mode(&a, ACTION_VERIFY);
                        break;
                case ARG_ONCE:
                        conflict |= !set_mode(&a, ACTION_ONCE);
                        break;
                case ARG_ALIVE:
                        conflict |= !set_mode(&a, ACTION_ALIVE);
                        break;
                case ARG_JSON:
                        a.json = true;
                        break;
                case ARG_AUDIT:
                case ARG_LOCK: {
                        PolicyMode m = c == ARG_AUDIT ? POLICY_MODE_AUDIT : POLICY_MODE_LOCK;

                        if (a.mode != _POLICY_MODE_UNSET && a.mode != m) {
                                fprintf(stderr, "thpguardd: --audit and --lock: choose one\n");
                                return -EINVAL;
                        }
                        a.mode = m;
                        break;
                }
                case ARG_LOG_TARGET:
                        if (log_target_from_string(optarg, &a.log_target) < 0) {
                                fprintf(stderr,
                                        "thpguardd: --log-target: invalid value '%s' (expected auto, "
                                        "journal or console)\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_METRICS_FILE:
                        if (optarg[0] != '/') {
                                fprintf(stderr, "thpguardd: --metrics-file: '%s' is not an absolute path\n",
                                        optarg);
                                return -EINVAL;
                        }
                        if (!path_is_textfile_name(optarg)) {
                                fprintf(stderr, "thpguardd: --metrics-file: '%s' is not a NAME.prom file\n",
                                        optarg);
                                return -EINVAL;
                        }
                        a.metrics_file = optarg;
                        break;
                case ARG_WRITE_SOURCE:
                        if (write_source_from_string(optarg, &a.write_source) < 0) {
                                fprintf(stderr,
                                        "thpguardd: --write-source: invalid value '%s' (expected auto, bpf, "
                                        "fanotify or none)\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_WRITE_PROBE_HOOK:
                        if (write_probe_hook_from_string(optarg, &a.write_probe_hook) < 0) {
                                fprintf(stderr,
                                        "thpguardd: --write-probe-hook: invalid value '%s' (expected auto, "
                                        "fexit, kprobe or syscall-exit)\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_NFD_FEATURES_FILE:
                        if (optarg[0] != '/') {
                                fprintf(stderr,
                                        "thpguardd: --nfd-features-file: '%s' is not an absolute path\n",
                                        optarg);
                                return -EINVAL;
                        }
                        a.nfd_features_file = optarg;
                        break;
                case 'h':
                        a.action = ACTION_HELP;
                        *ret = a;
                        return 0;
                case 'V':
                        a.action = ACTION_VERSION;
                        *ret = a;
                        return 0;
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "thpguardd: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        if (conflict) {
                fprintf(stderr,
                        "thpguardd: --check-config, --verify, --once and --alive exclude each other\n");
                return -EINVAL;
        }
        if (a.json && a.action != ACTION_VERIFY) {
                fprintf(stderr, "thpguardd: --json goes with --verify\n");
                return -EINVAL;
        }
        *ret = a;
        return 0;
}

static int open_sysfs(const char *root, Sysfs **ret) {
        int r;

        r = sysfs_new(root, ret);
        if (r < 0)
                fprintf(stderr, "thpguardd: --sysfs-root %s: %s\n", root, sysfs_strerror(-r));
        return r;
}

static int run_check_config(const Args *a) {
        _cleanup_diag_ Diag diag = {};
        _cleanup_policy_ Policy *p = NULL;
        _cleanup_sysfs_ Sysfs *s = NULL;
        int r;

        r = policy_load_as_daemon(a->config, a->mode, &diag, &p);
        if (r >= 0) {
                /* --metrics-file overrides it: the policy's would not be written. */
                if (!a->metrics_file)
                        metrics_check_policy_file(p, &diag);
                r = open_sysfs(a->sysfs_root, &s);
                if (r >= 0)
                        compliance_check_policy(p, s, &diag);
        }
        diag_print(&diag, stderr);
        if (r < 0)
                return EXIT_FAILURE;
        printf("configuration OK\n");
        return EXIT_SUCCESS;
}

/* --verify and --once: the policy (its diagnostics printed) and the sysfs root, or an error said. */
static int open_policy_and_sysfs(const Args *a, Policy **ret_policy, Sysfs **ret_sysfs) {
        _cleanup_diag_ Diag diag = {};
        _cleanup_policy_ Policy *p = NULL;
        int r;

        r = policy_load_as_daemon(a->config, a->mode, &diag, &p);
        diag_print(&diag, stderr);
        if (r < 0)
                return r;
        r = open_sysfs(a->sysfs_root, ret_sysfs);
        if (r < 0)
                return r;
        *ret_policy = TAKE_PTR(p);
        return 0;
}

/*
 * What --verify --json says of the write source, found as the daemon finds
 * it: a loader forked before the privileges go, asked once the policy (and
 * its write_probe_hook) is read.
 */
typedef struct VerifyWriteSource {
        WriteSourceLoader *loader;
        WriteSource source;
        char detail[512];
} VerifyWriteSource;

static void start_write_source_probe(const Args *a, VerifyWriteSource *ret) {
        char thp_dir[PATH_MAX];
        int r;

        *ret = (VerifyWriteSource){ .source = WRITE_SOURCE_NONE };
        r = path_join_root(a->sysfs_root, "kernel/mm/transparent_hugepage", thp_dir, sizeof(thp_dir));
        if (r >= 0)
                r = write_source_loader_start(thp_dir, &ret->loader);
        if (r < 0)
                snprintf(ret->detail, sizeof(ret->detail), "cannot start the loading process: %s",
                         strerror(-r));
}

static void finish_write_source_probe(const Args *a, const Policy *p, VerifyWriteSource *ws) {
        WriteSourceWant want = { .source = a->write_source,
                                 .hook = a->write_probe_hook < _WRITE_PROBE_HOOK_MAX ? a->write_probe_hook
                                                                                     : p->write_probe_hook };
        struct pollfd pfd;
        WriteSourceFds g;
        int r;

        if (!ws->loader)
                return;
        r = write_source_loader_request(ws->loader, &want);
        if (r >= 0) {
                pfd = (struct pollfd){ .fd = write_source_loader_fd(ws->loader), .events = POLLIN };
                r = poll(&pfd, 1, 30 * 1000) > 0 ? write_source_loader_finish(ws->loader, &g) : -ETIMEDOUT;
        }
        ws->loader = write_source_loader_free(ws->loader);
        if (r < 0) {
                snprintf(ws->detail, sizeof(ws->detail), "the loading process did not answer: %s",
                         strerror(-r));
                return;
        }
        ws->source = write_source_fds_source(&g);
        snprintf(ws->detail, sizeof(ws->detail), "%s", g.probe_why);
        write_source_fds_close(&g);
}

static int run_verify(const Args *a, VerifyWriteSource *ws) {
        _cleanup_policy_ Policy *p = NULL;
        _cleanup_sysfs_ Sysfs *s = NULL;
        _cleanup_free_ KnobStatus *statuses = NULL;
        bool drift = false, error = false;

        if (open_policy_and_sysfs(a, &p, &s) < 0)
                return EXIT_ERROR;
        finish_write_source_probe(a, p, ws);

        statuses = calloc(p->n_knobs ? p->n_knobs : 1, sizeof(*statuses));
        if (!statuses)
                return EXIT_ERROR;
        for (size_t i = 0; i < p->n_knobs; i++) {
                compliance_read(s, &p->knobs[i], NULL, &statuses[i]);
                drift |= statuses[i].state == KNOB_STATE_DRIFT;
                error |= statuses[i].state == KNOB_STATE_ERROR;
        }

        if (a->json) {
                if (report_verify_json(stdout, p, s, statuses, write_source_to_string(ws->source),
                                       ws->detail) < 0)
                        return EXIT_ERROR;
        } else
                report_verify_text(stdout, p, statuses);
        return error ? EXIT_ERROR : drift ? EXIT_DRIFT : EXIT_COMPLIANT;
}

static int run_once(const Args *a) {
        _cleanup_policy_ Policy *p = NULL;
        _cleanup_sysfs_ Sysfs *s = NULL;
        bool compliant = true, error = false;

        if (open_policy_and_sysfs(a, &p, &s) < 0)
                return EXIT_ERROR;

        for (size_t i = 0; i < p->n_knobs; i++) {
                const PolicyKnob *k = &p->knobs[i];
                EnforceOutcome o;
                char why[256];

                enforce_knob(s, k, NULL, p->mode, &o);
                switch (o.action) {
                case ENFORCE_CORRECTED:
                        printf("%s: %s -> %s\n", k->path, o.before.actual, k->desired);
                        break;
                case ENFORCE_AUDIT:
                        printf("%s: %s -> %s (audit: not written)\n", k->path, o.before.actual, k->desired);
                        compliant = false;
                        break;
                case ENFORCE_FAILED:
                        enforce_describe_failure(&o, why, sizeof(why));
                        fprintf(stderr, "thpguardd: %s: %s -> %s failed: %s\n", k->path, o.before.actual,
                                k->desired, why);
                        compliant = false;
                        break;
                case ENFORCE_NONE:
                        if (o.before.state == KNOB_STATE_UNSUPPORTED)
                                fprintf(stderr, "thpguardd: %s: skipped: %s\n", k->path, o.before.reason);
                        else if (o.before.state == KNOB_STATE_ERROR) {
                                fprintf(stderr, "thpguardd: %s: %s\n", k->path, o.before.reason);
                                error = true;
                        }
                        break;
                }
        }
        /* As --verify: a knob that cannot be read (refused, unreadable) is an error, not drift. */
        return error ? EXIT_ERROR : compliant ? EXIT_COMPLIANT : EXIT_DRIFT;
}

/* The daemon: set up, started, run until SIGTERM or SIGINT. Returns the exit status. */
static int run_daemon(const Args *a) {
        _cleanup_(daemon_freep) Daemon *d = NULL;
        DaemonOptions o = {
                .config = a->config,
                .sysfs_root = a->sysfs_root,
                .mode = a->mode,
                .metrics_file = a->metrics_file,
                .nfd_features_file = a->nfd_features_file,
                .write_source = a->write_source,
                .write_probe_hook = a->write_probe_hook,
        };
        Logger log;

        logger_init(&log, a->log_target, JOURNAL_SOCKET, stderr);
        /*
         * A log line nobody reads (stderr piped into `head`, a closed console)
         * must never stop enforcement: a failed write returns EPIPE instead.
         */
        if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
                return log_error_errno(&log, -errno, "cannot ignore SIGPIPE"), EXIT_FAILURE;
        if (daemon_new(&o, &log, &d) < 0 || daemon_start(d) < 0)
                return EXIT_FAILURE;
        return daemon_loop(d);
}

static int confine(const Args *a, const char *metrics_file);

/*
 * The liveness probe of a pod: the daemon rewrites its metrics file at every
 * recheck, so a file that is not fresh means the event loop is stuck (or the
 * daemon stopped: then the file says thpguard_up 0). 0 alive, 1 not, 2 error.
 */
static int run_alive(const Args *a) {
        _cleanup_diag_ Diag diag = {};
        _cleanup_policy_ Policy *p = NULL;
        const char *path = a->metrics_file;
        struct timespec ts;
        char why[PATH_MAX + 256];

        if (!path) {
                if (policy_load_as_daemon(a->config, a->mode, &diag, &p) < 0) {
                        diag_print(&diag, stderr);
                        return EXIT_ERROR;
                }
                path = p->metrics_file;
                if (path && confine(a, path) < 0)
                        return EXIT_ERROR;
        }
        if (!path) {
                fprintf(stderr,
                        "thpguardd: --alive needs a metrics file: --metrics-file, or metrics_file in %s\n",
                        a->config);
                return EXIT_ERROR;
        }
        clock_gettime(CLOCK_REALTIME, &ts);
        if (metrics_check_alive(path, (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000, why,
                                sizeof(why)) < 0) {
                fprintf(stderr, "thpguardd: not alive: %s\n", why);
                return EXIT_DRIFT;
        }
        printf("%s\n", why);
        return EXIT_COMPLIANT;
}

/*
 * The one-shot modes (the readiness probe, ExecReload='s --check-config)
 * read the policy and /proc: with nothing of root left, before any of it.
 * The THP files are root's, 0644, which --once writes as root alone.
 */
static int drop_privileges(void) {
        char why[256];
        int r;

        r = capability_drop_all();
        if (r >= 0)
                r = capability_check_dropped(why, sizeof(why));
        else
                snprintf(why, sizeof(why), "%s", strerror(-r));
        if (r < 0)
                fprintf(stderr, "thpguardd: cannot drop privileges: %s\n", why);
        return r;
}

/* --alive without --metrics-file learns its file from the policy: confined once it has read it. */
static bool confine_early(const Args *a) {
        return a->action != ACTION_ALIVE || a->metrics_file;
}

/*
 * Then confined as the daemon confines itself (sandbox.h), the knobs
 * written by --once only. A kernel without Landlock or seccomp is no
 * error here: the daemon says so, the probes would say it every 30 s.
 */
static int confine(const Args *a, const char *metrics_file) {
        const char *read[] = { metrics_file };
        char thp[PATH_MAX], proc[PATH_MAX];
        SandboxResult res;
        int r;

        r = path_join_root(a->sysfs_root, "kernel/mm/transparent_hugepage", thp, sizeof(thp));
        if (r >= 0)
                r = path_join_root("/", "proc", proc, sizeof(proc));
        if (r >= 0)
                r = sandbox_confine_daemon(&(SandboxDaemon){ .proc_root = proc,
                                                             .policy_file = a->config,
                                                             .knob_dir = thp,
                                                             .knobs_read_only = a->action != ACTION_ONCE,
                                                             .listed_dir = a->sysfs_root,
                                                             .read_files = read,
                                                             .n_read_files = metrics_file ? 1 : 0 },
                                           &res);
        if (r < 0)
                fprintf(stderr, "thpguardd: cannot confine this process: %s\n", strerror(-r));
        return r;
}

int main(int argc, char **argv) {
        VerifyWriteSource ws = { .source = WRITE_SOURCE_NONE };
        Args a;

        if (parse_argv(argc, argv, &a) < 0) {
                fprintf(stderr, "Try 'thpguardd --help'.\n");
                return EXIT_ERROR;
        }
        if (a.action == ACTION_VERIFY && a.json)
                start_write_source_probe(&a, &ws);
        /* The daemon drops its own once its write source is open (daemon_new()). */
        if (a.action != ACTION_DAEMON &&
            (drop_privileges() < 0 || (confine_early(&a) && confine(&a, a.metrics_file) < 0)))
                return a.action == ACTION_CHECK_CONFIG ? EXIT_FAILURE : EXIT_ERROR;
        switch (a.action) {
        case ACTION_HELP:
                help();
                return EXIT_SUCCESS;
        case ACTION_VERSION:
                printf("thpguardd " THPGUARD_VERSION "\n");
                return EXIT_SUCCESS;
        case ACTION_CHECK_CONFIG:
                return run_check_config(&a);
        case ACTION_VERIFY: {
                int rc = run_verify(&a, &ws);

                write_source_loader_free(ws.loader);
                return rc;
        }
        case ACTION_ONCE:
                return run_once(&a);
        case ACTION_ALIVE:
                return run_alive(&a);
        case ACTION_DAEMON:
        default: {
                return run_daemon(&a);
        }
        }
}
