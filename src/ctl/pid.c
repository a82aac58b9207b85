/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bounded-read.h"
#include "ctl.h"
#include "thpguard/escape.h"
#include "thpguard/macro.h"
#include "thpguard/path.h"

const char *ctl_pid_read_error(int r, char *buf, size_t size) {
        if (r == -ETIMEDOUT)
                snprintf(buf, size, "did not answer within %d ms (the process holds its own memory lock)",
                         CTL_PID_READ_DEADLINE_USEC / 1000);
        else
                snprintf(buf, size, "%s",
                         r == -ENOENT    ? "no such process"
                         : r == -EBADMSG ? "unexpected content"
                                         : strerror(-r));
        return buf;
}

void ctl_pid_done(CtlPid *p) {
        free(p->smaps);
        *p = (CtlPid){};
}

static void read_knob(const char *sysfs_root, const char *knob, char *ret, size_t size) {
        _cleanup_sysfs_ Sysfs *s = NULL;
        char buf[KNOB_READ_MAX + 1];
        KnobValue v;
        size_t len;

        if (sysfs_new(sysfs_root, &s) < 0 || sysfs_read(s, knob, buf, sizeof(buf), &len) < 0 ||
            knob_value_parse(KNOB_CHOICE, buf, len, &v) < 0)
                return;
        snprintf(ret, size, "%s", v.active);
}

static void read_exe(const char *proc_root, uint64_t pid, char *ret, size_t size) {
        char rel[64], path[PATH_MAX], target[PATH_MAX];
        ssize_t n;

        snprintf(rel, sizeof(rel), "%" PRIu64 "/exe", pid);
        if (path_join_root(proc_root, rel, path, sizeof(path)) < 0)
                return;
        n = readlink(path, target, sizeof(target));
        if (n <= 0 || (size_t)n >= sizeof(target))
                return;
        escape_printable(target, (size_t)n, ret, size);
}

/*
 * What this process gets from THP, from the system-wide mode and its own
 * flags. THP_enabled: 0 is prctl(PR_SET_THP_DISABLE); MADV_HUGEPAGE shows as
 * "hg" in VmFlags.
 */
static void pid_judge(CtlPid *p) {
        const ProcSmaps *m = p->smaps;
        char rss[32] = "not read", ahp[32] = "not read", huge[32] = "the mappings", nohuge[32] = "those";

        if (p->rollup_error >= 0) {
                snprintf(rss, sizeof(rss), "%" PRIu64 " kB", p->rollup.rss_kb);
                snprintf(ahp, sizeof(ahp), "%" PRIu64 " kB", p->rollup.anon_huge_pages_kb);
        }
        /* How many mappings, where smaps was read. */
        if (m) {
                snprintf(huge, sizeof(huge), "the %zu mapping(s)", m->n_advised_huge);
                snprintf(nohuge, sizeof(nohuge), "the %zu", m->n_advised_nohuge);
        }

        if (p->status.kthread == 1)
                snprintf(p->verdict, sizeof(p->verdict),
                         "a kernel thread: no user memory of its own, THP does not apply");
        else if (p->status.thp_enabled == 0)
                snprintf(p->verdict, sizeof(p->verdict),
                         "THP disabled for this process (prctl PR_SET_THP_DISABLE, inherited or its own): "
                         "huge pages it still holds predate the prctl");
        else if (strcmp(p->enabled, "never") == 0)
                snprintf(p->verdict, sizeof(p->verdict),
                         "THP is never system-wide: no huge pages for anyone");
        else if (strcmp(p->enabled, "madvise") == 0)
                snprintf(p->verdict, sizeof(p->verdict),
                         "THP madvise: this process gets huge pages only in %s it advised "
                         "with MADV_HUGEPAGE",
                         huge);
        else if (strcmp(p->enabled, "always") == 0)
                snprintf(p->verdict, sizeof(p->verdict),
                         "THP always: every large enough anonymous mapping may get huge pages, "
                         "except %s it excluded with MADV_NOHUGEPAGE",
                         nohuge);
        else
                snprintf(p->verdict, sizeof(p->verdict), "THP mode unknown");

        switch (p->language_runtime) {
        case CTL_LANGUAGE_RUNTIME_GO:
                snprintf(
                    p->compare_with, sizeof(p->compare_with),
                    "Go: compare Rss (%s) with the heap the runtime reports: "
                    "GODEBUG=gctrace=1 or runtime/metrics /memory/classes/total:bytes and "
                    "/memory/classes/heap/released:bytes, or a pprof heap profile. A gap of the order of "
                    "AnonHugePages (%s) that scavenging does not return points at THP "
                    "(Go before 1.21.1 also fought khugepaged)",
                    rss, ahp);
                break;
        case CTL_LANGUAGE_RUNTIME_JVM:
                snprintf(p->compare_with, sizeof(p->compare_with),
                         "JVM: compare Rss (%s) with `jcmd %" PRIu64
                         " GC.heap_info` (committed) plus `jcmd %" PRIu64
                         " VM.native_memory summary` (needs -XX:NativeMemoryTracking=summary). "
                         "A gap of the order of AnonHugePages (%s) points at THP; "
                         "-XX:+UseTransparentHugePages makes the JVM madvise its heap itself",
                         rss, p->pid, p->pid, ahp);
                break;
        default:
                snprintf(
                    p->compare_with, sizeof(p->compare_with),
                    "Compare Rss (%s) with the heap the program's allocator reports "
                    "(pprof heap, jemalloc stats, malloc_info(3), Redis INFO used_memory). A gap of the "
                    "order of AnonHugePages (%s) points at THP",
                    rss, ahp);
                break;
        }
}

