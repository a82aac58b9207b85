#!/usr/bin/env python3
"""Starts one-shot writers: each a new `sh` that writes a value to a knob
file and exits at once. The parent reaps each only once the daemon's log
names it (or after 3 s), so the writer is a zombie, not gone, when the
daemon looks it up: what is tested is the daemon's attribution, not the
scheduler's race against a parent that reaps at once (bash does, from its
SIGCHLD handler; bench/daemon measures that race). The next writer starts
after that, so no two writes merge. Prints one pid per line.

usage: one-shot-writers.py FILE VALUE COUNT --log DAEMON_LOG [--cgroup DIR]
"""
import argparse
import os
import re
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("value")
    ap.add_argument("count", type=int)
    ap.add_argument("--log", required=True)
    ap.add_argument("--cgroup")
    a = ap.parse_args()
    script = f"echo {a.value} > {a.file}"
    if a.cgroup:
        script = f"echo $$ > {a.cgroup}/cgroup.procs && {script}"
    for _ in range(a.count):
        pid = os.fork()
        if pid == 0:
            os.execvp("sh", ["sh", "-c", script])
        named = re.compile(rf"(^| )writer_pid={pid}( |$)".encode(), re.M)
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            with open(a.log, "rb") as f:
                if named.search(f.read()):
                    break
            time.sleep(0.002)
        _, status = os.waitpid(pid, 0)
        if status != 0:
            sys.exit(f"writer {pid} failed: status {status}")
        print(pid, flush=True)


if __name__ == "__main__":
    main()
