/* SPDX-License-Identifier: MIT */
/*
 * The judgement: what the collected numbers mean for a workload. Kept apart
 * from collection and output so it is one place to read, and so tests can
 * hand it a CtlNode built by hand.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "thpguard/number.h"

#define PROFILES "see /usr/share/thpguard/profiles"

static const char *defrag_effect(const char *defrag) {
        if (strcmp(defrag, "always") == 0)
                return "page faults stall in direct compaction when memory is fragmented";
        if (strcmp(defrag, "defer") == 0)
                return "compaction is left to kcompactd, faults do not stall";
        if (strcmp(defrag, "defer+madvise") == 0)
                return "only madvised regions stall in direct compaction";
        if (strcmp(defrag, "madvise") == 0)
                return "only madvised regions stall in direct compaction";
        if (strcmp(defrag, "never") == 0)
                return "no compaction for huge pages";
        return "effect unknown";
}

static void judge_headline(CtlNode *n) {
        const char *enabled = ctl_node_knob_value(n, "enabled"), *defrag = ctl_node_knob_value(n, "defrag");
        const CtlKnob *k = ctl_node_knob(n, "enabled");

        if (!enabled) {
                snprintf(n->headline, sizeof(n->headline), "THP state unknown: %s/enabled %s", SYSFS_THP_DIR,
                         k ? k->reason : "is missing");
                return;
        }
        if (!defrag)
                defrag = "?";
        if (strcmp(enabled, "always") == 0 && strcmp(defrag, "always") == 0)
                snprintf(
                    n->headline, sizeof(n->headline),
                    "THP always + defrag always: khugepaged fills freed memory back with huge pages (RSS "
                    "inflation) and faults stall in direct compaction (" PROFILES ")");
        else if (strcmp(enabled, "always") == 0)
                snprintf(n->headline, sizeof(n->headline),
                         "THP always + defrag %s: khugepaged fills freed memory back with huge pages (RSS "
                         "inflation); %s (" PROFILES ")",
                         defrag, defrag_effect(defrag));
        else if (strcmp(enabled, "madvise") == 0)
                snprintf(n->headline, sizeof(n->headline),
                         "THP madvise + defrag %s: huge pages only where a program asks with MADV_HUGEPAGE; "
                         "no RSS inflation for the others",
                         defrag);
        else if (strcmp(enabled, "never") == 0)
                snprintf(n->headline, sizeof(n->headline),
                         "THP never: no transparent huge pages, not even where a program asks with "
                         "MADV_HUGEPAGE");
        else
                snprintf(n->headline, sizeof(n->headline), "THP %s + defrag %s", enabled, defrag);
}

/*
 * One triple: what the kernel command line set at boot, what runs now, what
 * the policy wants. Said only when they are not all the same.
 */
static void judge_triple(CtlNode *n, const char *param, const char *cmdline_value, const char *knob_path) {
        const CtlKnob *k = ctl_node_knob(n, knob_path);
        const char *live = ctl_node_knob_value(n, knob_path);
        const char *desired = k && k->policy ? k->policy->desired : NULL;

        if (k && k->spec->type == KNOB_CHOICE && !knob_spec_accepts_word(k->spec, cmdline_value)) {
                ctl_note_add(n,
                             "%s: cmdline %s=%s is not a value the kernel accepts; it was ignored at boot",
                             knob_path, param, cmdline_value);
                return;
        }
        if (!live)
                return;
        if (strcmp(cmdline_value, live) == 0 && (!desired || strcmp(desired, live) == 0))
                return;
        if (!desired)
                ctl_note_add(n,
                             "%s: cmdline sets %s, runtime is %s, policy does not manage it "
                             "(changed after boot; a reboot goes back to %s)",
                             knob_path, cmdline_value, live, cmdline_value);
        else if (strcmp(desired, live) == 0)
                ctl_note_add(n,
                             "%s: cmdline sets %s, runtime is %s, policy wants %s "
                             "(after a reboot the kernel runs with %s until thpguardd applies the policy)",
                             knob_path, cmdline_value, live, desired, cmdline_value);
        else
                ctl_note_add(n, "%s: cmdline sets %s, runtime is %s, policy wants %s", knob_path,
                             cmdline_value, live, desired);
}

