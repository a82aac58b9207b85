/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Parsers for the /proc files the THP diagnosis chain reads, each with its
 * reader. A parser works on a buffer and does no I/O, so unit tests and
 * fuzzers feed it without a kernel; procfs_read_X() reads the file below
 * a proc root ("/proc", a pod's "/host/proc", a fixture tree) as fileio.h
 * opens files, whole, bounded by a size that suits it (-EFBIG beyond), and
 * parses it with procfs_parse_X(). The daemon's metrics and thpguardctl
 * share both.
 *
 * Common rules, so callers can reason about every parser the same way:
 *   - return 0, or -EBADMSG for anything the kernel would not have printed
 *     (an embedded NUL, a number that is not decimal or overflows, a last
 *     line without its newline, i.e. a truncated read, a duplicated field,
 *     a required field missing); *ret is written only on success;
 *   - sizes are in kB as the kernel prints them;
 *   - a field this kernel did not print reads PROCFS_UNKNOWN;
 *   - every string handed back is printable ASCII: other bytes (a binary
 *     comm, a strange path) become "\xNN", so it may go to a terminal or a
 *     JSON document as is.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROCFS_UNKNOWN UINT64_MAX

/* ---- /proc/meminfo ------------------------------------------------------ */

typedef struct ProcMeminfo {
        uint64_t mem_total_kb; /* required */
        uint64_t mem_free_kb;
        uint64_t mem_available_kb;
        uint64_t anon_pages_kb;
        uint64_t shmem_kb;
        uint64_t anon_huge_pages_kb;
        uint64_t shmem_huge_pages_kb;
        uint64_t shmem_pmd_mapped_kb;
        uint64_t file_huge_pages_kb;
        uint64_t file_pmd_mapped_kb;
        uint64_t hugepagesize_kb; /* hugetlbfs default size, for context */
} ProcMeminfo;

int procfs_parse_meminfo(const char *buf, size_t len, ProcMeminfo *ret);
int procfs_read_meminfo(const char *proc_root, ProcMeminfo *ret);

/* ---- /proc/vmstat ------------------------------------------------------- */

#define PROCFS_COUNTER_NAME_MAX 64
/* 6.18 prints 34 such counters; room for kernels to come. */
#define PROCFS_VMSTAT_MAX 128

typedef struct ProcCounter {
        char name[PROCFS_COUNTER_NAME_MAX];
        uint64_t value;
} ProcCounter;

typedef struct ProcVmstat {
        size_t n_counters;
        ProcCounter counters[PROCFS_VMSTAT_MAX]; /* in file order */
        bool truncated; /* more THP counters than fit, or a name too long: some are missing */
} ProcVmstat;

/* True for the counters kept: thp_*, compact_*, nr_*_hugepages. */
bool procfs_vmstat_is_thp_counter(const char *name, size_t len);

/* Keeps the THP and compaction counters as name/value pairs; skips the rest. */
int procfs_parse_vmstat(const char *buf, size_t len, ProcVmstat *ret);
int procfs_read_vmstat(const char *proc_root, ProcVmstat *ret);

/* The counter's value, or PROCFS_UNKNOWN if this kernel does not have it. */
uint64_t procfs_vmstat_get(const ProcVmstat *v, const char *name);

/* ---- /proc/PID/smaps_rollup --------------------------------------------- */

typedef struct ProcSmapsRollup {
        uint64_t rss_kb;             /* required */
        uint64_t pss_kb;             /* required */
        uint64_t anon_huge_pages_kb; /* required */
        uint64_t anonymous_kb;
        uint64_t shmem_pmd_mapped_kb;
        uint64_t file_pmd_mapped_kb;
        uint64_t swap_kb;
} ProcSmapsRollup;

int procfs_parse_smaps_rollup(const char *buf, size_t len, ProcSmapsRollup *ret);
int procfs_read_smaps_rollup(const char *proc_root, uint64_t pid, ProcSmapsRollup *ret);

/* ---- /proc/PID/status --------------------------------------------------- */

/* Escaped comm (16 bytes, up to 4 characters each) or a long kthread name. */
#define PROCFS_NAME_MAX 72

typedef struct ProcStatus {
        char name[PROCFS_NAME_MAX]; /* required */
        uint64_t pid;
        uint64_t ppid;
        int kthread;     /* 0 or 1; -1 if the kernel has no "Kthread:" line (before 6.0) */
        int thp_enabled; /* 0 or 1; -1 if no "THP_enabled:" line (before 5.0) */
        uint64_t vm_rss_kb;
        uint64_t rss_anon_kb;
} ProcStatus;

int procfs_parse_status(const char *buf, size_t len, ProcStatus *ret);
int procfs_read_status(const char *proc_root, uint64_t pid, ProcStatus *ret);

/* ---- /proc/cmdline ------------------------------------------------------ */

typedef enum ProcCmdlineParam {
        PROC_CMDLINE_THP,             /* transparent_hugepage= */
        PROC_CMDLINE_THP_SHMEM,       /* transparent_hugepage_shmem= */
        PROC_CMDLINE_THP_ANON,        /* thp_anon= (per-size, 6.12+) */
        PROC_CMDLINE_THP_SHMEM_SIZES, /* thp_shmem= (per-size, 6.14+) */
        _PROC_CMDLINE_PARAM_MAX,
} ProcCmdlineParam;

#define PROCFS_CMDLINE_VALUE_MAX 512

typedef struct ProcCmdline {
        bool set[_PROC_CMDLINE_PARAM_MAX];
        /* The last occurrence, as the kernel applies them in order; quotes removed. */
        char value[_PROC_CMDLINE_PARAM_MAX][PROCFS_CMDLINE_VALUE_MAX];
} ProcCmdline;

/*
 * Tokenizes like the kernel (lib/cmdline.c next_arg(): double quotes group,
 * '-' and '_' are the same in a name, "--" ends the kernel's part).
 */
int procfs_parse_cmdline(const char *buf, size_t len, ProcCmdline *ret);
int procfs_read_cmdline(const char *proc_root, ProcCmdline *ret);

/* "transparent_hugepage" and so on. */
const char *procfs_cmdline_param_name(ProcCmdlineParam p);

/*
 * What a thp_anon=/thp_shmem= value sets for one size, e.g. for
 * "16K-64K:always;128K,512K:inherit;2M:never" and 32 kB: "always". Returns 1
 * and the word, 0 if the value does not mention the size, -EBADMSG if it is
 * malformed. Later entries override earlier ones, as in the kernel.
 */
int procfs_thp_sizes_lookup(const char *spec, uint64_t size_kb, char *buf, size_t size);

/* ---- /proc/PID/smaps ---------------------------------------------------- */

#define PROCFS_SMAPS_TOP_MAX    16
#define PROCFS_MAPPING_NAME_MAX 128

typedef struct ProcMapping {
        uint64_t start, end;
        char perms[5];
        char name[PROCFS_MAPPING_NAME_MAX]; /* path, [heap], [anon:x]; "" if anonymous */
        uint64_t rss_kb;
        uint64_t anon_huge_pages_kb;
        int thp_eligible;    /* -1 if not printed */
        bool advised_huge;   /* VmFlags "hg": MADV_HUGEPAGE */
        bool advised_nohuge; /* VmFlags "nh": MADV_NOHUGEPAGE or prctl */
} ProcMapping;

typedef struct ProcSmaps {
        size_t n_mappings;
        uint64_t rss_kb;
        uint64_t anon_huge_pages_kb;
        size_t n_advised_huge;
        uint64_t advised_huge_kb; /* virtual size of the hg mappings */
        size_t n_advised_nohuge;
        size_t n_thp_eligible;
        size_t n_top;
        ProcMapping top[PROCFS_SMAPS_TOP_MAX]; /* AnonHugePages > 0, largest first */
        bool uses_libjvm;                      /* a mapping of libjvm.so: a JVM */
} ProcSmaps;

/*
 * Keeps the top_n (at most PROCFS_SMAPS_TOP_MAX) mappings with the most
 * AnonHugePages. An empty buffer is a process with no mappings left (it
 * is exiting): 0 mappings, not an error.
 */
int procfs_parse_smaps(const char *buf, size_t len, size_t top_n, ProcSmaps *ret);
int procfs_read_smaps(const char *proc_root, uint64_t pid, size_t top_n, ProcSmaps *ret);

/* ---- /proc/PID/stat ---------------------------------------------------- */

/* The kernel prints at most 63 bytes of a task's name in stat ("%.64s" of tcomm[64]). */
#define PROCFS_STAT_COMM_MAX 64
/* include/linux/sched.h: "I am a kernel thread"; the same value since 2.6.27. */
#define PROCFS_PF_KTHREAD UINT64_C(0x00200000)

typedef struct ProcStat {
        uint64_t pid;
        char comm[PROCFS_NAME_MAX]; /* escaped like ProcStatus.name */
        char state;                 /* 'R', 'S', 'D', 'T' (stopped), 't' (traced), 'Z'... */
        uint64_t ppid;
        uint64_t flags;       /* PF_* */
        uint64_t utime_ticks; /* clock ticks, sysconf(_SC_CLK_TCK) a second */
        uint64_t stime_ticks;
        int64_t processor; /* the CPU it last ran on; -1 if the line ends before it */
} ProcStat;

/*
 * One read of /proc/PID/stat: "pid (comm) state ppid ... flags ... utime
 * stime ...". The comm may hold any byte but NUL, spaces, ')' and newlines
 * included, so it ends at the *last* ')'. Every field after it must be a
 * decimal number (possibly negative), up to and past stime.
 */
int procfs_parse_stat(const char *buf, size_t len, ProcStat *ret);
int procfs_read_stat(const char *proc_root, uint64_t pid, ProcStat *ret);

/*
 * Is this stat, read from proc_root/PID, khugepaged's? Its comm is
 * "khugepaged", it is a child of kthreadd (pid 2) and has PF_KTHREAD:
 * both, since in a PID namespace a user process can have a parent with
 * pid 2, and name itself so. The one rule, for the metrics and thpguardctl.
 */
bool procfs_stat_is_khugepaged(const ProcStat *st, uint64_t pid);

/* Scans proc_root's processes for khugepaged: 0 with its pid and stat, -ENOENT if none, or -errno. */
int procfs_find_khugepaged(const char *proc_root, uint64_t *ret_pid, ProcStat *ret_stat);

/* ---- /proc/pressure/memory --------------------------------------------- */

typedef struct ProcPressure {
        uint64_t some_total_usec; /* required */
        uint64_t full_total_usec; /* PROCFS_UNKNOWN without a "full" line */
        /* avg10 in hundredths of a percent ("0.26" is 26); PROCFS_UNKNOWN if absent or not N.NN */
        uint64_t some_avg10_centi;
        uint64_t full_avg10_centi;
} ProcPressure;

/*
 * One read of a PSI file (/proc/pressure/memory, also cpu and io):
 * "some avg10=0.00 avg60=0.00 avg300=0.00 total=N" and a "full" line, total
 * in microseconds. A line of another kind is checked and skipped.
 */
int procfs_parse_pressure(const char *buf, size_t len, ProcPressure *ret);
/* proc_root/pressure/memory. */
int procfs_read_pressure(const char *proc_root, ProcPressure *ret);

/* ---- /proc's directory names ---------------------------------------------- */

/* A PID directory's name: decimal, no leading zero ("0" is no process either). */
bool procfs_pid_from_name(const char *name, uint64_t *ret);

/* The processes below proc_root, in directory order: a malloc()ed array of *ret_n pids. */
int procfs_list_pids(const char *proc_root, uint64_t **ret, size_t *ret_n);
