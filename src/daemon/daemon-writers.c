/* SPDX-License-Identifier: MIT */
/*
 * Who wrote a knob, from one of two write sources (write-source.h). The
 * loop and the corrector thread ask the same questions of both
 * (daemon-writers.h) and never branch on which is in force; the state of
 * both, WriterAttribution and each knob's KnobAttribution, is this file's.
 *
 * The BPF write probe (write-probe.h) sees the writes its hook sees (on
 * fexit and kprobes every write to a knob, through any sysfs mount), and
 * names the writer from the kernel as it writes: the corrector thread
 * reads the ring, corrects, and keeps each knob's last record here for the
 * loop. Nobody is ever held. Where the daemon loads the source itself, it
 * joins after the policy is in force (daemon_writers_join()).
 *
 * Else two fanotify groups mark every managed knob file
 * (fanotify-groups.h): the gate (fanotify-gate.h), a process of its own, holds
 * each open until it has looked the opener up, and the write group names the
 * pid of every write. The loop reads the write group only when it writes a
 * record, after the correction, and finds the writer among the gate's
 * openers: nothing but the loop itself wakes on a write, and a one-shot
 * writer that is gone by then is still named. Without the gate (a kernel
 * without permission events, or a gate that had to be killed) the loop
 * looks the writer up itself, and a writer that is gone is "exited".
 *
 * Lock mode (mode = "lock"), whatever the source: a third fanotify group,
 * whose events name the opening thread, takes the open group's place, and
 * the gate judges each open of a knob by that thread (lock-verdict.h),
 * refusing one for writing. It needs CAP_SYS_PTRACE, which the daemon
 * keeps (permitted, not in effect) only until the gate is started.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/capability.h>

#include "daemon-internal.h"
#include "thpguard/capability.h"
#include "thpguard/fanotify-groups.h"
#include "thpguard/fileio.h"
#include "thpguard/message-ids.h"
#include "thpguard/number.h"

static size_t knob_of_file(Daemon *d, dev_t dev, ino_t ino) {
        for (size_t i = 0; i < d->policy->n_knobs; i++)
                if (d->knobs[i].attribution.marked_opened && d->knobs[i].attribution.marked_dev == dev &&
                    d->knobs[i].attribution.marked_ino == ino)
                        return i;
        return SIZE_MAX;
}

/* By inode alone: a write through another sysfs mount has another device, the same kernfs inode. */
_hot_ static size_t knob_of_inode(Daemon *d, uint64_t ino) {
        for (size_t i = 0; i < d->policy->n_knobs; i++)
                if (d->knobs[i].attribution.marked_opened && d->knobs[i].attribution.marked_ino == ino)
                        return i;
        return SIZE_MAX;
}

/*
 * Whether the probe's record is of a write through the sysfs superblock the
 * knob was opened on: the record has the kernel's own device number
 * (major << 20 | minor), stat() userspace's.
 */
_hot_ static bool same_superblock(const TrackedKnob *rt, uint32_t sb_dev) {
        return major(rt->attribution.marked_dev) == sb_dev >> 20 &&
               minor(rt->attribution.marked_dev) == (sb_dev & 0xfffff);
}

_hot_ unsigned daemon_writers_take_records(Daemon *d, RecordNews *news, bool *ret_busy) {
        struct write_probe_record r;
        unsigned taken = 0;
        int next;

        *ret_busy = false;
        if (!d->attribution.probe)
                return 0;
        while ((next = write_probe_next(d->attribution.probe, &r)) > 0) {
                const PolicyKnob *k;
                RecordVerdict verdict;
                size_t i;

                d->attribution.probe_lost += r.lost;
                /*
                 * Our own corrections: the corrector's, the loop's. The first
                 * tells us our pid as the probe numbers it, and from then on
                 * the probe makes no record of ours.
                 */
                if (write_probe_record_is(&r, d->attribution.self_pidns,
                                          (uint32_t)d->attribution.self_pid)) {
                        write_probe_skip_writer(d->attribution.probe, r.tgid);
                        continue;
                }
                i = knob_of_inode(d, r.ino);
                if (i == SIZE_MAX)
                        continue;
                taken++;
                news[i].named = true;
                news[i].other_mount |= !same_superblock(&d->knobs[i], r.sb_dev);
                /*
                 * A write the first read after it had taken effect found
                 * compliant (the policy's own value, a refused one) is no
                 * drift, and names no writer: on the syscall-exit hook its
                 * record can come after that read, and would be taken for the
                 * writer of the next drift. Judged by the kernel's clock
                 * against our reads (a read between the write's start and its
                 * end may have come before it took effect, so its end counts),
                 * never by the value the record carries, which the writer's
                 * memory may have changed. The knob is read again all the same.
                 */
                verdict = knob_reads_judge(&d->knobs[i].attribution.reads, write_probe_record_end(&r));
                if (verdict == RECORD_READ_COMPLIANT || verdict == RECORD_OLDER_THAN_READS)
                        continue;
                /*
                 * Two writes before one read: the later one set what the read
                 * found. The ring has them in the order they returned, which a
                 * writer preempted on its way out of write(2) changes.
                 */
                if (d->knobs[i].attribution.seq > 0 && r.ktime_ns < d->knobs[i].attribution.record.ktime_ns)
                        continue;
                /*
                 * The record says the policy's own value (the syscall-exit hook
                 * reads it from the writer's memory): an honest write of it can
                 * race a drift and be read with it. Kept aside, it names the
                 * drift only if no other record does within the late-record
                 * window (daemon_writer_late()): the value never hides a writer.
                 */
                k = &d->policy->knobs[i];
                if (write_probe_record_sets(&r, k->spec->type, k->desired)) {
                        if (!d->knobs[i].attribution.has_weak_record ||
                            r.ktime_ns >= d->knobs[i].attribution.weak_record.ktime_ns)
                                d->knobs[i].attribution.weak_record = r;
                        d->knobs[i].attribution.has_weak_record = true;
                        continue;
                }
                d->knobs[i].attribution.record = r;
                d->knobs[i].attribution.seq++;
                news[i].record = true;
                news[i].at_entry |=
                    (r.flags & WRITE_PROBE_RECORD_AT_ENTRY) && !same_superblock(&d->knobs[i], r.sb_dev);
        }
        *ret_busy = next == -EBUSY;
        return taken;
}

int daemon_writers_ring_fd(const Daemon *d) {
        return d->attribution.probe ? write_probe_fd(d->attribution.probe) : -1;
}

uint64_t daemon_writers_records_seen(const Daemon *d, size_t i) {
        return d->knobs[i].attribution.seq;
}

