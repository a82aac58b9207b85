/* SPDX-License-Identifier: MIT */
/*
 * The policy in force and how it changes: SIGHUP, a write to the policy
 * file (or a ConfigMap's ..data swap), each debounced into one reload that
 * either installs the new policy whole or keeps the last good one.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "daemon-internal.h"
#include "thpguard/compliance.h"
#include "thpguard/message-ids.h"

/* Editors and the kubelet touch a policy several times per change; reload once. */
#define RELOAD_DEBOUNCE_USEC (100 * USEC_PER_MSEC)

int daemon_load_policy(Daemon *d, Diag *diag, Policy **ret) {
        Policy *p = NULL;
        int r;

        r = policy_load_as_daemon(d->options->config, d->options->mode, diag, &p);
        if (r < 0)
                return r;
        compliance_check_policy(p, d->sysfs, diag);
        *ret = p;
        return 0;
}

/* Each diagnostic as its own entry, at its own priority, naming the policy file. */
void daemon_log_diag(Daemon *d, const Diag *diag) {
        LogField f[] = { { "THPGUARD_POLICY", d->options->config } };

        for (size_t i = 0; i < diag->n_entries; i++)
                log_event(&d->log, diag->entries[i].level == DIAG_ERROR ? LOG_ERR : LOG_WARNING, NULL, f,
                          ELEMENTSOF(f), "%s", diag->entries[i].text);
}

/* Whatever the result, a reload counter moves: the metrics are dirty. */
static void reload(Daemon *d) {
        _cleanup_diag_ Diag diag = {};
        _cleanup_policy_ Policy *p = NULL;
        LogField f[] = { { "THPGUARD_POLICY", d->options->config } };
        unsigned corrected;
        int r;

        sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=reloading %s",
                   now_usec(CLOCK_MONOTONIC), d->options->config);

        r = daemon_load_policy(d, &diag, &p);
        if (r < 0) {
                _cleanup_free_ char *errors = diag_join(&diag, DIAG_ERROR);

                d->reloads_failed++;
                log_event(&d->log, LOG_ERR, THPGUARD_MESSAGE_POLICY_REJECTED, f, ELEMENTSOF(f),
                          "policy rejected, keeping the last good one: %s", errors ? errors : strerror(-r));
                daemon_notify_status(d, "READY=1\n", 0, "last good policy; reload rejected,");
                return;
        }
        daemon_log_diag(d, &diag);
        /* Loading needs privileges the daemon gave up at startup: the hook in force stays. */
        if (p->write_probe_hook != d->policy->write_probe_hook &&
            d->options->write_probe_hook == _WRITE_PROBE_HOOK_MAX)
                log_plain(
                    &d->log, LOG_NOTICE,
                    "%s:%u: write_probe_hook is now \"%s\": it takes effect at the next start (loading a "
                    "hook needs privileges the daemon gave up)",
                    d->options->config, p->write_probe_hook_line,
                    write_probe_hook_to_string(p->write_probe_hook));
        PolicyMode old_mode = d->policy->mode;

        r = daemon_install_policy(d, p);
        if (r < 0) {
                d->reloads_failed++;
                log_error_errno(&d->log, r, "cannot install the new policy; keeping the last good one");
                (void)sd_notify(0, "READY=1");
                return;
        }
        TAKE_PTR(p); /* the daemon's now */
        d->reloads_ok++;
        daemon_writers_reload_mode(d, old_mode);
        corrected = daemon_check_all(d, TRIGGER_RELOAD);
        log_event(&d->log, LOG_NOTICE, THPGUARD_MESSAGE_POLICY_RELOADED, f, ELEMENTSOF(f),
                  "policy reloaded from %s: %zu knobs, mode %s, %u corrected", d->options->config,
                  d->policy->n_knobs, policy_mode_to_string(d->policy->mode), corrected);
        daemon_notify_status(d, "READY=1\n", corrected, "reload");
}

static int on_reload_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        reload(userdata);
        return 0;
}

/* Schedules a reload `delay` from now, unless one is due sooner: a burst of triggers reloads once. */
void daemon_schedule_reload(Daemon *d, uint64_t delay) {
        uint64_t due = event_now(d->event, CLOCK_MONOTONIC) + delay, cur;
        int r, enabled = SD_EVENT_OFF;

        if (sd_event_source_get_enabled(d->reload_timer, &enabled) >= 0 && enabled != SD_EVENT_OFF &&
            sd_event_source_get_time(d->reload_timer, &cur) >= 0 && cur <= due)
                return;
        r = event_arm_timer(d->reload_timer, due);
        if (r < 0)
                log_error_errno(&d->log, r, "cannot arm the reload timer; exiting");
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        daemon_schedule_reload(userdata, 0);
        return 0;
}

static int on_config_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Daemon *d = userdata;

        if (file_watch_changed(d->config_watch))
                daemon_schedule_reload(d, RELOAD_DEBOUNCE_USEC);
        return 0;
}

/* A policy directory that cannot be watched is no failure: SIGHUP still reloads. */
static int setup_config_watch(Daemon *d) {
        int r;

        r = file_watch_new(d->options->config, &d->config_watch);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot create the inotify instance for the policy file");
        r = file_watch_start(d->config_watch);
        if (r < 0) {
                log_plain(&d->log, LOG_WARNING,
                          "cannot watch %s for policy changes (%s); reload with SIGHUP",
                          file_watch_dir(d->config_watch), strerror(-r));
                return 0;
        }
        r = sd_event_add_io(d->event, &d->config_source, file_watch_fd(d->config_watch), EPOLLIN,
                            on_config_inotify, d);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot add the policy file's watch to the event loop");
        (void)sd_event_source_set_description(d->config_source, "policy-inotify");
        return 0;
}

/* SIGHUP, the policy file's watch, and the timer that debounces both into one reload. */
int daemon_setup_reload(Daemon *d) {
        int r;

        r = event_add_signal(d->event, &d->sighup, SIGHUP, on_sighup, d);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot handle SIGHUP");
        (void)sd_event_source_set_description(d->sighup, "sighup");
        r = sd_event_add_time(d->event, &d->reload_timer, CLOCK_MONOTONIC, 0, USEC_PER_MSEC, on_reload_timer,
                              d);
        if (r >= 0)
                r = sd_event_source_set_enabled(d->reload_timer, SD_EVENT_OFF);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot create the reload timer");
        (void)sd_event_source_set_description(d->reload_timer, "reload-timer");
        return setup_config_watch(d);
}