int ctl_pid_collect(const char *proc_root, const char *sysfs_root, uint64_t pid, size_t top, CtlPid *ret) {
        _cleanup_(ctl_bounded_reader_freep) CtlBoundedReader *reader = NULL;
        _cleanup_(ctl_pid_done) CtlPid p = { .pid = pid };
        int r;

        /*
         * Every /proc/PID file that may wait for the process's memory lock
         * is read by the bounded reader: the process can hold that lock for
         * good (bounded-read.h), and we would wait with it.
         */
        r = ctl_bounded_reader_new(proc_root, CTL_PID_READ_DEADLINE_USEC, &reader);
        if (r < 0) {
                fprintf(stderr, "thpguardctl: %s\n", strerror(-r));
                return r;
        }
        /* status is the one file without which there is no process to talk about. */
        r = ctl_bounded_read_status(reader, pid, &p.status);
        if (r < 0) {
                char rel[64], path[PATH_MAX], why[CTL_PID_READ_ERROR_MAX];

                snprintf(rel, sizeof(rel), "%" PRIu64 "/status", pid);
                path_join_root(proc_root, rel, path, sizeof(path));
                fprintf(stderr, "thpguardctl: %s: %s\n", path, ctl_pid_read_error(r, why, sizeof(why)));
                return r;
        }

        p.rollup_error = ctl_bounded_read_smaps_rollup(reader, pid, &p.rollup);
        if (p.rollup_error == -ETIMEDOUT)
                /* smaps waits for the same lock: another deadline would only double the wait. */
                p.smaps_error = -ETIMEDOUT;
        else {
                p.smaps = malloc(sizeof(*p.smaps));
                p.smaps_error = p.smaps ? ctl_bounded_read_smaps(reader, pid, top, p.smaps) : -ENOMEM;
        }
        if (p.smaps_error < 0) {
                free(p.smaps);
                p.smaps = NULL;
        }
        p.stalled = p.rollup_error == -ETIMEDOUT || p.smaps_error == -ETIMEDOUT;

        read_exe(proc_root, pid, p.exe, sizeof(p.exe));
        if (p.smaps && p.smaps->uses_libjvm)
                p.language_runtime = CTL_LANGUAGE_RUNTIME_JVM;
        else if (ctl_exe_is_go(proc_root, pid))
                p.language_runtime = CTL_LANGUAGE_RUNTIME_GO;

        read_knob(sysfs_root, "enabled", p.enabled, sizeof(p.enabled));
        read_knob(sysfs_root, "defrag", p.defrag, sizeof(p.defrag));
        pid_judge(&p);

        *ret = p;
        p = (CtlPid){};
        return 0;
}