bool daemon_writers_has_record(const Daemon *d, size_t i) {
        return d->knobs[i].attribution.seq != d->knobs[i].attribution.taken_seq;
}

void daemon_writers_outcome_read(Daemon *d, size_t i, uint64_t seen) {
        d->knobs[i].attribution.read_seq = seen;
}

uint64_t daemon_writers_read_begins(const Daemon *d) {
        return d->attribution.probe ? now_nsec(CLOCK_MONOTONIC) : 0;
}

void daemon_writers_read_ends(Daemon *d, size_t i, uint64_t began, const KnobStatus *seen) {
        /* Which records' writes this read saw: those that began before it (knob_reads_judge()). */
        if (d->attribution.probe && (seen->state == KNOB_STATE_OK || seen->state == KNOB_STATE_DRIFT))
                knob_reads_add(&d->knobs[i].attribution.reads, began, seen->state == KNOB_STATE_DRIFT);
}

/* The line about records the probe's ring had no room for comes at most this often; the metric has each. */
#define PROBE_LOST_LOG_INTERVAL_USEC (60 * USEC_PER_SEC)

static void note_probe_lost(Daemon *d);

static int on_probe_lost_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        note_probe_lost(userdata);
        return 0;
}

/*
 * Records the ring had no room for, as the corrector counted them (under
 * the lock): the metric follows by itself (daemon-metrics.c), and one line says how many
 * since the last such line and in all, at most once per
 * PROBE_LOST_LOG_INTERVAL_USEC. One held back by that limit is written
 * when it is over, by a timer, whatever happens meanwhile.
 */
static void note_probe_lost(Daemon *d) {
        uint64_t now = now_usec(CLOCK_MONOTONIC),
                 due = d->attribution.probe_lost_logged_usec + PROBE_LOST_LOG_INTERVAL_USEC;
        char since[24], total[24];
        int r;

        if (d->attribution.probe_lost == d->attribution.probe_lost_logged)
                return;
        if (d->attribution.probe_lost_logged_usec > 0 && now < due) {
                if (!d->attribution.probe_lost_timer) {
                        r = sd_event_add_time(d->event, &d->attribution.probe_lost_timer, CLOCK_MONOTONIC,
                                              due, USEC_PER_SEC, on_probe_lost_timer, d);
                        if (r >= 0)
                                (void)sd_event_source_set_description(d->attribution.probe_lost_timer,
                                                                      "probe-lost-log");
                } else
                        r = event_arm_timer(d->attribution.probe_lost_timer, due);
                if (r >= 0)
                        return;
                /* Without the timer the line might never come: now, then. */
        }
        snprintf(since, sizeof(since), "%" PRIu64,
                 d->attribution.probe_lost - d->attribution.probe_lost_logged);
        snprintf(total, sizeof(total), "%" PRIu64, d->attribution.probe_lost);
        LogField f[] = { { "THPGUARD_PROBE_LOST", since }, { "THPGUARD_PROBE_LOST_TOTAL", total } };

        log_event(&d->log, LOG_WARNING, NULL, f, ELEMENTSOF(f),
                  "writes came faster than the BPF write probe's ring is read: %s%s not attributed to their "
                  "writer (%s since thpguardd started); their drifts are still corrected, one through "
                  "another sysfs mount by the next recheck at the latest",
                  since, d->attribution.probe_lost_logged ? " more were" : " were", total);
        d->attribution.probe_lost_logged = d->attribution.probe_lost;
        d->attribution.probe_lost_logged_usec = now;
}

/* The probe's record of knob i's last foreign write, as the knob's writer (under the lock). */
static void take_probe_record(Daemon *d, size_t i) {
        TrackedKnob *rt = &d->knobs[i];
        char label[WRITER_LABEL_MAX];

        note_probe_lost(d);
        if (rt->attribution.taken_seq == rt->attribution.seq)
                return;
        rt->attribution.taken_seq = rt->attribution.seq;
        write_probe_writer(d->attribution.probe, &rt->attribution.record, &rt->attribution.writer);
        rt->attribution.writer_fresh = true;
        rt->attribution.writer_seen_usec = now_usec(CLOCK_MONOTONIC);
        writer_label(&rt->attribution.writer, label, sizeof(label));
        writer_tally_add(&rt->attribution.writes, label);
}

/*
 * The same process as the knob's last writer, which this loop looked up
 * itself: not looked up again while it lives. (A writer the gate named is
 * found again in the gate's memory, which costs no system call.)
 */
static bool same_writer(const TrackedKnob *rt, pid_t pid) {
        return rt->attribution.writer.pid == pid && !rt->attribution.writer.exited &&
               rt->attribution.writer_dirfd >= 0 && writer_pid_alive(rt->attribution.writer_dirfd);
}

/* The writer its pidfd stands for has exited. */
static bool pidfd_exited(int pidfd) {
        struct pollfd p = { .fd = pidfd, .events = POLLIN };

        return poll(&p, 1, 0) > 0;
}

