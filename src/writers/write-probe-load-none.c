/* SPDX-License-Identifier: MIT */
/*
 * write_probe_load() where the build found no clang, bpftool or libbpf
 * (src/CMakeLists.txt): the daemon falls back to fanotify and inotify, and
 * says why.
 */
#include <errno.h>
#include <stdio.h>

#include "thpguard/write-probe.h"

int write_probe_load(const char *thp_dir, WriteProbeHook hook, WriteProbeFds *ret, char *why,
                     size_t why_size) {
        (void)thp_dir;
        (void)hook;
        (void)ret;
        snprintf(why, why_size,
                 "this thpguardd was built without the BPF write probe (no libbpf, clang or bpftool)");
        return -EOPNOTSUPP;
}
