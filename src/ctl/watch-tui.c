/* SPDX-License-Identifier: MIT */
/*
 * thpguardctl watch on a terminal: a full-screen view, as top(1) gives.
 * ncurses draws it: each frame is written to its virtual screen (erase(),
 * then the lines) and refresh() sends only what changed, so nothing
 * flickers. ncurses handles SIGWINCH and hands over KEY_RESIZE; the view is
 * then drawn again at the new size. q quits; so do Ctrl-C, SIGTERM, SIGHUP
 * and SIGQUIT, which are blocked and read from a signalfd, so that every
 * way out goes through endwin() and leaves the terminal as it was.
 */
#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "thpguard/event-util.h"
#include "thpguard/fileio.h"
#include "thpguard/macro.h"
#include "watch.h"

/* Writes one screen line, cut at the screen's width (addstr would wrap it onto the next). */
_printf_(2, 3) static void line(int y, const char *fmt, ...) {
        char buf[1024];
        va_list ap;

        if (y >= LINES)
                return;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        mvaddnstr(y, 0, buf, COLS);
}

static void title(const WatchFrame *fr) {
        static const char right[] = "q: quit";
        char host[64] = "", left[256], when[16] = "-";
        time_t t = (time_t)(fr ? fr->realtime_usec / 1000000 : 0);
        struct tm tm;
        int pad;

        if (gethostname(host, sizeof(host) - 1) < 0)
                host[0] = '\0';
        if (fr && localtime_r(&t, &tm))
                strftime(when, sizeof(when), "%H:%M:%S", &tm);
        snprintf(left, sizeof(left), " thpguardctl watch  %s  every %.1f s  %s", host,
                 fr ? (double)fr->interval_usec / 1e6 : 0, when);
        /* "q: quit" ends at the right edge: the view is as wide as the terminal. */
        pad = COLS - (int)strlen(left) - (int)STRLEN(right);
        attron(A_REVERSE);
        line(0, "%s%*s%s", left, pad > 1 ? pad : 1, "", right);
        attroff(A_REVERSE);
}

static const char *rate(ThpRate r, double factor, char *buf, size_t size) {
        return watch_rate_string(r, factor, buf, size);
}

static const char *centi(uint64_t v, char *buf, size_t size) {
        if (v == PROCFS_UNKNOWN)
                snprintf(buf, size, "-");
        else
                snprintf(buf, size, "%" PRIu64 ".%02" PRIu64, v / 100, v % 100);
        return buf;
}

static int draw_node(const WatchFrame *fr, int y) {
        char t[64];

        line(y++, "THP          enabled %s   defrag %s   policy %s (%zu knobs, %zu drift, %zu error)",
             fr->enabled[0] ? fr->enabled : "-", fr->defrag[0] ? fr->defrag : "-", fr->policy_state,
             fr->n_policy_knobs, fr->n_policy_drift, fr->n_policy_error);
        if (fr->have_last_correction)
                line(y++, "correction   last %s %s, written by %s",
                     ctl_time_local(fr->last_correction_usec, t, sizeof(t)), fr->last_correction_knob,
                     fr->last_correction_writer);
        else
                line(y++, "correction   %s",
                     fr->journal ? "none in thpguardd's journal records of the last 24 h"
                                 : "unknown: no journal readable here (--journal-dir)");
        return y;
}