static void look_up(Daemon *d, TrackedKnob *rt, const FanotifyEvent *ev) {
        _cleanup_close_ int rootfd = -EBADF;
        pid_t pid = ev->pid;

        safe_close(rt->attribution.writer_dirfd);
        rt->attribution.writer_dirfd = -1;
        /* The gate's answer was read while the writer waited in open(): it is the writer's. */
        if (d->attribution.gate && fanotify_gate_find(d->attribution.gate, pid, &rt->attribution.writer))
                return;
        rt->attribution.writer = (Writer){ .pid = pid, .exited = pid > 0 };
        /* Gone when the event was read: /proc/PID may be another process's by now. */
        if (ev->pid_gone || pid <= 0)
                return;
        rootfd = open(d->proc_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return;
        rt->attribution.writer_dirfd = writer_open_pid(rootfd, pid);
        if (rt->attribution.writer_dirfd >= 0)
                (void)writer_read_identity(rt->attribution.writer_dirfd, pid, &rt->attribution.writer);
        /* What was read is the writer's only if the writer still lived after the reads. */
        if (rt->attribution.writer_dirfd >= 0 && ev->pidfd >= 0 && pidfd_exited(ev->pidfd)) {
                close(rt->attribution.writer_dirfd);
                rt->attribution.writer_dirfd = -1;
                rt->attribution.writer = (Writer){ .pid = pid, .exited = true };
        }
}

static void note_write(Daemon *d, size_t i, const FanotifyEvent *ev) {
        TrackedKnob *rt = &d->knobs[i];
        char label[WRITER_LABEL_MAX];

        if (!same_writer(rt, ev->pid))
                look_up(d, rt, ev);
        rt->attribution.writer_fresh = true;
        rt->attribution.writer_seen_usec = now_usec(CLOCK_MONOTONIC);
        writer_label(&rt->attribution.writer, label, sizeof(label));
        writer_tally_add(&rt->attribution.writes, label);
}

/* Takes every write queued so far; never blocks. */
static void drain(Daemon *d) {
        char buf[4096] __attribute__((aligned(8)));
        ssize_t n;

        while ((n = read(d->attribution.write_fd, buf, sizeof(buf))) > 0) {
                size_t offset = 0;
                FanotifyEvent ev;

                while (fanotify_groups_next(buf, (size_t)n, &offset, &ev) > 0) {
                        struct stat st;
                        size_t i = SIZE_MAX;

                        if (ev.overflow) {
                                if (!d->attribution.overflow_logged)
                                        log_plain(&d->log, LOG_WARNING,
                                                  "writes came faster than they could be read: some were "
                                                  "not attributed to their writer");
                                d->attribution.overflow_logged = true;
                                continue;
                        }
                        if (ev.pid != d->attribution.self_pid && fstat(ev.fd, &st) == 0)
                                i = knob_of_file(d, st.st_dev, st.st_ino);
                        close(ev.fd);
                        if (i != SIZE_MAX)
                                note_write(d, i, &ev);
                        safe_close(ev.pidfd);
                }
        }
}

bool daemon_writers_on(const Daemon *d) {
        return d->attribution.probe || d->attribution.write_fd >= 0;
}

bool daemon_writers_by_record(const Daemon *d) {
        return d->attribution.probe != NULL;
}

uint64_t daemon_writers_late_usec(const Daemon *d) {
        return d->attribution.probe ? WRITE_PROBE_LATE_RECORD_USEC : WRITER_LATE_EVENT_USEC;
}

int daemon_writers_late_event_fd(const Daemon *d) {
        /* The probe's records come through the corrector thread, which wakes the loop itself. */
        return d->attribution.probe ? -1 : d->attribution.write_fd;
}

int daemon_writers_open_notice_fd(const Daemon *d) {
        return d->attribution.open_notice_fd;
}

pid_t daemon_writers_gate_pid(const Daemon *d) {
        return d->attribution.gate ? fanotify_gate_pid(d->attribution.gate) : 0;
}

const WriterTallies *daemon_writers_tallies(const Daemon *d, size_t i) {
        return daemon_writers_on(d) ? &d->knobs[i].attribution.writes : NULL;
}

bool daemon_writers_loading(const Daemon *d) {
        return d->attribution.loader != NULL;
}

bool daemon_writers_answered(const Daemon *d) {
        return d->attribution.loader_answered;
}

void daemon_writers_init(WriterAttribution *a) {
        *a = (WriterAttribution){ .write_fd = -EBADF,
                                  .gate_fd = -EBADF,
                                  .open_notice_fd = -EBADF,
                                  .open_notice_write_fd = -EBADF,
                                  .refusal_fd = -EBADF,
                                  .refusal_write_fd = -EBADF };
        write_source_fds_init(&a->stored);
}

void knob_attribution_init(KnobAttribution *a) {
        *a = (KnobAttribution){ .writer_dirfd = -EBADF };
}

void knob_attribution_done(KnobAttribution *a) {
        a->writer_dirfd = safe_close(a->writer_dirfd);
}

void knob_attribution_carry_over(KnobAttribution *a, const KnobAttribution *old) {
        a->writes = old->writes;
        a->refused = old->refused;
}

const WriterTallies *daemon_writers_refused(const Daemon *d, size_t i) {
        return d->policy->mode == POLICY_MODE_LOCK ? &d->knobs[i].attribution.refused : NULL;
}

const Writer *daemon_writer_of(Daemon *d, size_t i) {
        if (d->attribution.probe)
                take_probe_record(d, i);
        else if (d->attribution.write_fd >= 0)
                drain(d);
        else
                return NULL;
        return d->knobs[i].attribution.writer_fresh ? &d->knobs[i].attribution.writer : NULL;
}

/*
 * A shell's `echo always > enabled` truncates the file in open() and then
 * writes it: two modify events, which the kernel merges into one while
 * neither is read. When the loop woke on the truncation, read the knob
 * compliant and took that event, the write that drifts it brings none of
 * its own. So a record whose writer's event never came names the writer of
 * the event taken just before, if that was no longer ago than this.
 */
#define WRITER_JUST_BEFORE_USEC (WRITER_LATE_EVENT_USEC + 30 * USEC_PER_MSEC)

/*
 * The probe's record kept aside because it said the policy's own value
 * (daemon_writers_take_records()), if the first read after its write found the knob
 * drifted: the writer of a drift no other record named.
 */
static const Writer *weak_writer(Daemon *d, size_t i) {
        TrackedKnob *rt = &d->knobs[i];

        if (!d->attribution.probe || !rt->attribution.has_weak_record ||
            knob_reads_judge(&rt->attribution.reads, write_probe_record_end(&rt->attribution.weak_record)) !=
                RECORD_READ_DRIFTED)
                return NULL;
        rt->attribution.has_weak_record = false;
        write_probe_writer(d->attribution.probe, &rt->attribution.weak_record, &rt->attribution.writer);
        rt->attribution.writer_seen_usec = now_usec(CLOCK_MONOTONIC);
        return &rt->attribution.writer;
}

const Writer *daemon_writer_late(Daemon *d, size_t i) {
        const Writer *w = weak_writer(d, i);

        return w ? w : daemon_writer_just_before(d, i);
}

const Writer *daemon_writer_just_before(Daemon *d, size_t i) {
        const TrackedKnob *rt = &d->knobs[i];

        if (!daemon_writers_on(d) || rt->attribution.writer.pid <= 0 ||
            now_usec(CLOCK_MONOTONIC) - rt->attribution.writer_seen_usec > WRITER_JUST_BEFORE_USEC)
                return NULL;
        return &rt->attribution.writer;
}

void daemon_writer_forget(Daemon *d, size_t i) {
        if (!daemon_writers_on(d))
                return;
        /* A write of the policy's own value is no drift: its writer must not be blamed for a later one. */
        if (d->attribution.probe) {
                /* A record that came after the compliant read is of a write it did not see: kept. */
                if (d->knobs[i].attribution.seq <= d->knobs[i].attribution.read_seq)
                        take_probe_record(d, i);
        } else
                drain(d);
        d->knobs[i].attribution.writer_fresh = false;
}

void daemon_writer_used(Daemon *d, size_t i) {
        d->knobs[i].attribution.writer_fresh = false;
        /* The drift it waited beside is named: it names no other. */
        d->knobs[i].attribution.has_weak_record = false;
}

void daemon_writers_mark(Daemon *d, size_t i) {
        TrackedKnob *rt = &d->knobs[i];
        struct stat st;
        int r;

        if ((!daemon_writers_on(d) && !d->attribution.gate) || rt->file.fd < 0 ||
            rt->attribution.marked_opened == rt->file.opened)
                return;
        rt->attribution.marked_opened = rt->file.opened;
        if (fstat(rt->file.fd, &st) < 0) {
                rt->attribution.marked_opened = 0;
                return;
        }
        /* The probe's filter holds every knob already: its records are matched by inode. */
        r = d->attribution.source == WRITE_SOURCE_FANOTIFY
                ? fanotify_groups_mark(d->attribution.write_fd, rt->file.fd)
                : 0;
        if (r >= 0 && d->attribution.gate)
                r = fanotify_gate_mark(d->attribution.gate, rt->file.fd);
        if (r < 0) {
                LogField f[] = { { "THPGUARD_KNOB", rt->path } };

                log_event(&d->log, LOG_WARNING, NULL, f, ELEMENTSOF(f),
                          "cannot mark %s for writer attribution: %s; its writers will not be named",
                          rt->path, strerror(-r));
                return;
        }
        rt->attribution.marked_dev = st.st_dev;
        rt->attribution.marked_ino = st.st_ino;
        /* Our watch announces every write through this superblock: its records need not wake us. */
        if (d->attribution.probe)
                write_probe_quiet_superblock(d->attribution.probe, st.st_dev);
}

/* What stops a lock: said in the startup line. */
static void lock_impossible(Daemon *d, const char *why) {
        LogField f[] = { { "THPGUARD_LOCK", "none" } };

        snprintf(d->attribution.lock_why, sizeof(d->attribution.lock_why), "%s", why);
        d->attribution.lock = LOCK_MECHANISM_NONE;
        log_event(&d->log, LOG_WARNING, THPGUARD_MESSAGE_LOCK, f, ELEMENTSOF(f),
                  "lock: none (%s): knobs are enforced as in mode enforce; a foreign write is corrected, "
                  "not refused",
                  why);
}

/* The gate is gone: its group closed, nobody is held; writers are looked up after their write from now on.
 */
static void gate_lost(Daemon *d, FanotifyGateHealth h) {
        FanotifyGateCounters c;

        fanotify_gate_counters(d->attribution.gate, &c);
        log_plain(&d->log, LOG_WARNING,
                  "the writer gate (pid %d) %s after %" PRIu64
                  " opens; writers are now looked up after their write, and one that exits at once is "
                  "named by pid only",
                  (int)fanotify_gate_pid(d->attribution.gate),
                  h == FANOTIFY_GATE_STALLED ? "stopped answering (stopped, traced or stuck) and was killed"
                                             : "exited",
                  c.opens);
        d->attribution.gate_counters = c;
        d->attribution.gate_lost = true;
        if (d->attribution.lock == LOCK_MECHANISM_FANOTIFY)
                lock_impossible(d, "the writer gate, which held the lock, is gone");
        /* Out of the loop's epoll set before the group is closed: the gate's own copy may outlive ours. */
        d->attribution.gate_exit_source = event_source_disable_unref(d->attribution.gate_exit_source);
        d->attribution.gate_queue_source = event_source_disable_unref(d->attribution.gate_queue_source);
        d->attribution.gate_timer = event_source_disable_unref(d->attribution.gate_timer);
        fanotify_gate_stop(d->attribution.gate);
        d->attribution.gate_unreaped = fanotify_gate_unreaped(d->attribution.gate);
        d->attribution.gate = fanotify_gate_free(d->attribution.gate);
        /* The killed gate's exit is a SIGCHLD to come: kept for that, then no more. */
        if (!d->attribution.gate_unreaped)
                d->attribution.gate_child_source =
                    event_source_disable_unref(d->attribution.gate_child_source);
}

static int on_gate_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Daemon *d = userdata;

        gate_lost(d, FANOTIFY_GATE_EXITED);
        return 0;
}