static void judge_cmdline(CtlNode *n) {
        const ProcCmdline *c = &n->cmdline;

        if (n->cmdline_error < 0)
                return;
        if (c->set[PROC_CMDLINE_THP])
                judge_triple(n, "transparent_hugepage", c->value[PROC_CMDLINE_THP], "enabled");
        if (c->set[PROC_CMDLINE_THP_SHMEM])
                judge_triple(n, "transparent_hugepage_shmem", c->value[PROC_CMDLINE_THP_SHMEM],
                             "shmem_enabled");

        for (ProcCmdlineParam p = PROC_CMDLINE_THP_ANON; p <= PROC_CMDLINE_THP_SHMEM_SIZES; p++) {
                const char *file = p == PROC_CMDLINE_THP_ANON ? "enabled" : "shmem_enabled";
                const char *param = procfs_cmdline_param_name(p);

                if (!c->set[p])
                        continue;
                for (size_t i = 0; i < n->n_sizes; i++) {
                        char word[KNOB_VALUE_MAX], path[KNOB_PATH_MAX];
                        int r =
                            procfs_thp_sizes_lookup(c->value[p], n->sizes[i].size_kb, word, sizeof(word));

                        if (r < 0) {
                                ctl_note_add(n, "cmdline %s=%s cannot be parsed; the kernel refuses it too",
                                             param, c->value[p]);
                                break;
                        }
                        if (r == 0)
                                continue;
                        snprintf(path, sizeof(path), "%s/%s", n->sizes[i].dir, file);
                        judge_triple(n, param, word, path);
                }
        }
}

static void judge_sizes(CtlNode *n) {
        const char *enabled = ctl_node_knob_value(n, "enabled");

        if (!enabled || strcmp(enabled, "always") == 0)
                return;
        for (size_t i = 0; i < n->n_sizes; i++) {
                char path[KNOB_PATH_MAX];
                const char *v;

                snprintf(path, sizeof(path), "%s/enabled", n->sizes[i].dir);
                v = ctl_node_knob_value(n, path);
                if (v && strcmp(v, "always") == 0)
                        ctl_note_add(n,
                                     "%s is always: every process gets %" PRIu64
                                     " kB folios whatever enabled (%s) says",
                                     path, n->sizes[i].size_kb, enabled);
        }
}

static void judge_counters(CtlNode *n) {
        const char *enabled = ctl_node_knob_value(n, "enabled");
        const char *defrag = ctl_node_knob_value(n, "defrag");
        uint64_t alloc, fallback, faults, stall, failed;

        if (enabled && strcmp(enabled, "never") != 0 && n->khugepaged.pid == 0 && n->procs.n_scanned > 0)
                ctl_note_add(
                    n,
                    "khugepaged is not running although enabled is %s: nothing collapses small pages "
                    "into huge ones",
                    enabled);
        if (n->vmstat_error < 0)
                return;
        alloc = procfs_vmstat_get(n->vmstat, "thp_fault_alloc");
        fallback = procfs_vmstat_get(n->vmstat, "thp_fault_fallback");
        stall = procfs_vmstat_get(n->vmstat, "compact_stall");
        failed = procfs_vmstat_get(n->vmstat, "thp_collapse_alloc_failed");

        /* Below 100 faults a percentage says nothing. Saturating: the counters may be forged. */
        faults = u64_sat_add(alloc, fallback);
        if (alloc != PROCFS_UNKNOWN && fallback != PROCFS_UNKNOWN && faults >= 100 &&
            u64_sat_mul(fallback, 10) >= faults)
                ctl_note_add(n,
                             "thp_fault_fallback is %u%% of THP faults (%" PRIu64 " of %" PRIu64
                             "): memory is fragmented, huge pages are hard to get",
                             number_percent(fallback, faults), fallback, faults);
        if (stall != PROCFS_UNKNOWN && stall > 0)
                ctl_note_add(n,
                             "compact_stall %" PRIu64 ": tasks stalled in direct compaction since boot "
                             "(latency spikes; defrag is %s)",
                             stall, defrag ? defrag : "unknown");
        if (failed != PROCFS_UNKNOWN && failed > 0)
                ctl_note_add(n, "thp_collapse_alloc_failed %" PRIu64 ": khugepaged could not get huge pages",
                             failed);
}

void ctl_node_judge(CtlNode *n) {
        judge_headline(n);
        judge_cmdline(n);
        judge_sizes(n);
        judge_counters(n);
}
