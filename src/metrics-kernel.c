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

static int cmp_file(const void *a, const void *b) {
        return strcmp(((const MetricsStatFile *)a)->name, ((const MetricsStatFile *)b)->name);
}

static int cmp_size(const void *a, const void *b) {
        const MetricsSizeDir *x = a, *y = b;
        return (x->size_kb > y->size_kb) - (x->size_kb < y->size_kb);
}

static void size_dir_close(MetricsSizeDir *z) {
        for (size_t i = 0; i < z->n_files; i++)
                closep(&z->files[i].fd);
        z->n_files = 0;
}

void metrics_size_files_init(MetricsSizeFiles *f) {
        f->listed_usec = 0;
        f->n_sizes = 0;
}

void metrics_size_files_close(MetricsSizeFiles *f) {
        for (size_t i = 0; i < f->n_sizes; i++)
                size_dir_close(&f->sizes[i]);
        metrics_size_files_init(f);
}

/* One size's stats/, below the THP directory's fd: each file that may be a stat, opened. */
static int open_size_stats(int thp_fd, const char *dir, MetricsSizeDir *z) {
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
        z->n_files = 0;
        for (size_t seen = 0; seen < METRICS_DIR_ENTRIES_MAX && z->n_files < ELEMENTSOF(z->files); seen++) {
                MetricsStatFile *file = &z->files[z->n_files];

                de = readdir(d);
                if (!de)
                        break;
                if (!metrics_size_stat_name_valid(de->d_name))
                        continue;
                file->fd = open_beneath(dirfd(d), de->d_name, O_RDONLY);
                if (file->fd < 0)
                        continue;
                memcpy(file->name, de->d_name, strlen(de->d_name) + 1);
                z->n_files++;
        }
        qsort(z->files, z->n_files, sizeof(z->files[0]), cmp_file);
        return 0;
}

/* Lists the sizes and opens their stats files anew; the smallest METRICS_SIZES_MAX are kept. */
static int size_files_list(const char *sysfs_root, MetricsSizeFiles *f, uint64_t now_usec) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct dirent *de;

        metrics_size_files_close(f);
        fd = open_below(sysfs_root, SYSFS_THP_DIR, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        fd = -EBADF;
        for (size_t seen = 0; seen < METRICS_DIR_ENTRIES_MAX; seen++) {
                MetricsSizeDir *z;
                uint64_t kb;

                de = readdir(d);
                if (!de)
                        break;
                kb = size_dir_kb(de->d_name);
                if (kb == 0)
                        continue;
                /* Full (a forged tree): the largest gives way, so the smallest are kept in any order. */
                if (f->n_sizes == ELEMENTSOF(f->sizes)) {
                        qsort(f->sizes, f->n_sizes, sizeof(f->sizes[0]), cmp_size);
                        if (kb >= f->sizes[f->n_sizes - 1].size_kb)
                                continue;
                        size_dir_close(&f->sizes[--f->n_sizes]);
                }
                z = &f->sizes[f->n_sizes];
                z->size_kb = kb;
                /* Before 6.10 there is no stats/: no series for the size. */
                if (open_size_stats(dirfd(d), de->d_name, z) >= 0 && z->n_files > 0)
                        f->n_sizes++;
        }
        qsort(f->sizes, f->n_sizes, sizeof(f->sizes[0]), cmp_size);
        f->listed_usec = now_usec ? now_usec : 1;
        return 0;
}

/* One read of a kept file: the whole attribute, as sysfs gives it in one go; -EFBIG if it may be longer. */
static int read_stat(int fd, uint64_t *ret) {
        char buf[METRICS_SIZE_STAT_READ_MAX];
        ssize_t n;

        n = pread(fd, buf, sizeof(buf) - 1, 0);
        if (n < 0)
                return -errno;
        if ((size_t)n >= sizeof(buf) - 1)
                return -EFBIG;
        return knob_value_parse_u64(buf, (size_t)n, ret);
}

int metrics_read_sizes(const char *sysfs_root, MetricsSizeFiles *f, uint64_t now_usec, MetricsKernel *k) {
        int r;

        k->n_sizes = 0;
        if (f->listed_usec == 0 || now_usec < f->listed_usec ||
            now_usec - f->listed_usec >= METRICS_SIZES_RELIST_USEC) {
                r = size_files_list(sysfs_root, f, now_usec);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < f->n_sizes; i++) {
                const MetricsSizeDir *z = &f->sizes[i];
                MetricsSize *out = &k->sizes[k->n_sizes];

                out->size_kb = z->size_kb;
                out->n_stats = 0;
                for (size_t j = 0; j < z->n_files; j++) {
                        ProcCounter *c = &out->stats[out->n_stats];

                        r = read_stat(z->files[j].fd, &c->value);
                        /* Not a number: left out. A read that failed: the file went away; list again. */
                        if (r < 0 && r != -EBADMSG && r != -EFBIG)
                                f->listed_usec = 0;
                        if (r < 0)
                                continue;
                        memcpy(c->name, z->files[j].name, sizeof(c->name));
                        out->n_stats++;
                }
                k->n_sizes += out->n_stats > 0;
        }
        return 0;
}