static int on_gate_child(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Daemon *d = userdata;
        FanotifyGateHealth h;

        if (!d->attribution.gate) {
                if (d->attribution.gate_unreaped && fanotify_gate_reap(d->attribution.gate_unreaped) == 0) {
                        d->attribution.gate_unreaped = 0;
                        d->attribution.gate_child_source =
                            event_source_disable_unref(d->attribution.gate_child_source);
                }
                return 0;
        }
        h = fanotify_gate_child_changed(d->attribution.gate);
        if (h != FANOTIFY_GATE_RUNNING)
                gate_lost(d, h);
        return 0;
}

/* A gate nobody checks could hold every opener for good: we exit, and it dies with us. */
static void gate_watch_failed(Daemon *d, int r) {
        (void)sd_event_exit(d->event, EXIT_FAILURE);
        log_error_errno(&d->log, r, "cannot watch the writer gate; exiting");
}

/* Opens wait for the gate: not watched again until they have had FANOTIFY_GATE_STALL_USEC. */
static int on_gate_queue(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Daemon *d = userdata;
        int r;

        r = sd_event_source_set_enabled(s, SD_EVENT_OFF);
        if (r >= 0)
                r = event_arm_timer(
                    d->attribution.gate_timer,
                    fanotify_gate_hold_begin(d->attribution.gate, event_now(d->event, CLOCK_MONOTONIC)));
        if (r < 0)
                gate_watch_failed(d, r);
        return 0;
}

static int on_gate_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;
        FanotifyGateHealth h;
        uint64_t next = 0;
        int r;

        h = fanotify_gate_check(d->attribution.gate, usec, &next);
        if (h != FANOTIFY_GATE_RUNNING) {
                gate_lost(d, h);
                return 0;
        }
        /* Nothing waits any more: the next open, and not a clock, brings the next check. */
        if (next == 0)
                r = sd_event_source_set_enabled(d->attribution.gate_queue_source, SD_EVENT_ON);
        else
                r = event_arm_timer(d->attribution.gate_timer, next);
        if (r < 0)
                gate_watch_failed(d, r);
        return 0;
}

