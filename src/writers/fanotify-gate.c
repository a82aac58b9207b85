/* SPDX-License-Identifier: MIT */
#include "thpguard/fanotify-gate.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lock-verdict.h"
#include "thpguard/capability.h"
#include "thpguard/event-util.h"
#include "thpguard/fanotify-groups.h"
#include "thpguard/fileio.h"
#include "thpguard/procfs.h"
#include "thpguard/sandbox.h"

/* The last openers the gate keeps: also its cache, one lookup per process while it lives. */
#define GATE_SLOTS 64
/* How long an open waits for its opener's command line; past that it goes on without. */
#define GATE_CMDLINE_WAIT_USEC 1000
/* A command-line read this long is stuck (the process holds its memory lock): no more are asked for. */
#define GATE_CMDLINE_STUCK_USEC (100 * 1000)
/* More opens of one file than this within a second is a writer in a loop: the mark is lifted ... */
#define GATE_FLOOD_OPENS 200
/* ... for this long, then put back. */
#define GATE_FLOOD_PAUSE_USEC (10 * USEC_PER_SEC)
#define GATE_FILES_MAX        64
/* Lock mode's last refusals, for the daemon to log. */
#define GATE_REFUSALS 32

/* One opener, in the memory both processes share. seq is odd while the gate writes it. */
typedef struct GateSlot {
        _Atomic uint32_t seq;
        Writer writer;
} GateSlot;

/*
 * One refusal: number n (1, 2, ...) is in refusal[(n - 1) % GATE_REFUSALS];
 * seq as a slot's. count: the refusals it stands for and the daemon has not
 * taken yet. A writer refused again and again on one file (a loop) is one
 * entry whose count grows, so a flood cannot push others out of the ring,
 * and none of its refusals goes uncounted: the daemon takes the count with
 * an exchange, the gate adds to it, neither loses one to the other.
 */
typedef struct GateRefusalSlot {
        _Atomic uint32_t seq;
        _Atomic uint64_t count;
        uint64_t number;
        FanotifyGateRefusal refusal;
} GateRefusalSlot;

typedef struct GateShared {
        _Atomic uint64_t opens, lookups, cmdline_abandoned, floods, refused, unseen;
        _Atomic uint64_t busy_since_usec; /* CLOCK_MONOTONIC: events taken and not all answered; 0 idle */
        GateSlot slot[GATE_SLOTS];
        _Atomic uint64_t refusals_written;
        _Atomic bool unlocked; /* lock mode given up (a reload): every open goes on */
        GateRefusalSlot refusal[GATE_REFUSALS];
} GateShared;

struct FanotifyGate {
        pid_t pid;
        int group_fd; /* ours too, for marks; closed when the gate is gone, which lets held opens go */
        int exit_fd;  /* the read end of a pipe whose write end only the gate holds */
        char proc_root[4096];
        GateShared *shared;
        uint64_t last_opens; /* answered at fanotify_gate_hold_begin() or the last check since */
        bool killed;         /* SIGKILL sent */
        bool reaped;         /* pid is no process of ours any more: never signalled again */
};

/* ---- The gate process --------------------------------------------------- */

typedef struct GateFile {
        ino_t ino;
        dev_t dev;
        uint64_t window_start, opens;
        int paused_fd; /* >= 0 while the mark is lifted: put back through it */
        uint64_t paused_until;
} GateFile;

/* The command-line reader: a thread of the gate, so the gate itself never waits for a memory lock. */
typedef struct CmdlineReader {
        pthread_mutex_t lock;
        pthread_cond_t changed;
        int dirfd;        /* the job: -1 when none */
        size_t slot;      /* where its result goes */
        pid_t pid;        /* the slot's pid when asked: a slot reused meanwhile is left alone */
        uint64_t started; /* CLOCK_MONOTONIC; 0 when idle */
        bool stuck;       /* counted once per stuck read */
        char result[WRITER_CMDLINE_MAX];
        bool done;
} CmdlineReader;

