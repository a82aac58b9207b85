/* SPDX-License-Identifier: MIT */
/*
 * The corrector: a thread that blocks in read() on the knob directories'
 * inotify watch (and, with the BPF write probe in force, in poll() on the
 * probe's ring beside it) and corrects a drifted knob the moment the event
 * is in, before the loop hears of it. The loop (daemon.c) then writes the records,
 * counts fights and looks writers up, from the outcomes kept here.
 *
 * Why a thread of its own and not the loop's inotify source: an isolated
 * drift finds the CPUs idle, and what costs then is every instruction and
 * cache line between the wakeup and the write. A thread asleep in read() is
 * woken by the inotify queue itself and runs a few hundred lines of hot
 * code to the pwrite(); the loop would first return from epoll_wait(), go
 * through sd-event's dispatch and read the queue in a second syscall. The
 * loop is told only after the correction, once whoever our write woke has
 * had the CPU (sched_yield()), so its wakeup never delays the fix or the
 * observer of it. bench/README.md has the figures.
 *
 * With the probe, a write through our own sysfs mount is announced by
 * inotify alone: its record asks for no wakeup (write-probe-record.h). On
 * the syscall-exit hook that record is made as the writer leaves write(2),
 * maybe after we have corrected; so after a drift whose record is not in,
 * the thread looks at the ring on a timer (1 ms, doubling) until it is,
 * for at most WRITE_PROBE_LATE_RECORD_USEC, and wakes the loop only when
 * it has something. Idle, it sleeps without a timeout. On the kprobe hook
 * the record comes first, made at the write's entry: for a write through
 * another sysfs mount, which raises no event, the thread reads the knob
 * again on the same timer until the write has landed.
 *
 * The thread and the loop share the knob state under d->lock (daemon-corrector.h), which the
 * loop holds whenever it dispatches (daemon_loop()); the thread holds it
 * only to decode a batch of events and correct, never while it sleeps.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "daemon-internal.h"

/*
 * The thread's wakeups: a writer looping flat out raises IN_MODIFY as fast
 * as it writes; past this rate the thread sleeps out the second and the
 * kernel coalesces the queued events.
 */
#define CORRECTOR_RATELIMIT_INTERVAL_USEC USEC_PER_SEC
#define CORRECTOR_RATELIMIT_BURST         5000
/*
 * While a fight is on, the knob in backoff is not even read, so each event
 * is pure overhead: a flat-out writer would wake us thousands of times a
 * second. Other knobs' drift may then wait up to the rest of the second.
 */
#define CORRECTOR_RATELIMIT_BURST_FIGHT 50
#include "priority.h"
#include "thpguard/fileio.h"
#include "thpguard/knob.h"
#include "thpguard/macro.h"

/* A file unlinked and recreated under a watched directory: closed, so the next read opens it by path. */
static void close_dir_handles(Daemon *d, const char *rel) {
        for (size_t i = 0; i < d->policy->n_knobs; i++) {
                const char *name;

                if (knob_in_dir(d->policy->knobs[i].path, rel, &name))
                        sysfs_handle_close(&d->knobs[i].file);
        }
}

/* Marks in named the knobs one event on a directory of ours concerns. */
_hot_ static void note_thp_event(Daemon *d, const WatchEvent *ev, bool *named) {
        if (ev->lost) {
                /* The directory went away (or was unmounted): the recheck re-adds it. */
                close_dir_handles(d, ev->dir);
                snprintf(d->corrector.locked.lost_dir, sizeof(d->corrector.locked.lost_dir), "%s", ev->dir);
                return;
        }
        for (size_t i = 0; i < d->policy->n_knobs; i++) {
                const char *name;

                if (!knob_in_dir(d->policy->knobs[i].path, ev->dir, &name) ||
                    (ev->name && strcmp(ev->name, name) != 0))
                        continue;
                /* A file that came or went is a new inode: read it by path again. */
                if (ev->replaced)
                        sysfs_handle_close(&d->knobs[i].file);
                named[i] = true;
        }
}

_hot_ void daemon_enforce_knob(Daemon *d, size_t i, EnforceOutcome *ret) {
        uint64_t began = daemon_writers_read_begins(d);

        enforce_knob(d->sysfs, &d->policy->knobs[i], &d->knobs[i].file, d->policy->mode, ret);
        daemon_writers_read_ends(d, i, began, &ret->before);
}