void daemon_writers_metrics(const Daemon *d, WriterAttributionMetrics *ret) {
        const WriterAttribution *a = &d->attribution;

        *ret = (WriterAttributionMetrics){ .source = a->source,
                                           .hook = a->hook,
                                           .probe = a->probe != NULL,
                                           .probe_lost = a->probe_lost,
                                           .gate_up = a->gate != NULL,
                                           .gate_ran = a->gate || a->gate_lost,
                                           .gate = a->gate_counters,
                                           .lock_asked = d->policy && d->policy->mode == POLICY_MODE_LOCK,
                                           .lock = a->lock };
        if (a->gate)
                fanotify_gate_counters(a->gate, &ret->gate);
}

/* The one line that says which source is in force, and what it sees; after how long, when it joined late. */
static void log_write_source(Daemon *d, const WriteSourceFds *g, const char *when) {
        LogField f[] = { { "THPGUARD_WRITE_SOURCE", write_source_to_string(d->attribution.source) },
                         { "THPGUARD_WRITE_PROBE_HOOK", d->attribution.hook } };

        if (d->attribution.source == WRITE_SOURCE_BPF) {
                /* The syscall tracepoints see system calls, not the kernfs write: io_uring and the rest pass
                 * them by. */
                bool syscalls = strcmp(d->attribution.hook, "syscall-exit") == 0;

                log_event(
                    &d->log, LOG_INFO, THPGUARD_MESSAGE_WRITE_SOURCE, f, ELEMENTSOF(f),
                    "write source: bpf (%s)%s: %s, through any sysfs mount of any network namespace, is "
                    "seen and its writer named",
                    d->attribution.hook[0] ? d->attribution.hook : "hook unknown", when,
                    syscalls ? "every write(), pwrite() and writev() call on a knob (not io_uring, "
                               "splice, sendfile, copy_file_range or AIO)"
                             : "every write to a knob");
                /* Asked for by name only: what it costs everyone else is said where it starts. */
                if (syscalls)
                        log_plain(
                            &d->log, LOG_WARNING,
                            "the BPF write probe is on the syscall-exit hook, which runs on every system "
                            "call of every process of this node: measured, " WRITE_PROBE_SYSCALL_EXIT_COST
                            " (bench/README.md); write_probe_hook = \"auto\" takes fexit or a kprobe, "
                            "which run for kernfs writes alone");
                return;
        }
        if (d->attribution.source == WRITE_SOURCE_FANOTIFY)
                log_event(
                    &d->log, LOG_INFO, THPGUARD_MESSAGE_WRITE_SOURCE, f, 1,
                    "write source: fanotify%s (no BPF write probe: %s): writes through this sysfs mount "
                    "are seen and named; one through another mount (a pod's own /sys) waits for the "
                    "recheck",
                    when, g->probe_why[0] ? g->probe_why : strerror(-g->probe_error));
        else
                log_event(&d->log, LOG_INFO, THPGUARD_MESSAGE_WRITE_SOURCE, f, 1,
                          "write source: none%s (no BPF write probe: %s; fanotify_init: %s%s): drifts are "
                          "corrected as always; writer attribution is off",
                          when, g->probe_why[0] ? g->probe_why : strerror(-g->probe_error),
                          strerror(-g->write_fd), g->write_fd == -EPERM ? ", it needs CAP_SYS_ADMIN" : "");
}

/* Our PID namespace: a write the probe records with our pid in it is our own. */
static uint32_t own_pid_namespace(void) {
        struct stat st;

        return stat("/proc/self/ns/pid", &st) == 0 ? (uint32_t)st.st_ino : 0;
}

/* What the options and the policy ask for: --write-probe-hook wins over write_probe_hook. */
static WriteSourceWant wanted(const Daemon *d) {
        return (WriteSourceWant){ .source = d->options->write_source,
                                  .hook = d->options->write_probe_hook < _WRITE_PROBE_HOOK_MAX
                                              ? d->options->write_probe_hook
                                              : d->policy->write_probe_hook,
                                  .lock = d->policy->mode == POLICY_MODE_LOCK };
}

void daemon_writers_begin(Daemon *d) {
        int r;

        d->attribution.self_pid = getpid();
        d->attribution.self_pidns = own_pid_namespace();
        r = write_source_fds_take_stored(&d->attribution.stored);
        if (r > 0) {
                d->attribution.have_stored = true;
                return;
        }
        /* --lock is known now; the policy's mode only once it is read: without a loader, no lock then. */
        if (d->options->write_source == WRITE_SOURCE_NONE && d->options->mode != POLICY_MODE_LOCK)
                return;
        d->attribution.loader_started_usec = now_usec(CLOCK_MONOTONIC);
        r = write_source_loader_start(d->sysfs->thp_dir, &d->attribution.loader);
        if (r < 0) {
                d->attribution.stored.probe_error = d->attribution.stored.write_fd =
                    d->attribution.stored.open_fd = r;
                snprintf(d->attribution.stored.probe_why, sizeof(d->attribution.stored.probe_why),
                         "cannot start the loading process: %s", strerror(-r));
        }
}

/*
 * Lock mode: the lock group becomes the open group, for a locking gate,
 * where the gate will be able to judge (CAP_SYS_PTRACE); else it is closed
 * and the lock is none. Outside lock mode, or once decided against,
 * CAP_SYS_PTRACE goes.
 */
static void lock_choose(Daemon *d, WriteSourceFds *g) {
        char why[200];

        if (d->policy->mode == POLICY_MODE_LOCK && g->lock_fd >= 0 && capability_permitted(CAP_SYS_PTRACE)) {
                safe_close(g->open_fd);
                g->open_fd = g->lock_fd;
                g->lock_fd = -ENOENT;
                d->attribution.lock_gate = true;
                return;
        }
        if (d->policy->mode == POLICY_MODE_LOCK) {
                if (g->lock_fd >= 0)
                        snprintf(why, sizeof(why),
                                 "its gate needs CAP_SYS_PTRACE to read an opener's system call, and "
                                 "thpguardd was not given it");
                else if (g->lock_fd == -ENOENT)
                        snprintf(why, sizeof(why), "no fanotify lock group was opened%s",
                                 d->options->write_source == WRITE_SOURCE_NONE
                                     ? " (--write-source=none: give --lock, which is known before the "
                                       "policy is read)"
                                     : " (thpguard-write-source logged why)");
                else
                        snprintf(why, sizeof(why), "no fanotify lock group: %s%s", strerror(-g->lock_fd),
                                 g->lock_fd == -EINVAL  ? " (the kernel has no permission events or no "
                                                          "FAN_REPORT_TID, Linux 4.20)"
                                 : g->lock_fd == -EPERM ? " (fanotify_init() needs CAP_SYS_ADMIN)"
                                                        : "");
                lock_impossible(d, why);
        }
        safe_close(g->lock_fd);
        g->lock_fd = -ENOENT;
        (void)capability_drop_all();
}

