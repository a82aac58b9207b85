#!/bin/bash
# The whole chain, for real, on 127.0.0.1 only:
#   thpguardd (on this machine's real THP sysfs) writes its textfile
#   -> Debian's prometheus-node-exporter (textfile collector on that directory)
#   -> Debian's prometheus, scraping every second, evaluating every second, with
#      a test copy of packaging/monitoring/thpguard-rules.yaml in which every
#      duration is divided by 60 (for: 10m -> 10s, [15m] -> [15s]; check-monitoring.py testcopy).
# Through Prometheus' HTTP API (/api/v1/alerts) it sees:
#  1. audit mode, defrag drifted by hand: ThpguardNodeNotCompliant goes pending,
#     then firing (and ThpguardWriterFight stays quiet); put back: resolved;
#  2. enforce mode, a writer fight on defrag: ThpguardWriterFight and
#     ThpguardNodeNotCompliant go pending, then firing; every dashboard
#     expression runs on the live data (the drifted-nodes table included,
#     and the per-size fallback ratio while thp-helper faults in 2 MiB pages);
#     the other writer stops: both resolve;
#  3. an invalid policy: ThpguardPolicyReloadFailed fires;
#  4. SIGTERM: ThpguardDown goes pending, then firing; thpguardd again: resolved;
# and ThpguardMetricsStale never fires. The test starts and stops all three
# processes itself, leaves nothing running, and restores every knob.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
NODE_EXPORTER=${NODE_EXPORTER:-/usr/bin/prometheus-node-exporter}
[ -x "$PROMETHEUS" ] || skip "$PROMETHEUS is not installed (apt-get install prometheus)"
[ -x "$NODE_EXPORTER" ] || skip "$NODE_EXPORTER is not installed (apt-get install prometheus-node-exporter)"
python_with yaml python3-yaml
real_sysfs_begin
[ -f "$THP/defrag" ] || skip "$THP/defrag does not exist on this kernel"

# stop_pid VAR: SIGTERM the process whose pid VAR holds, wait for it, clear VAR.
stop_pid() {
        terminate "${!1}"
        printf -v "$1" '%s' ''
}
NE='' PROM='' FIGHTER='' GROW=''
on_exit 'stop_pid NE'
on_exit 'stop_pid PROM'
on_exit 'stop_pid FIGHTER'
on_exit 'stop_pid GROW'


TEXTFILE=$TMP/textfile
mkdir -p "$TEXTFILE" "$TMP/policy" "$TMP/tsdb"
POLICY=$TMP/policy/thpguard.conf
M=$TEXTFILE/thpguard.prom
policy() {
        write_policy "$POLICY" <<POL
mode = "$1";
recheck_interval = 2;
fight_threshold = 5;
fight_window = 10;
thp = { defrag = "madvise"; };
POL
}

# --- the three processes ---------------------------------------------------
thp_set defrag madvise
policy audit
daemon_start --metrics-file "$M"
wait_until 5 test -s "$M" || fail "thpguardd wrote no metrics file at $M"
metric_is "$M" thpguard_up 1 || fail "the metrics file does not say thpguard_up 1"

# Our own node-exporter and Prometheus, on ports of their own (listen_start:
# never one that another test's server, or anything else, has).
ne_has_thpguard() { curl -sf --max-time 5 "http://127.0.0.1:$1/metrics" | grep -q '^thpguard_up 1'; }
listen_start "$TMP/ne.log" ne_has_thpguard "$NODE_EXPORTER" --web.listen-address=127.0.0.1:@PORT@ \
        --collector.disable-defaults --collector.textfile --collector.textfile.directory="$TEXTFILE"
NE=$LISTEN_PID NE_PORT=$LISTEN_PORT # stopped by stop_pid NE
echo "node-exporter on 127.0.0.1:$NE_PORT exports $(curl -sf --max-time 5 "http://127.0.0.1:$NE_PORT/metrics" | grep -c '^thpguard_') thpguard samples"

