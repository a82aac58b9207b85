/* SPDX-License-Identifier: MIT */
/*
 * thpguardctl: argument parsing and wiring only, for every command.
 * Collection lives in node.c, procscan.c, pid.c and journal.c, judgement
 * in verdict.c, printing in output-*.c, and the writers, exec and watch
 * commands in writers.c, exec.c and watch.c.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "thpguard/event-util.h"
#include "thpguard/number.h"
#include "watch.h"

#ifndef THPGUARD_VERSION
#define THPGUARD_VERSION "unknown"
#endif

/* PID_MAX_LIMIT on 64-bit kernels. */
#define PID_MAX 4194304

typedef struct CtlArgs {
        CtlStatusOptions status;
        CtlWritersOptions writers;
        CtlWatchOptions watch;
        bool json;
        uint64_t pid;
        ThpMode thp;
        char **command;
} CtlArgs;

static void help(void) {
        printf(
            "Usage: thpguardctl status [--json] [--config FILE] [--sysfs-root DIR] [--proc-root DIR] "
            "[--top N]\n"
            "                          [--journal-dir DIR]\n"
            "       thpguardctl pid PID [--json] [--sysfs-root DIR] [--proc-root DIR] [--top N]\n"
            "       thpguardctl workloads [--json] [--proc-root DIR]\n"
            "       thpguardctl writers [--since TIME] [--json] [--journal-dir DIR] [--machine-id ID|FILE]\n"
            "                           [--daemon-exe PATH]\n"
            "       thpguardctl watch [--interval SECONDS] [--count N] [--top N] [--json] (see watch "
            "--help)\n"
            "       thpguardctl exec --thp=disable|advised-only|inherit [--] COMMAND [ARGS...]\n"
            "Diagnose Transparent Huge Pages on this node; run a command with a per-process THP mode.\n"
            "\n"
            "Commands:\n"
            "  status   the node: verdict, every THP knob against the policy, kernel command line,\n"
            "           foreign writes of the last 24 h (journal), khugepaged, meminfo, per-size and\n"
            "           vmstat counters, top processes by AnonHugePages. Read-only.\n"
            "  pid      one process: Rss against Pss, AnonHugePages and its largest mappings, its THP\n"
            "           state, and what to compare Rss with. Read-only.\n"
            "  watch    what THP is doing now, as rates every interval: faults, khugepaged, splits,\n"
            "           compaction, memory pressure, who grows; full-screen on a terminal. Read-only.\n"
            "  workloads  the processes grouped by container (Kubernetes pod and container, podman\n"
            "           libpod-<id>), systemd unit or cgroup: processes, how many run with THP\n"
            "           disabled, AnonHugePages, by AnonHugePages. Read-only.\n"
            "  writers  who wrote the THP knobs behind thpguardd's back, from its journal records:\n"
            "           per writer the writes, knobs, first and last time, pid, unit, pod. Read-only.\n"
            "  exec     set prctl(PR_SET_THP_DISABLE) and exec COMMAND; children inherit the mode.\n"
            "           disable: no THP at all; advised-only: THP only in MADV_HUGEPAGE regions\n"
            "           (Linux 6.18+, refused on older kernels); inherit: clear an inherited setting.\n"
            "\n"
            "Options:\n"
            "      --json             print one JSON document\n"
            "  -c, --config FILE      policy file (default " POLICY_FILE_DEFAULT ")\n"
            "      --sysfs-root DIR   where sysfs is mounted (default /sys; /host/sys in a pod)\n"
            "      --proc-root DIR    where procfs is mounted (default /proc; /host/proc in a pod)\n"
            "      --top N            status: processes listed (default %d, 0..%d);\n"
            "                         pid: mappings listed (default %d, 0..%d)\n"
            "      --journal-dir DIR  read the journal files in DIR, as journalctl -D (a pod: the\n"
            "                         host's /var/log/journal mounted); default the local journal\n"
            "      --since TIME       writers: from TIME: YYYY-MM-DD[ HH:MM[:SS]] local time, or -N\n"
            "                         with s, m or min, h, d or w, e.g. -30min, -7d (default -24h)\n"
            "      --machine-id ID|FILE  whose records count: this host's machine ID, or a file\n"
            "                         holding it (a pod: the host's /etc/machine-id mounted);\n"
            "                         default /etc/machine-id. Only DIR/ID of --journal-dir is read\n"
            "      --daemon-exe PATH  thpguardd's executable as the journal records it (_EXE);\n"
            "                         default " THPGUARD_DAEMON_EXE "\n"
            "  -h, --help             show this help\n"
            "  -V, --version          show the version\n"
            "\n"
            "Exit status: 0 success; 1 a file the command needs is missing or unreadable (the THP\n"
            "sysfs directory, the proc root, the process, a --config given explicitly, or the\n"
            "journal for writers); 2 usage; 3 writers: no systemd journal on this node; 4 pid:\n"
            "the process's smaps_rollup or smaps did not answer in time (the rest is printed).\n"
            "exec: the command's own status, or 125 if the THP mode could not be set, 126 if the\n"
            "command cannot run, 127 if it was not found.\n"
            "See thpguardctl(1).\n",
            CTL_TOP_DEFAULT, CTL_TOP_MAX, CTL_TOP_DEFAULT, PROCFS_SMAPS_TOP_MAX);
}