static int draw_rates(const WatchFrame *fr, int y) {
        const ThpRates *r = &fr->rates;
        char a[32], b[32], c[32], d[32];

        attron(A_BOLD);
        line(y++, "per second");
        attroff(A_BOLD);
        line(y++, "faults       alloc %9s   fallback %9s",
             rate(r->counters[THP_COUNTER_FAULT_ALLOC], 1, a, 32),
             rate(r->counters[THP_COUNTER_FAULT_FALLBACK], 1, b, 32));
        line(y++, "collapses    alloc %9s   failed   %9s",
             rate(r->counters[THP_COUNTER_COLLAPSE_ALLOC], 1, a, 32),
             rate(r->counters[THP_COUNTER_COLLAPSE_ALLOC_FAILED], 1, b, 32));
        line(y++, "splits       split %9s   deferred %9s   underused %9s",
             rate(r->counters[THP_COUNTER_SPLIT_PAGE], 1, a, 32),
             rate(r->counters[THP_COUNTER_DEFERRED_SPLIT_PAGE], 1, b, 32),
             rate(r->counters[THP_COUNTER_UNDERUSED_SPLIT_PAGE], 1, c, 32));
        line(y++, "compaction   stall %9s   fail     %9s   success   %9s",
             rate(r->counters[THP_COUNTER_COMPACT_STALL], 1, a, 32),
             rate(r->counters[THP_COUNTER_COMPACT_FAIL], 1, b, 32),
             rate(r->counters[THP_COUNTER_COMPACT_SUCCESS], 1, c, 32));
        line(y++, "khugepaged   cpu %9s %%   collapsed %8s   full scans %8s",
             rate(r->counters[THP_COUNTER_KHUGEPAGED_CPU_USEC], 1e-4, a, 32),
             rate(r->counters[THP_COUNTER_PAGES_COLLAPSED], 1, b, 32),
             rate(r->counters[THP_COUNTER_FULL_SCANS], 1, c, 32));
        line(y++, "PSI memory   some avg10 %6s %%  stall %7s ms/s   full avg10 %6s %%  stall %7s ms/s",
             centi(r->psi_some_avg10_centi, a, 32),
             rate(r->counters[THP_COUNTER_PSI_SOME_USEC], 1e-3, b, 32),
             centi(r->psi_full_avg10_centi, c, 32),
             rate(r->counters[THP_COUNTER_PSI_FULL_USEC], 1e-3, d, 32));
        if (r->anon_huge_pages_kb == PROCFS_UNKNOWN)
                snprintf(a, sizeof(a), "-");
        else
                snprintf(a, sizeof(a), "%.1f", (double)r->anon_huge_pages_kb / 1024);
        if (r->anon_huge_pages_change_known)
                snprintf(b, sizeof(b), "%+.1f", (double)r->anon_huge_pages_change_kb / 1024);
        else
                snprintf(b, sizeof(b), "-");
        line(y++, "AnonHugePages %s MiB, change %s MiB in %.1f s", a, b, r->elapsed_sec);
        return y;
}

static int draw_sizes(const WatchFrame *fr, int y) {
        const ThpRates *r = &fr->rates;
        bool any = false;

        for (size_t i = 0; i < r->n_sizes; i++)
                any = any || r->sizes[i].anon_fault_alloc.state != THP_RATE_ABSENT ||
                      r->sizes[i].anon_fault_fallback.state != THP_RATE_ABSENT ||
                      r->sizes[i].split.state != THP_RATE_ABSENT;
        if (!any) {
                line(y++, "mTHP         no per-size stats on this kernel (hugepages-*kB/stats, 6.10+)");
                return y;
        }
        attron(A_BOLD);
        line(y++, "mTHP size    anon_fault_alloc/s  anon_fault_fallback/s  fallback_ratio  split/s");
        attroff(A_BOLD);
        for (size_t i = 0; i < r->n_sizes && y < LINES - 3; i++) {
                char a[32], b[32], c[32], d[32], size[32];

                snprintf(size, sizeof(size), "%" PRIu64 "kB", r->sizes[i].size_kb);
                line(y++, "  %-10s %18s  %21s  %14s  %7s", size,
                     rate(r->sizes[i].anon_fault_alloc, 1, a, 32),
                     rate(r->sizes[i].anon_fault_fallback, 1, b, 32),
                     watch_ratio_string(&r->sizes[i], c, 32), rate(r->sizes[i].split, 1, d, 32));
        }
        return y;
}

static void draw_top(const WatchFrame *fr, int y) {
        double every = (double)fr->scan_every * (double)fr->interval_usec / 1e6;

        attron(A_BOLD);
        line(y++,
             "top by AnonHugePages growth: processes scanned every %.1f s%s, growth over %.1f s, %zu with "
             "THP",
             every, fr->scan_every > 1 ? " (less often than the counters: the scan's CPU cost)" : "",
             fr->growth_sec, fr->n_with_thp);
        attroff(A_BOLD);
        line(y++, "%8s %12s %12s  %s", "PID", "GROWTH MiB", "ANONHUGE MiB", "NAME");
        if (fr->n_top == 0)
                line(y++, "%8s  no process grew", "-");
        for (size_t i = 0; i < fr->n_top && y < LINES; i++)
                line(y++, "%8" PRIu64 " %+12.1f %12.1f  %s", fr->top[i].pid,
                     (double)fr->top[i].growth_kb / 1024, (double)fr->top[i].anon_huge_pages_kb / 1024,
                     fr->top[i].name);
}

