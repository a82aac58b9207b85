/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Where the daemon's write source comes from: the BPF write probe's link,
 * ring and config map (write-probe.h), else the two fanotify groups
 * (fanotify-groups.h).
 *
 * Loading the probe needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), and
 * fanotify_init() CAP_SYS_ADMIN. Started by hand or in a pod, the daemon
 * forks a loader (WriteSourceLoader) while it still has them, drops every
 * capability at once, and enforces its policy while the loader works; the
 * source joins when the loader answers. Under the shipped unit the daemon
 * is given none at all: a privileged ExecStartPre=+thpguard-write-source
 * loads or opens them and leaves them in the service's file descriptor
 * store (FileDescriptorStoreMax=), and systemd hands them to the daemon
 * with LISTEN_FDS. The daemon then takes them out of the store again, so
 * that its death closes the last reference and lets any open the open
 * group holds go on.
 */

#include <stdbool.h>
#include <stddef.h>

#include "thpguard/macro.h"
#include "thpguard/write-probe.h"
#include "thpguard/write-source.h"

/* The names the groups carry through the store (FDNAME=). */
#define WRITE_SOURCE_FDNAME_WRITE "thpguard-writer-write"
#define WRITE_SOURCE_FDNAME_OPEN  "thpguard-writer-open"
/* Lock mode's group (fanotify_groups_open_lock()). */
#define WRITE_SOURCE_FDNAME_LOCK "thpguard-lock"

/* What was asked for: --write-source, and --write-probe-hook or the policy's write_probe_hook. */
typedef struct WriteSourceWant {
        WriteSource source;
        WriteProbeHook hook;
        bool lock; /* the policy's mode = "lock" (or --lock): the lock group too */
} WriteSourceWant;

typedef struct WriteSourceFds {
        WriteProbeFds probe;       /* -errno in each when there is none */
        int probe_error;           /* 0 when loaded; else why not, as -errno ... */
        char probe_why[512];       /* ... and in words; the hook's name when loaded */
        WriteProbeHook probe_hook; /* the hook in force, when loaded */
        int write_fd;              /* -errno when there is none: why */
        int open_fd;               /* the same */
        int lock_fd;               /* lock mode's group, when asked for; the same */
} WriteSourceFds;

/* None of either: every fd -ENOENT. */
void write_source_fds_init(WriteSourceFds *g);
/* Closes every fd g holds; g is then as write_source_fds_init() leaves it. */
void write_source_fds_close(WriteSourceFds *g);

/*
 * For thpguard-write-source: loads the probe as want says (unless want is
 * fanotify or none) and sends its fds to the service manager's store;
 * where it cannot, opens both fanotify groups and sends them instead. 0,
 * or -errno of the first fd that could not be had or sent; *ret says how
 * each fared.
 */
int write_source_fds_store(const WriteSourceWant *want, WriteSourceFds *ret);

/*
 * For the daemon, before anything else takes LISTEN_FDS: what the store
 * handed over, each fd checked to be what its name says (a fanotify group,
 * then cleared of marks; the probe's ring, links and config map, of which
 * the last may be missing), then removed from the store. Any other passed
 * fd is closed. 1 if the store gave the probe or at least the write group
 * (what it did not give is -ENOENT), 0 if it gave neither (the caller
 * opens its own), -errno on failure.
 */
int write_source_fds_take_stored(WriteSourceFds *ret);

/*
 * Whether what the store gave is what want asks for. 0: it is (or want
 * is none, and the caller closes it); -EMEDIUMTYPE with why[] saying both
 * where the daemon, which cannot load anything itself, would run another
 * source or hook than the one asked for.
 */
int write_source_fds_match(const WriteSourceFds *g, const WriteSourceWant *want, char *why, size_t why_size);

/*
 * What the daemon loads or opens itself, started by hand or in a pod, and
 * what --verify tries: the probe on the knobs below thp_dir, unless want
 * says otherwise, else the fanotify groups (not for want == bpf or none).
 * Loaded in a child process (WriteSourceLoader), waited for.
 */
void write_source_fds_open(const WriteSourceWant *want, const char *thp_dir, WriteSourceFds *ret);

/* What g gives: the probe, else the write group, else neither. */
WriteSource write_source_fds_source(const WriteSourceFds *g);

/*
 * What a daemon started now would have in force, for --verify: loads the
 * probe or opens the groups as write_source_fds_open() does, and closes them
 * again. detail says the probe's hook, or why there is no probe.
 */
WriteSource write_source_fds_probe(const WriteSourceWant *want, const char *thp_dir, char *detail,
                                   size_t size);

/*
 * The loader: a child process forked while the caller still holds its
 * privileges, which keeps them, waits for one request, loads the probe or
 * opens the groups as write_source_fds_open() says, hands the fds back over a
 * socket and exits. libbpf parses the kernel's whole BTF (measured: the
 * daemon's peak RSS went from 3.5 to 15.3 MiB when it loaded the probe
 * itself), and none of that is ever the caller's; and the caller drops its
 * capabilities and goes on while the child works. The child dies with the
 * caller (PR_SET_PDEATHSIG).
 */
typedef struct WriteSourceLoader WriteSourceLoader;

int write_source_loader_start(const char *thp_dir, WriteSourceLoader **ret);
/* What to load: sent once, after the policy (which may name the hook) is read. */
int write_source_loader_request(WriteSourceLoader *l, const WriteSourceWant *want);
/* poll() it for POLLIN: the answer is in (or the child died). */
int write_source_loader_fd(const WriteSourceLoader *l);
/*
 * The answer, into *ret: 0 (whatever it says, *ret says it, a dead child
 * included), -EAGAIN when it is not in yet. The child is reaped.
 */
int write_source_loader_finish(WriteSourceLoader *l, WriteSourceFds *ret);
/* Ends a child that has not answered (our end of its socket closed, then SIGKILL), and reaps it. */
WriteSourceLoader *write_source_loader_free(WriteSourceLoader *l);
DEFINE_TRIVIAL_CLEANUP_FUNC(WriteSourceLoader *, write_source_loader_free);