typedef struct Gate {
        int group_fd, proc_rootfd;
        int notice_fd;  /* fanotify_gate_new()'s: a byte per foreign open, before it goes on; -1: none */
        bool lock;      /* lock mode: every open judged, one that would write refused */
        int refusal_fd; /* lock mode: a byte per refusal; -1: none */
        uint64_t refusal_told_usec; /* the last byte: a loop's further refusals are told once a second */
        pid_t daemon_pid, self_pid;
        GateShared *shared;
        pthread_mutex_t slots_lock; /* the slots have two writers: the gate and its reader */
        int dirfd[GATE_SLOTS];      /* the slot's process, for writer_pid_alive(); -1: free */
        size_t next_slot;
        GateFile file[GATE_FILES_MAX];
        size_t n_files;
        CmdlineReader reader;
} Gate;

static void slot_write_begin(_Atomic uint32_t *seq) {
        atomic_fetch_add_explicit(seq, 1, memory_order_acq_rel);
        atomic_thread_fence(memory_order_release);
}

static void slot_write_end(_Atomic uint32_t *seq) {
        atomic_thread_fence(memory_order_release);
        atomic_fetch_add_explicit(seq, 1, memory_order_acq_rel);
}

static void *cmdline_reader_main(void *userdata) {
        Gate *g = userdata;
        CmdlineReader *c = &g->reader;

        pthread_mutex_lock(&c->lock);
        for (;;) {
                Writer w = {};
                int dirfd;

                while (c->dirfd < 0)
                        pthread_cond_wait(&c->changed, &c->lock);
                dirfd = c->dirfd;
                pthread_mutex_unlock(&c->lock);

                writer_read_cmdline(dirfd, &w); /* may wait for the process's memory lock */
                close(dirfd);

                pthread_mutex_lock(&c->lock);
                memcpy(c->result, w.cmdline, sizeof(c->result));
                c->done = true;
                c->dirfd = -1;
                c->started = 0;
                c->stuck = false;
                /* Late: the open went on without it; put it into the slot if that is still the same process.
                 */
                pthread_mutex_lock(&g->slots_lock);
                if (g->shared->slot[c->slot].writer.pid == c->pid &&
                    !g->shared->slot[c->slot].writer.cmdline[0]) {
                        slot_write_begin(&g->shared->slot[c->slot].seq);
                        memcpy(g->shared->slot[c->slot].writer.cmdline, c->result, sizeof(c->result));
                        slot_write_end(&g->shared->slot[c->slot].seq);
                }
                pthread_mutex_unlock(&g->slots_lock);
                pthread_cond_broadcast(&c->changed);
        }
        return NULL;
}

/* The command line of the process in slot i, if the reader gives it within the budget. */
static void read_cmdline_briefly(Gate *g, size_t i, int dirfd, Writer *w) {
        CmdlineReader *c = &g->reader;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        struct timespec deadline;
        int job;

        pthread_mutex_lock(&c->lock);
        if (c->started && !c->stuck && now - c->started > GATE_CMDLINE_STUCK_USEC) {
                c->stuck = true;
                atomic_fetch_add(&g->shared->cmdline_abandoned, 1);
        }
        if (c->dirfd >= 0 || (job = dup(dirfd)) < 0) {
                pthread_mutex_unlock(&c->lock); /* still on an earlier one: not waited for again */
                return;
        }
        c->dirfd = job;
        c->slot = i;
        c->pid = w->pid;
        c->started = now;
        c->done = false;
        pthread_cond_broadcast(&c->changed);
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_nsec += GATE_CMDLINE_WAIT_USEC * 1000;
        if (deadline.tv_nsec >= 1000000000) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000;
        }
        while (!c->done)
                if (pthread_cond_timedwait(&c->changed, &c->lock, &deadline) == ETIMEDOUT)
                        break;
        if (c->done)
                memcpy(w->cmdline, c->result, sizeof(w->cmdline));
        pthread_mutex_unlock(&c->lock);
}

