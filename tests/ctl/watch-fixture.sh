# thpguardctl watch off a terminal, on fixture trees that a writer changes
# while it runs: thp_fault_alloc and a process's AnonHugePages go up,
# compact_stall and the 2 MiB anon_fault_fallback go down (a reset), the
# 64 kB anon faults go up by 30 a step of which 10 fall back (a fallback
# ratio of 0.25), the 2 MiB split goes up, and the kernel has no
# thp_underused_split_page, no PSI and no khugepaged (and 8 kB no anon_*).
# Per size: the ratio is fallback / (alloc + fallback) of the frame's own
# rates, unknown (null, -) where a size took no fault or lacks the counters.
# The --json lines parse, no rate is ever negative, what is absent is null
# (not 0), a counter that went down is a reset; the line mode's header has
# the documented columns and every line parses against it.
. "$(dirname "$0")/lib.sh"
C=$THPGUARDCTL

cp -a "$FIXTURES/6.18" "$TMP/sys"
SIZE_STATS=$TMP/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/stats
S64=$TMP/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats
mkdir -p "$TMP/proc/100"
cp "$CTL_FIXTURES/proc-hostile/meminfo" "$TMP/proc/meminfo"
cp "$CTL_FIXTURES/proc-hostile/100/status" "$TMP/proc/100/status"
write_policy "$TMP/policy.conf" <"$CTL_FIXTURES/policy.conf"

# state I: the counters at step I, each file replaced by a rename so that a read never sees half of it.
state() {
        local i=$1
        printf '%s\n' "nr_anon_transparent_hugepages 10" "compact_stall $((100000 - 1000 * i))" \
                "compact_fail 5" "compact_success 7" "thp_fault_alloc $((1000 + 100 * i))" \
                "thp_fault_fallback 3" "thp_collapse_alloc 0" "thp_collapse_alloc_failed 0" \
                "thp_split_page 0" "thp_deferred_split_page 0" >"$TMP/proc/.vmstat"
        mv "$TMP/proc/.vmstat" "$TMP/proc/vmstat"
        sed "s/^AnonHugePages: .*/AnonHugePages:      $((2048 * (i + 1))) kB/" \
                "$CTL_FIXTURES/proc-hostile/100/smaps_rollup" >"$TMP/proc/100/.smaps_rollup"
        mv "$TMP/proc/100/.smaps_rollup" "$TMP/proc/100/smaps_rollup"
        echo $((50000 - 100 * i)) >"$SIZE_STATS/.fallback"
        mv "$SIZE_STATS/.fallback" "$SIZE_STATS/anon_fault_fallback"
        echo $((100 + 5 * i)) >"$SIZE_STATS/.split"
        mv "$SIZE_STATS/.split" "$SIZE_STATS/split"
        echo $((1000 + 30 * i)) >"$S64/.alloc"
        mv "$S64/.alloc" "$S64/anon_fault_alloc"
        echo $((500 + 10 * i)) >"$S64/.fallback"
        mv "$S64/.fallback" "$S64/anon_fault_fallback"
}
state 0
writer() {
        local i=1
        while :; do
                state "$i"
                i=$((i + 1))
                sleep 0.1
        done
}
writer &
WRITER=$!
stop_on_exit "$WRITER"

watch_fixture() {
        run timeout 60 "$C" watch --interval 0.3 --count 6 --sysfs-root "$TMP/sys" --proc-root "$TMP/proc" \
                --config "$TMP/policy.conf" "$@"
        expect_rc 0
        expect_err_empty
}

watch_fixture --json
python3 - "$OUT_FILE" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    print("\n".join(lines), file=sys.stderr)
    sys.exit(1)
if len(lines) != 6:
    fail("%d lines for --count 6" % len(lines))
frames = [json.loads(l) for l in lines]
def rates(d):
    yield from d["rates"].items()
    for k in ("khugepaged", "memory_pressure"):
        yield from ((k + "." + n, v) for n, v in d[k].items())
    for s in d["sizes"]:
        yield "size %d alloc" % s["size_kb"], s["anon_fault_alloc_per_s"]
        yield "size %d fallback" % s["size_kb"], s["anon_fault_fallback_per_s"]
        yield "size %d split" % s["size_kb"], s["split_per_s"]
def size(d, kb):
    return next(s for s in d["sizes"] if s["size_kb"] == kb)
for d in frames:
    for s in d["sizes"]:
        a, f, q = s["anon_fault_alloc_per_s"], s["anon_fault_fallback_per_s"], s["anon_fault_fallback_ratio"]
        if a is None or f is None or a + f == 0:
            if q is not None:
                fail("size %d: a fallback ratio %s without faults of both kinds" % (s["size_kb"], q))
        elif q is None or not 0 <= q <= 1 or abs(q - f / (a + f)) > 0.01:
            fail("size %d: fallback ratio %s for %s alloc/s and %s fallback/s" % (s["size_kb"], q, a, f))
    if size(d, 8)["anon_fault_alloc_per_s"] is not None or size(d, 8)["split_per_s"] is None:
        fail("8 kB has split but no anon_fault_*: null alloc, a split rate")
    if size(d, 16)["anon_fault_alloc_per_s"] != 0 or size(d, 16)["anon_fault_fallback_ratio"] is not None:
        fail("16 kB took no fault: alloc 0, ratio null")
    for name, v in rates(d):
        if v is not None and v < 0:
            fail("a negative rate: %s = %s" % (name, v))
    if d["rates"]["thp_underused_split_page"] is not None:
        fail("thp_underused_split_page is not in this vmstat: it must be null, not a number")
    if any(v is not None for v in d["memory_pressure"].values()):
        fail("no pressure/memory in this proc tree: PSI must be null")
    if d["khugepaged"]["cpu_percent"] is not None:
        fail("no khugepaged in this proc tree: its CPU must be null")
    if d["rates"]["thp_fault_alloc"] is None or d["rates"]["compact_stall"] is None:
        fail("counters the fixture has are null")
    if d["enabled"] != "madvise" or d["policy"]["state"] not in ("compliant", "drift"):
        fail("enabled or the policy state")
    if d["anon_huge_pages_kb"] != 51200:
        fail("AnonHugePages of the fixture's meminfo")