_hot_ bool daemon_correct_knob(Daemon *d, size_t i, EnforceOutcome *ret) {
        /* In a fight's backoff a trigger does not even read the knob. */
        if (fight_in_backoff(&d->knobs[i].fight)) {
                fight_note_suppressed(&d->knobs[i].fight);
                return false;
        }
        daemon_enforce_knob(d, i, ret);
        return true;
}

/*
 * Under the lock: knob i's writer's record is to be looked for. Whether
 * that is new: the thread's schedule of looks starts again (await_next()).
 */
static bool await_record(Daemon *d, size_t i) {
        if (!daemon_writers_by_record(d) || d->knobs[i].corrector.awaits_record)
                return false;
        d->knobs[i].corrector.awaits_record = true;
        d->corrector.locked.await_new = true;
        return true;
}

/*
 * One batch of events, under the lock: inotify's in buf, and the probe's
 * records when the probe is in force. Every knob they name is corrected
 * before anything else is done. Returns whether we wrote; *ret_news,
 * whether the loop has anything to hear of it; *ret_ring_busy, whether the
 * ring's next record is reserved and not yet submitted.
 */
_hot_ static bool correct_batch(Daemon *d, const char *buf, size_t n, bool *ret_news, bool *ret_ring_busy) {
        size_t n_knobs = d->policy->n_knobs;
        bool named[n_knobs + 1], wrote = false;
        RecordNews records[n_knobs + 1];
        size_t offset = 0;
        WatchEvent ev;

        memset(named, 0, sizeof(named));
        memset(records, 0, sizeof(records));
        /* Woken by the ring or not: a record that needed no wakeup may be in. */
        *ret_ring_busy = false;
        *ret_news = daemon_writers_take_records(d, records, ret_ring_busy) > 0 || n > 0;
        for (size_t i = 0; i < n_knobs; i++) {
                CorrectorKnob *ck = &d->knobs[i].corrector;

                if (records[i].record)
                        ck->awaits_record = false;
                /* Made before the write landed, and no event will tell when it has: looked at on a timer. */
                if (records[i].at_entry && !ck->entry_pending)
                        ck->entry_pending = d->corrector.locked.await_new = true;
        }
        while (watches_next(d->watches, buf, n, &offset, &ev) > 0) {
                d->corrector.locked.overflow |= ev.overflow;
                if (ev.dir)
                        note_thp_event(d, &ev, named);
        }
        /* After an overflow the loop checks every knob: the events lost may name any. */
        if (d->corrector.locked.overflow)
                return false;
        for (size_t i = 0; i < d->policy->n_knobs; i++) {
                TrackedKnob *rt = &d->knobs[i];

                if (!named[i] && !records[i].named && !rt->corrector.entry_pending)
                        continue;
                /* An outcome the loop has not taken yet is kept: the loop checks the knob again itself. */
                if (rt->corrector.has_outcome)
                        rt->corrector.recheck = true;
                else if (daemon_correct_knob(d, i, &rt->corrector.outcome)) {
                        bool entry = rt->corrector.entry_pending && !named[i];

                        /*
                         * Compliant after a kprobe's record through another mount:
                         * that write has not landed yet. Nothing for the loop (its
                         * compliant read would forget the writer); read again.
                         */
                        if (entry && rt->corrector.outcome.action == ENFORCE_NONE)
                                continue;
                        rt->corrector.entry_pending = false;
                        rt->corrector.has_outcome = true;
                        *ret_news = true;
                        rt->corrector.read_seq = daemon_writers_records_seen(d, i);
                        /*
                         * bpf: through another sysfs mount, which no inotify event
                         * tells of. On fexit the probe's record comes before
                         * inotify's event for a write through ours too: inotify's.
                         */
                        rt->corrector.trigger =
                            (records[i].other_mount || entry) && !named[i] ? TRIGGER_BPF : TRIGGER_INOTIFY;
                        wrote |= rt->corrector.outcome.written;
                        /* A drift whose writer's record is not in yet: looked for (await_next()). */
                        if (rt->corrector.outcome.action != ENFORCE_NONE && !daemon_writers_has_record(d, i))
                                (void)await_record(d, i);
                }
        }
        return wrote;
}

