/* SPDX-License-Identifier: MIT */
/*
 * Who wrote a knob. A fanotify group marks every managed knob file; each
 * event names the writing process, which is looked up in /proc at once,
 * before it can exit, and kept as the knob's last writer. The records that
 * a drift produces (correction, failure, audit drift, fight) name that
 * writer. The correction itself never waits for any of this: the group is
 * read after the write, when the record is made, and otherwise by its own
 * event source at a lower priority than the knobs' inotify watch.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon-internal.h"
#include "thpguard/capability.h"
#include "thpguard/writer-events.h"

/* A writer in a loop makes an event per write; one lookup batch per wakeup is plenty. */
#define WRITER_RATELIMIT_INTERVAL_USEC USEC_PER_SEC
#define WRITER_RATELIMIT_BURST         50
/* Reads per drain: a flat-out writer must not hold the loop. */
#define WRITER_DRAIN_READS 4

static size_t knob_of_event(Daemon *d, int fd) {
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0)
                return SIZE_MAX;
        for (size_t i = 0; i < d->policy->n_knobs; i++)
                if (d->knobs[i].marked_opened && d->knobs[i].marked_dev == st.st_dev &&
                    d->knobs[i].marked_ino == st.st_ino)
                        return i;
        return SIZE_MAX;
}

static void note_overflow(Daemon *d) {
        if (d->writer_overflow_logged)
                return;
        d->writer_overflow_logged = true;
        log_plain(&d->log, LOG_WARNING,
                  "the fanotify queue overflowed: some writes were not attributed to their writer");
}

static void note_write(Daemon *d, size_t i, const Writer *w) {
        char label[WRITER_LABEL_MAX];

        d->knobs[i].writer = *w;
        d->knobs[i].writer_fresh = true;
        writer_label(w, label, sizeof(label));
        writer_tally_add(&d->knobs[i].writes, label);
        d->metrics_dirty = true;
}

/* Reads what the group has queued; never blocks. */
static void drain(Daemon *d) {
        char buf[4096] __attribute__((aligned(8)));
        Writer *cached = NULL;
        Writer lookup;

        if (d->writer_events_fd < 0)
                return;
        for (unsigned reads = 0; reads < WRITER_DRAIN_READS; reads++) {
                WriterEvent ev;
                size_t offset = 0;
                ssize_t n;
                int r;

                n = read(d->writer_events_fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return;
                while ((r = writer_events_next(buf, (size_t)n, &offset, &ev)) > 0) {
                        size_t i;

                        if (ev.overflow) {
                                note_overflow(d);
                                continue;
                        }
                        i = knob_of_event(d, ev.fd);
                        if (ev.fd >= 0)
                                close(ev.fd);
                        /* Our own corrections are writes too; they are never foreign. */
                        if (i == SIZE_MAX || ev.pid == d->self_pid)
                                continue;
                        /* One lookup per writer and batch: a loop's events name the same pid. */
                        if (!cached || cached->pid != ev.pid) {
                                if (writer_lookup(d->proc_root, ev.pid, &lookup) < 0)
                                        lookup = (Writer){ .pid = ev.pid, .exited = true };
                                cached = &lookup;
                        }
                        note_write(d, i, cached);
                }
        }
}

const Writer *daemon_writer_of(Daemon *d, size_t i) {
        drain(d);
        return d->knobs[i].writer_fresh ? &d->knobs[i].writer : NULL;
}

void daemon_writer_forget(Daemon *d, size_t i) {
        if (d->writer_events_fd < 0)
                return;
        /* A write of the policy's own value is no drift: its writer must not be blamed for a later one. */
        drain(d);
        d->knobs[i].writer_fresh = false;
}

void daemon_writers_mark(Daemon *d, size_t i) {
        TrackedKnob *rt = &d->knobs[i];
        struct stat st;
        int r;

        if (d->writer_events_fd < 0 || rt->file.fd < 0 || rt->marked_opened == rt->file.opened)
                return;
        rt->marked_opened = rt->file.opened;
        if (fstat(rt->file.fd, &st) < 0) {
                rt->marked_opened = 0;
                return;
        }
        r = writer_events_mark(d->writer_events_fd, rt->file.fd);
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
        r = sd_event_add_io(d->event, &d->writer_source, d->writer_events_fd, EPOLLIN, on_writer_events, d);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot add the writer events to the event loop");
        /* After the knobs' watch: a correction goes first, its writer is named just after. */
        r = sd_event_source_set_priority(d->writer_source, SD_EVENT_PRIORITY_NORMAL + 1);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot set the writer events' priority");
        r = event_ratelimit_init(&d->writer_ratelimit, d->writer_source, WRITER_RATELIMIT_INTERVAL_USEC,
                                 WRITER_RATELIMIT_BURST);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot rate-limit the writer events");
        return 0;
}

void daemon_writers_free(Daemon *d) {
        event_ratelimit_done(&d->writer_ratelimit);
        event_source_disable_unref(d->writer_source);
        if (d->writer_events_fd >= 0)
                close(d->writer_events_fd);
        d->writer_events_fd = -1;
}
