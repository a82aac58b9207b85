#!/usr/bin/env python3
"""A foreign writer and an observer on one THP knob, for the upgrade test.

    drift-writer.py FILE BAD GOOD INTERVAL_S OUT_JSON

The writer thread writes BAD into FILE every INTERVAL_S seconds (one
write(2) of the bare word, as `echo BAD > FILE` does) and notes when each
write began (CLOCK_MONOTONIC). The observer thread sleeps on an inotify
watch of FILE: every write raises IN_MODIFY, the foreign one and the
corrector's alike, and after each event it reads the file, noting the clock
*before* the read. A read that began after a write began is taken as after
it: the observer, woken by that very write's event, may well read the
clock before the writer, back from write(2), reads it (two threads, one
lock for Python, two CPUs); a read that fell inside the write's own few
microseconds is the price. A window is so an upper bound of how long the
drift lasted: it includes the observer's own wakeup.

On SIGTERM the writer stops; the observer goes on for up to 2 s for the last
correction, then OUT_JSON gets the summary: for each write, its window is
the time from the write to the first read after it that shows GOOD. A write with no such read is uncorrected. Standard library only.
"""

import ctypes
import json
import os
import select
import signal
import struct
import sys
import threading
import time

IN_MODIFY = 0x00000002
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000


def bracketed(text):
    text = text.strip()
    if "[" in text:
        return text[text.index("[") + 1:text.index("]")]
    return text


def main():
    path, bad, good, interval, out = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
    libc = ctypes.CDLL(None, use_errno=True)
    ifd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
    if ifd < 0 or libc.inotify_add_watch(ifd, path.encode(), IN_MODIFY) < 0:
        sys.exit("drift-writer: inotify on %s: %s" % (path, os.strerror(ctypes.get_errno())))
    rfd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    stop_writing = threading.Event()
    stop_observing = threading.Event()
    writes = []  # monotonic ns when each write began
    errors = []
    reads = []  # (monotonic ns before the read, value)

    def observe():
        reads.append((time.monotonic_ns(), bracketed(os.pread(rfd, 256, 0).decode())))
        poller = select.poll()
        poller.register(ifd, select.POLLIN)
        while not stop_observing.is_set():
            if not poller.poll(100):
                continue
            try:
                data = os.read(ifd, 65536)
            except BlockingIOError:
                continue
            # Events since the last read: one read of the value serves them all.
            off = 0
            while off + 16 <= len(data):
                _, _, _, n = struct.unpack_from("iIII", data, off)
                off += 16 + n
            t = time.monotonic_ns()
            reads.append((t, bracketed(os.pread(rfd, 256, 0).decode())))

    def write():
        word = bad.encode()
        nxt = time.monotonic()
        while not stop_writing.is_set():
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
                try:
                    t = time.monotonic_ns()
                    os.write(fd, word)
                finally:
                    os.close(fd)
                writes.append(t)
            except OSError as e:
                errors.append(str(e))
            nxt += interval
            stop_writing.wait(max(0.0, nxt - time.monotonic()))

    observer = threading.Thread(target=observe, daemon=True)
    writer = threading.Thread(target=write, daemon=True)
    observer.start()
    writer.start()
    signal.signal(signal.SIGTERM, lambda *_: stop_writing.set())
    signal.signal(signal.SIGINT, lambda *_: stop_writing.set())
    started = time.monotonic_ns()
    while not stop_writing.is_set():
        stop_writing.wait(0.2)
    writer.join()
    # The last write's correction, if any comes.
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        last_w = writes[-1] if writes else 0
        if any(t >= last_w and v == good for t, v in reads[-4:]):
            break
        time.sleep(0.02)
    time.sleep(0.05)
    stop_observing.set()
    observer.join()

    windows = []  # (window ns or None, write ns)
    j = 0
    for w in writes:
        while j < len(reads) and reads[j][0] < w:
            j += 1
        k = j
        while k < len(reads) and reads[k][1] != good:
            k += 1
        windows.append(((reads[k][0] - w) if k < len(reads) else None, w))
    fixed = [d for d, _ in windows if d is not None]
    fixed.sort()
    longest = sorted(((d, w) for d, w in windows if d is not None), reverse=True)[:5]
    summary = {
        "writes": len(writes),
        "write_errors": errors[:5],
        "corrected": len(fixed),
        "uncorrected": sum(1 for d, _ in windows if d is None),
        "longest_window_ms": round(fixed[-1] / 1e6, 3) if fixed else None,
        "median_window_ms": round(fixed[len(fixed) // 2] / 1e6, 3) if fixed else None,
        "windows_over_1s": sum(1 for d in fixed if d > 1e9),
        # The longest windows and when their write was (CLOCK_MONOTONIC, us:
        # the clock of the journal's monotonic timestamps in the container).
        "longest": [{"window_ms": round(d / 1e6, 3), "write_usec": w // 1000} for d, w in longest],
        "started_usec": started // 1000,
        "observed_reads": len(reads),
        "final": bracketed(os.pread(rfd, 256, 0).decode()),
    }
    with open(out + ".tmp", "w") as f:
        json.dump(summary, f, indent=1)
    os.rename(out + ".tmp", out)


if __name__ == "__main__":
    main()
