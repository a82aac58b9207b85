#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Prometheus' HTTP API for the end-to-end test (standard library only; 127.0.0.1 only).

    promapi.py ready URL SECONDS
        waits until /-/ready answers 200
    promapi.py value URL EXPR
        the value of an instant query with one result, or nothing
    promapi.py watch URL SECONDS [--seen FILE] COND...
        polls /api/v1/alerts every 0.2 s until every COND holds, or fails after SECONDS.
        COND is NAME=pending, NAME=firing (pending must have been seen before it: by this
        poll, or in the ALERTS series Prometheus records), NAME=firing-at-once (for a rule
        without for:, which skips pending), NAME=inactive (not pending nor
        firing; with --after-active: only after it was seen active in this watch), or
        !NAME (must not be active at any poll of this watch). Prints each change of state.
        --seen FILE appends every NAME seen active, for a later `!NAME` across watches.
    promapi.py dashboard URL EXPRS-JSON [--may-be-empty TITLE]...
        runs every dashboard expression (check-monitoring.py dashboard's output) as an
        instant query: each must succeed, and return data unless its panel is listed
"""
import json
import sys
import time
import urllib.parse
import urllib.request


def local(url):
    host = urllib.parse.urlsplit(url).hostname
    if host != "127.0.0.1":
        raise SystemExit(f"promapi.py: refusing {url}: this test talks to 127.0.0.1 only")
    return url


def get(url, path, params=None):
    q = "?" + urllib.parse.urlencode(params) if params else ""
    with urllib.request.urlopen(local(url) + path + q, timeout=5) as r:
        return json.load(r)


def query(url, expr):
    d = get(url, "/api/v1/query", {"query": expr})
    if d.get("status") != "success":
        raise RuntimeError(f"{expr}: {d}")
    return d["data"]["result"]


def ready(url, seconds):
    deadline = time.monotonic() + float(seconds)
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(local(url) + "/-/ready", timeout=2) as r:
                if r.status == 200:
                    return 0
        except OSError:
            pass
        time.sleep(0.2)
    print(f"FAIL: {url} not ready after {seconds} s")
    return 1


def value(url, expr):
    res = query(url, expr)
    if len(res) == 1:
        print(res[0]["value"][1])
    return 0


def alert_states(url):
    """{alertname: state}, the most advanced state of any series of that alert."""
    rank = {"pending": 1, "firing": 2}
    out = {}
    for a in get(url, "/api/v1/alerts")["data"]["alerts"]:
        name, state = a["labels"]["alertname"], a["state"]
        if rank.get(state, 0) > rank.get(out.get(name), 0):
            out[name] = state
    return out


def pending_recorded(url, name):
    res = query(url, f'max_over_time(ALERTS{{alertname="{name}",alertstate="pending"}}[10m])')
    return len(res) > 0


def watch(url, seconds, args):
    seen_file = None
    conds = []
    after_active = False
    i = 0
    while i < len(args):
        if args[i] == "--seen":
            seen_file = args[i + 1]
            i += 2
            continue
        if args[i] == "--after-active":
            after_active = True
        else:
            conds.append(args[i])
        i += 1
    want = {}
    forbidden = set()
    for c in conds:
        if c.startswith("!"):
            forbidden.add(c[1:])
        else:
            name, state = c.split("=", 1)
            if state not in ("pending", "firing", "firing-at-once", "inactive"):
                raise SystemExit(f"promapi.py: bad condition {c}")
            want[name] = state
    history = {}
    start = time.monotonic()
    deadline = start + float(seconds)
    while True:
        states = alert_states(url)
        t = time.monotonic() - start
        for name in set(states) | set(history):
            st = states.get(name, "inactive")
            if not history.get(name) or history[name][-1] != st:
                history.setdefault(name, []).append(st)
                print(f"  {t:5.1f}s {name}: {st}", flush=True)
        if seen_file:
            with open(seen_file, "a", encoding="utf-8") as f:
                for name in states:
                    f.write(name + "\n")
        bad = forbidden & set(states)
        if bad:
            print(f"FAIL: {', '.join(sorted(bad))} went {states[sorted(bad)[0]]}, and must not here")
            return 1
        done = True
        for name, st in want.items():
            h = history.get(name, ["inactive"])
            if st == "inactive":
                ok = states.get(name) is None and (not after_active or any(s != "inactive" for s in h))
            elif st == "pending":
                ok = "pending" in h
            else:
                ok = states.get(name) == "firing"
            done &= ok
        if done:
            break
        if time.monotonic() > deadline:
            print(f"FAIL: after {seconds} s, wanted {want}; seen {history}")
            return 1
        time.sleep(0.2)
    for name, st in want.items():
        if st == "firing":
            h = history.get(name, [])
            before = h[: h.index("firing")] if "firing" in h else h
            if "pending" in before:
                continue
            if not pending_recorded(url, name):
                print(f"FAIL: {name} went firing without ever being pending ({h}, and no ALERTS pending sample)")
                return 1
            print(f"  {name}: pending not polled, but Prometheus recorded ALERTS{{alertstate=\"pending\"}}")
    return 0


def dashboard(url, exprs_path, may_be_empty):
    with open(exprs_path, encoding="utf-8") as f:
        exprs = json.load(f)
    problems = 0
    for e in exprs:
        try:
            res = query(url, e["promql"])
        except Exception as err:  # an HTTP 400 for a bad expression, and the like
            print(f"FAIL: panel {e['panel']!r} {e['ref']}: {err}")
            problems += 1
            continue
        print(f"  panel {e['panel']!r} {e['ref']}: {len(res)} series")
        if not res and e["panel"] not in may_be_empty:
            print(f"FAIL: panel {e['panel']!r} {e['ref']} has no data: {e['promql']}")
            problems += 1
    return 1 if problems else 0


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    cmd, url = argv[1], argv[2]
    if cmd == "ready":
        return ready(url, argv[3])
    if cmd == "value":
        return value(url, argv[3])
    if cmd == "watch":
        return watch(url, argv[3], argv[4:])
    if cmd == "dashboard":
        rest = argv[4:]
        may = [rest[i + 1] for i in range(len(rest) - 1) if rest[i] == "--may-be-empty"]
        return dashboard(url, argv[3], may)
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
