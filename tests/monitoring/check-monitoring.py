#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks of packaging/monitoring that need no Prometheus server (Debian's python3-yaml).

    check-monitoring.py names SRCDIR
        the metric names thpguardd writes, read from src/daemon/metrics.c, one a line
    check-monitoring.py rules SRCDIR [RULES]
        every alert has summary, description and a runbook_url whose section exists in
        packaging/monitoring/README.md; every series the rules read is thpguardd's, one of
        NODE_EXPORTER below or recorded by the rules themselves; every alert has a case
        where it fires and one where it does not in tests/monitoring/rules.test.yaml
    check-monitoring.py dashboard SRCDIR OUTDIR [DASHBOARD]
        the dashboard parses as JSON, has the panels the issue asks for, and every metric
        name in its expressions is thpguardd's or in NODE_EXPORTER; writes
        OUTDIR/dashboard-rules.yaml (each expression as a recording rule, Grafana's
        variables replaced) for `promtool check rules`, and OUTDIR/dashboard-exprs.json
    check-monitoring.py testcopy RULES OUT
        the end-to-end test's copy of the rules: every duration divided by 60 (a `for:` of
        10m becomes 10s, a range of [1h] becomes [60s]), `for:` at least 4s
Exit 1 with one FAIL line per problem.
"""
import json
import os
import re
import sys

import yaml

# node-exporter's own series the rules and the dashboard may read. Its vmstat
# collector exports only ^(oom_kill|pgpg|pswp|pg.*fault).* by default, not thp_*
# or compact_stall: those come from thpguardd (thpguard_vmstat_total).
NODE_EXPORTER = {"node_textfile_mtime_seconds"}

# What the issue asks the dashboard to show, as a metric each must read.
DASHBOARD_MUST_READ = {
    "fleet compliance": "thpguard_knob_compliant",
    "drifted nodes": "thpguard_knob_supported",
    "corrections by knob and trigger": "thpguard_corrections_total",
    "writer fights": "thpguard_writer_fights_total",
    "AnonHugePages": "thpguard_anon_huge_pages_bytes",
    "compaction stalls and THP fault fallbacks": "thpguard_vmstat_total",
    "the fault fallback ratio per THP size": "thpguard_thp_size_events_total",
}

KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
            "group_left", "group_right", "inf", "nan", "atan2", "start", "end"}

problems = []


def problem(msg):
    problems.append(msg)


def finish(ok_msg):
    for p in problems:
        print(f"FAIL: {p}")
    if not problems:
        print(ok_msg)
    return 1 if problems else 0


def thpguardd_names(srcdir):
    with open(os.path.join(srcdir, "src/daemon/metrics.c"), encoding="utf-8") as f:
        text = f.read()
    # Each family is opened by one of these, its name the first string argument.
    names = set(re.findall(r'\b(?:family|KNOB_SAMPLES|single_gauge)\(\s*f\s*,\s*(?:s\s*,\s*)?"(thpguard_[a-z0-9_]+)"', text))
    if len(names) < 5:
        raise SystemExit(f"FAIL: found only {sorted(names)} in src/daemon/metrics.c: has family() changed, or a helper that opens one been added?")
    return names


def metric_names(expr):
    """The metric names a PromQL expression reads (not functions, keywords or labels)."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)
    s = re.sub(r"\{[^}]*\}", " ", s)
    s = re.sub(r"\[[^\]]*\]", " ", s)
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    names = set()
    for m in re.finditer(r"(?<![\w:.])([A-Za-z_:][\w:]*)(\s*\()?", s):
        word, call = m.group(1), m.group(2)
        if call or word in KEYWORDS:
            continue
        names.add(word)
    # A selector with no name, {__name__=~"..."}, is refused: we could not check it.
    if "__name__" in expr:
        names.add("__name__ selector")
    return names


def slug(heading):
    """GitHub's anchor for a Markdown heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def rules_check(srcdir, rules_path):
    allowed = thpguardd_names(srcdir) | NODE_EXPORTER
    with open(rules_path, encoding="utf-8") as f:
        rules = yaml.safe_load(f)
    readme = os.path.join(srcdir, "packaging/monitoring/README.md")
    with open(readme, encoding="utf-8") as f:
        anchors = {slug(m) for m in re.findall(r"^#+\s+(.*)$", f.read(), re.M)}
    recorded = {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}
    alerts = []
    for g in rules["groups"]:
        for r in g["rules"]:
            what = r.get("alert") or r.get("record")
            for n in sorted(metric_names(r["expr"]) - allowed - recorded):
                problem(f"{what} reads {n}, which neither thpguardd nor node-exporter ({sorted(NODE_EXPORTER)}) writes")
            if "alert" not in r:
                continue
            alerts.append(r["alert"])
            ann = r.get("annotations", {})
            for key in ("summary", "description", "runbook_url"):
                if not str(ann.get(key, "")).strip():
                    problem(f"{what} has no {key} annotation")
            url = str(ann.get("runbook_url", ""))
            if not url.startswith("packaging/monitoring/README.md#"):
                problem(f"{what}: runbook_url {url!r} does not point into packaging/monitoring/README.md")
            elif url.split("#", 1)[1] != slug(what) or slug(what) not in anchors:
                problem(f"{what}: runbook_url {url!r} has no section `{what}` in packaging/monitoring/README.md")
            if "severity" not in r.get("labels", {}):
                problem(f"{what} has no severity label")
    if len(alerts) != len(set(alerts)):
        problem("two alerts share a name")

    # promtool lists only firing alerts: a case with exp_alerts naming the alert, and
    # one with exp_alerts: [] (nothing fires there, not even for the firing case's node).
    with open(os.path.join(srcdir, "tests/monitoring/rules.test.yaml"), encoding="utf-8") as f:
        tests = yaml.safe_load(f)
    fires, quiet = set(), set()
    for t in tests["tests"]:
        for a in t.get("alert_rule_test", []):
            (fires if a.get("exp_alerts") else quiet).add(a["alertname"])
    for a in alerts:
        if a not in fires:
            problem(f"tests/monitoring/rules.test.yaml has no case where {a} fires")
        if a not in quiet:
            problem(f"tests/monitoring/rules.test.yaml has no case where {a} does not fire")
    return finish(f"{rules_path}: {len(alerts)} alerts, {len(recorded)} recording rules; "
                  f"annotations, runbooks, series and test cases hold")


def grafana_to_promql(expr):
    """Grafana's variables as Prometheus would see them after interpolation."""
    return (expr.replace("$__rate_interval", "1m").replace("$__interval", "1m")
            .replace("$__range", "1h").replace('"$instance"', '".*"'))