/*
 * Stopping the thread: a flag, and this signal to interrupt its read() or
 * sleep (no SA_RESTART). Not pthread_cancel(): that loads libgcc_s for
 * unwinding, which Landlock has already put out of reach.
 */
#define CORRECTOR_STOP_SIGNAL SIGUSR1

static void on_stop_signal(int sig) {
        (void)sig;
}

/* Sleeps until usec (CLOCK_MONOTONIC); false if told to stop meanwhile. */
static bool sleep_until(Daemon *d, uint64_t usec) {
        struct timespec ts = { .tv_sec = (time_t)(usec / USEC_PER_SEC),
                               .tv_nsec = (long)(usec % USEC_PER_SEC) * 1000 };

        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                if (atomic_load(&d->corrector.stop))
                        return false;
        return true;
}

/*
 * A record reserved and not yet submitted keeps the ring's fd ready (the
 * kernel's poll() counts what is reserved), yet nothing can be read before
 * it is in: the ring is left out of the poll() set this long, so that the
 * thread sleeps instead of spinning on it to its rate limit, while inotify
 * still wakes it for a drift. The program fills a record in microseconds;
 * one preempted on a preemptible kernel is looked at again each time.
 */
#define RING_BUSY_RETRY_MSEC 1

/*
 * Waits for the next events on the watch, fd, into buf: a blocking read(),
 * or poll() on the watch and the gate's open notices or the probe's ring
 * too, for at most timeout_ms (-1: no limit) where there is a ring. A
 * notice only wakes us: next to the opener, about to write. ring_busy: the
 * ring's next record is not in yet: the ring is not polled, and looked at
 * again after RING_BUSY_RETRY_MSEC at the latest. 0: the watch has nothing,
 * the ring has something or the time is up.
 */
_hot_ static ssize_t wait_for_events(Daemon *d, int fd, char *buf, size_t size, int timeout_ms,
                                     bool ring_busy) {
        int ring = daemon_writers_ring_fd(d);
        struct pollfd p[4] = { { .fd = fd, .events = POLLIN },
                               { .fd = daemon_writers_open_notice_fd(d), .events = POLLIN },
                               { .fd = ring_busy ? -1 : ring, .events = POLLIN },
                               { .fd = d->corrector.wake_fd, .events = POLLIN } };
        char notices[64];
        uint64_t wakes;
        int n;

        if (p[1].fd < 0 && ring < 0)
                return read(fd, buf, size);
        if (ring >= 0 && ring_busy && (timeout_ms < 0 || timeout_ms > RING_BUSY_RETRY_MSEC))
                timeout_ms = RING_BUSY_RETRY_MSEC;
        n = poll(p, ELEMENTSOF(p), ring >= 0 ? timeout_ms : -1);
        if (n < 0)
                return -1;
        if (p[1].revents & POLLIN)
                (void)!read(daemon_writers_open_notice_fd(d), notices, sizeof(notices));
        if (p[3].revents & POLLIN)
                (void)!read(d->corrector.wake_fd, &wakes, sizeof(wakes));
        if (!(p[0].revents & POLLIN)) {
                if (ring >= 0)
                        return 0;
                errno = EINTR; /* nothing to read yet */
                return -1;
        }
        return read(fd, buf, size);
}

void daemon_corrector_await(Daemon *d, size_t i) {
        uint64_t one = 1;

        /* Asleep without a timeout, the thread would not look before its next event. */
        if (await_record(d, i))
                (void)!write(d->corrector.wake_fd, &one, sizeof(one));
}

/* The thread's looks for records not in yet. */
typedef struct RecordAwait {
        uint64_t until; /* CLOCK_MONOTONIC: when to give up; 0: nothing awaited */
        uint64_t next;  /* when to look next */
        uint64_t delay; /* since the last look */
} RecordAwait;

/*
 * Under the lock, after a batch at now (every batch takes the ring, so it
 * is a look). A drift newly awaited starts the schedule anew; a batch at or
 * after the next look's time puts the one after twice as far; past until
 * every wait is given up (the loop writes those records without a writer).
 * Only the clock moves the schedule: a batch for anything else (our own
 * write's record, an event) neither brings a look forward nor pushes the
 * delay up, so the looks are about ten in a second whatever else comes.
 * A knob read again after a kprobe's record is given up the same way, to
 * the loop, which checks it: returns whether there is one for it.
 */
