/* SPDX-License-Identifier: MIT */
#include "thpguard/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "thpguard/escape.h"
#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/number.h"

/* The process's own files; a vanished process answers ESRCH or ENOENT. */
static bool gone(int r) {
        return r == -ESRCH || r == -ENOENT;
}

static void strip_newline(char *s, size_t *len) {
        if (*len > 0 && s[*len - 1] == '\n')
                s[--*len] = '\0';
}

void writer_set_cmdline(Writer *w, const char *argv, size_t len, bool cut) {
        char raw[WRITER_CMDLINE_MAX];
        bool whole;

        if (len > sizeof(raw)) {
                len = sizeof(raw);
                cut = true;
        }
        memcpy(raw, argv, len);
        while (len > 0 && raw[len - 1] == '\0')
                len--;
        for (size_t i = 0; i < len; i++)
                if (raw[i] == '\0')
                        raw[i] = ' ';
        whole = escape_printable(raw, len, w->cmdline, sizeof(w->cmdline) - 3) && !cut;
        if (!whole)
                strcat(w->cmdline, "...");
}

void writer_terminate(Writer *w) {
        w->comm[sizeof(w->comm) - 1] = w->exe[sizeof(w->exe) - 1] = w->cmdline[sizeof(w->cmdline) - 1] =
            w->cgroup[sizeof(w->cgroup) - 1] = '\0';
        w->owner.unit[sizeof(w->owner.unit) - 1] = w->owner.pod_uid[sizeof(w->owner.pod_uid) - 1] =
            w->owner.container_id[sizeof(w->owner.container_id) - 1] = '\0';
}

/* argv, NUL-separated in /proc/PID/cmdline. */
void writer_read_cmdline(int dirfd, Writer *w) {
        _cleanup_close_ int fd = open_beneath(dirfd, "cmdline", O_RDONLY);
        char raw[WRITER_CMDLINE_MAX];
        ssize_t n;

        if (fd < 0)
                return;
        n = read(fd, raw, sizeof(raw));
        if (n <= 0)
                return;
        writer_set_cmdline(w, raw, (size_t)n, (size_t)n == sizeof(raw));
}

static void set_cgroup_text(Writer *w, const char *path) {
        if (!escape_printable(path, strlen(path), w->cgroup, sizeof(w->cgroup) - 3))
                strcat(w->cgroup, "...");
}

void writer_set_cgroup(Writer *w, const char *path) {
        cgroup_owner_from_path(path, &w->owner);
        w->cgroup_truncated = false;
        set_cgroup_text(w, path);
}

void writer_set_cgroup_cut(Writer *w, const char *path) {
        w->owner = (CgroupOwner){};
        w->cgroup_truncated = true;
        set_cgroup_text(w, path);
}

static void read_cgroup(int dirfd, Writer *w) {
        /* Any path the file may hold, so that its owner is taken from the whole of it. */
        const size_t size = 64 * 1024;
        _cleanup_free_ char *path = malloc(size);

        if (!path || cgroup_read_path_at(dirfd, path, size) < 0)
                return;
        writer_set_cgroup(w, path);
}

int writer_open_pid(int proc_rootfd, pid_t pid) {
        char name[32];

        if (pid <= 0)
                return -ESRCH;
        snprintf(name, sizeof(name), "%d", (int)pid);
        return open_beneath(proc_rootfd, name, O_RDONLY | O_DIRECTORY);
}

bool writer_pid_alive(int dirfd) {
        return faccessat(dirfd, "comm", F_OK, 0) == 0;
}