/* g made the daemon's: the probe mapped, or the groups kept; the startup line says which. */
static void install(Daemon *d, WriteSourceFds *g, const char *when) {
        lock_choose(d, g);
        if (g->probe_error == 0) {
                WriteProbeFds fds = g->probe;
                int r;

                snprintf(d->attribution.hook, sizeof(d->attribution.hook), "%s",
                         write_probe_hook_to_string(g->probe_hook));
                /* write_probe_new() takes the fds, failing or not. */
                g->probe.link_fd = g->probe.enter_link_fd = g->probe.ring_fd = g->probe.config_fd = -ENOENT;
                r = write_probe_new(&fds, &d->attribution.probe);
                if (r < 0) {
                        g->probe_error = r;
                        snprintf(g->probe_why, sizeof(g->probe_why), "cannot map its ring: %s",
                                 strerror(-r));
                        d->attribution.hook[0] = '\0';
                }
        }
        d->attribution.write_fd = g->write_fd;
        d->attribution.gate_fd = g->open_fd;
        g->write_fd = g->open_fd = -ENOENT;
        d->attribution.source = d->attribution.probe           ? WRITE_SOURCE_BPF
                                : d->attribution.write_fd >= 0 ? WRITE_SOURCE_FANOTIFY
                                                               : WRITE_SOURCE_NONE;
        log_write_source(d, g, when);
        write_source_fds_close(g);
        if (d->attribution.source != WRITE_SOURCE_FANOTIFY)
                return;
        if (d->attribution.gate_fd == -ENOENT) /* the store gave the write group alone */
                log_plain(
                    &d->log, LOG_INFO,
                    "no fanotify open group was passed in (thpguard-write-source said why): writers are "
                    "looked up after their write, and one that exits at once is named by pid only");
        else if (d->attribution.gate_fd < 0)
                log_plain(&d->log, LOG_INFO,
                          "the kernel has no fanotify permission events (%s): writers are looked up after "
                          "their write, and one that exits at once is named by pid only",
                          strerror(-d->attribution.gate_fd));
}

/* How long the loader may take: a probe loads in well under a second. */
#define LOADER_TIMEOUT_USEC (30 * USEC_PER_SEC)

static int on_loader_answer(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Daemon *d = userdata;

        (void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
        d->attribution.loader_answered = true;
        return 0;
}

static int on_loader_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;

        d->attribution.loader_answered = true;
        return 0;
}

int daemon_writers_start(Daemon *d) {
        WriteSourceWant want = wanted(d);
        char why[512];
        int r;

        /* Kept for a locking gate only: before the corrector thread, which would inherit it. */
        if (!want.lock)
                (void)capability_drop_all();
        if (d->attribution.have_stored) {
                if (want.source == WRITE_SOURCE_NONE) {
                        write_source_fds_close(&d->attribution.stored);
                        snprintf(d->attribution.stored.probe_why, sizeof(d->attribution.stored.probe_why),
                                 "--write-source=none");
                        d->attribution.stored.write_fd = -ENOENT;
                } else if (write_source_fds_match(&d->attribution.stored, &want, why, sizeof(why)) < 0) {
                        log_plain(
                            &d->log, LOG_ERR,
                            "not starting: %s; give thpguard-write-source (the unit's ExecStartPre=) the "
                            "same --write-source and --write-probe-hook, or neither",
                            why);
                        return -EMEDIUMTYPE;
                }
        }
        if (!d->attribution.loader) {
                install(d, &d->attribution.stored, "");
                d->attribution.have_stored = false;
                return 0;
        }
        r = write_source_loader_request(d->attribution.loader, &want);
        if (r >= 0)
                r = sd_event_add_io(d->event, &d->attribution.loader_source,
                                    write_source_loader_fd(d->attribution.loader), EPOLLIN, on_loader_answer,
                                    d);
        if (r >= 0)
                r = event_add_time_relative(d->event, &d->attribution.loader_timer, CLOCK_MONOTONIC,
                                            LOADER_TIMEOUT_USEC, USEC_PER_SEC, on_loader_timeout, d);
        if (r < 0) {
                /* Not fatal: enforcement needs none of it. */
                d->attribution.loader = write_source_loader_free(d->attribution.loader);
                d->attribution.stored.probe_error = d->attribution.stored.write_fd =
                    d->attribution.stored.open_fd = r;
                snprintf(d->attribution.stored.probe_why, sizeof(d->attribution.stored.probe_why),
                         "cannot ask the loading process: %s", strerror(-r));
                install(d, &d->attribution.stored, "");
                return 0;
        }
        (void)sd_event_source_set_description(d->attribution.loader_source, "write-source-loader");
        (void)sd_event_source_set_description(d->attribution.loader_timer, "write-source-loader-timeout");
        return 0;
}

int daemon_writers_join(Daemon *d) {
        WriteSourceFds g;
        char when[64];
        int r;

        d->attribution.loader_answered = false;
        r = write_source_loader_finish(d->attribution.loader, &g);
        if (r == -EAGAIN) {
                /* The timer: the loader never answered; killed. */
                write_source_fds_init(&g);
                g.probe_error = g.write_fd = g.open_fd = -ETIMEDOUT;
                snprintf(g.probe_why, sizeof(g.probe_why),
                         "the loading process did not answer within %llu s",
                         (unsigned long long)(LOADER_TIMEOUT_USEC / USEC_PER_SEC));
        }
        d->attribution.loader = write_source_loader_free(d->attribution.loader);
        d->attribution.loader_source = event_source_disable_unref(d->attribution.loader_source);
        d->attribution.loader_timer = event_source_disable_unref(d->attribution.loader_timer);
        snprintf(when, sizeof(when), ", joined %.1f ms after startup",
                 (double)(now_usec(CLOCK_MONOTONIC) - d->attribution.loader_started_usec) / 1000.0);

        /* The thread reads the sources outside the lock (its poll()): stopped while they change. */
        daemon_corrector_stop(d);
        pthread_mutex_lock(&d->lock);
        install(d, &g, when);
        r = daemon_setup_fanotify_gate(d);
        if (r >= 0)
                r = daemon_confine_files(d); /* lock mode: not before the gate */
        if (r >= 0)
                r = daemon_confine_syscalls(d);
        if (r >= 0) {
                /* A write through another mount meanwhile raised no event: read every knob now. */
                d->rechecks++;
                (void)daemon_check_all(d, TRIGGER_RECHECK);
                r = daemon_corrector_start(d);
                if (r < 0)
                        log_error_errno(&d->log, r, "cannot start the corrector thread again");
        }
        pthread_mutex_unlock(&d->lock);
        return r;
}

