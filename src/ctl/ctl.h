/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * thpguardctl's internal model. Collection (node.c, procscan.c, pid.c) fills
 * these structures from sysfs and /proc (journal.c and foreign.c, the
 * foreign writes from the journal); output-text.c and output-json.c
 * only print them, so both formats always carry the same facts.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "foreign.h"
#include "thpguard/cgroup.h"
#include "thpguard/compliance.h"
#include "thpguard/knob-value.h"
#include "thpguard/knob.h"
#include "thpguard/policy.h"
#include "thpguard/procfs.h"
#include "thpguard/sysfs.h"
#include "thpguard/thp-mode.h"

/* Exit codes, documented in --help and thpguardctl(1). */
enum {
        CTL_EXIT_OK = 0,
        CTL_EXIT_FAILURE = 1, /* a source the command needs is missing or unreadable */
        CTL_EXIT_USAGE = 2,
        CTL_EXIT_NO_JOURNAL = 3, /* writers: this node has no systemd journal to read */
        CTL_EXIT_STALLED = 4,    /* pid: some of the process's files did not answer in time */
        /* exec only, as env(1) and chroot(1) do; otherwise the command's own status */
        CTL_EXIT_EXEC_FAILED = 125,
        CTL_EXIT_EXEC_CANNOT_RUN = 126,
        CTL_EXIT_EXEC_NOT_FOUND = 127,
};

#define CTL_TOP_DEFAULT 10
#define CTL_TOP_MAX     1000

/* ---- node state --------------------------------------------------------- */

typedef enum CtlKnobState {
        CTL_KNOB_COMPLIANT,
        CTL_KNOB_DRIFT,
        CTL_KNOB_UNMANAGED,
        CTL_KNOB_UNSUPPORTED,
        CTL_KNOB_ERROR,
        _CTL_KNOB_STATE_MAX,
} CtlKnobState;

const char *ctl_knob_state_to_string(CtlKnobState s);

typedef struct CtlKnob {
        char path[KNOB_PATH_MAX]; /* "enabled", "khugepaged/defrag", "hugepages-64kB/enabled" */
        KnobGroup group;
        uint64_t size_kb; /* KNOB_GROUP_SIZE */
        const KnobSpec *spec;
        bool present;   /* the file exists on this kernel */
        int read_error; /* -errno, or -EBADMSG for unparsable content; 0 if value is valid */
        KnobValue value;
        const PolicyKnob *policy; /* NULL: the policy does not manage it */
        CtlKnobState state;
        char reason[256];
} CtlKnob;

typedef struct CtlSizeStats {
        char dir[32]; /* "hugepages-2048kB" */
        uint64_t size_kb;
        size_t n_stats;
        ProcCounter stats[32];
} CtlSizeStats;

typedef struct CtlKhugepaged {
        uint64_t pid;                         /* 0: no khugepaged kernel thread found */
        uint64_t pages_collapsed, full_scans; /* PROCFS_UNKNOWN if unreadable */
} CtlKhugepaged;

typedef struct CtlProcess {
        uint64_t pid;
        char name[PROCFS_NAME_MAX];
        ProcSmapsRollup rollup;
        int thp_enabled; /* -1: not reported by this kernel */
} CtlProcess;

typedef struct CtlProcScan {
        size_t n_scanned;     /* pid directories seen */
        size_t n_measured;    /* whose smaps_rollup we read */
        size_t n_unreadable;  /* vanished, kernel threads, permission, garbage */
        size_t n_with_thp;    /* AnonHugePages > 0 */
        size_t n_skipped;     /* whose files did not answer within CTL_BOUNDED_READ_DEADLINE_USEC */
        uint64_t skipped[16]; /* the first of them */
        uint64_t khugepaged_pid;
        size_t n_top;
        CtlProcess *top; /* by AnonHugePages, largest first */
} CtlProcScan;

void ctl_proc_scan_done(CtlProcScan *s);

/* Scans root's pid directories for the top_n processes by AnonHugePages. */
int ctl_proc_scan(const char *proc_root, size_t top_n, CtlProcScan *ret);

/* ---- workloads: processes grouped by container, unit or cgroup --------- */

typedef enum CtlWorkloadKind {
        CTL_WORKLOAD_CONTAINER, /* a container ID in the cgroup path (Kubernetes, podman, docker) */
        CTL_WORKLOAD_UNIT,      /* else the systemd unit */
        CTL_WORKLOAD_CGROUP,    /* else the cgroup path itself */
} CtlWorkloadKind;

#define CTL_WORKLOAD_CGROUP_MAX 512 /* longer paths are cut: a label, not a key into the tree */