static void draw(const WatchFrame *fr) {
        int y = 1;

        erase();
        title(fr);
        if (fr) {
                y = draw_node(fr, y);
                y = draw_rates(fr, y + 1);
                y = draw_sizes(fr, y + 1);
                draw_top(fr, y + 1);
        } else
                line(2, "first sample in one interval...");
        refresh();
}

/* The signals that end the view; blocked, and read from the returned fd. */
static int signals_block(sigset_t *ret_old) {
        sigset_t mask;
        int fd, r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGQUIT);
        if (sigprocmask(SIG_BLOCK, &mask, ret_old) < 0)
                return -errno;
        fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (fd < 0) {
                r = -errno;
                sigprocmask(SIG_SETMASK, ret_old, NULL);
                return r;
        }
        return fd;
}

typedef enum Wake {
        WAKE_TICK,
        WAKE_REDRAW,
        WAKE_QUIT,
} Wake;

/* Waits for the deadline (CLOCK_MONOTONIC), a key or a signal. */
static Wake wait_event(int sfd, uint64_t deadline) {
        struct pollfd fds[] = { { .fd = STDIN_FILENO, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        int ch, timeout = now >= deadline ? 0 : (int)((deadline - now + 999) / 1000);

        /* EINTR is SIGWINCH, which ncurses turns into KEY_RESIZE below. */
        if (poll(fds, ELEMENTSOF(fds), timeout) < 0 && errno != EINTR)
                return WAKE_QUIT;
        if (fds[1].revents & POLLIN)
                return WAKE_QUIT;
        if (fds[0].revents & (POLLHUP | POLLERR))
                return WAKE_QUIT;
        while ((ch = getch()) != ERR) {
                if (ch == 'q' || ch == 'Q')
                        return WAKE_QUIT;
        }
        /* Anything else (KEY_RESIZE, another key) draws the last frame again, at the screen's size. */
        return now_usec(CLOCK_MONOTONIC) >= deadline ? WAKE_TICK : WAKE_REDRAW;
}

int watch_tui_run(WatchSession *w, const CtlWatchOptions *o) {
        _cleanup_close_ int sfd = -1;
        const WatchFrame *fr = NULL;
        uint64_t deadline, shown = 0;
        int ret = CTL_EXIT_OK;
        SCREEN *scr;
        sigset_t old;

        sfd = signals_block(&old);
        if (sfd < 0) {
                fprintf(stderr, "thpguardctl watch: cannot take the terminal's signals: %s\n",
                        strerror(-sfd));
                return CTL_EXIT_FAILURE;
        }
        /* Not initscr(): it exits on a terminal without terminfo (a minimal container). */
        scr = newterm(NULL, stdout, stdin);
        if (!scr) {
                sigprocmask(SIG_SETMASK, &old, NULL);
                return -ENOTTY;
        }
        cbreak();
        noecho();
        keypad(stdscr, TRUE);
        nodelay(stdscr, TRUE);
        curs_set(0);

        draw(NULL);
        deadline = now_usec(CLOCK_MONOTONIC) + o->interval_usec;
        for (;;) {
                Wake wake = wait_event(sfd, deadline);

                if (wake == WAKE_QUIT)
                        break;
                if (wake == WAKE_TICK) {
                        if (watch_session_tick(w, &fr) < 0) {
                                ret = CTL_EXIT_FAILURE;
                                break;
                        }
                        deadline += o->interval_usec;
                        if (now_usec(CLOCK_MONOTONIC) > deadline)
                                deadline = now_usec(CLOCK_MONOTONIC) + o->interval_usec;
                        shown++;
                }
                draw(fr);
                if (o->count > 0 && shown >= o->count)
                        break;
        }
        endwin();
        delscreen(scr);
        /* A signal that ended the view is taken here, not delivered (and fatal) once unblocked. */
        while (read(sfd, &(struct signalfd_siginfo){}, sizeof(struct signalfd_siginfo)) > 0)
                ;
        sigprocmask(SIG_SETMASK, &old, NULL);
        return ret;
}
