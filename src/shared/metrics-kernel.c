/* SPDX-License-Identifier: MIT */
#include "thpguard/metrics-kernel.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "thpguard/event-util.h"
#include "thpguard/fileio.h"
#include "thpguard/knob-value.h"
#include "thpguard/knob.h"
#include "thpguard/macro.h"
#include "thpguard/number.h"
#include "thpguard/sysfs.h"

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
        ret->n_sizes = 0;

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

bool metrics_size_stat_name_valid(const char *name) {
        size_t len = strlen(name);

        if (len == 0 || len >= PROCFS_COUNTER_NAME_MAX || name[0] < 'a' || name[0] > 'z')
                return false;
        return strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == len;
}

bool metrics_size_stat_is_gauge(const char *name) {
        return strncmp(name, "nr_", STRLEN("nr_")) == 0 && name[STRLEN("nr_")] != '\0';
}

/* "hugepages-2048kB" -> 2048; 0 if the name is not one the kernel gives a size's directory. */
static uint64_t size_dir_kb(const char *name) {
        const char *size = name + STRLEN("hugepages-");
        uint64_t kb;

        if (strncmp(name, "hugepages-", STRLEN("hugepages-")) != 0 || !knob_size_is_valid(size) ||
            number_parse_u64(size, strlen(size) - STRLEN("kB"), &kb) < 0)
                return 0;
        return kb;
}

static int cmp_stat(const void *a, const void *b) {
        return strcmp(((const ProcCounter *)a)->name, ((const ProcCounter *)b)->name);
}

static int cmp_size(const void *a, const void *b) {
        const MetricsSize *x = a, *y = b;
        return (x->size_kb > y->size_kb) - (x->size_kb < y->size_kb);
}

/* One size's stats/, below the THP directory's fd; what cannot be read is left out. */
static int read_size_stats(int thp_fd, const char *dir, MetricsSize *z) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_close_ int fd = -EBADF;
        char rel[NAME_MAX + sizeof("/stats")];
        struct dirent *de;
        int r;

        r = snprintf(rel, sizeof(rel), "%s/stats", dir);
        if (r < 0 || (size_t)r >= sizeof(rel))
                return -ENAMETOOLONG;
        fd = open_beneath(thp_fd, rel, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        fd = -EBADF; /* the DIR's now */
        z->n_stats = 0;
        for (size_t seen = 0; seen < METRICS_DIR_ENTRIES_MAX && z->n_stats < ELEMENTSOF(z->stats); seen++) {
                char buf[METRICS_SIZE_STAT_READ_MAX];
                ProcCounter *c = &z->stats[z->n_stats];
                size_t len;

                de = readdir(d);
                if (!de)
                        break;
                if (!metrics_size_stat_name_valid(de->d_name) ||
                    read_file_at(dirfd(d), de->d_name, buf, sizeof(buf), &len) < 0 ||
                    knob_value_parse_u64(buf, len, &c->value) < 0)
                        continue;
                memcpy(c->name, de->d_name, strlen(de->d_name) + 1);
                z->n_stats++;
        }
        qsort(z->stats, z->n_stats, sizeof(z->stats[0]), cmp_stat);
        return 0;
}

int metrics_read_sizes(const char *sysfs_root, MetricsKernel *k) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct dirent *de;

        k->n_sizes = 0;
        fd = open_below(sysfs_root, SYSFS_THP_DIR, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        fd = -EBADF;
        for (size_t seen = 0; seen < METRICS_DIR_ENTRIES_MAX; seen++) {
                MetricsSize z = {};

                de = readdir(d);
                if (!de)
                        break;
                z.size_kb = size_dir_kb(de->d_name);
                /* Before 6.10 there is no stats/: no series for the size. */
                if (z.size_kb == 0 || read_size_stats(dirfd(d), de->d_name, &z) < 0 || z.n_stats == 0)
                        continue;
                if (k->n_sizes < ELEMENTSOF(k->sizes)) {
                        k->sizes[k->n_sizes++] = z;
                        continue;
                }
                /* Full (a forged tree): the largest gives way, so the smallest are kept in any order. */
                qsort(k->sizes, k->n_sizes, sizeof(k->sizes[0]), cmp_size);
                if (z.size_kb < k->sizes[k->n_sizes - 1].size_kb)
                        k->sizes[k->n_sizes - 1] = z;
        }
        qsort(k->sizes, k->n_sizes, sizeof(k->sizes[0]), cmp_size);
        return 0;
}