# Lower bounds: the writer moved the counters between some pair of samples.
if not any(d["rates"]["thp_fault_alloc"] > 0 for d in frames):
    fail("thp_fault_alloc went up, yet no frame has a rate above 0")
if not any("compact_stall" in d["resets"] for d in frames):
    fail("compact_stall went down, yet no frame calls it a reset")
if not any("hugepages-2048kB/anon_fault_fallback" in d["resets"] for d in frames):
    fail("the 2 MiB anon_fault_fallback went down, yet no frame calls it a reset")
if not any(size(d, 2048)["split_per_s"] > 0 for d in frames):
    fail("the 2 MiB split went up, yet no frame has a split rate above 0")
# 10 of every 30 + 10 faults fell back; the two files are replaced one after the other, so a sample may
# catch them a step apart.
if not any(0.2 <= (size(d, 64)["anon_fault_fallback_ratio"] or -1) <= 0.3 for d in frames):
    fail("64 kB: no frame with a fallback ratio near 0.25: %s" % [size(d, 64) for d in frames])
if not any(p["pid"] == 100 and p["name"] == "java" and p["growth_kb"] > 0
           for d in frames for p in d["processes"]["top"]):
    fail("process 100 grew, yet is in no top list")
print("json: %d frames, fault rates %s" % (len(frames), [d["rates"]["thp_fault_alloc"] for d in frames]))
PY

watch_fixture
python3 - "$OUT_FILE" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1], encoding="utf-8").read().splitlines() if not l.startswith("# ")]
def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    print("\n".join(lines), file=sys.stderr)
    sys.exit(1)
header = lines[0].split()
expected = ["time", "enabled", "defrag", "policy", "fault/s", "fallback/s", "collapse/s", "collapse_fail/s",
            "split/s", "split_deferred/s", "split_underused/s", "compact_stall/s", "compact_fail/s",
            "compact_success/s", "khugepaged_cpu%", "collapsed/s", "full_scans/s", "psi_some_avg10",
            "psi_full_avg10", "some_stall_ms/s", "full_stall_ms/s", "anon_huge_MiB", "anon_huge_change_MiB"]
sizes = ["%dkB_%s" % (s, k) for s in (8, 16, 32, 64, 128, 256, 512, 1024, 2048)
         for k in ("alloc/s", "fallback/s", "fallback_ratio", "split/s")]
expected += sizes + ["top_pid", "top_growth_MiB", "top_name"]
if header != expected:
    fail("header %s, expected %s" % (header, expected))
if len(lines) != 7:
    fail("%d lines: expected the header and 6" % len(lines))
numeric = re.compile(r"^(-|[+-]?[0-9]+(\.[0-9]+)?)$")
rows = []
for l in lines[1:]:
    f = l.split(None, len(header) - 1)
    if len(f) != len(header):
        fail("%d fields, the header has %d: %r" % (len(f), len(header), l))
    row = dict(zip(header, f))
    rows.append(row)
    if not re.match(r"^[0-9]{2}:[0-9]{2}:[0-9]{2}$", row["time"]):
        fail("time %r" % row["time"])
    for name in header[4:-1]:
        if not numeric.match(row[name]):
            fail("%s is %r, not a number or -" % (name, row[name]))
        if name.endswith("/s") and row[name] != "-" and float(row[name]) < 0:
            fail("a negative rate: %s %s" % (name, row[name]))
    for absent in ("split_underused/s", "khugepaged_cpu%", "psi_some_avg10", "some_stall_ms/s", "8kB_alloc/s",
                   "8kB_fallback_ratio", "16kB_fallback_ratio"):
        if row[absent] != "-":
            fail("%s is absent on this fixture: '-', not %r" % (absent, row[absent]))
    if row["8kB_split/s"] == "-":
        fail("8kB_split/s: 8 kB has a split counter")
    q = row["64kB_fallback_ratio"]
    if q != "-" and not 0 <= float(q) <= 1:
        fail("64kB_fallback_ratio %r is no share" % q)
if not any(float(r["fault/s"]) > 0 for r in rows):
    fail("no line with fault/s above 0")
if not any(r["64kB_fallback_ratio"] != "-" and 0.2 <= float(r["64kB_fallback_ratio"]) <= 0.3 for r in rows):
    fail("no line with a 64 kB fallback ratio near 0.25")
if not any(float(r["2048kB_split/s"]) > 0 for r in rows):
    fail("no line with 2048kB_split/s above 0")
if not any(r["top_pid"] == "100" and r["top_name"] == "java" for r in rows):
    fail("process 100 is never the top grower")
print("lines: %d, fault/s %s" % (len(rows), [r["fault/s"] for r in rows]))
PY

# Usage errors: exit 2 with a line that names the value.
run "$C" watch --interval 0.01
expect_rc 2
expect_err "--interval '0.01'"
run "$C" watch --count 0
expect_rc 2
run "$C" watch --top 1001
expect_rc 2
run "$C" watch extra
expect_rc 2
run "$C" watch --proc-root "$TMP/nowhere" --count 1
expect_rc 1
echo PASS
