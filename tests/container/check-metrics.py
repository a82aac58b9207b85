#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Validates a thpguardd metrics file with a real exposition-format parser.

    check-metrics.py FILE [--all] [EXPECT...]

The parser is prometheus_client's (Debian: python3-prometheus-client), the
text-format parser of the Prometheus project's Python client, not a regex of
our own. On top of a clean parse it checks that every family has # HELP and
a gauge or counter # TYPE, that a family the daemon writes only in some
configurations has its own type where it is there (the per-size families
also their labels), and with --all that
every family the daemon promises is there. Each EXPECT is SAMPLE=VALUE, SAMPLE>=VALUE or
SAMPLE<=VALUE, where
SAMPLE is written as in the file: name or name{label="value",...} (labels
in any order). Exit 0 if all holds, 1 with the reasons otherwise; 77 if the
parser is not installed.
"""
import re
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("SKIP: prometheus_client is not installed (apt-get install python3-prometheus-client)")
    sys.exit(77)

FAMILIES = {
    "thpguard_up": "gauge",
    "thpguard_recheck_interval_seconds": "gauge",
    "thpguard_knob_compliant": "gauge",
    "thpguard_knob_supported": "gauge",
    "thpguard_corrections_total": "counter",
    "thpguard_correction_failures_total": "counter",
    "thpguard_writer_fights_total": "counter",
    "thpguard_last_correction_timestamp_seconds": "gauge",
    "thpguard_policy_reloads_total": "counter",
    "thpguard_rechecks_total": "counter",
    "thpguard_anon_huge_pages_bytes": "gauge",
    "thpguard_shmem_huge_pages_bytes": "gauge",
    "thpguard_vmstat_total": "counter",
}
# Families the daemon writes only in some configurations: checked for their
# type where they are there, never required by --all.
OPTIONAL_FAMILIES = {
    "thpguard_write_source": "gauge",
    # while the BPF write probe is the write source
    "thpguard_write_probe_lost_records_total": "counter",
    # on a kernel with hugepages-*kB/stats/ (6.10+): its counters, and its nr_* gauges
    "thpguard_thp_size_events_total": "counter",
    "thpguard_thp_size_pages": "gauge",
}
# The labels each sample of these families must carry, and nothing else.
FAMILY_LABELS = {
    "thpguard_thp_size_events_total": {"size", "counter"},
    "thpguard_thp_size_pages": {"size", "kind"},
}


def family_key(name, typ):
    # The parser names a counter family without its _total suffix.
    return name[: -len("_total")] if typ == "counter" and name.endswith("_total") else name


def parse_expect(text):
    m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?(>=|<=|=)(.+)', text)
    if not m:
        raise SystemExit(f"bad expectation: {text}")
    labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
    return m.group(1), labels, m.group(3), float(m.group(4))


def main(argv):
    args = [a for a in argv[1:] if a != "--all"]
    want_all = "--all" in argv[1:]
    if not args:
        raise SystemExit(__doc__)
    path, expects = args[0], [parse_expect(e) for e in args[1:]]
    with open(path, encoding="utf-8") as f:
        text = f.read()

    problems = []
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError and friends on bad syntax
        print(f"FAIL: {path} does not parse: {type(e).__name__}: {e}")
        return 1

    samples = {}
    seen = {}
    for fam in families:
        seen[fam.name] = fam.type
        if not fam.documentation:
            problems.append(f"family {fam.name} has no # HELP")
        if fam.type not in ("gauge", "counter"):
            problems.append(f"family {fam.name} has type {fam.type}, not gauge or counter")
        want_labels = FAMILY_LABELS.get(fam.name, FAMILY_LABELS.get(fam.name + "_total"))
        for s in fam.samples:
            if want_labels is not None and set(s.labels) != want_labels:
                problems.append(f"sample {s.name}{s.labels} has labels {sorted(s.labels)}, "
                                f"expected {sorted(want_labels)}")
            if want_labels is not None and not re.fullmatch(r"[1-9][0-9]*kB", s.labels.get("size", "")):
                problems.append(f"sample {s.name}{s.labels}: size is not <N>kB")
            key = (s.name, tuple(sorted(s.labels.items())))
            if key in samples:
                problems.append(f"sample {s.name}{s.labels} appears twice")
            samples[key] = s.value

    if want_all:
        for name, typ in FAMILIES.items():
            got = seen.get(family_key(name, typ))
            if got is None:
                problems.append(f"family {name} is missing")
            elif got != typ:
                problems.append(f"family {name} is a {got}, expected a {typ}")

    for name, typ in OPTIONAL_FAMILIES.items():
        # A counter's family is named without _total, anything else with it.
        got = seen.get(family_key(name, typ), seen.get(name))
        if got is not None and got != typ:
            problems.append(f"family {name} is a {got}, expected a {typ}")

    for name, labels, op, value in expects:
        key = (name, tuple(sorted(labels.items())))
        if key not in samples:
            problems.append(f"no sample {name}{labels}")
        elif op == "=" and samples[key] != value:
            problems.append(f"{name}{labels} is {samples[key]}, expected {value}")
        elif op == ">=" and samples[key] < value:
            problems.append(f"{name}{labels} is {samples[key]}, expected at least {value}")
        elif op == "<=" and samples[key] > value:
            problems.append(f"{name}{labels} is {samples[key]}, expected at most {value}")

    for p in problems:
        print(f"FAIL: {path}: {p}")
    if not problems:
        print(f"{path}: {len(families)} families, {len(samples)} samples parse; {len(expects)} expectations hold")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