int writer_read_identity(int dirfd, pid_t pid, Writer *ret) {
        char text[256];
        struct stat st;
        size_t len;
        ssize_t n;
        int r;

        *ret = (Writer){ .pid = pid };
        r = read_file_at(dirfd, "comm", text, sizeof(text), &len);
        if (r < 0) {
                ret->exited = gone(r);
                return 0;
        }
        strip_newline(text, &len);
        escape_printable(text, len, ret->comm, sizeof(ret->comm));

        /* The directory belongs to the task's effective uid (root if it is not dumpable). */
        if (fstat(dirfd, &st) == 0) {
                ret->uid = st.st_uid;
                ret->uid_known = true;
        }

        /*
         * Needs ptrace read access: a process without capabilities (us, after
         * startup) may not read it for one that has any, so it is often "".
         */
        {
                char exe[WRITER_EXE_MAX];

                n = readlinkat(dirfd, "exe", exe, sizeof(exe) - 1);
                if (n > 0)
                        escape_printable(exe, (size_t)n, ret->exe, sizeof(ret->exe));
        }
        read_cgroup(dirfd, ret);
        return 0;
}

int writer_lookup(const char *proc_root, pid_t pid, Writer *ret) {
        _cleanup_close_ int rootfd = -EBADF, dirfd = -EBADF;

        *ret = (Writer){ .pid = pid };
        if (pid <= 0)
                return 0;
        rootfd = open(proc_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return -errno;
        dirfd = writer_open_pid(rootfd, pid);
        if (dirfd < 0) {
                if (gone(dirfd)) {
                        ret->exited = true;
                        return 0;
                }
                return dirfd;
        }
        return writer_read_identity(dirfd, pid, ret);
}

/* s cut to fit; a label is a name, not a sentence. */
static void copy_cut(char *buf, size_t size, const char *s) {
        size_t n = strlen(s);

        if (n >= size)
                n = size - 1;
        memcpy(buf, s, n);
        buf[n] = '\0';
}

void writer_label(const Writer *w, char *buf, size_t size) {
        if (w->owner.unit[0])
                copy_cut(buf, size, w->owner.unit);
        else if (w->comm[0])
                copy_cut(buf, size, w->comm);
        else if (w->pid > 0)
                snprintf(buf, size, "pid %d", (int)w->pid);
        else
                snprintf(buf, size, "unknown");
}

/* argv[0], when the exe link is not shown to us. */
static void first_word(const char *s, char *buf, size_t size) {
        size_t n = strcspn(s, " ");

        snprintf(buf, size, "%.*s", (int)n, s);
}

/* The table's cell: a record names the writer by its label, which is "pid N" when that is all there was. */
static void describe_table(const char *who, uint64_t pid, bool exited, char *buf, size_t size) {
        if (!who[0])
                snprintf(buf, size, "unknown");
        else if (pid == 0)
                snprintf(buf, size, "%s", who);
        else if (strcmp(who, "pid") == 0 || strncmp(who, "pid ", 4) == 0)
                snprintf(buf, size, "%s%s", who, exited ? " (exited)" : "");
        else
                snprintf(buf, size, "%s (pid %" PRIu64 "%s)", who, pid, exited ? ", exited" : "");
}

const char *writer_describe_as(WriterForm form, const char *who, uint64_t pid, bool exited,
                               const char *program, char *buf, size_t size) {
        char cut[WRITER_LABEL_MAX];

        if (form == WRITER_FORM_TABLE)
                describe_table(who, pid, exited, buf, size);
        else if (pid == 0)
                snprintf(buf, size, "a process outside this PID namespace");
        else if (exited)
                snprintf(buf, size, "pid %" PRIu64 ", exited", pid);
        else {
                copy_cut(cut, sizeof(cut), who);
                snprintf(buf, size, "%s%spid %" PRIu64 "%s%s", cut, cut[0] ? ", " : "", pid,
                         program[0] ? ", " : "", program);
        }
        return buf;
}

void writer_describe(const Writer *w, char *buf, size_t size) {
        char program[WRITER_EXE_MAX];

        if (w->exe[0])
                snprintf(program, sizeof(program), "%s", w->exe);
        else
                first_word(w->cmdline, program, sizeof(program));
        writer_describe_as(WRITER_FORM_MESSAGE, w->owner.unit[0] ? w->owner.unit : w->comm,
                           w->pid > 0 ? (uint64_t)w->pid : 0, w->exited, program, buf, size);
}

void writer_fields(const Writer *w, WriterFields *ret) {
        static const char *const keys[_WRITER_FIELD_MAX] = {
                [WRITER_FIELD_LABEL] = WRITER_JOURNAL_LABEL,
                [WRITER_FIELD_PID] = WRITER_JOURNAL_PID,
                [WRITER_FIELD_EXITED] = WRITER_JOURNAL_EXITED,
                [WRITER_FIELD_COMM] = WRITER_JOURNAL_COMM,
                [WRITER_FIELD_EXE] = WRITER_JOURNAL_EXE,
                [WRITER_FIELD_CMDLINE] = WRITER_JOURNAL_CMDLINE,
                [WRITER_FIELD_UID] = WRITER_JOURNAL_UID,
                [WRITER_FIELD_CGROUP] = WRITER_JOURNAL_CGROUP,
                [WRITER_FIELD_UNIT] = WRITER_JOURNAL_UNIT,
                [WRITER_FIELD_POD_UID] = WRITER_JOURNAL_POD_UID,
                [WRITER_FIELD_CONTAINER_ID] = WRITER_JOURNAL_CONTAINER_ID,
                [WRITER_FIELD_NETNS] = WRITER_JOURNAL_NETNS,
                [WRITER_FIELD_CGROUP_TRUNCATED] = WRITER_JOURNAL_CGROUP_TRUNCATED,
        };
        const char *value[_WRITER_FIELD_MAX] = {};

        if (w) {
                writer_label(w, ret->label, sizeof(ret->label));
                value[WRITER_FIELD_LABEL] = ret->label;
                if (w->pid > 0) {
                        snprintf(ret->pid, sizeof(ret->pid), "%d", (int)w->pid);
                        value[WRITER_FIELD_PID] = ret->pid;
                }
                value[WRITER_FIELD_EXITED] = w->exited ? "1" : NULL;
                value[WRITER_FIELD_CGROUP_TRUNCATED] = w->cgroup_truncated ? "1" : NULL;
                if (w->netns > 0) {
                        snprintf(ret->netns, sizeof(ret->netns), "%" PRIu64, w->netns);
                        value[WRITER_FIELD_NETNS] = ret->netns;
                }
                if (w->uid_known) {
                        snprintf(ret->uid, sizeof(ret->uid), "%u", (unsigned)w->uid);
                        value[WRITER_FIELD_UID] = ret->uid;
                }
#define NONEMPTY(s) ((s)[0] ? (s) : NULL)
                value[WRITER_FIELD_COMM] = NONEMPTY(w->comm);
                value[WRITER_FIELD_EXE] = NONEMPTY(w->exe);
                value[WRITER_FIELD_CMDLINE] = NONEMPTY(w->cmdline);
                value[WRITER_FIELD_CGROUP] = NONEMPTY(w->cgroup);
                value[WRITER_FIELD_UNIT] = NONEMPTY(w->owner.unit);
                value[WRITER_FIELD_POD_UID] = NONEMPTY(w->owner.pod_uid);
                value[WRITER_FIELD_CONTAINER_ID] = NONEMPTY(w->owner.container_id);
#undef NONEMPTY
        }
        for (size_t i = 0; i < _WRITER_FIELD_MAX; i++)
                ret->field[i] = (LogField){ keys[i], value[i] };
}

void writer_tally_add_n(WriterTallies *t, const char *label, uint64_t n) {
        for (size_t i = 0; i < t->n; i++)
                if (strcmp(t->top[i].label, label) == 0) {
                        t->top[i].writes = u64_sat_add(t->top[i].writes, n);
                        return;
                }
        if (t->n == WRITER_TALLY_MAX || strcmp(label, WRITER_TALLY_OTHER) == 0) {
                t->other = u64_sat_add(t->other, n);
                return;
        }
        copy_cut(t->top[t->n].label, sizeof(t->top[t->n].label), label);
        t->top[t->n++].writes = n;
}

void writer_tally_add(WriterTallies *t, const char *label) {
        writer_tally_add_n(t, label, 1);
}
