/* SPDX-License-Identifier: MIT */
#include "thpguard/metrics-kernel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "thpguard/event-util.h"
#include "thpguard/macro.h"
#include "thpguard/number.h"

bool metrics_vmstat_is_exported(const char *name) {
        return strncmp(name, "thp_", STRLEN("thp_")) == 0 || strcmp(name, "compact_stall") == 0;
}

static uint64_t kb_to_bytes(uint64_t kb) {
        if (kb == PROCFS_UNKNOWN || kb > UINT64_MAX / 1024)
                return METRICS_UNKNOWN;
        return kb * 1024;
}

/* PSI: absent before 4.20 (ENOENT) and with psi=0 (the read fails with EOPNOTSUPP); neither is an error. */
static int read_memory_pressure(const char *proc_root, MetricsKernel *k) {
        ProcPressure pr;
        int r;

        r = procfs_read_pressure(proc_root, &pr);
        if (r == -ENOENT || r == -EOPNOTSUPP)
                return 0;
        if (r < 0)
                return r;
        k->memory_some_stall_usec = pr.some_total_usec;
        k->memory_full_stall_usec = pr.full_total_usec;
        return 0;
}

int metrics_read_kernel(const char *proc_root, MetricsKernel *ret) {
        _cleanup_free_ ProcVmstat *vmstat = NULL;
        ProcMeminfo mi;
        int r, first = 0;

        ret->anon_huge_pages_bytes = METRICS_UNKNOWN;
        ret->shmem_huge_pages_bytes = METRICS_UNKNOWN;
        ret->n_vmstat = 0;
        ret->khugepaged_cpu_usec = METRICS_UNKNOWN;
        ret->memory_some_stall_usec = METRICS_UNKNOWN;
        ret->memory_full_stall_usec = METRICS_UNKNOWN;

        r = procfs_read_meminfo(proc_root, &mi);
        if (r >= 0) {
                ret->anon_huge_pages_bytes = kb_to_bytes(mi.anon_huge_pages_kb);
                ret->shmem_huge_pages_bytes = kb_to_bytes(mi.shmem_huge_pages_kb);
        } else
                first = r;

        vmstat = malloc(sizeof(*vmstat));
        if (!vmstat)
                return first < 0 ? first : -ENOMEM;
        r = procfs_read_vmstat(proc_root, vmstat);
        if (r >= 0) {
                for (size_t i = 0; i < vmstat->n_counters && ret->n_vmstat < ELEMENTSOF(ret->vmstat); i++)
                        if (metrics_vmstat_is_exported(vmstat->counters[i].name))
                                ret->vmstat[ret->n_vmstat++] = vmstat->counters[i];
        } else if (first == 0)
                first = r;

        r = read_memory_pressure(proc_root, ret);
        if (r < 0 && first == 0)
                first = r;
        return first;
}

int metrics_read_khugepaged(const char *proc_root, MetricsKhugepaged *cache, uint64_t now_usec,
                            uint64_t *ret_usec) {
        long hz = sysconf(_SC_CLK_TCK);
        uint64_t ticks, usec;
        ProcStat st;
        int r;

        if (hz <= 0)
                return -EINVAL;
        /* Last time's khugepaged, if it still is: one file instead of a scan of every process. */
        if (cache->pid == 0 || procfs_read_stat(proc_root, cache->pid, &st) < 0 ||
            !procfs_stat_is_khugepaged(&st, cache->pid)) {
                /* One that just went (THP turned off, or off and on) is looked for at once. */
                if (cache->pid == 0 && now_usec < cache->next_scan_usec)
                        return -ENOENT;
                cache->pid = 0;
                r = procfs_find_khugepaged(proc_root, &cache->pid, &st);
                if (r < 0) {
                        cache->next_scan_usec = u64_sat_add(now_usec, METRICS_KHUGEPAGED_RESCAN_USEC);
                        return r;
                }
        }
        if (__builtin_add_overflow(st.utime_ticks, st.stime_ticks, &ticks) ||
            __builtin_mul_overflow(ticks / (uint64_t)hz, USEC_PER_SEC, &usec) ||
            __builtin_add_overflow(usec, ticks % (uint64_t)hz * USEC_PER_SEC / (uint64_t)hz, &usec))
                return -EOVERFLOW;
        *ret_usec = usec;
        return 0;
}