/*
 * The one slot that holds pid, or SIZE_MAX; *ret_alive tells whether it is
 * still the same process (one that is gone leaves its pid to whoever opens
 * now, which takes over the slot).
 */
static size_t slot_of(Gate *g, pid_t pid, bool *ret_alive) {
        for (size_t i = 0; i < GATE_SLOTS; i++)
                if (g->dirfd[i] >= 0 && g->shared->slot[i].writer.pid == pid) {
                        *ret_alive = writer_pid_alive(g->dirfd[i]);
                        return i;
                }
        return SIZE_MAX;
}

/*
 * A process already in a slot and alive is not looked up again: no file is
 * opened for it. Its slot, or SIZE_MAX if it is gone or out of our sight.
 */
static size_t look_up(Gate *g, pid_t pid) {
        bool alive = false;
        size_t i = slot_of(g, pid, &alive);
        int dirfd;
        Writer w;

        if (i != SIZE_MAX && alive)
                return i;
        if (i == SIZE_MAX) {
                i = g->next_slot;
                g->next_slot = (i + 1) % GATE_SLOTS;
        }
        dirfd = writer_open_pid(g->proc_rootfd, pid);
        if (dirfd < 0)
                return SIZE_MAX; /* outside our /proc (another PID namespace) or gone already */
        (void)writer_read_identity(dirfd, pid, &w);
        read_cmdline_briefly(g, i, dirfd, &w);
        atomic_fetch_add(&g->shared->lookups, 1);

        pthread_mutex_lock(&g->slots_lock);
        slot_write_begin(&g->shared->slot[i].seq);
        g->shared->slot[i].writer = w;
        slot_write_end(&g->shared->slot[i].seq);
        pthread_mutex_unlock(&g->slots_lock);
        safe_close(g->dirfd[i]);
        g->dirfd[i] = dirfd;
        return i;
}

static GateFile *file_of(Gate *g, const struct stat *st) {
        for (size_t i = 0; i < g->n_files; i++)
                if (g->file[i].ino == st->st_ino && g->file[i].dev == st->st_dev)
                        return &g->file[i];
        if (g->n_files == GATE_FILES_MAX)
                return NULL;
        g->file[g->n_files] = (GateFile){ .ino = st->st_ino, .dev = st->st_dev, .paused_fd = -1 };
        return &g->file[g->n_files++];
}

/* Counts an open of the event's file; a flood lifts the file's mark for a while. */
static void note_open(Gate *g, int event_fd, uint64_t now) {
        struct stat st;
        GateFile *f;

        if (fstat(event_fd, &st) < 0 || !(f = file_of(g, &st)))
                return;
        if (now - f->window_start > USEC_PER_SEC) {
                f->window_start = now;
                f->opens = 0;
        }
        if (++f->opens <= GATE_FLOOD_OPENS || f->paused_fd >= 0)
                return;
        f->paused_fd = dup(event_fd);
        if (f->paused_fd < 0)
                return;
        if (fanotify_groups_unmark_gate(g->group_fd, event_fd) < 0) {
                close(f->paused_fd);
                f->paused_fd = -1;
                return;
        }
        f->paused_until = now + GATE_FLOOD_PAUSE_USEC;
        atomic_fetch_add(&g->shared->floods, 1);
}

/* Puts back the marks whose pause is over; the time of the next, or -1 for none. */
static int resume_marks(Gate *g, uint64_t now) {
        uint64_t next = UINT64_MAX;

        for (size_t i = 0; i < g->n_files; i++) {
                GateFile *f = &g->file[i];

                if (f->paused_fd < 0)
                        continue;
                if (f->paused_until <= now) {
                        (void)fanotify_groups_mark_gate(g->group_fd, f->paused_fd);
                        close(f->paused_fd);
                        f->paused_fd = -1;
                        f->opens = 0;
                        continue;
                }
                if (f->paused_until < next)
                        next = f->paused_until;
        }
        return next == UINT64_MAX ? -1 : (int)((next - now) / 1000 + 1);
}

