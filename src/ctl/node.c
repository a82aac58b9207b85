/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctl.h"
#include "thpguard/diag.h"
#include "thpguard/escape.h"
#include "thpguard/event-util.h"
#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "thpguard/number.h"
#include "thpguard/path.h"
#include "thpguard/sysfs.h"

const char *ctl_knob_state_to_string(CtlKnobState s) {
        static const char *const names[_CTL_KNOB_STATE_MAX] = {
                [CTL_KNOB_COMPLIANT] = "compliant", [CTL_KNOB_DRIFT] = "drift",
                [CTL_KNOB_UNMANAGED] = "unmanaged", [CTL_KNOB_UNSUPPORTED] = "unsupported",
                [CTL_KNOB_ERROR] = "error",
        };
        return (unsigned)s < _CTL_KNOB_STATE_MAX ? names[s] : "error";
}

void ctl_note_add(CtlNode *n, const char *fmt, ...) {
        va_list ap;

        if (n->n_notes >= CTL_NOTES_MAX)
                return;
        va_start(ap, fmt);
        vsnprintf(n->notes[n->n_notes].text, sizeof(n->notes[n->n_notes].text), fmt, ap);
        va_end(ap);
        n->n_notes++;
}

const CtlKnob *ctl_node_knob(const CtlNode *n, const char *path) {
        for (size_t i = 0; i < n->n_knobs; i++)
                if (strcmp(n->knobs[i].path, path) == 0)
                        return &n->knobs[i];
        return NULL;
}

const char *ctl_node_knob_value(const CtlNode *n, const char *path) {
        const CtlKnob *k = ctl_node_knob(n, path);

        return k && k->read_error == 0 ? k->value.active : NULL;
}

/* "hugepages-2048kB" -> 2048; 0 if the name is not a per-size directory. */
static uint64_t size_dir_kb(const char *name) {
        const char *size;
        uint64_t kb;

        if (strncmp(name, "hugepages-", STRLEN("hugepages-")) != 0)
                return 0;
        size = name + STRLEN("hugepages-");
        if (!knob_size_is_valid(size) || number_parse_u64(size, strlen(size) - STRLEN("kB"), &kb) < 0)
                return 0;
        return kb;
}

static const PolicyKnob *policy_find(const Policy *p, const char *path) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_knobs; i++)
                if (strcmp(p->knobs[i].path, path) == 0)
                        return &p->knobs[i];
        return NULL;
}

static CtlKnob *knob_append(CtlNode *n, size_t *cap) {
        if (array_grow(&n->knobs, cap, n->n_knobs, sizeof(*n->knobs), 32, 0) < 0)
                return NULL;
        n->knobs[n->n_knobs] = (CtlKnob){};
        return &n->knobs[n->n_knobs++];
}

/* Reads and judges one knob; the policy comparison is the core's, on the same buffer. */
static void knob_evaluate(const Sysfs *s, const Policy *p, CtlKnob *k) {
        char buf[KNOB_READ_MAX + 1];
        size_t len = 0;
        int r;

        r = sysfs_read(s, k->path, buf, sizeof(buf), &len);
        k->present = r != -ENOENT;
        k->read_error = r;
        if (r >= 0 && knob_value_parse(k->spec->type, buf, len, &k->value) < 0)
                k->read_error = -EBADMSG;

        k->policy = policy_find(p, k->path);
        if (k->policy) {
                KnobStatus st;

                compliance_evaluate(k->policy, r, buf, len, sysfs_ptes_max(s), &st);
                k->state = st.state == KNOB_STATE_OK            ? CTL_KNOB_COMPLIANT
                           : st.state == KNOB_STATE_DRIFT       ? CTL_KNOB_DRIFT
                           : st.state == KNOB_STATE_UNSUPPORTED ? CTL_KNOB_UNSUPPORTED
                                                                : CTL_KNOB_ERROR;
                snprintf(k->reason, sizeof(k->reason), "%s", st.reason);
                return;
        }
        k->state = CTL_KNOB_UNMANAGED;
        if (k->read_error == -EBADMSG)
                snprintf(k->reason, sizeof(k->reason), "unexpected content");
        else if (k->read_error < 0)
                snprintf(k->reason, sizeof(k->reason), "cannot read: %s", strerror(-k->read_error));
}