static int on_refusal(sd_event_source *s, int fd, uint32_t revents, void *userdata);

/* The lock's startup line, once its gate runs. */
static void log_lock(Daemon *d) {
        LogField f[] = { { "THPGUARD_LOCK", "fanotify" } };

        log_event(&d->log, LOG_INFO, THPGUARD_MESSAGE_LOCK, f, ELEMENTSOF(f),
                  "lock: fanotify: an open of a managed knob for writing through this sysfs mount, by any "
                  "process but thpguardd, fails with EPERM and is logged; a write through another sysfs "
                  "mount (a pod's own /sys) is not locked, and is corrected as in mode enforce");
}

/* How many lines one writer (by its label: a shell loop is a new pid each time) makes before it is quiet. */
#define REFUSAL_LOG_BURST    5
#define REFUSAL_LOG_INTERVAL (10 * USEC_PER_SEC)

/* The writer's line budget: its own, or the least recently used one's, taken over. */
static struct RefusalLog *refusal_log_of(Daemon *d, const char *label, uint64_t now) {
        struct RefusalLog *l = d->attribution.refusal_log, *oldest = l;

        for (size_t i = 0; i < ELEMENTSOF(d->attribution.refusal_log); i++) {
                if (strcmp(l[i].label, label) == 0) {
                        l[i].used_usec = now;
                        return &l[i];
                }
                if (l[i].used_usec < oldest->used_usec)
                        oldest = &l[i];
        }
        *oldest = (struct RefusalLog){ .limit = RATELIMIT_INIT(REFUSAL_LOG_INTERVAL, REFUSAL_LOG_BURST),
                                       .used_usec = now };
        snprintf(oldest->label, sizeof(oldest->label), "%s", label);
        return oldest;
}

static void log_refusal(Daemon *d, const FanotifyGateRefusal *r, uint64_t now) {
        size_t i = knob_of_file(d, r->dev, r->ino);
        const char *knob = i == SIZE_MAX ? "a knob file" : d->policy->knobs[i].path;
        char label[WRITER_LABEL_MAX], who[WRITER_LABEL_MAX + WRITER_EXE_MAX + 32], tid[16], suppressed[24],
            writes[48] = "a write";
        struct RefusalLog *l;
        WriterFields wf;

        writer_label(&r->writer, label, sizeof(label));
        if (i != SIZE_MAX)
                writer_tally_add_n(&d->knobs[i].attribution.refused, label, r->count);
        l = refusal_log_of(d, label, now);
        /* One line stands for all the refusals the entry counts: the rest of them are not lines of their
         * own. */
        l->suppressed = u64_sat_add(l->suppressed, r->count - 1);
        if (ratelimit_count(&l->limit, now) != 0) {
                l->suppressed = u64_sat_add(l->suppressed, 1);
                return;
        }
        writer_fields(&r->writer, &wf);
        writer_describe(&r->writer, who, sizeof(who));
        snprintf(tid, sizeof(tid), "%d", (int)r->tid);
        snprintf(suppressed, sizeof(suppressed), "%" PRIu64, l->suppressed);
        if (l->suppressed)
                snprintf(writes, sizeof(writes), "%" PRIu64 " writes", u64_sat_add(l->suppressed, 1));
        LogField f[] = {
                { "THPGUARD_KNOB", i == SIZE_MAX ? NULL : knob },
                { "THPGUARD_DESIRED", i == SIZE_MAX ? NULL : d->policy->knobs[i].desired },
                { "THPGUARD_LOCK", "fanotify" },
                { "THPGUARD_REASON", r->why },
                { "THPGUARD_WRITER_TID", tid },
                { "THPGUARD_SUPPRESSED", l->suppressed ? suppressed : NULL },
                WRITER_FIELDS(wf),
        };
        log_event(&d->log, LOG_WARNING, THPGUARD_MESSAGE_WRITE_REFUSED, f, ELEMENTSOF(f),
                  "refused %s to %s (%s by %s)", writes, knob, r->why, who);
        l->suppressed = 0;
}

/*
 * Takes what the gate refused. A writer in a loop tells us once a second
 * (fanotify-gate.c): while refusals come, we look again a second later, so
 * that the last second of a loop that stopped is counted too.
 */
static void take_refusals(Daemon *d) {
        FanotifyGateRefusal batch[8];
        uint64_t now = now_usec(CLOCK_MONOTONIC), missed;
        size_t n, total = 0;

        if (!d->attribution.gate)
                return;
        do {
                n = fanotify_gate_take_refusals(d->attribution.gate, &d->attribution.refusal_seq, batch,
                                                ELEMENTSOF(batch), &missed);
                d->attribution.refusals_missed += missed;
                for (size_t i = 0; i < n; i++)
                        log_refusal(d, &batch[i], now);
                total += n;
        } while (n == ELEMENTSOF(batch));
        if (total > 0 && d->attribution.refusal_timer)
                (void)event_arm_timer(d->attribution.refusal_timer,
                                      now + USEC_PER_SEC + 100 * USEC_PER_MSEC);
}

static int on_refusal(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        char drain[256];

        while (read(fd, drain, sizeof(drain)) > 0)
                ;
        take_refusals(userdata);
        return 0;
}

static int on_refusal_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        take_refusals(userdata);
        return 0;
}

void daemon_writers_reload_mode(Daemon *d, PolicyMode old_mode) {
        bool was = old_mode == POLICY_MODE_LOCK, is = d->policy->mode == POLICY_MODE_LOCK;

        if (was == is)
                return;
        if (was && d->attribution.lock == LOCK_MECHANISM_FANOTIFY) {
                fanotify_gate_set_locked(d->attribution.gate, false);
                d->attribution.lock = LOCK_MECHANISM_NONE;
                log_plain(&d->log, LOG_INFO,
                          "lock: given up (the policy's mode is %s now): no write is refused",
                          policy_mode_to_string(d->policy->mode));
        } else if (is && d->attribution.gate && d->attribution.lock_gate) {
                /* Locked before, given up by a reload, and asked for again: the gate still can. */
                fanotify_gate_set_locked(d->attribution.gate, true);
                d->attribution.lock = LOCK_MECHANISM_FANOTIFY;
                log_lock(d);
        } else if (is)
                log_plain(
                    &d->log, LOG_WARNING,
                    "lock: none: mode lock takes a restart of thpguardd (its gate must be started with "
                    "CAP_SYS_PTRACE, which is gone); until then knobs are enforced as in mode enforce");
}