/*
 * What lock_judge() needs of the thread tid, read while it waits in its
 * open: its status, and its system call only where that decides.
 * *ret_tgid: its process, or tid where that could not be read.
 */
static LockVerdict judge(Gate *g, pid_t tid, int event_fd, pid_t *ret_tgid, const char **ret_why) {
        LockOpener o = { .tid = tid, .creds_error = -ENOENT, .syscall_error = -ENOENT };
        _cleanup_close_ int dirfd = -1;
        char buf[4096];
        struct stat st;
        size_t len;

        /* A file whose mode cannot be had is taken as writable by anyone: only its open's flags then tell.
         */
        if (fstat(event_fd, &st) < 0)
                st = (struct stat){ .st_mode = 0777, .st_uid = (uid_t)-1 };
        o.file_mode = st.st_mode;
        o.file_uid = st.st_uid;
        if (tid > 0) {
                dirfd = writer_open_pid(g->proc_rootfd, tid);
                o.creds_error = dirfd < 0 ? dirfd : read_file_at(dirfd, "status", buf, sizeof(buf), &len);
                if (o.creds_error == 0)
                        o.creds_error = lock_parse_creds(buf, len, &o.creds);
                if (lock_needs_syscall(&o, g->daemon_pid)) {
                        o.syscall_error = read_file_at(dirfd, "syscall", buf, sizeof(buf), &len);
                        if (o.syscall_error == 0)
                                o.syscall_error = lock_parse_syscall(buf, len, &o.syscall);
                }
        }
        *ret_tgid = o.creds_error == 0 && o.creds.tgid > 0 ? o.creds.tgid : tid;
        return lock_judge(&o, g->daemon_pid, ret_why);
}

/* Refusal number n into the ring, from the opener's slot (SIZE_MAX: only its pid is known). */
static bool note_refusal(Gate *g, int event_fd, pid_t tid, pid_t pid, size_t slot, const char *why,
                         uint64_t now) {
        uint64_t last = atomic_load(&g->shared->refusals_written), n = last + 1;
        GateRefusalSlot *r = &g->shared->refusal[(n - 1) % GATE_REFUSALS];
        FanotifyGateRefusal f = { .usec = now, .tid = tid };
        struct stat st;

        if (fstat(event_fd, &st) == 0) {
                f.dev = st.st_dev;
                f.ino = st.st_ino;
        }
        if (last > 0) {
                GateRefusalSlot *prev = &g->shared->refusal[(last - 1) % GATE_REFUSALS];

                /* The gate alone writes the entries: no seqlock needed to read its own. */
                if (prev->refusal.writer.pid == pid && prev->refusal.dev == f.dev &&
                    prev->refusal.ino == f.ino && strcmp(prev->refusal.why, why) == 0) {
                        atomic_fetch_add(&prev->count, 1);
                        /* The daemon is told of it at most once a second: a loop must not keep it busy. */
                        if (now - g->refusal_told_usec < USEC_PER_SEC)
                                return false;
                        g->refusal_told_usec = now;
                        return true;
                }
        }
        if (slot != SIZE_MAX) {
                pthread_mutex_lock(&g->slots_lock);
                f.writer = g->shared->slot[slot].writer;
                pthread_mutex_unlock(&g->slots_lock);
        } else
                f.writer = (Writer){ .pid = pid, .exited = pid > 0 };
        snprintf(f.why, sizeof(f.why), "%s", why);
        slot_write_begin(&r->seq);
        r->number = n;
        r->refusal = f;
        atomic_store(&r->count, 1);
        slot_write_end(&r->seq);
        atomic_store(&g->shared->refusals_written, n);
        g->refusal_told_usec = now;
        return true;
}