typedef struct CtlWorkload {
        CtlWorkloadKind kind;
        CgroupOwner owner;
        char cgroup[CTL_WORKLOAD_CGROUP_MAX]; /* the first process's cgroup path */
        size_t n_processes;
        size_t n_thp_disabled; /* THP_enabled: 0 (PR_SET_THP_DISABLE, MemoryTHP=disable) */
        size_t n_thp_unknown;  /* no THP_enabled: line (before 5.0) */
        size_t n_unmeasured;   /* no smaps_rollup (gone, permission) */
        uint64_t anon_huge_pages_kb;
} CtlWorkload;

typedef struct CtlWorkloads {
        size_t n_scanned;         /* pid directories */
        size_t n_skipped;         /* kernel threads, gone, unreadable */
        size_t n_stalled;         /* whose /proc files did not answer in time */
        uint64_t stalled_pids[4]; /* the first n_stalled (at most 4: the scan stops after them) */
        size_t n_unread;          /* left unread after too many stalls */
        size_t n;
        CtlWorkload *items; /* by AnonHugePages, largest first */
} CtlWorkloads;

/* Groups proc_root's processes; each process's reads bounded in time (workloads.c). */
int ctl_workloads_collect(const char *proc_root, CtlWorkloads *ret);
void ctl_workloads_done(CtlWorkloads *ws);
const char *ctl_workload_kind_to_string(CtlWorkloadKind k);
/* "disable" (every process THP_enabled: 0), "inherit" (none), "mixed", "unknown". */
const char *ctl_workload_mode(const CtlWorkload *w);

#define CTL_STATUS_WORKLOADS 10 /* the largest shown by status */

typedef struct CtlNote {
        char text[512];
} CtlNote;

#define CTL_NOTES_MAX 32

typedef struct CtlNode {
        const char *sysfs_root, *proc_root;
        char kernel_release[128];

        const char *policy_file;
        Policy *policy;          /* NULL: none loaded */
        char policy_error[1024]; /* why not, "" if there is simply no policy file */

        size_t n_knobs;
        CtlKnob *knobs;
        size_t n_sizes;
        CtlSizeStats *sizes;

        int cmdline_error;
        ProcCmdline cmdline;

        CtlKhugepaged khugepaged;
        int meminfo_error;
        ProcMeminfo meminfo;
        int vmstat_error;
        ProcVmstat *vmstat;

        CtlProcScan procs;
        int workloads_error; /* 0: workloads is valid */
        CtlWorkloads workloads;

        /* The foreign writes of the last CTL_STATUS_WRITES_HOURS, from the journal. */
        const char *journal_dir; /* --journal-dir; NULL: the local journal */
        int journal_error;       /* -ENOMEDIUM: there is none; 0: foreign is valid */
        char journal_why[1024];  /* the line that says why not */
        CtlForeign foreign;

        char headline[512];
        size_t n_policy_drift, n_policy_error;
        size_t n_notes;
        CtlNote notes[CTL_NOTES_MAX]; /* cmdline/live/policy disagreements, counter signals */
} CtlNode;

typedef struct CtlStatusOptions {
        const char *config;
        bool config_explicit;
        const char *sysfs_root;
        const char *proc_root;
        const char *journal_dir;             /* NULL: the local journal */
        const char *machine_id, *daemon_exe; /* CtlJournalSource's */
        size_t top;
} CtlStatusOptions;

#define CTL_STATUS_WRITES_HOURS 24

/*
 * Collects everything; fails only if the THP sysfs directory or proc root is
 * unusable. The headline and notes are ctl_node_judge()'s (verdict.c), which
 * reads the node through the accessors below.
 */
int ctl_node_collect(const CtlStatusOptions *o, CtlNode *ret);
void ctl_node_done(CtlNode *n);

/* Derives the headline and the notes from what was collected; pure. */
void ctl_node_judge(CtlNode *n);

/* A decimal sysfs file below s ("khugepaged/full_scans"); PROCFS_UNKNOWN if absent or unparsable. */
uint64_t ctl_sysfs_u64(const Sysfs *s, const char *knob);

/* The live value of a knob, or NULL if unknown. */
const char *ctl_node_knob_value(const CtlNode *n, const char *path);
const CtlKnob *ctl_node_knob(const CtlNode *n, const char *path);

void ctl_note_add(CtlNode *n, const char *fmt, ...) _printf_(2, 3);

/* ---- the journal ------------------------------------------------------- */

/*
 * Whose records count: thpguardd's own only. An entry must carry one of
 * our MESSAGE_IDs, _UID=0 and this host's _MACHINE_ID, and come from
 * _SYSTEMD_UNIT=thpguardd.service or from _EXE=daemon_exe (a pod's
 * daemon, whose unit is its container's scope); all four are fields
 * journald sets itself from the sender's credentials. With a directory,
 * only this machine's subdirectory (DIR/MACHINE_ID) is opened: another
 * machine's or a container's own journal below DIR is never read.
 */
