/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "thpguard/escape.h"
#include "thpguard/macro.h"
#include "thpguard/path.h"

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
        uint64_t rss = p->rollup_error < 0 ? 0 : p->rollup.rss_kb;
        uint64_t ahp = p->rollup_error < 0 ? 0 : p->rollup.anon_huge_pages_kb;

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
                         "THP madvise: this process gets huge pages only in the %zu mapping(s) it advised "
                         "with MADV_HUGEPAGE",
                         m ? m->n_advised_huge : 0);
        else if (strcmp(p->enabled, "always") == 0)
                snprintf(p->verdict, sizeof(p->verdict),
                         "THP always: every large enough anonymous mapping may get huge pages, "
                         "except the %zu it excluded with MADV_NOHUGEPAGE",
                         m ? m->n_advised_nohuge : 0);
        else
                snprintf(p->verdict, sizeof(p->verdict), "THP mode unknown");

        switch (p->language_runtime) {
        case CTL_LANGUAGE_RUNTIME_GO:
                snprintf(
                    p->compare_with, sizeof(p->compare_with),
                    "Go: compare Rss (%" PRIu64 " kB) with the heap the runtime reports: "
                    "GODEBUG=gctrace=1 or runtime/metrics /memory/classes/total:bytes and "
                    "/memory/classes/heap/released:bytes, or a pprof heap profile. A gap of the order of "
                    "AnonHugePages (%" PRIu64 " kB) that scavenging does not return points at THP "
                    "(Go before 1.21.1 also fought khugepaged)",
                    rss, ahp);
                break;
        case CTL_LANGUAGE_RUNTIME_JVM:
                snprintf(p->compare_with, sizeof(p->compare_with),
                         "JVM: compare Rss (%" PRIu64 " kB) with `jcmd %" PRIu64
                         " GC.heap_info` (committed) plus `jcmd %" PRIu64
                         " VM.native_memory summary` (needs -XX:NativeMemoryTracking=summary). "
                         "A gap of the order of AnonHugePages (%" PRIu64 " kB) points at THP; "
                         "-XX:+UseTransparentHugePages makes the JVM madvise its heap itself",
                         rss, p->pid, p->pid, ahp);
                break;
        default:
                snprintf(
                    p->compare_with, sizeof(p->compare_with),
                    "Compare Rss (%" PRIu64 " kB) with the heap the program's allocator reports "
                    "(pprof heap, jemalloc stats, malloc_info(3), Redis INFO used_memory). A gap of the "
                    "order of AnonHugePages (%" PRIu64 " kB) points at THP",
                    rss, ahp);
                break;
        }
}

int ctl_pid_collect(const char *proc_root, const char *sysfs_root, uint64_t pid, size_t top, CtlPid *ret) {
        _cleanup_(ctl_pid_done) CtlPid p = { .pid = pid };
        int r;

        /* status is the one file without which there is no process to talk about. */
        r = procfs_read_status(proc_root, pid, &p.status);
        if (r < 0) {
                char rel[64], path[PATH_MAX];

                snprintf(rel, sizeof(rel), "%" PRIu64 "/status", pid);
                path_join_root(proc_root, rel, path, sizeof(path));
                fprintf(stderr, "thpguardctl: %s: %s\n", path,
                        r == -ENOENT    ? "no such process"
                        : r == -EBADMSG ? "unexpected content"
                                        : strerror(-r));
                return r;
        }

        p.rollup_error = procfs_read_smaps_rollup(proc_root, pid, &p.rollup);

        p.smaps = malloc(sizeof(*p.smaps));
        p.smaps_error = p.smaps ? procfs_read_smaps(proc_root, pid, top, p.smaps) : -ENOMEM;
        if (p.smaps_error < 0) {
                free(p.smaps);
                p.smaps = NULL;
        }

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
