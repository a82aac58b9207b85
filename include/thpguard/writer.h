/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The process that wrote a knob, as fanotify names it (a pid) and /proc
 * describes it: comm, executable, command line, uid, cgroup and from that
 * the systemd unit or Kubernetes pod. Every string is escaped to printable
 * ASCII: a writer chooses its own comm and argv.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "thpguard/cgroup.h"
#include "thpguard/log.h"

#define WRITER_COMM_MAX    72 /* 15 bytes, up to 4 characters each once escaped */
#define WRITER_EXE_MAX     512
#define WRITER_CMDLINE_MAX 256
#define WRITER_LABEL_MAX   128

typedef struct Writer {
        pid_t pid;   /* 0: a process outside our PID namespace, which the kernel does not name */
        bool exited; /* gone before it could be looked up: only pid is known */
        bool uid_known;
        uid_t uid;                        /* the effective uid: the owner of /proc/PID */
        char comm[WRITER_COMM_MAX];       /* "" if unknown */
        char exe[WRITER_EXE_MAX];         /* "" where the kernel does not show it to us */
        char cmdline[WRITER_CMDLINE_MAX]; /* argv joined by spaces, "..." if cut */
        char cgroup[CGROUP_PATH_MAX];     /* "" if unknown */
        /*
         * cgroup holds only the innermost levels ("/..." in front: the BPF
         * write probe keeps so many), and owner is empty: the levels a
         * process can create below its own are named as it likes, and only
         * the outer ones would say whose it is (writer_set_cgroup_cut()).
         */
        bool cgroup_truncated;
        CgroupOwner owner;
        /*
         * The inode number of its network namespace (what `readlink
         * /proc/PID/ns/net` shows as net:[N]); 0 if unknown. Known when the BPF
         * write probe saw the write: a privileged pod without hostNetwork
         * writes through a sysfs of its own namespace's.
         */
        uint64_t netns;
} Writer;

/*
 * Every read of one process goes through one /proc/PID directory fd,
 * which the kernel does not hand to a new process that reuses the pid:
 * once the process is gone, reads through it fail. The fd, or -ESRCH /
 * -ENOENT for a process that is gone.
 */
int writer_open_pid(int proc_rootfd, pid_t pid);

/* True while the process pid_dirfd was opened on lives; a lookup, no file is opened. */
bool writer_pid_alive(int pid_dirfd);

/*
 * What can be read of a process without taking its memory lock, which a
 * process can hold for ever (a thread faulting on a FUSE page that is never
 * served): comm, uid, exe and cgroup. A process that went away between the
 * reads gives exited set and 0.
 */
int writer_read_identity(int pid_dirfd, pid_t pid, Writer *ret);

/* NUL at the end of every string of w: one another process wrote (the gate's shared memory) may lack it. */
void writer_terminate(Writer *w);

/* The command line into w->cmdline. It takes the memory lock: call it where a wait for ever is safe. */
void writer_read_cmdline(int pid_dirfd, Writer *w);

/*
 * w->cmdline from argv as a process keeps it (NUL-separated, len bytes; cut:
 * there was more), joined by spaces and escaped, "..." if cut.
 */
void writer_set_cmdline(Writer *w, const char *argv, size_t len, bool cut);

/* w->cgroup, escaped, and w->owner from the whole of path (cgroup_owner_from_path()). */
void writer_set_cgroup(Writer *w, const char *path);

/*
 * w->cgroup, escaped, from a path whose outer levels are missing (or one
 * of whose names may be cut): shown, with cgroup_truncated set, and no unit,
 * pod or container named from it. A writer nested deeper than what is kept,
 * with inner levels named like another pod's, would otherwise be named as
 * that pod.
 */
void writer_set_cgroup_cut(Writer *w, const char *path);

/*
 * writer_open_pid() and writer_read_identity() below proc_root, without
 * the command line. A process that is gone gives a Writer with exited set
 * and 0; -errno only for a proc_root that cannot be opened.
 */
int writer_lookup(const char *proc_root, pid_t pid, Writer *ret);

/*
 * What the writer is called in metrics and for grouping: the systemd unit,
 * else the comm, else "pid N", else "unknown".
 */
void writer_label(const Writer *w, char *buf, size_t size);

/* Where a writer is described. */
typedef enum WriterForm {
        /*
         * A MESSAGE, after "written by ", inside parentheses (so none of its own):
         *   "tuned.service, pid 812, /usr/sbin/tuned"   (exe, else argv[0])
         *   "sh, pid 4242, /usr/bin/dash"
         *   "pid 4242, exited"
         *   "a process outside this PID namespace"
         */
        WRITER_FORM_MESSAGE,
        /*
         * A cell of thpguardctl's tables, from a record's label, pid and exited:
         *   "tuned.service (pid 812)", "sh (pid 4021, exited)", "pid 77 (exited)"
         *   (the label is the pid), "tuned" (no pid), "unknown" (no label)
         */
        WRITER_FORM_TABLE,
} WriterForm;

