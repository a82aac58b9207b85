/* SPDX-License-Identifier: MIT */
/*
 * The policy in force and how it changes: SIGHUP, a write to the policy
 * file (or a ConfigMap's ..data swap), each debounced into one reload that
 * either installs the new policy whole or keeps the last good one.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/inotify.h>
#include <systemd/sd-daemon.h>

#include "daemon-internal.h"
#include "thpguard/compliance.h"
#include "thpguard/message-ids.h"

/* Editors and the kubelet touch a policy several times per change; reload once. */
#define RELOAD_DEBOUNCE_USEC (100 * USEC_PER_MSEC)

int daemon_load_policy(Daemon *d, Diag *diag, Policy **ret) {
        Policy *p = NULL;
        int r;

        r = policy_load_as_daemon(d->options->config, d->options->audit, diag, &p);
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
        d->metrics_dirty = true;

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
        r = daemon_install_policy(d, p);
        if (r < 0) {
                d->reloads_failed++;
                log_error_errno(&d->log, r, "cannot install the new policy; keeping the last good one");
                (void)sd_notify(0, "READY=1");
                return;
        }
        TAKE_PTR(p); /* the daemon's now */
        d->reloads_ok++;
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
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        Daemon *d = userdata;
        bool relevant = false;

        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *)p;

                        p += sizeof(*ev) + ev->len;
                        /*
                         * Our file, or a ConfigMap's "..data" symlink swap: the kubelet renames
                         * ..data_tmp over ..data and never writes the file itself. Its other
                         * steps (new and removed ..<timestamp> dirs) would only reload twice.
                         */
                        if (ev->mask & IN_Q_OVERFLOW ||
                            (ev->len > 0 &&
                             (strcmp(ev->name, d->config_name) == 0 || strcmp(ev->name, "..data") == 0)))
                                relevant = true;
                }
        }
        if (relevant)
                daemon_schedule_reload(d, RELOAD_DEBOUNCE_USEC);
        return 0;
}

/* A policy directory that cannot be watched is no failure: SIGHUP still reloads. */
static int setup_config_watch(Daemon *d) {
        char dir[PATH_MAX];
        const char *slash = strrchr(d->options->config, '/');
        int r;

        d->config_name = slash ? slash + 1 : d->options->config;
        if (!slash)
                snprintf(dir, sizeof(dir), ".");
        else if (slash == d->options->config)
                snprintf(dir, sizeof(dir), "/");
        else
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - d->options->config), d->options->config);

        r = watches_new(&d->config_watch);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot create the inotify instance for the policy file");
        if (inotify_add_watch(d->config_watch->fd, dir,
                              IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB |
                                  IN_MOVED_FROM) < 0) {
                log_plain(&d->log, LOG_WARNING,
                          "cannot watch %s for policy changes (%s); reload with SIGHUP", dir,
                          strerror(errno));
                return 0;
        }
        r = sd_event_add_io(d->event, &d->config_source, d->config_watch->fd, EPOLLIN, on_config_inotify, d);
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