static void answer_batch(Gate *g, const char *buf, size_t len) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        size_t offset = 0;
        FanotifyEvent ev;

        while (fanotify_groups_next(buf, len, &offset, &ev) > 0) {
                if (ev.overflow || ev.fd < 0)
                        continue;
                if (ev.permission && g->lock && !atomic_load(&g->shared->unlocked)) {
                        const char *why;
                        pid_t tid = ev.pid;
                        LockVerdict v = judge(g, tid, ev.fd, &ev.pid, &why);

                        if (v == LOCK_ALLOW_UNSEEN)
                                atomic_fetch_add(&g->shared->unseen, 1);
                        if (v == LOCK_DENY) {
                                size_t slot = ev.pid > 0 ? look_up(g, ev.pid) : SIZE_MAX;

                                bool tell = note_refusal(g, ev.fd, tid, ev.pid, slot, why, now);

                                (void)fanotify_groups_deny(g->group_fd, ev.fd);
                                atomic_fetch_add(&g->shared->refused, 1);
                                atomic_fetch_add(&g->shared->opens, 1);
                                /* Never blocks: a full pipe has told the daemon already. */
                                if (tell && g->refusal_fd >= 0)
                                        (void)!write(g->refusal_fd, "r", 1);
                                close(ev.fd);
                                continue;
                        }
                }
                if (ev.permission && ev.pid != g->daemon_pid && ev.pid != g->self_pid && ev.pid > 0) {
                        /* A lock's mark stays: a writer in a loop is refused each time. */
                        if (!g->lock)
                                note_open(g, ev.fd, now);
                        (void)look_up(g, ev.pid);
                        /* Never blocks: a full pipe has told the daemon already. */
                        if (g->notice_fd >= 0)
                                (void)!write(g->notice_fd, "o", 1);
                }
                if (ev.permission) {
                        (void)fanotify_groups_allow(g->group_fd, ev.fd);
                        atomic_fetch_add(&g->shared->opens, 1);
                }
                close(ev.fd);
        }
}

/* Every fd but the group, the two pipes and stderr is the daemon's: none is ours to keep. */
static void close_other_fds(int keep1, int keep2, int keep3, int keep4) {
        int max = (int)sysconf(_SC_OPEN_MAX);

        if (max < 0 || max > 65536)
                max = 65536;
        for (int fd = 3; fd < max; fd++)
                if (fd != keep1 && fd != keep2 && fd != keep3 && fd != keep4)
                        (void)close(fd);
}