/*
 * The one description of a writer, from what is known of it: who (its
 * unit, else its comm, or a record's label; "" if unknown), its pid (0:
 * none, or outside this PID namespace), whether it had exited, and its
 * program ("" if unknown). Returns buf.
 */
const char *writer_describe_as(WriterForm form, const char *who, uint64_t pid, bool exited,
                               const char *program, char *buf, size_t size);

/* writer_describe_as(WRITER_FORM_MESSAGE) of w: the daemon's, for a record it logs. */
void writer_describe(const Writer *w, char *buf, size_t size);

/*
 * The journal fields of a writer, named once for the daemon that writes
 * them and for thpguardctl, which reads them back.
 */
#define WRITER_JOURNAL_LABEL        "THPGUARD_WRITER"
#define WRITER_JOURNAL_PID          "THPGUARD_WRITER_PID"
#define WRITER_JOURNAL_EXITED       "THPGUARD_WRITER_EXITED"
#define WRITER_JOURNAL_COMM         "THPGUARD_WRITER_COMM"
#define WRITER_JOURNAL_EXE          "THPGUARD_WRITER_EXE"
#define WRITER_JOURNAL_CMDLINE      "THPGUARD_WRITER_CMDLINE"
#define WRITER_JOURNAL_UID          "THPGUARD_WRITER_UID"
#define WRITER_JOURNAL_CGROUP       "THPGUARD_WRITER_CGROUP"
#define WRITER_JOURNAL_UNIT         "THPGUARD_WRITER_UNIT"
#define WRITER_JOURNAL_POD_UID      "THPGUARD_WRITER_POD_UID"
#define WRITER_JOURNAL_CONTAINER_ID "THPGUARD_WRITER_CONTAINER_ID"
#define WRITER_JOURNAL_NETNS        "THPGUARD_WRITER_NETNS"
/* "1": the cgroup path is its innermost levels only, and names no unit, pod or container. */
#define WRITER_JOURNAL_CGROUP_TRUNCATED "THPGUARD_WRITER_CGROUP_TRUNCATED"

/*
 * Their order in a record: who first (label, pid, comm, uid, unit, pod,
 * container, network namespace, whether the cgroup path was cut), what the
 * writer chooses and may make long last. A field with nothing to say has a
 * NULL value.
 */
enum {
        WRITER_FIELD_LABEL,
        WRITER_FIELD_PID,
        WRITER_FIELD_EXITED,
        WRITER_FIELD_COMM,
        WRITER_FIELD_UID,
        WRITER_FIELD_UNIT,
        WRITER_FIELD_POD_UID,
        WRITER_FIELD_CONTAINER_ID,
        WRITER_FIELD_NETNS,
        WRITER_FIELD_CGROUP_TRUNCATED,
        WRITER_FIELD_EXE,
        WRITER_FIELD_CMDLINE,
        WRITER_FIELD_CGROUP,
        _WRITER_FIELD_MAX,
};

_Static_assert(_WRITER_FIELD_MAX == 13, "WRITER_FIELDS() lists every field");

typedef struct WriterFields {
        LogField field[_WRITER_FIELD_MAX];
        char label[WRITER_LABEL_MAX];
        char pid[16];
        char uid[16];
        char netns[24];
} WriterFields;

/* The fields in a LogField array initializer: { ..., WRITER_FIELDS(wf) }. */
#define WRITER_FIELDS(wf)                                                                                   \
        (wf).field[0], (wf).field[1], (wf).field[2], (wf).field[3], (wf).field[4], (wf).field[5],           \
            (wf).field[6], (wf).field[7], (wf).field[8], (wf).field[9], (wf).field[10], (wf).field[11],     \
            (wf).field[12]

/* Fills ret->field[] (pointing into w and ret); w == NULL gives all-NULL values. */
void writer_fields(const Writer *w, WriterFields *ret);

/*
 * Foreign writes counted by writer label, for a metric: the first
 * WRITER_TALLY_MAX labels get their own count, the rest share "other", so a
 * node that runs a new writer per minute cannot grow the series without end.
 */
#define WRITER_TALLY_MAX   16
#define WRITER_TALLY_OTHER "other"

typedef struct WriterTally {
        char label[WRITER_LABEL_MAX];
        uint64_t writes;
} WriterTally;

typedef struct WriterTallies {
        WriterTally top[WRITER_TALLY_MAX];
        size_t n;
        uint64_t other;
} WriterTallies;

void writer_tally_add(WriterTallies *t, const char *label);
/* n of them at once (saturating). */
void writer_tally_add_n(WriterTallies *t, const char *label, uint64_t n);
