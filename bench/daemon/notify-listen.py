#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""notify-listen.py SOCKET OUT COUNT: binds a datagram NOTIFY_SOCKET and,
for each of COUNT starts, writes "EXEC_NS READY_NS" to OUT (a line each):
EXEC_NS from exec-stamp's X_THPGUARD_BENCH_EXEC_NS=, READY_NS the
CLOCK_MONOTONIC time READY=1 was received. Prints "listening" on stdout
once bound. Gives up after 60 s without a message."""
import os
import socket
import sys
import time

path, out, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o777)
s.settimeout(60)
print("listening", flush=True)
done, exec_ns = 0, None
with open(out, "w") as f:
    while done < count:
        msg = s.recv(4096)
        now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        for line in msg.decode("utf-8", "replace").split("\n"):
            if line.startswith("X_THPGUARD_BENCH_EXEC_NS="):
                exec_ns = int(line.split("=", 1)[1])
            elif line == "READY=1" and exec_ns is not None:
                f.write("%d %d\n" % (exec_ns, now))
                f.flush()
                exec_ns = None
                done += 1