_Noreturn static void gate_main(int group_fd, int exit_fd, int notice_fd, int refusal_fd, bool lock,
                                const char *proc_root, pid_t daemon_pid, GateShared *shared) {
        SandboxResult confined;
        Gate g = {};
        pthread_t reader;
        char buf[4096] __attribute__((aligned(8)));

        /* Dies with the daemon, and with it the group: nobody is held by an orphan. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != daemon_pid)
                _exit(EXIT_FAILURE);
        /* Out of the daemon's process group: Ctrl-Z on a foreground thpguardd does not stop the gate. */
        (void)setpgid(0, 0);
        (void)prctl(PR_SET_NAME, "thpguardd-gate");
        close_other_fds(group_fd, exit_fd, notice_fd, refusal_fd);
        /* Locking, CAP_SYS_PTRACE over the openers and nothing else; else nothing (we were forked without).
         */
        if (lock && (capability_keep_only(UINT64_C(1) << CAP_SYS_PTRACE) < 0 ||
                     capability_raise(CAP_SYS_PTRACE) < 0))
                _exit(EXIT_FAILURE);
        if (!lock && capability_drop_all() < 0)
                _exit(EXIT_FAILURE);
        /* The daemon's Landlock domain is ours already; its system-call filter comes after us, so install
         * ours. */
        (void)sandbox_seccomp(0, &confined);

        g.group_fd = group_fd;
        g.notice_fd = notice_fd;
        g.lock = lock;
        g.refusal_fd = refusal_fd;
        g.daemon_pid = daemon_pid;
        g.self_pid = getpid();
        g.shared = shared;
        g.proc_rootfd = open(proc_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        for (size_t i = 0; i < GATE_SLOTS; i++)
                g.dirfd[i] = -1;
        g.reader.dirfd = -1;
        pthread_mutex_init(&g.slots_lock, NULL);
        pthread_mutex_init(&g.reader.lock, NULL);
        {
                pthread_condattr_t ca;

                pthread_condattr_init(&ca);
                pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
                pthread_cond_init(&g.reader.changed, &ca);
                pthread_condattr_destroy(&ca);
        }
        if (g.proc_rootfd < 0 || pthread_create(&reader, NULL, cmdline_reader_main, &g) != 0)
                _exit(EXIT_FAILURE);

        for (;;) {
                struct pollfd p = { .fd = group_fd, .events = POLLIN };
                int timeout = resume_marks(&g, now_usec(CLOCK_MONOTONIC));
                ssize_t n;

                if (poll(&p, 1, timeout) < 0 && errno != EINTR)
                        _exit(EXIT_FAILURE);
                if (!(p.revents & POLLIN))
                        continue;
                atomic_store(&shared->busy_since_usec, now_usec(CLOCK_MONOTONIC));
                n = read(group_fd, buf, sizeof(buf));
                if (n > 0)
                        answer_batch(&g, buf, (size_t)n);
                atomic_store(&shared->busy_since_usec, 0);
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                        _exit(EXIT_FAILURE);
        }
}

/* ---- The daemon's side -------------------------------------------------- */

static int gate_new(int group_fd, int notice_fd, int refusal_fd, bool lock, const char *proc_root,
                    pid_t daemon_pid, FanotifyGate **ret) {
        _cleanup_(fanotify_gate_freep) FanotifyGate *g = NULL;
        int pipefd[2];

        g = calloc(1, sizeof(*g));
        if (!g) {
                close(group_fd);
                return -ENOMEM;
        }
        g->group_fd = group_fd;
        g->exit_fd = -1;
        snprintf(g->proc_root, sizeof(g->proc_root), "%s", proc_root);
        g->shared =
            mmap(NULL, sizeof(GateShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (g->shared == MAP_FAILED) {
                g->shared = NULL;
                return -errno;
        }
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        g->pid = fork();
        if (g->pid < 0) {
                close(pipefd[0]);
                close(pipefd[1]);
                return -errno;
        }
        if (g->pid == 0) {
                close(pipefd[0]);
                gate_main(group_fd, pipefd[1], notice_fd, refusal_fd, lock, proc_root, daemon_pid,
                          g->shared);
        }
        close(pipefd[1]);
        g->exit_fd = pipefd[0];
        *ret = TAKE_PTR(g);
        return 0;
}

int fanotify_gate_new(int group_fd, int notice_fd, const char *proc_root, pid_t daemon_pid,
                      FanotifyGate **ret) {
        return gate_new(group_fd, notice_fd, -1, false, proc_root, daemon_pid, ret);
}

int fanotify_gate_new_locking(int group_fd, int notice_fd, int refusal_fd, const char *proc_root,
                              pid_t daemon_pid, FanotifyGate **ret) {
        return gate_new(group_fd, notice_fd, refusal_fd, true, proc_root, daemon_pid, ret);
}

/*
 * Kills the gate (once; a pid reaped is no process of ours any more) and
 * reaps it if it is dead already. Not waited for: a traced gate's zombie is
 * its tracer's to see first, for as long as the tracer likes.
 */
static void gate_kill(FanotifyGate *g) {
        if (g->pid <= 0 || g->reaped)
                return;
        if (!g->killed)
                (void)kill(g->pid, SIGKILL);
        g->killed = true;
        g->reaped = fanotify_gate_reap(g->pid) == 0;
}

/* The group closed lets every held open go on once the gate's own copy is closed too, at its exit. */
void fanotify_gate_stop(FanotifyGate *g) {
        gate_kill(g);
        safe_close(g->group_fd);
        g->group_fd = -1;
}

int fanotify_gate_reap(pid_t pid) {
        siginfo_t si = {};

        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG) < 0)
                return errno == ECHILD ? 0 : -errno; /* ECHILD: reaped already */
        return si.si_pid == pid ? 0 : -EAGAIN;
}

FanotifyGate *fanotify_gate_free(FanotifyGate *g) {
        if (!g)
                return NULL;
        fanotify_gate_stop(g);
        safe_close(g->exit_fd);
        if (g->shared)
                munmap(g->shared, sizeof(GateShared));
        free(g);
        return NULL;
}

int fanotify_gate_mark(FanotifyGate *g, int file_fd) {
        if (g->group_fd < 0)
                return -ESRCH;
        return fanotify_groups_mark_gate(g->group_fd, file_fd);
}

int fanotify_gate_exit_fd(const FanotifyGate *g) {
        return g->exit_fd;
}

pid_t fanotify_gate_pid(const FanotifyGate *g) {
        return g->pid;
}

int fanotify_gate_queue_fd(const FanotifyGate *g) {
        return g->group_fd;
}

pid_t fanotify_gate_unreaped(const FanotifyGate *g) {
        return g->pid > 0 && !g->reaped ? g->pid : 0;
}

/* Stopped ('T') or traced ('t'): it answers nothing until someone lets it go on. */
static bool gate_is_stopped(const FanotifyGate *g) {
        ProcStat st;

        if (procfs_read_stat(g->proc_root, (uint64_t)g->pid, &st) < 0)
                return false;
        return st.state == 'T' || st.state == 't';
}

static size_t queued_bytes(int fd) {
        int n = 0;

        return ioctl(fd, FIONREAD, &n) < 0 || n < 0 ? 0 : (size_t)n;
}

FanotifyGateHealth fanotify_gate_child_changed(FanotifyGate *g) {
        siginfo_t si = {};

        if (g->pid <= 0 || g->reaped)
                return FANOTIFY_GATE_EXITED;
        /* A group stop (SIGSTOP, SIGTSTP) is reported to us even when someone traces the gate; a tracer's
         * own stops are not: fanotify_gate_check() finds those, once an open waits. */
        if (waitid(P_PID, (id_t)g->pid, &si, WEXITED | WSTOPPED | WNOHANG) < 0 || si.si_pid != g->pid)
                return FANOTIFY_GATE_RUNNING;
        if (si.si_code == CLD_STOPPED) {
                gate_kill(g);
                return FANOTIFY_GATE_STALLED;
        }
        g->reaped = true;
        return FANOTIFY_GATE_EXITED;
}

uint64_t fanotify_gate_hold_begin(FanotifyGate *g, uint64_t now) {
        g->last_opens = atomic_load(&g->shared->opens);
        return now + FANOTIFY_GATE_STALL_USEC;
}

FanotifyGateHealth fanotify_gate_check(FanotifyGate *g, uint64_t now, uint64_t *ret_next) {
        uint64_t busy_since, opens;
        bool queued, stalled;

        if (g->pid <= 0 || g->reaped || g->killed)
                return FANOTIFY_GATE_EXITED;
        busy_since = atomic_load(&g->shared->busy_since_usec);
        opens = atomic_load(&g->shared->opens);
        queued = queued_bytes(g->group_fd) > 0;
        if (!queued && !busy_since) {
                *ret_next = 0;
                return FANOTIFY_GATE_RUNNING;
        }
        /* Opens waited all along and none was answered, or one batch was taken too long ago. */
        stalled = (queued && opens == g->last_opens) ||
                  (busy_since && now > busy_since && now - busy_since >= FANOTIFY_GATE_STALL_USEC) ||
                  gate_is_stopped(g);
        if (stalled) {
                gate_kill(g);
                return FANOTIFY_GATE_STALLED;
        }
        g->last_opens = opens;
        *ret_next = now + FANOTIFY_GATE_STALL_USEC;
        /* A batch under way is judged when it has had its time, not a whole period after this check. */
        if (busy_since && busy_since + FANOTIFY_GATE_STALL_USEC < *ret_next)
                *ret_next = busy_since + FANOTIFY_GATE_STALL_USEC;
        return FANOTIFY_GATE_RUNNING;
}

bool fanotify_gate_find(FanotifyGate *g, pid_t pid, Writer *ret) {
        Writer w;

        if (!g->shared || pid <= 0)
                return false;
        for (size_t i = 0; i < GATE_SLOTS; i++) {
                GateSlot *s = &g->shared->slot[i];
                bool read = false;

                /* A few tries: a gate killed while it wrote a slot leaves it odd for good. */
                for (int tries = 0; tries < 100 && !read; tries++) {
                        uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);

                        if (seq & 1)
                                continue;
                        memcpy(&w, &s->writer, sizeof(w));
                        atomic_thread_fence(memory_order_acquire);
                        read = seq == atomic_load_explicit(&s->seq, memory_order_relaxed);
                }
                if (!read || w.pid != pid)
                        continue;
                writer_terminate(&w);
                w.exited = false;
                *ret = w;
                return true; /* the gate keeps one slot per pid */
        }
        return false;
}