typedef struct CtlJournalSource {
        const char *dir; /* --journal-dir; NULL: the local journal */
        const char
            *machine_id; /* --machine-id: 32 hex digits, or a file holding them; NULL: /etc/machine-id */
        const char *daemon_exe;   /* --daemon-exe; NULL: where thpguardd is installed */
        bool write_source_before; /* status: the latest write-source record, before since_usec too */
} CtlJournalSource;

/*
 * Reads the foreign-write records of since_usec or later from the journal
 * in src->dir (journalctl -D), or the local one if it is NULL, and the
 * latest write-source record among them (with src->write_source_before,
 * the latest of all when they have none). -ENOMEDIUM
 * when there is none (no journal directory, or no journal file in it); on
 * any failure, why holds the one line that says so.
 */
int ctl_journal_read(const CtlJournalSource *src, uint64_t since_usec, CtlForeign *ret, char *why,
                     size_t why_size);

/* ---- writers ------------------------------------------------------------ */

typedef struct CtlWritersOptions {
        const char *journal_dir;             /* NULL: the local journal */
        const char *machine_id, *daemon_exe; /* CtlJournalSource's */
        uint64_t since_usec;
        bool json;
} CtlWritersOptions;

#define CTL_WRITERS_SINCE_DEFAULT "-24h"

/* The `writers` command: returns its exit status. */
int ctl_writers_run(const CtlWritersOptions *o);

/* ---- one process -------------------------------------------------------- */

/* The language runtime that manages the process's heap: where its own memory figures are. */
typedef enum CtlLanguageRuntime {
        CTL_LANGUAGE_RUNTIME_UNKNOWN,
        CTL_LANGUAGE_RUNTIME_GO,
        CTL_LANGUAGE_RUNTIME_JVM,
} CtlLanguageRuntime;

typedef struct CtlPid {
        uint64_t pid;
        ProcStatus status;
        /*
         * -ETIMEDOUT: did not answer within CTL_PID_READ_DEADLINE_USEC (the
         * process holds its own memory lock); smaps is then not read at all,
         * being behind the same lock, and its error is -ETIMEDOUT too.
         */
        int rollup_error;
        ProcSmapsRollup rollup;
        int smaps_error;
        ProcSmaps *smaps;
        bool stalled; /* a read timed out: what is missing is said, and the exit status is 4 */
        CtlLanguageRuntime language_runtime;
        char exe[256];                                        /* readlink of exe, sanitized; "" if unknown */
        char enabled[KNOB_VALUE_MAX], defrag[KNOB_VALUE_MAX]; /* system-wide, "" if unknown */
        char verdict[512];
        char compare_with[512];
} CtlPid;

int ctl_pid_collect(const char *proc_root, const char *sysfs_root, uint64_t pid, size_t top, CtlPid *ret);
void ctl_pid_done(CtlPid *p);

/*
 * Why one of the process's files could not be read (a ctl_pid_collect()
 * error, rollup_error or smaps_error), into buf; returns buf.
 */
#define CTL_PID_READ_ERROR_MAX 128
const char *ctl_pid_read_error(int r, char *buf, size_t size);

/* ---- language runtime (language-runtime.c) ------------------------------ */

/* Is the executable a Go program? Looks for Go's ELF sections; false on any doubt. */
bool ctl_exe_is_go(const char *proc_root, uint64_t pid);

const char *ctl_language_runtime_to_string(CtlLanguageRuntime r);

/* ---- output ------------------------------------------------------------- */

void ctl_status_print_text(FILE *f, const CtlNode *n);
int ctl_status_print_json(FILE *f, const CtlNode *n);
void ctl_pid_print_text(FILE *f, const CtlPid *p);
int ctl_pid_print_json(FILE *f, const CtlPid *p);
void ctl_writers_print_text(FILE *f, const CtlWritersOptions *o, const CtlForeign *w);
int ctl_writers_print_json(FILE *f, const CtlWritersOptions *o, const CtlForeign *w);
/* limit: how many workloads (0: all). */
void ctl_workloads_print_text(FILE *f, const char *proc_root, const CtlWorkloads *ws, size_t limit);
int ctl_workloads_print_json(FILE *f, const char *proc_root, const CtlWorkloads *ws);

/* ---- exec --------------------------------------------------------------- */

/* Sets the mode with prctl(), then execvp()s argv; returns an exit code only on failure. */
int ctl_exec(ThpMode mode, char **argv);