"$PY" "$MT/check-monitoring.py" testcopy "$MON/thpguard-rules.yaml" "$TMP/rules.yaml"
cat >"$TMP/prometheus.yml" <<CFG
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $TMP/rules.yaml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$NE_PORT']
CFG
prom_ready() { curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$1/-/ready"; }
listen_start "$TMP/prom.log" prom_ready "$PROMETHEUS" --config.file="$TMP/prometheus.yml" \
        --storage.tsdb.path="$TMP/tsdb" --web.listen-address=127.0.0.1:@PORT@
PROM=$LISTEN_PID PROM_PORT=$LISTEN_PORT # stopped by stop_pid PROM
URL=http://127.0.0.1:$PROM_PORT
api() { "$PY" "$MT/promapi.py" "$@"; }
up_scraped() { [ "$(api value "$URL" 'thpguard_up{job="node"}')" = 1 ]; }
wait_until 20 up_scraped || { tail -20 "$TMP/prom.log" >&2; fail "prometheus does not see thpguard_up 1"; }
echo "prometheus on 127.0.0.1:$PROM_PORT scrapes it, rules: $(grep -c -e '- alert:' -e 'alert:' "$TMP/rules.yaml") alerts"
SEEN=$TMP/seen
# A clean start: nothing fires.
api watch "$URL" 5 --seen "$SEEN" ThpguardNodeNotCompliant=inactive ThpguardDown=inactive ||
        fail "alerts are active on a compliant node"

# --- 1. audit mode: a drift stays ------------------------------------------
echo "1. audit mode; defrag drifted to always"
thp_set defrag always
wait_until 5 metric_is "$M" 'thpguard_knob_compliant{knob="defrag"}' 0 || fail "the metrics file does not say defrag drifted"
api watch "$URL" 60 --seen "$SEEN" ThpguardNodeNotCompliant=pending ThpguardNodeNotCompliant=firing \
        '!ThpguardWriterFight' || fail "ThpguardNodeNotCompliant did not go pending, then firing, on an audit-mode drift"
[ "$(thp_get defrag)" = always ] || fail "audit mode wrote defrag"
thp_set defrag madvise
api watch "$URL" 30 --seen "$SEEN" --after-active ThpguardNodeNotCompliant=inactive ||
        fail "ThpguardNodeNotCompliant did not resolve once defrag was put back"

# --- 2. enforce mode: a writer fight ----------------------------------------
echo "2. enforce mode; another writer keeps setting defrag to never"
policy enforce
wait_until 5 metric_is "$M" 'thpguard_policy_reloads_total{result="ok"}' 1 || fail "the enforce policy was not reloaded"
# The other writer: every 50 ms until told to stop, 120 s at most.
( for _ in $(seq 2400); do [ -e "$TMP/stop-fighter" ] && exit 0; echo never >"$THP/defrag"; sleep 0.05; done ) 9>&- &
FIGHTER=$!
api watch "$URL" 60 --seen "$SEEN" ThpguardWriterFight=pending ThpguardWriterFight=firing ||
        fail "ThpguardWriterFight did not go pending, then firing, during a writer fight"
api watch "$URL" 60 --seen "$SEEN" ThpguardNodeNotCompliant=pending ThpguardNodeNotCompliant=firing ||
        fail "ThpguardNodeNotCompliant did not go pending, then firing, during a writer fight"
has_event writer_fight knob=defrag || fail "the daemon did not log the writer fight"
# Real 2 MiB faults (madvised), so that the per-size panel has a line: the per-size stats through
# the daemon, node-exporter and Prometheus. Where the kernel has no such stats, no line.
size_panel=(--may-be-empty "THP fault fallback ratio per size")
if [ -f "$THP/hugepages-2048kB/stats/anon_fault_alloc" ]; then
        [ "$(thp_get enabled)" != never ] || thp_set enabled madvise
        [ "$(thp_get hugepages-2048kB/enabled)" != never ] || thp_set hugepages-2048kB/enabled inherit
        "$THP_HELPER" grow 64 >"$TMP/grow.out" 9>&- &
        GROW=$!
        size_faults() {
                [ -n "$(api value "$URL" 'count(sum by (instance) (rate(thpguard_thp_size_events_total{size="2048kB",counter=~"anon_fault_(alloc|fallback)"}[1m])) > 0)')" ]
        }
        wait_until 30 size_faults || fail "Prometheus has no 2048kB anon fault rate while thp-helper grow faults"
        size_panel=()
        echo "   2048kB anon faults in Prometheus: $(api value "$URL" 'sum(rate(thpguard_thp_size_events_total{size="2048kB",counter=~"anon_fault_(alloc|fallback)"}[1m]))')/s"
fi
echo "   every dashboard expression on the live data:"
"$PY" "$MT/check-monitoring.py" dashboard "$SRCDIR" "$TMP/dash" >/dev/null
# No khugepaged while THP is off (another test's state before ours): then that panel has no line.
api dashboard "$URL" "$TMP/dash/dashboard-exprs.json" --may-be-empty "Stopped thpguardd" \
        --may-be-empty "khugepaged CPU per node" "${size_panel[@]}" ||
        fail "a dashboard expression fails or has no data (above)"
stop_pid GROW
touch "$TMP/stop-fighter"
wait_exit "$FIGHTER" 10 || true
FIGHTER=
api watch "$URL" 90 --seen "$SEEN" --after-active ThpguardWriterFight=inactive ThpguardNodeNotCompliant=inactive ||
        fail "the fight's alerts did not resolve once the other writer stopped"
[ "$(thp_get defrag)" = madvise ] || fail "defrag is $(thp_get defrag) after the fight, not the policy's madvise"

# --- 3. a policy that does not load -----------------------------------------
echo "3. an invalid policy"
grep -qx ThpguardPolicyReloadFailed "$SEEN" && fail "ThpguardPolicyReloadFailed was active before any reload failed"
echo 'recheck_interval = "often";' | write_policy "$POLICY"
wait_until 5 metric_is "$M" 'thpguard_policy_reloads_total{result="failed"}' 1 || fail "the failed reload is not counted"
api watch "$URL" 30 --seen "$SEEN" ThpguardPolicyReloadFailed=firing-at-once ||
        fail "ThpguardPolicyReloadFailed did not fire"
policy enforce

# --- 4. thpguardd stops ------------------------------------------------------
echo "4. thpguardd stops (SIGTERM)"
daemon_stop
metric_is "$M" thpguard_up 0 || fail "the metrics file does not say thpguard_up 0 after SIGTERM"
api watch "$URL" 60 --seen "$SEEN" ThpguardDown=pending ThpguardDown=firing || fail "ThpguardDown did not go pending, then firing"
daemon_start --metrics-file "$M"
api watch "$URL" 30 --seen "$SEEN" --after-active ThpguardDown=inactive || fail "ThpguardDown did not resolve once thpguardd ran again"

grep -qx ThpguardMetricsStale "$SEEN" && fail "ThpguardMetricsStale went active while thpguardd kept its file fresh"
echo "ThpguardMetricsStale never went active"

# --- nothing left behind -----------------------------------------------------
daemon_kill
stop_pid PROM
stop_pid NE
for port in "$NE_PORT" "$PROM_PORT"; do
        if curl -s --max-time 5 -o /dev/null "http://127.0.0.1:$port/"; then fail "something still listens on 127.0.0.1:$port"; fi
done
echo "PASS"