static int knob_add(CtlNode *n, size_t *cap, KnobGroup group, uint64_t size_kb, const char *dir,
                    const KnobSpec *spec) {
        CtlKnob *k = knob_append(n, cap);
        int r;

        if (!k)
                return -ENOMEM;
        k->group = group;
        k->size_kb = size_kb;
        k->spec = spec;
        r = snprintf(k->path, sizeof(k->path), "%s%s%s", dir, *dir ? "/" : "", spec->name);
        if (r < 0 || (size_t)r >= sizeof(k->path)) {
                n->n_knobs--;
                return -ENAMETOOLONG;
        }
        return 0;
}

/* The knobs the core's table knows among the files of one directory. */
static int knobs_in_dir(CtlNode *n, size_t *cap, const Sysfs *s, const char *dir, KnobGroup group,
                        uint64_t size_kb) {
        _cleanup_(closedirp) DIR *d = NULL;
        char path[PATH_MAX];
        struct dirent *de;
        int r;

        r = *dir ? sysfs_thp_path(s, dir, path, sizeof(path))
                 : snprintf(path, sizeof(path), "%s", s->thp_dir);
        if (r < 0)
                return r;
        d = opendir(path);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while ((de = readdir(d))) {
                const KnobSpec *spec = knob_spec_find(group, de->d_name);

                if (!spec)
                        continue;
                r = knob_add(n, cap, group, size_kb, dir, spec);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Copies a directory entry name; false if it does not fit, and such a name is no kernel's. */
static bool copy_name(char *dst, size_t size, const char *src) {
        size_t len = strlen(src);

        if (len >= size)
                return false;
        memcpy(dst, src, len + 1);
        return true;
}

static int cmp_size(const void *a, const void *b) {
        const CtlSizeStats *x = a, *y = b;
        return (x->size_kb > y->size_kb) - (x->size_kb < y->size_kb);
}

/* Groups in policy order, sizes ascending, and the core's table order inside a group. */
static int cmp_knob(const void *a, const void *b) {
        const CtlKnob *x = a, *y = b;

        if (x->group != y->group)
                return (int)x->group - (int)y->group;
        if (x->size_kb != y->size_kb)
                return (x->size_kb > y->size_kb) - (x->size_kb < y->size_kb);
        return (x->spec > y->spec) - (x->spec < y->spec);
}

static int cmp_counter(const void *a, const void *b) {
        return strcmp(((const ProcCounter *)a)->name, ((const ProcCounter *)b)->name);
}

static int size_stats_read(const Sysfs *s, CtlSizeStats *z) {
        _cleanup_(closedirp) DIR *d = NULL;
        char rel[64], path[PATH_MAX];
        struct dirent *de;
        int r;

        snprintf(rel, sizeof(rel), "%s/stats", z->dir);
        r = sysfs_thp_path(s, rel, path, sizeof(path));
        if (r < 0)
                return r;
        d = opendir(path);
        if (!d)
                return -errno;
        while ((de = readdir(d)) && z->n_stats < ELEMENTSOF(z->stats)) {
                char file[PATH_MAX], buf[64];
                uint64_t v;
                size_t len;

                if (de->d_name[0] == '.' ||
                    !copy_name(z->stats[z->n_stats].name, sizeof(z->stats[0].name), de->d_name))
                        continue;
                if (path_join_root(rel, de->d_name, file, sizeof(file)) < 0 ||
                    sysfs_read(s, file, buf, sizeof(buf), &len) < 0 ||
                    knob_value_parse_u64(buf, len, &v) < 0)
                        continue;
                z->stats[z->n_stats].value = v;
                z->n_stats++;
        }
        qsort(z->stats, z->n_stats, sizeof(z->stats[0]), cmp_counter);
        return 0;
}

static int collect_knobs(CtlNode *n, const Sysfs *s) {
        _cleanup_(closedirp) DIR *d = NULL;
        size_t cap = 0, cap_sizes = 0;
        struct dirent *de;
        int r;

        r = knobs_in_dir(n, &cap, s, "", KNOB_GROUP_TOP, 0);
        if (r < 0)
                return r;
        r = knobs_in_dir(n, &cap, s, "khugepaged", KNOB_GROUP_KHUGEPAGED, 0);
        if (r < 0)
                return r;

        d = opendir(s->thp_dir);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                uint64_t kb = size_dir_kb(de->d_name);

                if (kb == 0)
                        continue;
                if (array_grow(&n->sizes, &cap_sizes, n->n_sizes, sizeof(*n->sizes), 16, 0) < 0)
                        return -ENOMEM;
                n->sizes[n->n_sizes] = (CtlSizeStats){ .size_kb = kb };
                if (copy_name(n->sizes[n->n_sizes].dir, sizeof(n->sizes[0].dir), de->d_name))
                        n->n_sizes++;
        }
        if (n->n_sizes > 0)
                qsort(n->sizes, n->n_sizes, sizeof(*n->sizes), cmp_size);
        for (size_t i = 0; i < n->n_sizes; i++) {
                r = knobs_in_dir(n, &cap, s, n->sizes[i].dir, KNOB_GROUP_SIZE, n->sizes[i].size_kb);
                if (r < 0)
                        return r;
                (void)size_stats_read(s, &n->sizes[i]); /* stats/ came in 6.x; absent is normal */
        }

        /* A managed knob this kernel lacks still gets its row: that is the "unsupported" answer. */
        for (size_t i = 0; n->policy && i < n->policy->n_knobs; i++) {
                const PolicyKnob *pk = &n->policy->knobs[i];
                KnobGroup group = KNOB_GROUP_TOP;
                uint64_t kb = 0;
                CtlKnob *k;

                if (ctl_node_knob(n, pk->path))
                        continue;
                if (strncmp(pk->path, "khugepaged/", STRLEN("khugepaged/")) == 0)
                        group = KNOB_GROUP_KHUGEPAGED;
                else if (strchr(pk->path, '/')) {
                        char dir[KNOB_PATH_MAX];

                        snprintf(dir, sizeof(dir), "%.*s", (int)(strchr(pk->path, '/') - pk->path),
                                 pk->path);
                        group = KNOB_GROUP_SIZE;
                        kb = size_dir_kb(dir);
                }
                k = knob_append(n, &cap);
                if (!k)
                        return -ENOMEM;
                *k = (CtlKnob){ .group = group, .size_kb = kb, .spec = pk->spec };
                snprintf(k->path, sizeof(k->path), "%s", pk->path);
        }

        for (size_t i = 0; i < n->n_knobs; i++)
                knob_evaluate(s, n->policy, &n->knobs[i]);
        if (n->n_knobs > 0)
                qsort(n->knobs, n->n_knobs, sizeof(*n->knobs), cmp_knob);
        for (size_t i = 0; i < n->n_knobs; i++) {
                n->n_policy_drift += n->knobs[i].state == CTL_KNOB_DRIFT;
                n->n_policy_error += n->knobs[i].state == CTL_KNOB_ERROR;
        }
        return 0;
}

static void collect_policy(const CtlStatusOptions *o, CtlNode *n) {
        _cleanup_diag_ Diag diag = {};
        _cleanup_free_ char *why = NULL;
        int r;

        n->policy_file = o->config;
        r = policy_load(o->config, &diag, &n->policy);
        if (r >= 0)
                return;
        n->policy = NULL;
        /* No policy file on a node that never got one is a state, not an error. */
        if (r == -ENOENT && !o->config_explicit)
                return;
        why = diag_join(&diag, DIAG_ERROR);
        snprintf(n->policy_error, sizeof(n->policy_error), "%s", why && *why ? why : strerror(-r));
}

uint64_t ctl_sysfs_u64(const Sysfs *s, const char *knob) {
        char buf[64];
        uint64_t v;
        size_t len;

        if (sysfs_read(s, knob, buf, sizeof(buf), &len) < 0 || knob_value_parse_u64(buf, len, &v) < 0)
                return PROCFS_UNKNOWN;
        return v;
}

static void collect_proc_files(CtlNode *n) {
        char buf[4096]; /* osrelease: at most 64 bytes (__NEW_UTS_LEN); a longer one is forged */
        size_t len;

        if (read_file_below(n->proc_root, "sys/kernel/osrelease", buf, sizeof(buf), &len) >= 0) {
                while (len > 0 && buf[len - 1] == '\n')
                        len--;
                escape_printable(buf, len, n->kernel_release, sizeof(n->kernel_release));
        }

        n->meminfo_error = procfs_read_meminfo(n->proc_root, &n->meminfo);
        n->vmstat = malloc(sizeof(*n->vmstat));
        n->vmstat_error = n->vmstat ? procfs_read_vmstat(n->proc_root, n->vmstat) : -ENOMEM;
        n->cmdline_error = procfs_read_cmdline(n->proc_root, &n->cmdline);
}

void ctl_node_done(CtlNode *n) {
        policy_free(n->policy);
        free(n->knobs);
        free(n->sizes);
        free(n->vmstat);
        ctl_proc_scan_done(&n->procs);
        ctl_workloads_done(&n->workloads);
        ctl_foreign_done(&n->foreign);
        *n = (CtlNode){};
}

int ctl_node_collect(const CtlStatusOptions *o, CtlNode *ret) {
        _cleanup_(ctl_node_done) CtlNode n = { .sysfs_root = o->sysfs_root, .proc_root = o->proc_root };
        _cleanup_sysfs_ Sysfs *s = NULL;
        struct stat st;
        int r;

        r = sysfs_new(o->sysfs_root, &s);
        if (r < 0) {
                fprintf(stderr, "thpguardctl: --sysfs-root %s: %s\n", o->sysfs_root, sysfs_strerror(-r));
                return r;
        }
        r = stat(o->proc_root, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
        if (r < 0) {
                fprintf(stderr, "thpguardctl: --proc-root %s: %s\n", o->proc_root, strerror(-r));
                return r;
        }

        collect_policy(o, &n);
        if (n.policy_error[0] && o->config_explicit) {
                fprintf(stderr, "thpguardctl: %s\n", n.policy_error);
                return -EINVAL;
        }

        r = collect_knobs(&n, s);
        if (r < 0) {
                fprintf(stderr, "thpguardctl: %s: %s\n", s->thp_dir, strerror(-r));
                return r;
        }
        n.khugepaged.pages_collapsed = ctl_sysfs_u64(s, "khugepaged/pages_collapsed");
        n.khugepaged.full_scans = ctl_sysfs_u64(s, "khugepaged/full_scans");
        collect_proc_files(&n);

        r = ctl_proc_scan(o->proc_root, o->top, &n.procs);
        if (r < 0) {
                fprintf(stderr, "thpguardctl: --proc-root %s: cannot list processes: %s\n", o->proc_root,
                        strerror(-r));
                return r;
        }
        n.khugepaged.pid = n.procs.khugepaged_pid;
        n.workloads_error = ctl_workloads_collect(o->proc_root, &n.workloads);

        /* Without a journal, status still reports the rest; journal_why says why. */
        n.journal_dir = o->journal_dir;
        n.journal_error = ctl_journal_read(
            &(CtlJournalSource){ o->journal_dir, o->machine_id, o->daemon_exe, true },
            u64_sat_sub(now_usec(CLOCK_REALTIME), CTL_STATUS_WRITES_HOURS * CTL_USEC_PER_HOUR), &n.foreign,
            n.journal_why, sizeof(n.journal_why));
        *ret = n;
        n = (CtlNode){};
        return 0;
}
