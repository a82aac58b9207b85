/* SPDX-License-Identifier: MIT */
/*
 * The daemon's confinement (sandbox.h). Landlock once the first policy is
 * loaded, before any thread or event source exists (in lock mode once the
 * gate runs, which must be outside the domain to read an opener's system
 * call: daemon_start(), daemon_writers_join()); the seccomp filter
 * once the writer gate runs (it names the one other process the daemon may
 * signal), which is when the write source is in: at startup when the fd
 * store passed it in, else when the loader's answer joins
 * (daemon_writers_join()). Every file the daemon writes after startup is in
 * the list below; one it misses fails with EACCES.
 */
#include <errno.h>
#include <string.h>

#include "daemon-internal.h"
#include "thpguard/sandbox.h"

int daemon_confine_files(Daemon *d) {
        /*
         * A reload cannot move the metrics file or the NFD feature file to
         * another directory: their directories are fixed here.
         */
        const char *files_written[] = { daemon_metrics_path(d), daemon_nfd_path(d) }, *written[2];
        size_t n_written = 0;
        SandboxDaemon files = {
                .proc_root = d->proc_root,
                .policy_file = d->options->config,
                .knob_dir = d->sysfs->thp_dir,
                .written_files = written,
                .signal_outside = d->policy->mode == POLICY_MODE_LOCK,
        };
        int r;

        if (d->files_confined)
                return 0;
        d->files_confined = true;
        for (size_t i = 0; i < ELEMENTSOF(files_written); i++)
                if (files_written[i])
                        written[n_written++] = files_written[i];
        files.n_written_files = n_written;

        r = sandbox_confine_daemon_files(&files, &d->sandbox);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot confine the daemon");
        if (d->sandbox.landlock_abi == 0)
                log_plain(&d->log, LOG_INFO,
                          "Landlock is not available (%s): file access is confined only by the service's "
                          "own settings",
                          strerror(-d->sandbox.landlock_error));
        if (d->sandbox.missing)
                log_plain(&d->log, LOG_WARNING, "%s does not exist: the daemon will not be able to use it",
                          d->sandbox.missing);
        return 0;
}

/*
 * After the writer gate is started, inside the Landlock domain, so that
 * the filter can let the daemon kill it (fanotify-gate.h) and nothing else.
 */
int daemon_confine_syscalls(Daemon *d) {
        char what[128];
        int r;

        r = sandbox_seccomp(daemon_writers_gate_pid(d), &d->sandbox);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot confine the daemon's system calls");
        if (!d->sandbox.seccomp)
                log_plain(&d->log, LOG_INFO,
                          "no seccomp filter (%s): kill(), ptrace() and the rest are not refused by the "
                          "daemon itself",
                          strerror(-d->sandbox.seccomp_error));
        sandbox_describe(&d->sandbox, what, sizeof(what));
        log_plain(&d->log, LOG_INFO, "confined: %s", what);
        return 0;
}