static void help_watch(void) {
        printf(
            "Usage: thpguardctl watch [--interval SECONDS] [--count N] [--top N] [--json] [--config FILE]\n"
            "                         [--sysfs-root DIR] [--proc-root DIR] [--journal-dir DIR]\n"
            "                         [--machine-id ID|FILE] [--daemon-exe PATH]\n"
            "What THP is doing on this node now, as rates, every interval: faults and fallbacks,\n"
            "khugepaged's collapses, CPU and scans, splits, compaction, per-size mTHP faults, memory\n"
            "pressure, AnonHugePages and the processes whose huge pages grew. Read-only.\n"
            "On a terminal, a full-screen view (q quits); otherwise one line an interval under a\n"
            "header, or with --json one JSON object a line.\n"
            "\n"
            "      --interval SECONDS  between samples, 0.1 to 3600 (default 1)\n"
            "      --count N           stop after N intervals (default: until stopped)\n"
            "      --top N             processes listed (default %d, 0..%d)\n"
            "      --json              one JSON object an interval, even on a terminal\n"
            "  -c, --config FILE       policy file (default " POLICY_FILE_DEFAULT ")\n"
            "      --sysfs-root DIR    where sysfs is mounted (default /sys; /host/sys in a pod)\n"
            "      --proc-root DIR     where procfs is mounted (default /proc; /host/proc in a pod)\n"
            "      --journal-dir DIR   read the journal files in DIR for the last correction\n"
            "      --machine-id ID|FILE  whose records count (default /etc/machine-id)\n"
            "      --daemon-exe PATH   thpguardd's executable as the journal records it (_EXE)\n"
            "  -h, --help              show this help\n"
            "\n"
            "Exit status: 0 success; 1 the THP sysfs directory, the proc root or a --config given\n"
            "explicitly is missing or unreadable, or the output went away; 2 usage. See thpguardctl(1).\n",
            CTL_TOP_DEFAULT, CTL_TOP_MAX);
}

/* "1", "0.5", "2.250": seconds with at most three decimals, as microseconds. */
static int parse_seconds(const char *s, uint64_t *ret_usec) {
        const char *dot = strchr(s, '.');
        size_t whole_len = dot ? (size_t)(dot - s) : strlen(s), frac_len = dot ? strlen(dot + 1) : 0;
        uint64_t whole, frac = 0;

        if (whole_len == 0 || number_parse_u64(s, whole_len, &whole) < 0 || whole > 3600)
                return -EINVAL;
        if (dot && (frac_len == 0 || frac_len > 3 || number_parse_u64(dot + 1, frac_len, &frac) < 0))
                return -EINVAL;
        for (size_t i = frac_len; i < 6; i++)
                frac *= 10;
        *ret_usec = whole * USEC_PER_SEC + frac;
        return 0;
}