static bool await_next(Daemon *d, RecordAwait *a, uint64_t now) {
        bool any = false, give_up = a->until && now >= a->until && !d->corrector.locked.await_new,
             news = false;

        for (size_t i = 0; i < d->policy->n_knobs; i++) {
                TrackedKnob *rt = &d->knobs[i];

                if (give_up) {
                        rt->corrector.awaits_record = false;
                        if (rt->corrector.entry_pending)
                                rt->corrector.recheck = news = true;
                        rt->corrector.entry_pending = false;
                }
                any |= rt->corrector.awaits_record || rt->corrector.entry_pending;
        }
        if (!any)
                *a = (RecordAwait){};
        else if (d->corrector.locked.await_new || !a->until) {
                a->until = now + WRITE_PROBE_LATE_RECORD_USEC;
                a->delay = WRITE_PROBE_AWAIT_FIRST_MSEC * USEC_PER_MSEC;
                a->next = now + a->delay;
        } else if (now >= a->next) {
                a->delay *= 2;
                a->next = now + a->delay;
        }
        d->corrector.locked.await_new = false;
        return news;
}

/* poll()'s timeout for the next look: -1 when none is due, else the milliseconds to it, rounded up. */
static int await_timeout_msec(const RecordAwait *a) {
        uint64_t now;

        if (!a->until)
                return -1; /* and no clock read on the way to an idle sleep */
        now = now_usec(CLOCK_MONOTONIC);
        if (a->next <= now)
                return 0;
        return (int)((a->next - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC);
}

_hot_ static void *corrector_main(void *userdata) {
        char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
        Daemon *d = userdata;
        int fd = watches_fd(d->watches);
        RecordAwait await = {};
        bool ring_busy = false;
        sigset_t stop;

        /* For ps, top and the bench: the thread that corrects, apart from the loop. */
        (void)prctl(PR_SET_NAME, "thpguardd-corr");
        /*
         * Without the gate's notice, a drift's inotify event is the first we
         * hear of it, and only a short slice lets that wakeup preempt the
         * writer (priority.h). With the notice we are woken at the open and
         * run before the write comes; a short slice would then keep the CPU
         * through our sched_yield() below, and the reader our write woke
         * would wait behind the loop's wakeup (bench/README.md).
         */
        if (daemon_writers_open_notice_fd(d) < 0)
                (void)priority_short_slice();
        sigemptyset(&stop);
        sigaddset(&stop, CORRECTOR_STOP_SIGNAL);
        (void)pthread_sigmask(SIG_UNBLOCK, &stop, NULL);
        while (!atomic_load(&d->corrector.stop)) {
                uint64_t one = 1, resume, now;
                bool wrote = false, news = true, failed;
                ssize_t n;
                int error;

                n = wait_for_events(d, fd, buf, sizeof(buf), await_timeout_msec(&await), ring_busy);
                if (n < 0 && errno == EINTR)
                        continue;
                atomic_store(&d->corrector.busy, true);
                error = n < 0 ? -errno : -EIO;
                failed = n < 0 || (n == 0 && daemon_writers_ring_fd(d) < 0);
                now = now_usec(CLOCK_MONOTONIC);

                pthread_mutex_lock(&d->lock);
                if (failed)
                        d->corrector.locked.error = error;
                else
                        wrote = correct_batch(d, buf, (size_t)n, &news, &ring_busy);
                news |= await_next(d, &await, now);
                resume = ratelimit_count(&d->corrector.locked.ratelimit, now);
                atomic_store(&d->corrector.busy, false);
                pthread_mutex_unlock(&d->lock);

                /*
                 * Our write woke whoever waits on the knob, most likely onto
                 * this CPU: let them see the fix before the loop wakes to log it.
                 */
                if (wrote)
                        sched_yield();
                if (news || failed)
                        (void)!write(d->corrector.outcome_fd, &one, sizeof(one));
                if (failed)
                        break; /* the loop stops the daemon */
                /*
                 * A writer looping flat out raises IN_MODIFY as fast as it
                 * writes: past the limit, sleep out the window while the
                 * kernel coalesces what is queued. Drift is still seen.
                 */
                if (resume > 0 && !sleep_until(d, resume))
                        break;
        }
        return NULL;
}

int daemon_corrector_start(Daemon *d) {
        struct sigaction sa = { .sa_handler = on_stop_signal };
        int fd = watches_fd(d->watches), flags, r;

        /* The thread sleeps in read(): only it reads the watch from here on. */
        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
                return -errno;
        if (sigaction(CORRECTOR_STOP_SIGNAL, &sa, NULL) < 0)
                return -errno;
        /* Started again when the write source joins (daemon_writers_join()). */
        atomic_store(&d->corrector.stop, false);
        r = pthread_create(&d->corrector.thread, NULL, corrector_main, d);
        if (r > 0)
                return -r;
        d->corrector.running = true;
        return 0;
}

void daemon_corrector_stop(Daemon *d) {
        if (!d->corrector.running)
                return;
        atomic_store(&d->corrector.stop, true);
        /* Again until it is gone: a signal that came just before its read() would not wake it. */
        for (;;) {
                struct timespec deadline;

                (void)pthread_kill(d->corrector.thread, CORRECTOR_STOP_SIGNAL);
                clock_gettime(CLOCK_REALTIME, &deadline);
                deadline.tv_nsec += 10 * 1000 * 1000;
                if (deadline.tv_nsec >= 1000000000) {
                        deadline.tv_sec++;
                        deadline.tv_nsec -= 1000000000;
                }
                if (pthread_timedjoin_np(d->corrector.thread, NULL, &deadline) == 0)
                        break;
        }
        d->corrector.running = false;
}

bool daemon_corrector_take(Daemon *d, size_t i, EnforceOutcome *ret_outcome, Trigger *ret_trigger,
                           bool *ret_recheck) {
        TrackedKnob *rt = &d->knobs[i];
        bool has = rt->corrector.has_outcome;

        if (has) {
                *ret_outcome = rt->corrector.outcome;
                *ret_trigger = rt->corrector.trigger;
                daemon_writers_outcome_read(d, i, rt->corrector.read_seq);
        }
        *ret_recheck = rt->corrector.recheck;
        rt->corrector.has_outcome = rt->corrector.recheck = false;
        return has;
}

void daemon_corrector_take_news(Daemon *d, CorrectorNews *ret) {
        CorrectorLocked *l = &d->corrector.locked;

        ret->overflow = l->overflow;
        snprintf(ret->lost_dir, sizeof(ret->lost_dir), "%s", l->lost_dir);
        l->overflow = false;
        l->lost_dir[0] = '\0';
}

int daemon_corrector_error(const Daemon *d) {
        return d->corrector.locked.error;
}

bool daemon_corrector_busy(const Daemon *d) {
        return atomic_load(&d->corrector.busy);
}

void daemon_corrector_fight(Daemon *d, bool on) {
        d->corrector.locked.ratelimit.burst =
            on ? CORRECTOR_RATELIMIT_BURST_FIGHT : CORRECTOR_RATELIMIT_BURST;
}

void daemon_corrector_init(Corrector *c) {
        /* Not a nested designator: gcc 10 (the floor) warns of the fields it leaves out. */
        *c = (Corrector){ .outcome_fd = -EBADF, .wake_fd = -EBADF };
        c->locked.ratelimit = RATELIMIT_INIT(CORRECTOR_RATELIMIT_INTERVAL_USEC, CORRECTOR_RATELIMIT_BURST);
}

void corrector_knob_init(CorrectorKnob *k) {
        *k = (CorrectorKnob){};
}

int daemon_setup_corrector(Daemon *d, sd_event_io_handler_t on_outcomes) {
        Corrector *c = &d->corrector;
        int r;

        c->outcome_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (c->outcome_fd < 0)
                return log_error_errno(&d->log, -errno, "cannot create the corrector's eventfd");
        r = sd_event_add_io(d->event, &c->outcome_source, c->outcome_fd, EPOLLIN, on_outcomes, d);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot add the corrector's eventfd to the event loop");
        (void)sd_event_source_set_description(c->outcome_source, "knob-corrections");
        c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (c->wake_fd < 0)
                return log_error_errno(&d->log, -errno, "cannot create the corrector's wakeup eventfd");
        return 0;
}

void daemon_corrector_free(Daemon *d) {
        Corrector *c = &d->corrector;

        daemon_corrector_stop(d);
        c->outcome_source = event_source_disable_unref(c->outcome_source);
        c->outcome_fd = safe_close(c->outcome_fd);
        c->wake_fd = safe_close(c->wake_fd);
}