void fanotify_gate_counters(const FanotifyGate *g, FanotifyGateCounters *ret) {
        *ret = (FanotifyGateCounters){};
        if (!g->shared)
                return;
        ret->opens = atomic_load(&g->shared->opens);
        ret->lookups = atomic_load(&g->shared->lookups);
        ret->cmdline_abandoned = atomic_load(&g->shared->cmdline_abandoned);
        ret->floods = atomic_load(&g->shared->floods);
        ret->refused = atomic_load(&g->shared->refused);
        ret->unseen = atomic_load(&g->shared->unseen);
}

/* Entry number of the ring into *ret, its count taken; false if it is another's now, or torn. */
static bool take_refusal(FanotifyGate *g, uint64_t number, FanotifyGateRefusal *ret) {
        GateRefusalSlot *r = &g->shared->refusal[(number - 1) % GATE_REFUSALS];
        FanotifyGateRefusal f;
        bool read = false;
        uint64_t seen = 0;

        for (int tries = 0; tries < 100 && !read; tries++) {
                uint32_t s = atomic_load_explicit(&r->seq, memory_order_acquire);

                if (s & 1)
                        continue;
                seen = r->number;
                memcpy(&f, &r->refusal, sizeof(f));
                atomic_thread_fence(memory_order_acquire);
                read = s == atomic_load_explicit(&r->seq, memory_order_relaxed);
        }
        if (!read || seen != number)
                return false;
        f.count = atomic_exchange(&r->count, 0);
        writer_terminate(&f.writer);
        f.why[sizeof(f.why) - 1] = '\0';
        *ret = f;
        return true;
}