static int parse_number(const char *s, uint64_t max, uint64_t *ret) {
        uint64_t v;

        if (!s || number_parse_u64(s, strlen(s), &v) < 0 || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

typedef enum Command {
        CMD_STATUS,
        CMD_PID,
        CMD_WRITERS,
        CMD_EXEC,
        CMD_WORKLOADS,
        CMD_WATCH,
} Command;

#define CMD(c) (1u << (c))

static int parse_argv(Command cmd, int argc, char **argv, CtlArgs *ret) {
        enum {
                ARG_JSON = 0x100,
                ARG_SYSFS_ROOT,
                ARG_PROC_ROOT,
                ARG_TOP,
                ARG_THP,
                ARG_JOURNAL_DIR,
                ARG_SINCE,
                ARG_MACHINE_ID,
                ARG_DAEMON_EXE,
                ARG_INTERVAL,
                ARG_COUNT,
        };
        static const struct option options[] = {
                { "json", no_argument, NULL, ARG_JSON },
                { "config", required_argument, NULL, 'c' },
                { "sysfs-root", required_argument, NULL, ARG_SYSFS_ROOT },
                { "proc-root", required_argument, NULL, ARG_PROC_ROOT },
                { "top", required_argument, NULL, ARG_TOP },
                { "thp", required_argument, NULL, ARG_THP },
                { "journal-dir", required_argument, NULL, ARG_JOURNAL_DIR },
                { "since", required_argument, NULL, ARG_SINCE },
                { "machine-id", required_argument, NULL, ARG_MACHINE_ID },
                { "daemon-exe", required_argument, NULL, ARG_DAEMON_EXE },
                { "interval", required_argument, NULL, ARG_INTERVAL },
                { "count", required_argument, NULL, ARG_COUNT },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        /* The commands each option applies to. */
        static const struct {
                int option;
                unsigned commands;
        } applies[] = {
                { ARG_JSON,
                  CMD(CMD_STATUS) | CMD(CMD_PID) | CMD(CMD_WRITERS) | CMD(CMD_WORKLOADS) | CMD(CMD_WATCH) },
                { 'c', CMD(CMD_STATUS) | CMD(CMD_WATCH) },
                { ARG_SYSFS_ROOT, CMD(CMD_STATUS) | CMD(CMD_PID) | CMD(CMD_WATCH) },
                { ARG_PROC_ROOT, CMD(CMD_STATUS) | CMD(CMD_PID) | CMD(CMD_WORKLOADS) | CMD(CMD_WATCH) },
                { ARG_TOP, CMD(CMD_STATUS) | CMD(CMD_PID) | CMD(CMD_WATCH) },
                { ARG_THP, CMD(CMD_EXEC) },
                { ARG_JOURNAL_DIR, CMD(CMD_STATUS) | CMD(CMD_WRITERS) | CMD(CMD_WATCH) },
                { ARG_SINCE, CMD(CMD_WRITERS) },
                { ARG_MACHINE_ID, CMD(CMD_STATUS) | CMD(CMD_WRITERS) | CMD(CMD_WATCH) },
                { ARG_DAEMON_EXE, CMD(CMD_STATUS) | CMD(CMD_WRITERS) | CMD(CMD_WATCH) },
                { ARG_INTERVAL, CMD(CMD_WATCH) },
                { ARG_COUNT, CMD(CMD_WATCH) },
        };
        CtlArgs a = {
                .status = { .config = POLICY_FILE_DEFAULT,
                            .sysfs_root = "/sys",
                            .proc_root = "/proc",
                            .top = CTL_TOP_DEFAULT },
                .watch = { .interval_usec = CTL_WATCH_INTERVAL_DEFAULT_USEC },
                .thp = _THP_MODE_INVALID,
        };
        uint64_t top_max = cmd == CMD_PID ? PROCFS_SMAPS_TOP_MAX : CTL_TOP_MAX, v;
        const char *name = argv[0], *since = CTL_WRITERS_SINCE_DEFAULT;
        int c;

        /* exec: "+" stops at COMMAND, so its own options are never taken for ours. */
        optind = 1;
        while ((c = getopt_long(argc, argv, cmd == CMD_EXEC ? "+h" : "c:h", options, NULL)) >= 0) {
                if (c == '?')
                        return -EINVAL;
                for (size_t i = 0; i < ELEMENTSOF(applies); i++)
                        if (applies[i].option == c && !(applies[i].commands & CMD(cmd))) {
                                /* The one option only the node's views take. */
                                if (c == 'c')
                                        fprintf(
                                            stderr,
                                            "thpguardctl %s: --config applies to status and watch only\n",
                                            name);
                                else
                                        /* By its name: argv[optind - 1] may be its argument ("--since -1h").
                                         */
                                        for (const struct option *o = options; o->name; o++)
                                                if (o->val == c)
                                                        fprintf(stderr,
                                                                "thpguardctl %s: option '--%s' does not "
                                                                "apply here\n",
                                                                name, o->name);
                                return -EINVAL;
                        }
                switch (c) {
                case ARG_JSON:
                        a.json = true;
                        break;
                case 'c':
                        a.status.config = optarg;
                        a.status.config_explicit = true;
                        break;
                case ARG_SYSFS_ROOT:
                        a.status.sysfs_root = optarg;
                        break;
                case ARG_PROC_ROOT:
                        a.status.proc_root = optarg;
                        break;
                case ARG_TOP:
                        if (parse_number(optarg, top_max, &v) < 0) {
                                fprintf(stderr, "thpguardctl %s: --top '%s': expected 0..%" PRIu64 "\n",
                                        name, optarg, top_max);
                                return -EINVAL;
                        }
                        a.status.top = (size_t)v;
                        break;
                case ARG_JOURNAL_DIR:
                        a.status.journal_dir = a.writers.journal_dir = optarg;
                        break;
                case ARG_SINCE:
                        since = optarg;
                        break;
                case ARG_MACHINE_ID:
                        a.status.machine_id = a.writers.machine_id = optarg;
                        break;
                case ARG_DAEMON_EXE:
                        if (optarg[0] != '/') {
                                fprintf(stderr,
                                        "thpguardctl %s: --daemon-exe '%s' is not an absolute path\n", name,
                                        optarg);
                                return -EINVAL;
                        }
                        a.status.daemon_exe = a.writers.daemon_exe = optarg;
                        break;
                case ARG_THP:
                        a.thp = thp_mode_from_string(optarg);
                        if (a.thp == _THP_MODE_INVALID) {
                                fprintf(stderr,
                                        "thpguardctl exec: --thp '%s': expected disable, advised-only or "
                                        "inherit\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_INTERVAL:
                        if (parse_seconds(optarg, &a.watch.interval_usec) < 0 ||
                            a.watch.interval_usec < CTL_WATCH_INTERVAL_MIN_USEC ||
                            a.watch.interval_usec > CTL_WATCH_INTERVAL_MAX_USEC) {
                                fprintf(stderr,
                                        "thpguardctl watch: --interval '%s': expected seconds from 0.1 to "
                                        "3600, at "
                                        "most three decimals\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_COUNT:
                        if (parse_number(optarg, UINT32_MAX, &a.watch.count) < 0 || a.watch.count == 0) {
                                fprintf(stderr, "thpguardctl watch: --count '%s': expected 1..%" PRIu32 "\n",
                                        optarg, UINT32_MAX);
                                return -EINVAL;
                        }
                        break;
                case 'h':
                        if (cmd == CMD_WATCH)
                                help_watch();
                        else
                                help();
                        exit(CTL_EXIT_OK);
                default:
                        return -EINVAL;
                }
        }

        switch (cmd) {
        case CMD_STATUS:
        case CMD_WRITERS:
        case CMD_WORKLOADS:
        case CMD_WATCH:
                if (optind < argc) {
                        fprintf(stderr, "thpguardctl %s: unexpected argument '%s'\n", name, argv[optind]);
                        return -EINVAL;
                }
                a.writers.json = a.watch.json = a.json;
                a.watch.status = a.status;
                if (cmd == CMD_WRITERS &&
                    ctl_since_parse(since, now_usec(CLOCK_REALTIME), &a.writers.since_usec) < 0) {
                        fprintf(stderr,
                                "thpguardctl writers: --since '%s': expected YYYY-MM-DD[ HH:MM[:SS]] or -N "
                                "with s, m, min, h, d or w (e.g. -24h, -30min, -7d)\n",
                                since);
                        return -EINVAL;
                }
                break;
        case CMD_PID:
                if (optind + 1 != argc) {
                        fprintf(stderr, "thpguardctl pid: expected exactly one PID\n");
                        return -EINVAL;
                }
                if (parse_number(argv[optind], PID_MAX, &a.pid) < 0 || a.pid == 0) {
                        fprintf(stderr, "thpguardctl pid: '%s' is not a PID (1..%d)\n", argv[optind],
                                PID_MAX);
                        return -EINVAL;
                }
                break;
        case CMD_EXEC:
                if (a.thp == _THP_MODE_INVALID) {
                        fprintf(stderr,
                                "thpguardctl exec: --thp=disable|advised-only|inherit is required\n");
                        return -EINVAL;
                }
                if (optind == argc) {
                        fprintf(stderr, "thpguardctl exec: no COMMAND given\n");
                        return -EINVAL;
                }
                a.command = argv + optind;
                break;
        }
        *ret = a;
        return 0;
}

static int run_status(const CtlArgs *a) {
        _cleanup_(ctl_node_done) CtlNode n = {};

        if (ctl_node_collect(&a->status, &n) < 0)
                return CTL_EXIT_FAILURE;
        ctl_node_judge(&n);
        if (a->json) {
                if (ctl_status_print_json(stdout, &n) < 0) {
                        fprintf(stderr, "thpguardctl: cannot write the JSON document\n");
                        return CTL_EXIT_FAILURE;
                }
        } else
                ctl_status_print_text(stdout, &n);
        return CTL_EXIT_OK;
}

static int run_workloads(const CtlArgs *a) {
        _cleanup_(ctl_workloads_done) CtlWorkloads ws = {};
        int r;

        r = ctl_workloads_collect(a->status.proc_root, &ws);
        if (r < 0) {
                fprintf(stderr, "thpguardctl workloads: --proc-root %s: cannot list processes: %s\n",
                        a->status.proc_root, strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        if (a->json) {
                if (ctl_workloads_print_json(stdout, a->status.proc_root, &ws) < 0) {
                        fprintf(stderr, "thpguardctl: cannot write the JSON document\n");
                        return CTL_EXIT_FAILURE;
                }
        } else
                ctl_workloads_print_text(stdout, a->status.proc_root, &ws, 0);
        return CTL_EXIT_OK;
}

static int run_pid(const CtlArgs *a) {
        _cleanup_(ctl_pid_done) CtlPid p = {};
        char why[CTL_PID_READ_ERROR_MAX];

        if (ctl_pid_collect(a->status.proc_root, a->status.sysfs_root, a->pid, a->status.top, &p) < 0)
                return CTL_EXIT_FAILURE;
        if (a->json) {
                if (ctl_pid_print_json(stdout, &p) < 0) {
                        fprintf(stderr, "thpguardctl: cannot write the JSON document\n");
                        return CTL_EXIT_FAILURE;
                }
        } else
                ctl_pid_print_text(stdout, &p);
        if (!p.stalled)
                return CTL_EXIT_OK;
        /* What is printed is only part of the answer: said on stderr too, for --json and scripts. */
        fflush(stdout);
        fprintf(stderr, "thpguardctl: pid %" PRIu64 ": %s %s; %s not read\n", a->pid,
                p.rollup_error == -ETIMEDOUT ? "smaps_rollup" : "smaps",
                ctl_pid_read_error(-ETIMEDOUT, why, sizeof(why)),
                p.rollup_error == -ETIMEDOUT ? "its Rss, AnonHugePages and mappings were"
                                             : "its mappings were");
        return CTL_EXIT_STALLED;
}

int main(int argc, char **argv) {
        static const struct {
                const char *name;
                Command cmd;
        } commands[] = {
                { "status", CMD_STATUS },       { "pid", CMD_PID },
                { "writers", CMD_WRITERS },     { "exec", CMD_EXEC },
                { "workloads", CMD_WORKLOADS }, { "watch", CMD_WATCH },
        };
        CtlArgs a;

        if (argc < 2) {
                fprintf(stderr, "thpguardctl: no command given. Try 'thpguardctl --help'.\n");
                return CTL_EXIT_USAGE;
        }
        if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
                help();
                return CTL_EXIT_OK;
        }
        if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
                printf("thpguardctl " THPGUARD_VERSION "\n");
                return CTL_EXIT_OK;
        }
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
                if (strcmp(argv[1], commands[i].name) != 0)
                        continue;
                if (parse_argv(commands[i].cmd, argc - 1, argv + 1, &a) < 0) {
                        fprintf(stderr, "Try 'thpguardctl %s--help'.\n",
                                commands[i].cmd == CMD_WATCH ? "watch " : "");
                        return commands[i].cmd == CMD_EXEC ? CTL_EXIT_EXEC_FAILED : CTL_EXIT_USAGE;
                }
                switch (commands[i].cmd) {
                case CMD_STATUS:
                        return run_status(&a);
                case CMD_PID:
                        return run_pid(&a);
                case CMD_WRITERS:
                        return ctl_writers_run(&a.writers);
                case CMD_EXEC:
                        return ctl_exec(a.thp, a.command);
                case CMD_WORKLOADS:
                        return run_workloads(&a);
                case CMD_WATCH:
                        return ctl_watch_run(&a.watch);
                }
        }
        fprintf(stderr, "thpguardctl: unknown command '%s'. Try 'thpguardctl --help'.\n", argv[1]);
        return CTL_EXIT_USAGE;
}
