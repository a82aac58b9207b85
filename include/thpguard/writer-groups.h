/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Where the daemon's write source comes from: the BPF write probe's link,
 * ring and config map (write-probe.h), else the two fanotify groups
 * (writer-events.h).
 *
 * Loading the probe needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), and
 * fanotify_init() CAP_SYS_ADMIN. Started by hand or in a pod, the daemon
 * loads or opens them itself and then drops every capability. Under the
 * shipped unit it is given none at all: a privileged
 * ExecStartPre=+thpguard-writer-groups loads or opens them and leaves them in the
 * service's file descriptor store (FileDescriptorStoreMax=), and systemd
 * hands them to the daemon with LISTEN_FDS. The daemon then takes them out
 * of the store again, so that its death closes the last reference and
 * lets any open the open group holds go on.
 */

#include <stdbool.h>

#include "thpguard/write-probe.h"
#include "thpguard/write-source.h"

/* The names the groups carry through the store (FDNAME=). */
#define WRITER_GROUP_FDNAME_WRITE "thpguard-writer-write"
#define WRITER_GROUP_FDNAME_OPEN  "thpguard-writer-open"

typedef struct WriterGroups {
        WriteProbeFds probe; /* -errno in each when there is none */
        int probe_error;     /* 0 when loaded; else why not, as -errno ... */
        char probe_why[256]; /* ... and in words; the hook ("fexit", "syscall-exit") when loaded */
        int write_fd;        /* -errno when there is none: why */
        int open_fd;         /* the same */
} WriterGroups;

/*
 * For thpguard-writer-groups: loads the probe (unless want is fanotify or
 * none) and sends its fds to the service manager's store; where it cannot,
 * opens both fanotify groups and sends them instead. 0, or -errno of the
 * first fd that could not be had or sent; *ret says how each fared.
 */
int writer_groups_store(WriteSource want, WriterGroups *ret);

/*
 * For the daemon, before anything else takes LISTEN_FDS: what the store
 * handed over, each fd checked to be what its name says (a fanotify group,
 * then cleared of marks; the probe's ring, link and config map, of which
 * the last may be missing), then removed from the store. Any other passed
 * fd is closed. 1 if the store gave the probe or at
 * least the write group (what it did not give is -ENOENT), 0 if it gave
 * neither (the caller opens its own), -errno on failure.
 */
int writer_groups_take_stored(WriterGroups *ret);

/*
 * What the daemon loads or opens itself, started by hand or in a pod: the
 * probe on the knobs below thp_dir, unless want says otherwise, else the
 * fanotify groups (not for want == bpf or none).
 */
void writer_groups_open(WriteSource want, const char *thp_dir, WriterGroups *ret);

/* What g gives: the probe, else the write group, else neither. */
WriteSource writer_groups_source(const WriterGroups *g);

/*
 * What a daemon started now would have in force, for --verify: loads the
 * probe or opens the groups as writer_groups_open() does, and closes them
 * again. detail says the probe's hook, or why there is no probe.
 */
WriteSource writer_groups_probe(WriteSource want, const char *thp_dir, char *detail, size_t size);