size_t fanotify_gate_take_refusals(FanotifyGate *g, uint64_t *seq, FanotifyGateRefusal *ret, size_t n,
                                   uint64_t *ret_missed) {
        uint64_t written, next = *seq + 1;
        size_t taken = 0;

        *ret_missed = 0;
        if (!g->shared || n == 0)
                return 0;
        /* What the last entry taken has counted since: a writer in a loop goes on in it. */
        if (*seq > 0 && take_refusal(g, *seq, &ret[0]) && ret[0].count > 0)
                taken++;
        written = atomic_load(&g->shared->refusals_written);
        if (written >= GATE_REFUSALS && next <= written - GATE_REFUSALS) {
                *ret_missed = written - GATE_REFUSALS + 1 - next;
                next = written - GATE_REFUSALS + 1;
        }
        for (; next <= written && taken < n; next++) {
                if (!take_refusal(g, next, &ret[taken])) {
                        (*ret_missed)++; /* written over meanwhile, or torn by a gate killed mid-write */
                        continue;
                }
                if (ret[taken].count > 0)
                        taken++;
        }
        *seq = next - 1;
        return taken;
}

void fanotify_gate_set_locked(FanotifyGate *g, bool locked) {
        if (g->shared)
                atomic_store(&g->shared->unlocked, !locked);
}