int daemon_setup_fanotify_gate(Daemon *d) {
        bool lock = d->attribution.lock_gate;
        int notice[2] = { -1, -1 }, refusal[2] = { -1, -1 }, r;

        if (d->attribution.gate_fd < 0)
                return 0;
        /*
         * Before the fork, and so before any other thread (they inherit the
         * mask): SIGCHLD blocked, or a stop of the gate would be lost.
         */
        r = event_add_signal(d->event, &d->attribution.gate_child_source, SIGCHLD, on_gate_child, d);
        if (r < 0) {
                close(d->attribution.gate_fd);
                d->attribution.gate_fd = -1;
                return log_error_errno(&d->log, r, "cannot handle SIGCHLD for the writer gate");
        }
        (void)sd_event_source_set_description(d->attribution.gate_child_source, "fanotify-gate-child");
        /*
         * Its notice of each foreign open, for the corrector thread (fanotify-gate.h says why): for the
         * write group's records, so not where a locking gate runs beside another source.
         */
        if (d->attribution.source == WRITE_SOURCE_FANOTIFY && pipe2(notice, O_CLOEXEC | O_NONBLOCK) < 0)
                notice[0] = notice[1] = -1; /* attribution works without: the correction is as fast as off */
        d->attribution.open_notice_fd = notice[0];
        d->attribution.open_notice_write_fd = notice[1];
        if (lock && pipe2(refusal, O_CLOEXEC | O_NONBLOCK) < 0) {
                r = -errno;
                d->attribution.gate_fd = safe_close(d->attribution.gate_fd);
                return log_error_errno(&d->log, r, "cannot make the lock's pipe");
        }
        d->attribution.refusal_fd = refusal[0];
        d->attribution.refusal_write_fd = refusal[1];
        /* After every other capability is gone: the gate inherits ours, and a locking one CAP_SYS_PTRACE. */
        r = lock ? fanotify_gate_new_locking(d->attribution.gate_fd, notice[1], refusal[1], d->proc_root,
                                             d->attribution.self_pid, &d->attribution.gate)
                 : fanotify_gate_new(d->attribution.gate_fd, notice[1], d->proc_root,
                                     d->attribution.self_pid, &d->attribution.gate);
        d->attribution.gate_fd = -1; /* the gate's, even on failure */
        if (lock) {
                /* The gate has it, if it started: ours goes either way, before any other thread runs. */
                int k = capability_drop_all();

                if (k < 0)
                        return log_error_errno(&d->log, k, "cannot drop CAP_SYS_PTRACE");
        }
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot start the writer gate");
        if (lock) {
                r = sd_event_add_io(d->event, &d->attribution.refusal_source, d->attribution.refusal_fd,
                                    EPOLLIN, on_refusal, d);
                if (r < 0)
                        return log_error_errno(&d->log, r, "cannot watch the lock's refusals");
                (void)sd_event_source_set_description(d->attribution.refusal_source, "lock-refusal");
                r = sd_event_add_time(d->event, &d->attribution.refusal_timer, CLOCK_MONOTONIC, 0,
                                      USEC_PER_MSEC * 100, on_refusal_timer, d);
                if (r >= 0)
                        r = sd_event_source_set_enabled(d->attribution.refusal_timer, SD_EVENT_OFF);
                if (r < 0)
                        return log_error_errno(&d->log, r, "cannot arm the lock's refusal timer");
                (void)sd_event_source_set_description(d->attribution.refusal_timer, "lock-refusal-timer");
                d->attribution.lock = LOCK_MECHANISM_FANOTIFY;
                log_lock(d);
        }
        r = sd_event_add_io(d->event, &d->attribution.gate_exit_source,
                            fanotify_gate_exit_fd(d->attribution.gate), EPOLLIN, on_gate_exit, d);
        if (r >= 0)
                r = sd_event_add_io(d->event, &d->attribution.gate_queue_source,
                                    fanotify_gate_queue_fd(d->attribution.gate), EPOLLIN, on_gate_queue, d);
        /* Armed by the first open to wait: none yet. */
        if (r >= 0)
                r = sd_event_add_time(d->event, &d->attribution.gate_timer, CLOCK_MONOTONIC, 0,
                                      USEC_PER_MSEC * 50, on_gate_timer, d);
        if (r >= 0)
                r = sd_event_source_set_enabled(d->attribution.gate_timer, SD_EVENT_OFF);
        if (r < 0)
                return log_error_errno(&d->log, r, "cannot watch the writer gate");
        (void)sd_event_source_set_description(d->attribution.gate_exit_source, "fanotify-gate-exit");
        (void)sd_event_source_set_description(d->attribution.gate_queue_source, "fanotify-gate-queue");
        (void)sd_event_source_set_description(d->attribution.gate_timer, "fanotify-gate-check");
        return 0;
}

void daemon_writers_free(Daemon *d) {
        d->attribution.loader_source = event_source_disable_unref(d->attribution.loader_source);
        d->attribution.loader_timer = event_source_disable_unref(d->attribution.loader_timer);
        d->attribution.loader = write_source_loader_free(d->attribution.loader);
        write_source_fds_close(&d->attribution.stored);
        d->attribution.probe = write_probe_free(d->attribution.probe);
        d->attribution.probe_lost_timer = event_source_disable_unref(d->attribution.probe_lost_timer);
        d->attribution.gate_exit_source = event_source_disable_unref(d->attribution.gate_exit_source);
        d->attribution.gate_queue_source = event_source_disable_unref(d->attribution.gate_queue_source);
        d->attribution.gate_timer = event_source_disable_unref(d->attribution.gate_timer);
        d->attribution.gate_child_source = event_source_disable_unref(d->attribution.gate_child_source);
        d->attribution.gate = fanotify_gate_free(d->attribution.gate);
        safe_close(d->attribution.gate_fd);
        safe_close(d->attribution.write_fd);
        safe_close(d->attribution.open_notice_fd);
        safe_close(d->attribution.open_notice_write_fd);
        d->attribution.refusal_source = event_source_disable_unref(d->attribution.refusal_source);
        d->attribution.refusal_timer = event_source_disable_unref(d->attribution.refusal_timer);
        safe_close(d->attribution.refusal_fd);
        safe_close(d->attribution.refusal_write_fd);
        d->attribution.refusal_fd = d->attribution.refusal_write_fd = -1;
        d->attribution.gate_fd = d->attribution.write_fd = d->attribution.open_notice_fd =
            d->attribution.open_notice_write_fd = -1;
}
