/* SPDX-License-Identifier: MIT */
/*
 * Who wrote a knob. A fanotify group marks every managed knob file; each
 * event names the writing process, which a thread of its own looks up in
 * /proc at once, before it can exit (writer-feed.h), while the loop
 * corrects. The records that a drift produces (correction, failure, audit
 * drift, fight) name the knob's last writer. The correction never waits
 * for any of this: the loop takes the lookups only when it writes the
 * record, after the correction's write.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "daemon-internal.h"
#include "thpguard/capability.h"
#include "thpguard/writer-events.h"

/* The writers' results wake the loop at most this often; a record takes them itself. */
#define WRITER_RATELIMIT_INTERVAL_USEC USEC_PER_SEC
#define WRITER_RATELIMIT_BURST         50
/*
 * How long a record waits for the lookups in flight. A lookup takes tens
 * of microseconds; one stuck on a process whose memory is locked must not
 * hold the loop.
 */
#define WRITER_SETTLE_USEC (20 * USEC_PER_MSEC)
/* How long a record of an inotify-seen drift waits for its writer's event to be queued at all. */
#define WRITER_LATE_EVENT_USEC (2 * USEC_PER_MSEC)

static size_t knob_of_file(Daemon *d, dev_t dev, ino_t ino) {
        for (size_t i = 0; i < d->policy->n_knobs; i++)
                if (d->knobs[i].marked_opened && d->knobs[i].marked_dev == dev &&
                    d->knobs[i].marked_ino == ino)
                        return i;
        return SIZE_MAX;
}

static void note_write(Daemon *d, size_t i, const Writer *w) {
        char label[WRITER_LABEL_MAX];

        d->knobs[i].writer = *w;
        d->knobs[i].writer_fresh = true;
        writer_label(w, label, sizeof(label));
        writer_tally_add(&d->knobs[i].writes, label);
        d->metrics_dirty = true;
}

/* Takes the lookups done so far; never blocks. */
static void drain(Daemon *d) {
        WriterSeen seen;

        while (writer_feed_pop(d->writer_feed, &seen)) {
                size_t i = knob_of_file(d, seen.dev, seen.ino);

                if (i != SIZE_MAX)
                        note_write(d, i, &seen.writer);
        }
        if (writer_feed_take_overflow(d->writer_feed) && !d->writer_overflow_logged) {
                d->writer_overflow_logged = true;
                log_plain(&d->log, LOG_WARNING,
                          "writes came faster than they could be looked up: some were not attributed "
                          "to their writer");
        }
}

/* Every lookup of the events queued so far, then taken. */
static void settle_and_drain(Daemon *d) {
        (void)writer_feed_settle(d->writer_feed, WRITER_SETTLE_USEC);
        drain(d);
}

const Writer *daemon_writer_of(Daemon *d, size_t i, Trigger t) {
        uint64_t pushed;

        if (!d->writer_feed)
                return NULL;
        pushed = writer_feed_pushed(d->writer_feed);
        settle_and_drain(d);
        /*
         * An inotify event means a write just happened, so its fanotify event
         * is due: wait for it a little. Other triggers may find drift that no
         * event will ever name (written before we started, or through another
         * sysfs): no waiting for them.
         */
        if (t == TRIGGER_INOTIFY && !d->knobs[i].writer_fresh &&
            writer_feed_wait_result(d->writer_feed, pushed, WRITER_LATE_EVENT_USEC))
                settle_and_drain(d);
        return d->knobs[i].writer_fresh ? &d->knobs[i].writer : NULL;
}

void daemon_writer_forget(Daemon *d, size_t i) {
        if (!d->writer_feed)
                return;
        /*
         * A write of the policy's own value is no drift: its writer must not
         * be blamed for a later one. Only what is looked up already is taken:
         * every check of a compliant knob comes here, and must not wait.
         */
        drain(d);
        d->knobs[i].writer_fresh = false;
}

void daemon_writers_mark(Daemon *d, size_t i) {
        TrackedKnob *rt = &d->knobs[i];
        struct stat st;
        int r;

        if (!d->writer_feed || rt->file.fd < 0 || rt->marked_opened == rt->file.opened)
                return;
        rt->marked_opened = rt->file.opened;
        if (fstat(rt->file.fd, &st) < 0) {
                rt->marked_opened = 0;
                return;
        }
        r = writer_events_mark(writer_feed_group_fd(d->writer_feed), rt->file.fd);
        if (r < 0) {
                LogField f[] = { { "THPGUARD_KNOB", rt->path } };

                log_event(&d->log, LOG_WARNING, NULL, f, ELEMENTSOF(f),
                          "cannot mark %s for writer attribution: %s; its writers will not be named",
                          rt->path, strerror(-r));
                return;
        }
        rt->marked_dev = st.st_dev;
        rt->marked_ino = st.st_ino;
}

static int on_writer_events(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Daemon *d = userdata;

        if (event_ratelimit_over(&d->writer_ratelimit))
                return 0;
        writer_feed_clear_ready(d->writer_feed);
        drain(d);
        daemon_metrics_update(d);
        return 0;
}

/*
 * At startup, while we still may: the group, then no capability at all,
 * whether the group could be had or not.
 */
int daemon_setup_writer_events(Daemon *d) {
        int r;

        d->self_pid = getpid();
        d->writer_events_fd = writer_events_open();
        if (d->writer_events_fd < 0)
                log_plain(&d->log, LOG_INFO,
                          "writer attribution is off: fanotify_init: %s%s; drifts are corrected as "
                          "always, without naming the writer",
                          strerror(-d->writer_events_fd),
                          d->writer_events_fd == -EPERM ? " (it needs CAP_SYS_ADMIN)" : "");
        r = capability_drop_all();
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot drop capabilities");
        return 0;
}

int daemon_setup_writer_source(Daemon *d) {
        int r;

        if (d->writer_events_fd < 0)
                return 0;
        /* After the capabilities are gone: the thread inherits the loop's. */
        r = writer_feed_new(d->writer_events_fd, d->proc_root, d->self_pid, &d->writer_feed);
        d->writer_events_fd = -1; /* the feed's, even on failure */
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot start the writer lookups' thread");
        r = sd_event_add_io(d->event, &d->writer_source, writer_feed_ready_fd(d->writer_feed), EPOLLIN,
                            on_writer_events, d);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot add the writer lookups to the event loop");
        /* After the knobs' watch: a correction goes first. */
        r = sd_event_source_set_priority(d->writer_source, SD_EVENT_PRIORITY_NORMAL + 1);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot set the writer lookups' priority");
        r = event_ratelimit_init(&d->writer_ratelimit, d->writer_source, WRITER_RATELIMIT_INTERVAL_USEC,
                                 WRITER_RATELIMIT_BURST);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot rate-limit the writer lookups");
        return 0;
}

void daemon_writers_free(Daemon *d) {
        event_ratelimit_done(&d->writer_ratelimit);
        event_source_disable_unref(d->writer_source);
        d->writer_feed = writer_feed_free(d->writer_feed);
        if (d->writer_events_fd >= 0)
                close(d->writer_events_fd);
        d->writer_events_fd = -1;
}