def dashboard_check(srcdir, outdir, path):
    allowed = thpguardd_names(srcdir) | NODE_EXPORTER
    try:
        with open(path, encoding="utf-8") as f:
            dash = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"FAIL: {path} does not parse as JSON: {e}")
    exprs = []
    panels = list(dash.get("panels", []))
    for p in list(panels):
        panels.extend(p.get("panels", []))  # rows
    ids = [p.get("id") for p in panels]
    if len(ids) != len(set(ids)):
        problem("two panels share an id")
    for p in panels:
        for t in p.get("targets", []):
            if "expr" not in t:
                continue
            exprs.append({"panel": p.get("title"), "ref": t.get("refId"), "expr": t["expr"],
                          "promql": grafana_to_promql(t["expr"])})
    if not exprs:
        problem("the dashboard has no Prometheus expression")
    read = set()
    for e in exprs:
        names = metric_names(e["promql"])
        if not names:
            problem(f"panel {e['panel']!r} {e['ref']}: no metric name found in {e['expr']!r}")
        for n in sorted(names - allowed):
            problem(f"panel {e['panel']!r} reads {n}, which neither thpguardd nor node-exporter "
                    f"({sorted(NODE_EXPORTER)}) writes")
        if "$" in e["promql"]:
            problem(f"panel {e['panel']!r}: a Grafana variable this check does not know: {e['expr']!r}")
        read |= names
    for what, name in DASHBOARD_MUST_READ.items():
        if name not in read:
            problem(f"the dashboard shows no {what}: no panel reads {name}")
    for t in dash.get("templating", {}).get("list", []):
        q = t.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        m = re.match(r"label_values\((\w+)", str(q or ""))
        if m and m.group(1) not in allowed:
            problem(f"variable {t.get('name')} reads {m.group(1)}, which thpguardd does not write")

    os.makedirs(outdir, exist_ok=True)
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:panel{i}", "expr": e["promql"]} for i, e in enumerate(exprs)]}]}
    with open(os.path.join(outdir, "dashboard-rules.yaml"), "w", encoding="utf-8") as f:
        yaml.safe_dump(rules, f, sort_keys=False)
    with open(os.path.join(outdir, "dashboard-exprs.json"), "w", encoding="utf-8") as f:
        json.dump(exprs, f, indent=1)
    return finish(f"{path}: {len(panels)} panels, {len(exprs)} expressions, reading {sorted(read)}")


UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def seconds(d):
    total = 0.0
    for n, u in re.findall(r"(\d+)(ms|[smhdwy])", d):
        total += int(n) * UNITS[u]
    return total


def scaled(d, floor):
    return f"{max(int(seconds(d) / 60), floor)}s"


def testcopy(rules_path, out_path):
    with open(rules_path, encoding="utf-8") as f:
        rules = yaml.safe_load(f)
    for g in rules["groups"]:
        for r in g["rules"]:
            r["expr"] = re.sub(r"\[((?:\d+(?:ms|[smhdwy]))+)\]",
                               lambda m: f"[{scaled(m.group(1), 2)}]", r["expr"])
            if "for" in r:
                r["for"] = scaled(r["for"], 4)
    with open(out_path, "w", encoding="utf-8") as f:
        yaml.safe_dump(rules, f, sort_keys=False)
    return 0


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    cmd, srcdir = argv[1], argv[2]
    if cmd == "names":
        print("\n".join(sorted(thpguardd_names(srcdir))))
        return 0
    if cmd == "rules":
        return rules_check(srcdir, argv[3] if len(argv) > 3 else
                           os.path.join(srcdir, "packaging/monitoring/thpguard-rules.yaml"))
    if cmd == "dashboard" and len(argv) >= 4:
        return dashboard_check(srcdir, argv[3], argv[4] if len(argv) > 4 else
                               os.path.join(srcdir, "packaging/monitoring/thpguard-dashboard.json"))
    if cmd == "testcopy" and len(argv) == 4:
        return testcopy(argv[2], argv[3])
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
