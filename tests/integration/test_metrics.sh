# SPDX-License-Identifier: GPL-2.0
# OpenMetrics export (--metrics-file, --metrics-listen, --metrics-label): what
# both tools write passes promtool in several modes and equals their own
# summaries; an independent sender's exact count comes out of the export; a
# real Prometheus scrapes both tools and its API gives back their totals; bad
# input is refused with one line and exit 2 before anything is attached; the
# port is on loopback unless an address is given, slow clients cannot hold the
# scrape off, and a file that cannot be written is said once, not every interval.

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"
SEND="$BUILD/tests/pktsend"

m_need() {
	command -v promtool >/dev/null || t_skip "promtool is missing (make deps installs prometheus)"
}

# promtool lints the file; any complaint fails the test.
m_promtool() { # file
	local out
	[ -s "$1" ] || t_fail "$1 is missing or empty"
	out=$(promtool check metrics <"$1" 2>&1) || t_fail "promtool check metrics $1: $out"
	[ -z "$out" ] || t_fail "promtool check metrics $1 complains: $out"
	[ "$(tail -n 1 "$1")" = "# EOF" ] || t_fail "$1 does not end with '# EOF'"
}

# The sum of one metric's samples in an exposition file (all label sets).
m_sum() { # file metric
	awk -v m="$2" '$1 ~ "^" m "[{ ]" || $1 == m { s += $NF } END { printf "%d\n", s }' "$1"
}

# For each "JSON-OUTPUT PROM-FILE" pair: the final exposition equals the summary
# (packets, bytes, verdicts, and for the xsk sink its stamp checks and latency
# count). One python call for all pairs: python starts slowly here.
m_check_summaries() { # out prom [out prom ...]
	local i
	for ((i = 1; i <= $#; i += 2)); do
		t_schema_note "${!i}"
	done
	python3 - "$@" <<-'PY'
		import json, re, sys
		row = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$')
		lab = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
		bad = 0
		def total(rows, name, **want):
		    return sum(v for n, l, v in rows if n == name and all(l.get(k) == x for k, x in want.items()))
		for out, prom in zip(sys.argv[1::2], sys.argv[2::2]):
		    s = [json.loads(l) for l in open(out) if l.startswith('{"type":"summary"')][-1]
		    rows = []
		    for line in open(prom):
		        m = row.match(line.rstrip("\n"))
		        if m:
		            rows.append((m.group(1), dict(lab.findall(m.group(2))), float(m.group(3))))
		    if s["tool"] == "xdp-gen":
		        pairs = [("tx_packets", s["tx_packets"], total(rows, "xdp_gen_tx_packets_total")),
		                 ("tx_bytes", s["tx_bytes"], total(rows, "xdp_gen_tx_bytes_total"))]
		    else:
		        pairs = [("rx_packets", s["rx_packets"], total(rows, "xdp_sink_rx_packets_total")),
		                 ("rx_bytes", s["rx_bytes"], total(rows, "xdp_sink_rx_bytes_total"))]
		        pairs += [("verdict " + k, v, total(rows, "xdp_sink_verdicts_total", verdict=k))
		                  for k, v in s["actions"].items()]
		        if "latency_ns" in s:
		            pairs += [(k, s[k], total(rows, "xdp_sink_%s_total" % k))
		                      for k in ("lost", "duplicates", "reordered")]
		            pairs.append(("latency count", s["latency_ns"]["count"],
		                          total(rows, "xdp_sink_latency_seconds_count")))
		    for what, want, got in pairs:
		        ok = want == got
		        bad += not ok
		        print("%s %s: %s: summary %s, exported %s" % ("ok" if ok else "MISMATCH", prom, what, want, got))
		sys.exit(1 if bad else 0)
	PY
}

# Every sample of each exposition FILE=IFNAME is labelled as node_exporter labels a
# network device: device="IFNAME" (IFNAME empty: no device label), never the old
# interface, no label twice; on the drop-cause metrics device is the drop's device
# and the tool's own is left off.
m_check_device() { # file=ifname ...
	python3 - "$@" <<-'PY'
		import re, sys
		row = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} \S+$')
		lab = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
		cause = ("xdp_sink_lost_by_cause_total", "xdp_sink_dropped_by_cause_total")
		bad = 0
		for arg in sys.argv[1:]:
		    prom, ifname = arg.rsplit("=", 1)
		    n = 0
		    for line in open(prom):
		        m = row.match(line.rstrip("\n"))
		        if not m:
		            continue
		        n += 1
		        names = [k for k, _ in lab.findall(m.group(2))]
		        labels = dict(lab.findall(m.group(2)))
		        why = None
		        if "interface" in names:
		            why = "carries interface= (renamed device)"
		        elif len(set(names)) != len(names):
		            why = "has a label twice"
		        elif m.group(1) not in cause and ifname and labels.get("device") != ifname:
		            why = 'lacks device="%s"' % ifname
		        elif m.group(1) not in cause and not ifname and "device" in labels:
		            why = "has a device label where the tool has no device"
		        if why:
		            bad += 1
		            print("%s: %s: %s" % (prom, why, line.strip()))
		    if not n:
		        bad += 1
		        print("%s: no samples" % prom)
		sys.exit(1 if bad else 0)
	PY
}

# One generator mode's exposition, into the sink the caller started.
m_gen_body() { # MODE DIR
	local m=$1 d=$2
	lab_exec gen "$GEN" "$m" -j -q -n 20000 --metrics-file "$d/gen-$m.prom" \
		--metrics-label host=h2 "$GEN_IF" >"$d/gen-$m.out" 2>&1 ||
		t_fail "xdp-gen $m failed: $(cat "$d/gen-$m.out")"
	m_promtool "$d/gen-$m.prom"
	grep -q "^xdp_gen_tx_packets_total{device=\"$GEN_IF\",mode=\"$m\",host=\"h2\",queue=\"0\"} " \
		"$d/gen-$m.prom" || t_fail "xdp-gen $m: labels: $(grep tx_packets "$d/gen-$m.prom")"
}

test_metrics_files_pass_promtool() {
	local d m pairs=()
	m_need
	lab_setup --no-ipv6
	d=$(mktemp -d /tmp/xdpsg-metrics.XXXXXX)
	t_on_cleanup rm -rf "$d"
	# xdp-sink drop, fed by every generator mode in turn.
	lab_bg "$d/drop.out" sink "$SINK" drop -j -q -d 120 --metrics-file "$d/drop.prom" \
		--metrics-label host=h1 --metrics-label 'note=a "b" \c' "$SINK_IF"
	local spid=$LAST_PID
	wait_ready "$d/drop.out" "$spid" || t_fail "sink did not start: $(cat "$d/drop.out")"
	t_each_mode m_gen_body "$d" || t_fail "a generator mode's exposition is wrong (above)"
	kill -INT "$spid"
	wait "$spid" || t_fail "sink exited with $?: $(cat "$d/drop.out")"
	check_verdicts_balance "$d/drop.out"
	m_promtool "$d/drop.prom"
	grep -qF 'note="a \"b\" \\c"' "$d/drop.prom" || t_fail "label value not escaped: $(head -n 3 "$d/drop.prom")"

	# xdp-sink xsk: the per-run books and the latency histogram at the end.
	lab_bg "$d/xsk.out" sink "$SINK" xsk -j -q -d 120 --metrics-file "$d/xsk.prom" "$SINK_IF"
	spid=$LAST_PID
	wait_ready "$d/xsk.out" "$spid" || t_fail "xsk sink not ready: $(cat "$d/xsk.out")"
	lab_exec gen "$GEN" xsk -q -n 5000 "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen xsk into xsk failed"
	kill -INT "$spid"
	wait "$spid" || t_fail "xsk sink exited with $?: $(cat "$d/xsk.out")"
	check_verdicts_balance "$d/xsk.out"
	m_promtool "$d/xsk.prom"
	for m in $(t_modes); do
		pairs+=("$d/gen-$m.out" "$d/gen-$m.prom")
	done
	m_check_summaries "${pairs[@]}" "$d/drop.out" "$d/drop.prom" "$d/xsk.out" "$d/xsk.prom" >&2 ||
		t_fail "exported counts differ from the summaries (above)"
	grep -q '^xdp_sink_lost_total{.*run="[0-9a-f]\{8\}"} ' "$d/xsk.prom" ||
		t_fail "no per-run lost row: $(grep lost "$d/xsk.prom")"
	local devs=("$d/drop.prom=$SINK_IF" "$d/xsk.prom=$SINK_IF")
	for m in $(t_modes); do
		devs+=("$d/gen-$m.prom=$GEN_IF")
	done
	m_check_device "${devs[@]}" >&2 || t_fail "samples not labelled device=IFNAME (above)"
	return 0
}

test_metrics_exact_count() {
	local n=100000 d
	lab_setup --no-ipv6
	d=$(mktemp -d /tmp/xdpsg-metrics.XXXXXX)
	t_on_cleanup rm -rf "$d"
	lab_bg "$d/out" sink "$SINK" drop -j -q -n $n -d 120 --metrics-file "$d/m.prom" "$SINK_IF"
	local pid=$LAST_PID
	wait_ready "$d/out" "$pid" || t_fail "sink did not start: $(cat "$d/out")"
	lab_exec gen "$SEND" -q -n $n --dst-mac "$SINK_MAC" --src-ip "$GEN_IP4" --dst-ip "$SINK_IP4" \
		"$GEN_IF" || t_fail "pktsend failed"
	wait "$pid" || t_fail "sink exited with $?: $(cat "$d/out")"
	t_expect_eq "xdp_sink_rx_packets_total summed over queues" $n \
		"$(m_sum "$d/m.prom" xdp_sink_rx_packets_total)"
	t_expect_eq "xdp_sink_rx_bytes_total summed over queues" $((n * 60)) \
		"$(m_sum "$d/m.prom" xdp_sink_rx_bytes_total)"
	grep -q '"rx_packets":'"$n," "$d/out" || t_fail "the summary does not say $n: $(tail -n 1 "$d/out")"
	check_verdicts_balance "$d/out"
}

# xdp_sink_lost_total is a counter that never falls: while the sink runs it
# holds the gaps no late frame can fill any more (past the reorder window),
# and xdp_sink_lost_pending the rest; at exit every gap is final, per run.
# Two generator runs with forced gaps: 57 mid-run (final long before the
# end), and 20 at most 100 frames before the end (the jump lands after the
# first batch of at most 16 that reaches frame 99,900), so all 20 are still
# inside the 128-frame window when the run ends.
# m_copy_has FILE COPY METRIC N: copy FILE (a snapshot: it is replaced, never
# rewritten in place); do the metric's samples sum to N in it?
m_copy_has() {
	cp "$1" "$2" && [ "$(m_sum "$2" "$3")" = "$4" ]
}

test_metrics_lost_is_a_counter() {
	local d hooks="$BUILD/test-hooks/xdp-gen" pid lost pend
	m_need
	lab_setup --no-ipv6
	d=$(mktemp -d /tmp/xdpsg-metrics.XXXXXX)
	t_on_cleanup rm -rf "$d"
	# The exact counts below need every frame received: a UMEM of 32768 frames and 100k
	# frames a second let the sink's thread stand still for 300 ms on a busy machine
	# before its fill ring runs dry (xsk_fill_ring_empty; 82 ms at 200k and 16384 did not).
	lab_bg "$d/out" sink "$SINK" xsk -j -q -d 120 -i 200ms --ring-size 65536 \
		--metrics-file "$d/m.prom" "$SINK_IF"
	pid=$LAST_PID
	wait_ready "$d/out" "$pid" || t_fail "xsk sink not ready: $(cat "$d/out")"
	for jump in 50000:57 99900:20; do
		lab_exec gen env XDPSG_TEST_SEQ_JUMP=$jump "$hooks" xsk -q -n 100000 -r 100k -b 16 \
			"$GEN_IF" >>"$d/gen" 2>&1 || t_fail "xdp-gen (jump $jump) failed: $(tail -n 3 "$d/gen")"
	done
	# The file is rewritten every 200 ms (renamed into place): wait for the last frames in it.
	t_wait_until 5 m_copy_has "$d/m.prom" "$d/mid.prom" xdp_sink_rx_packets_total \
		"$(with_marks 200000 2)" ||
		t_fail "delivered, mid-run: $(m_sum "$d/mid.prom" xdp_sink_rx_packets_total) of" \
			"$(with_marks 200000 2); the sink's drops: $(grep -h '^xdp_sink_drops_total.* [1-9]' \
				"$d/mid.prom" | paste -sd' '); the generators': $(grep -h 'drops:\|kernel:' "$d/gen" |
				paste -sd' ')"
	# A batch below the kernel's smallest tx budget (32) is no reason for a warning.
	! grep -h 'xdp-gen:' "$d/gen" || t_fail "xdp-gen warned (above) at -b 16"
	m_promtool "$d/mid.prom"
	lost=$(sed -n 's/^xdp_sink_lost_total{.*queue="0"} //p' "$d/mid.prom")
	pend=$(sed -n 's/^xdp_sink_lost_pending{.*queue="0"} //p' "$d/mid.prom")
	t_expect_eq "lost for good while running (the first gap)" 57 "$lost"
	t_expect_eq "pending while running (the gap inside the window)" 20 "$pend"
	grep -q '^# TYPE xdp_sink_lost_total counter' "$d/mid.prom" || t_fail "lost_total is not a counter"
	grep -q '^# TYPE xdp_sink_lost_pending gauge' "$d/mid.prom" || t_fail "lost_pending is not a gauge"
	kill -INT "$pid"
	wait "$pid" || t_fail "sink exited with $?: $(cat "$d/out")"
	m_promtool "$d/m.prom"
	grep -q '^xdp_sink_lost_total{.*run="[0-9a-f]\{8\}"} 57$' "$d/m.prom" || t_fail "no run with 57 lost"
	grep -q '^xdp_sink_lost_total{.*run="[0-9a-f]\{8\}"} 20$' "$d/m.prom" || t_fail "no run with 20 lost"
	t_expect_eq "nothing pending at exit" 0 "$(grep -c '^xdp_sink_lost_pending' "$d/m.prom")"
	t_expect_eq "the summary's lost" 77 "$(m_top "$d/out" lost)"
	check_verdicts_balance "$d/out"
	m_check_summaries "$d/out" "$d/m.prom" >&2 || t_fail "exported counts differ from the summary (above)"
}

# A number at the top level of the summary, before any array (python starts slowly here).
m_top() { # out key
	sed -n 's/^{"type":"summary"[^[]*"'"$2"'":\([0-9]*\)[,}].*/\1/p' "$1"
}

# Prometheus' HTTP API: one instant query, the value of its only (or summed) result.
m_query() { # port promql
	m_ns curl -sf --get --data-urlencode "query=$2" "http://127.0.0.1:$1/api/v1/query" |
		sed -n 's/.*"value":\[[^,]*,"\([0-9.e+]*\)"\].*/\1/p' | grep . || echo none
}

# Commands that need no bpffs run with plain ip netns exec: testenv's exec costs more.
m_ns() {
	ip netns exec "$SINK_NS" "$@"
}

# N different ports nothing in the sink namespace listens on.
m_free_ports() { # n
	local used p n=0
	used=" $(m_ns ss -Htln | awk '{ sub(/.*:/, "", $4); print $4 }' | paste -sd' ') "
	for p in $(shuf -i 20000-60000 -n 50); do
		[[ "$used" == *" $p "* ]] && continue
		used+="$p "
		echo "$p"
		n=$((n + 1))
		[ $n -eq "$1" ] && return 0
	done
	return 1
}

# m_poll CMD...: CMD, for t_wait_until, with a breath of a quarter second after a
# miss: Prometheus' answers change once a scrape or rule interval (1 s), and each
# try is an 'ip netns exec' and a curl; at t_wait_until's own 20 tries a second
# they were most of these tests' CPU time.
m_poll() {
	"$@" && return 0
	t_nap 0.25
	return 1
}

# Is Prometheus on PORT scraping the target on TARGET_PORT, and finding it up?
m_target_up() { # port target-port
	m_ns curl -sf "http://127.0.0.1:$1/api/v1/targets?state=active" 2>/dev/null |
		grep -q "\"scrapeUrl\":\"http://127.0.0.1:$2/metrics\",[^}]*\"health\":\"up\""
}

# Does Prometheus on PORT have the sink's total (M_GOT) equal to the sink's
# own exposition and to WANT, and not 0?
m_prom_total_is() { # port sink.prom want
	M_GOT=$(m_query "$1" 'sum(xdp_sink_rx_packets_total{host="sinkhost"})')
	[ "$M_GOT" = "$(m_sum "$2" xdp_sink_rx_packets_total)" ] && [ "$M_GOT" != 0 ] &&
		[ "$M_GOT" = "$3" ]
}

# Prometheus and both tools in the sink namespace: the generator on an extra veth pair
# there, so the scrapes go over that namespace's loopback and never through the sink's
# XDP program.
test_metrics_prometheus_scrape() {
	local d pp ps pg g0 g1 v got want ports
	command -v prometheus >/dev/null || t_skip "prometheus is missing (make deps installs it)"
	lab_setup --no-ipv6
	d=$(mktemp -d /tmp/xdpsg-prom.XXXXXX)
	t_on_cleanup rm -rf "$d"
	ports=$(m_free_ports 3) || t_fail "no free ports"
	read -r pp ps pg <<<"$(paste -sd' ' <<<"$ports")"
	g0="${LAB_NAME}p0"
	g1="${LAB_NAME}p1"
	# node_exporter's series for the sink's device, made up by a rule: the join below
	# needs nothing but the label both use.
	cat >"$d/node.rules.yml" <<-EOF
		groups:
		  - name: node_exporter_stand_in
		    interval: 1s
		    rules:
		      - record: node_network_up
		        expr: vector(1)
		        labels: { device: '$g1' }
	EOF
	cat >"$d/prometheus.yml" <<-EOF
		global:
		  scrape_interval: 1s
		  scrape_timeout: 900ms
		rule_files: ['$d/node.rules.yml']
		scrape_configs:
		  - job_name: xdpsg
		    static_configs:
		      - targets: ['127.0.0.1:$ps', '127.0.0.1:$pg']
	EOF
	# First: Prometheus takes up its targets only about 5 s after it starts.
	lab_bg "$d/prom.log" sink prometheus --config.file="$d/prometheus.yml" \
		--storage.tsdb.path="$d/data" --web.listen-address="127.0.0.1:$pp"
	ip -n "$SINK_NS" link add "$g0" type veth peer name "$g1" || t_fail "cannot add a veth pair"
	m_ns sysctl -qw "net.ipv6.conf.$g0.disable_ipv6=1" "net.ipv6.conf.$g1.disable_ipv6=1"
	ip -n "$SINK_NS" link set "$g0" up && ip -n "$SINK_NS" link set "$g1" up
	lab_bg "$d/sink.out" sink "$SINK" drop -j -q -d 120 --metrics-listen "127.0.0.1:$ps" \
		--metrics-file "$d/sink.prom" --metrics-label host=sinkhost "$g1"
	local spid=$LAST_PID
	wait_ready "$d/sink.out" "$spid" || t_fail "sink did not start: $(cat "$d/sink.out")"
	t_wait_until 15 m_poll m_target_up "$pp" "$ps"
	m_ns curl -sf "http://127.0.0.1:$pp/api/v1/targets?state=active" |
		grep -q "\"health\":\"up\"" || t_fail "prometheus does not scrape the sink: $(tail -n 5 "$d/prom.log")"
	# A paced generator, so that Prometheus scrapes it while it sends.
	lab_exec sink "$GEN" xsk -j -i 250ms -n 20000 --rate 10000 --metrics-listen "127.0.0.1:$pg" \
		--metrics-label host=genhost --src-ip 10.99.0.1 --dst-ip 10.99.0.2 \
		--dst-mac "$(ip -n "$SINK_NS" -br link show dev "$g1" | awk '{ print $3 }')" \
		"$g0" >"$d/gen.out" 2>&1 || t_fail "xdp-gen failed: $(cat "$d/gen.out")"
	# Every scrape of the generator equals its own count at one of its reports.
	v=$(m_ns curl -sf --get \
		--data-urlencode "query=xdp_gen_tx_packets_total{host=\"genhost\",queue=\"0\"}[2m]" \
		"http://127.0.0.1:$pp/api/v1/query") || t_fail "query failed"
	t_schema_note "$d/gen.out"
	python3 - "$d/gen.out" "$v" <<-'PY' || t_fail "generator scrapes do not match its reports"
		import json, sys
		lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
		totals, t = {0}, 0
		for o in lines:
		    if o["type"] == "interval":
		        t += o["tx_packets"]
		        totals.add(t)
		    if o["type"] == "summary":
		        summary = o["tx_packets"]
		totals.add(summary)
		res = json.loads(sys.argv[2])["data"]["result"]
		vals = [int(float(v)) for _, v in res[0]["values"]] if res else []
		bad = [v for v in vals if v not in totals]
		print("scraped", vals, "summary", summary, file=sys.stderr)
		sys.exit(1 if not vals or bad or max(vals) == 0 or max(vals) > summary else 0)
	PY
	# The sink's total as Prometheus has it, once it stops moving, equals its summary.
	want=$(($(m_top "$d/gen.out" tx_packets) + $(m_top "$d/gen.out" marks))) # its marks arrive too
	t_wait_until 12 m_poll m_prom_total_is "$pp" "$d/sink.prom" "$want"
	got=$M_GOT
	# The labels (common and --metrics-label) as Prometheus stored them, while the sink runs.
	v=$(m_ns curl -sf --get --data-urlencode 'query=xdp_sink_rx_packets_total{queue="0"}' \
		"http://127.0.0.1:$pp/api/v1/query")
	for l in '"host":"sinkhost"' '"mode":"drop"' "\"device\":\"$g1\"" '"queue":"0"'; do
		[[ "$v" == *"$l"* ]] || t_fail "the sink's series in Prometheus lacks $l: $v"
	done
	[[ "$v" == *'"interface":'* ]] && t_fail "the sink's series still has interface: $v"
	# Joined with node_exporter's series of the same device, the count is unchanged.
	v=$(m_query "$pp" 'sum(xdp_sink_rx_packets_total{host="sinkhost"} * on(device) group_left node_network_up)')
	t_expect_eq "xdp_sink_rx_packets_total * on(device) group_left node_network_up" "$got" "$v"
	kill -INT "$spid"
	wait "$spid" || t_fail "sink exited with $?: $(cat "$d/sink.out")"
	check_verdicts_balance "$d/sink.out"
	t_expect_eq "Prometheus' xdp_sink_rx_packets_total = the sink's summary" \
		"$(m_top "$d/sink.out" rx_packets)" "$got"
	t_expect_eq "the generator's confirmed frames arrived" "$want" "$got"
}

# The xsk sink's latency histogram while the run goes on: Prometheus scrapes it, and
# histogram_quantile over rate() of its buckets gives a quantile before the run ends;
# an exposition taken mid-run passes promtool and already holds latencies; at the end
# the live histogram's count is the summary's latency count. No time is asserted.
m_live_quantile() { # port: a quantile that is a number (not NaN, not empty)
	M_Q=$(m_query "$1" 'histogram_quantile(0.99, sum by (le) (rate(xdp_sink_queue_latency_seconds_bucket{host="live"}[30s])))')
	[[ "$M_Q" =~ ^[0-9.e+-]+$ ]] && [ "$M_Q" != 0 ]
}

test_metrics_live_latency() {
	local d pp ps spid gpid count want
	command -v prometheus >/dev/null || t_skip "prometheus is missing (make deps installs it)"
	m_need
	lab_setup --no-ipv6
	d=$(mktemp -d /tmp/xdpsg-live.XXXXXX)
	t_on_cleanup rm -rf "$d"
	read -r pp ps <<<"$(m_free_ports 2 | paste -sd' ')"
	cat >"$d/prometheus.yml" <<-EOF
		global:
		  scrape_interval: 1s
		  scrape_timeout: 900ms
		scrape_configs:
		  - job_name: xdpsg
		    static_configs:
		      - targets: ['127.0.0.1:$ps']
	EOF
	lab_bg "$d/prom.log" sink prometheus --config.file="$d/prometheus.yml" \
		--storage.tsdb.path="$d/data" --web.listen-address="127.0.0.1:$pp"
	lab_bg "$d/sink.out" sink "$SINK" xsk -j -q -d 120 --metrics-listen "127.0.0.1:$ps" \
		--metrics-file "$d/sink.prom" --metrics-label host=live "$SINK_IF"
	spid=$LAST_PID
	wait_ready "$d/sink.out" "$spid" || t_fail "sink did not start: $(cat "$d/sink.out")"
	t_wait_until 15 m_poll m_target_up "$pp" "$ps" || t_fail "prometheus does not scrape the sink"
	lab_bg "$d/gen.out" gen "$GEN" xsk -q -j -r 2000 -d 60 "$GEN_IF"
	gpid=$LAST_PID
	t_wait_until 40 m_poll m_live_quantile "$pp" ||
		t_fail "no latency quantile from Prometheus during the run (got '$M_Q')"
	kill -0 "$gpid" 2>/dev/null || t_fail "the generator ended before the check: not a live figure"
	cp "$d/sink.prom" "$d/mid.prom"
	m_promtool "$d/mid.prom"
	count=$(m_sum "$d/mid.prom" xdp_sink_queue_latency_seconds_count)
	[ "$count" -gt 0 ] || t_fail "an exposition mid-run has no latency: $(grep queue_latency "$d/mid.prom" | head -3)"
	grep -q '^xdp_sink_queue_latency_seconds_bucket{device="'"$SINK_IF"'",mode="xsk",host="live",queue="0",le="+Inf"} ' \
		"$d/mid.prom" || t_fail "labels: $(grep queue_latency_seconds_bucket "$d/mid.prom" | tail -1)"
	kill -INT "$gpid"
	wait "$gpid"
	kill -INT "$spid"
	wait "$spid" || t_fail "sink exited with $?: $(cat "$d/sink.out")"
	m_promtool "$d/sink.prom"
	want=$(sed -n 's/^{"type":"summary".*"latency_ns":{"count":\([0-9]*\).*/\1/p' "$d/sink.out")
	t_expect_eq "live histogram count at the end = the summary's latency count" "$want" \
		"$(m_sum "$d/sink.prom" xdp_sink_queue_latency_seconds_count)"
}

# One line on stderr, exit 2, nothing attached (pins: checked once at the end).
m_refused() { # what expected-pattern side ifname cmd...
	local what=$1 pat=$2 side=$3 ifn=$4 err rc ns
	shift 4
	err=$(lab_exec "$side" "$@" 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "$what: exit code" 2 "$rc"
	t_expect_eq "$what: lines on stderr ($err)" 1 "$(wc -l <<<"$err")"
	[[ "$err" == *"$pat"* ]] || t_fail "$what: message '$err' does not say '$pat'"
	ns=$SINK_NS
	[ "$side" = gen ] && ns=$GEN_NS
	ip -n "$ns" -d link show dev "$ifn" | grep -q 'prog/xdp' && t_fail "$what: an XDP program is attached"
	return 0
}

m_listening() { # port: does something in the sink namespace listen on it?
	m_ns ss -Htln "sport = :$1" | grep -q .
}

test_metrics_bad_input() {
	local port
	lab_setup --no-ipv6
	port=$(m_free_ports 1) || t_fail "no free port"
	# Something else holds the port (until cleanup stops it).
	lab_bg /dev/null sink perl -MIO::Socket::INET -e \
		'my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1:" . shift, Listen => 1, ReuseAddr => 1) or die; 1 while $s->accept' \
		"$port"
	t_wait_until 5 m_listening "$port" || t_fail "the port holder did not start"
	m_refused "busy port" "127.0.0.1:$port: address in use; pick another port" sink "$SINK_IF" \
		"$SINK" drop --pin -d 1 --metrics-listen "127.0.0.1:$port" "$SINK_IF"
	m_refused "busy port (xsk)" "address in use" sink "$SINK_IF" \
		"$SINK" xsk --pin -d 1 --metrics-listen "127.0.0.1:$port" "$SINK_IF"
	m_refused "missing directory" "--metrics-file" sink "$SINK_IF" \
		"$SINK" drop --pin -d 1 --metrics-file /nonexistent-xdpsg/m.prom "$SINK_IF"
	m_refused "a directory where no file can be made" "--metrics-file" sink "$SINK_IF" \
		"$SINK" drop --pin -d 1 --metrics-file /proc/xdpsg-m.prom "$SINK_IF"
	m_refused "label name" "--metrics-label '9a=b'" sink "$SINK_IF" \
		"$SINK" drop --pin -d 1 --metrics-file /tmp/xdpsg-never.prom --metrics-label 9a=b "$SINK_IF"
	m_refused "reserved label" "reserved" sink "$SINK_IF" \
		"$SINK" drop -d 1 --metrics-file /tmp/xdpsg-never.prom --metrics-label __x=b "$SINK_IF"
	m_refused "built-in label" "set this label themselves" sink "$SINK_IF" \
		"$SINK" drop -d 1 --metrics-file /tmp/xdpsg-never.prom --metrics-label device=b "$SINK_IF"
	m_refused "label without '='" "no '='" gen "$GEN_IF" \
		"$GEN" xsk -d 1 --metrics-file /tmp/xdpsg-never.prom --metrics-label host "$GEN_IF"
	m_refused "generator, busy port" "address in use" sink "$SINK_IF" \
		"$GEN" qdisc -d 1 --metrics-listen "127.0.0.1:$port" "$SINK_IF"
	m_refused "not a port" "not [ADDR:]PORT" gen "$GEN_IF" \
		"$GEN" kernel -d 1 --metrics-listen 127.0.0.1:http "$GEN_IF"
	[ -e /tmp/xdpsg-never.prom ] && t_fail "a refused run wrote its metrics file"
	# The bpffs the --pin runs would have used (testenv's, for the sink side).
	lab_exec sink test -e "/sys/fs/bpf/xdp-sink/$SINK_IF" && t_fail "pins left behind"
	return 0
}

# A port alone is bound on loopback, an address as given; the ready line says which,
# and in which namespace, with a command that reaches it from the host.
test_metrics_listen_loopback() {
	local d p0 p1 pid sock cmd
	lab_setup --no-ipv6
	d=$(mktemp -d /tmp/xdpsg-metrics.XXXXXX)
	t_on_cleanup rm -rf "$d"
	read -r p0 p1 <<<"$(m_free_ports 2 | paste -sd' ')"
	[ -n "$p1" ] || t_fail "no free ports"
	lab_bg "$d/out" sink "$SINK" drop -j -d 120 --metrics-listen "$p0" "$SINK_IF"
	pid=$LAST_PID
	t_wait_for "$d/out" '"type":"ready"' 15 || t_fail "sink not ready: $(cat "$d/out")"
	sock=$(m_ns ss -Htln "sport = :$p0" | awk '{ print $4 }' | paste -sd' ')
	t_expect_eq "listening sockets on port $p0 (ss -ltn)" "127.0.0.1:$p0" "$sock"
	grep -q "\"type\":\"ready\".*\"metrics_listen\":\"127.0.0.1:$p0\",\"metrics_netns\":\"$SINK_NS\"" "$d/out" ||
		t_fail "the ready line does not say 127.0.0.1:$p0 in $SINK_NS: $(grep ready "$d/out")"
	m_ns curl -sf --max-time 20 "http://127.0.0.1:$p0/metrics" | tail -n 1 | grep -qx '# EOF' ||
		t_fail "no exposition on 127.0.0.1:$p0"
	kill -INT "$pid"
	wait "$pid" || t_fail "sink exited with $?: $(cat "$d/out")"
	# Other hosts only when the address says so.
	lab_bg "$d/out2" sink "$SINK" drop -d 120 --metrics-listen "0.0.0.0:$p1" "$SINK_IF"
	pid=$LAST_PID
	t_wait_for "$d/out2" "metrics at http://0.0.0.0:$p1/metrics in network namespace $SINK_NS, not the host's: " 15 ||
		t_fail "the start line does not say 0.0.0.0:$p1 in $SINK_NS: $(cat "$d/out2")"
	# The command the line gives reaches the server from the host (the URL alone would not).
	cmd=$(sed -n "s|^metrics at .*, not the host's: ||p" "$d/out2")
	[ "$cmd" = "ip netns exec $SINK_NS curl http://0.0.0.0:$p1/metrics" ] || t_fail "the command given: $cmd"
	# shellcheck disable=SC2086 # the printed command, split as a shell would
	$cmd -sf --max-time 20 | tail -n 1 | grep -qx '# EOF' || t_fail "'$cmd' reached nothing"
	sock=$(m_ns ss -Htln "sport = :$p1" | awk '{ print $4 }' | paste -sd' ')
	t_expect_eq "listening sockets on port $p1 (ss -ltn)" "0.0.0.0:$p1" "$sock"
	kill -INT "$pid"
	wait "$pid" || t_fail "sink exited with $?: $(cat "$d/out2")"
}

# Clients that hold connections to 127.0.0.1:PORT for SECONDS, each KIND:N@FROM
# argument N of one kind from FROM (one address) or from FROM, FROM+1, ...
# (FROM ending in '+'): trickle sends one byte a second and never finishes its
# request, idle sends nothing, noread sends a whole request and never reads
# (with a receive buffer far smaller than the answer). A connection the server
# closes is opened again at the next second, so the pressure never lets up.
# Prints "open K closed C once E" each second: K connections open, C closed by
# the server so far, E clients closed at least once. In the background, its
# pid (python's: ip netns exec execs it) in LAST_PID.
m_slow_clients() { # out port seconds KIND:N@FROM...
	local out=$1
	shift
	cat >"$out.py" <<-'PY'
		import socket, sys, time
		port, seconds = int(sys.argv[1]), float(sys.argv[2])
		whole = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
		slow = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000
		clients = []  # kind, source address, socket, bytes sent, closed once
		for arg in sys.argv[3:]:
		    kind, rest = arg.split(":")
		    n, frm = rest.split("@")
		    a, b, c, d = map(int, frm.rstrip("+").split("."))
		    for i in range(int(n)):
		        src = "%d.%d.%d.%d" % (a, b, c, d + i if frm.endswith("+") else d)
		        clients.append([kind, src, None, 0, False])
		def state(s):  # TCP_INFO's first byte: 1 established, 2 SYN sent
		    return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]
		def connect(cl):
		    s = socket.socket()
		    s.setblocking(False)
		    if cl[0] == "noread":
		        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
		    s.bind((cl[1], 0))
		    s.connect_ex(("127.0.0.1", port))
		    cl[2], cl[3] = s, 0
		closed, end = 0, time.monotonic() + seconds
		while time.monotonic() < end:
		    for cl in clients:
		        if cl[2] is not None and state(cl[2]) not in (1, 2):
		            cl[2].close()
		            cl[2], cl[4] = None, True
		            closed += 1
		        if cl[2] is None:
		            connect(cl)
		            continue
		        if state(cl[2]) != 1:
		            continue
		        try:
		            if cl[0] == "trickle":
		                cl[2].send(slow[cl[3] % len(slow):][:1])
		                cl[3] += 1
		            elif cl[0] == "noread" and not cl[3]:
		                cl[3] = cl[2].send(whole)
		        except OSError:
		            pass
		    n = sum(1 for cl in clients if cl[2] is not None and state(cl[2]) == 1)
		    print("open %d closed %d once %d" % (n, closed, sum(cl[4] for cl in clients)), flush=True)
		    time.sleep(1)  # the trickle is the test: a byte a second per client
	PY
	ip netns exec "$SINK_NS" python3 "$out.py" "$@" >"$out" 2>&1 &
	LAST_PID=$!
	T_PIDS+=("$LAST_PID")
}

# Scrapes of 127.0.0.1:PORT, one after another for SECONDS, each given 2 s:
# "K N", K of the N answered with a whole exposition (as curl -f would take it:
# a status below 400 and the body as long as its Content-Length) that ends in
# '# EOF'. The last one answered stays in DIR/scrape.ok. One python makes them
# all, each on a connection of its own as a scraper would: a curl each (and an
# 'ip netns exec') was some 400 process starts a run, most of the test's CPU time.
m_scrapes() { # port seconds dir
	cat >"$3/scrapes.py" <<-'PY'
		import os, socket, sys, time
		port, seconds, ok = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
		req = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: */*\r\n\r\n" % port
		def scrape():  # the exposition, or None
		    deadline = time.monotonic() + 2
		    try:
		        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
		            s.sendall(req)
		            data, head, want = b"", None, None
		            while True:
		                left = deadline - time.monotonic()
		                if left <= 0:
		                    return None
		                s.settimeout(left)
		                chunk = s.recv(65536)
		                data += chunk
		                if head is None and b"\r\n\r\n" in data:
		                    head, data = data.split(b"\r\n\r\n", 1)
		                    lines = head.split(b"\r\n")
		                    if int(lines[0].split()[1]) >= 400:
		                        return None
		                    for line in lines[1:]:
		                        k, _, v = line.partition(b":")
		                        if k.strip().lower() == b"content-length":
		                            want = int(v)
		                if head is not None and want is not None and len(data) >= want:
		                    return data if len(data) == want else None
		                if not chunk:
		                    return data if head is not None and want is None else None
		    except (OSError, ValueError, IndexError):
		        return None
		k = n = 0
		end = time.monotonic() + seconds
		while time.monotonic() < end:
		    n += 1
		    body = scrape()
		    lines = body.split(b"\n") if body is not None else []
		    if lines and lines[-1] == b"":
		        lines.pop()
		    if lines and lines[-1] == b"# EOF":
		        k += 1
		        with open(ok + ".tmp", "wb") as f:
		            f.write(body)
		        os.replace(ok + ".tmp", ok)
		    # A breath between scrapes: back to back they cost a CPU and test nothing more.
		    time.sleep(0.05)
		print(k, n)
	PY
	m_ns python3 "$3/scrapes.py" "$1" "$2" "$3/scrape.ok"
}

# One phase: the clients for SECONDS + 5 and, once they are all connected,
# SECONDS of scrapes: at least 95% answered within 2 s each.
m_scrapes_despite() { # what port dir seconds KIND:N@FROM...
	local what=$1 port=$2 dir=$3 secs=$4 cpid k n
	shift 4
	m_slow_clients "$dir/clients" "$port" $((secs + 5)) "$@"
	cpid=$LAST_PID
	t_wait_for "$dir/clients" '^open' 20 || t_fail "$what: clients did not start: $(cat "$dir/clients")"
	rm -f "$dir/scrape.ok"
	read -r k n <<<"$(m_scrapes "$port" "$secs" "$dir")"
	kill "$cpid" 2>/dev/null
	wait "$cpid" 2>/dev/null
	echo "$what: $k of $n scrapes answered; clients: $(tail -n 1 "$dir/clients")"
	[ $((k * 100)) -ge $((n * 95)) ] ||
		t_fail "$what: $k of $n scrapes answered within 2 s; clients: $(tail -n 1 "$dir/clients")"
	m_promtool "$dir/scrape.ok"
	M_CLIENTS=$(tail -n 1 "$dir/clients")
}

# Slow, idle and silent clients cannot keep a scrape out, however many and from
# whatever addresses: 64 trickling a byte a second from the scraper's own
# address (127.0.0.1) and 64 from 64 others, then as many idle ones, then as
# many that send a whole request and never read the answer (larger than their
# receive buffer: the label pads every sample), then all of these at once,
# more than the server has slots. Scrapes are made one after another all the
# while; at least 95% must be answered, whole, within 2 s each. Trickling
# clients are closed at the request deadline, whatever they send. Before, the
# per-address limit (4 of 16 connections) gave the scraper's address to the
# trickling clients: 0 of 44 scrapes answered.
# long: 40 s of slow clients, mostly waiting on their deadlines
test_metrics_listen_slow_clients() {
	local d port pid pad i once labels=()
	lab_setup --no-ipv6
	d=$(mktemp -d /tmp/xdpsg-metrics.XXXXXX)
	t_on_cleanup rm -rf "$d"
	port=$(m_free_ports 1) || t_fail "no free port"
	# Seven labels of 200 bytes on every sample: an answer of some 100 kB.
	pad=$(printf 'p%.0s' {1..200})
	for i in 1 2 3 4 5 6 7; do
		labels+=(--metrics-label "pad$i=$pad")
	done
	lab_bg "$d/out" sink "$SINK" drop -j -q -d 200 --metrics-listen "$port" "${labels[@]}" \
		"$SINK_IF"
	pid=$LAST_PID
	t_wait_for "$d/out" '"type":"ready"' 15 || t_fail "sink not ready: $(cat "$d/out")"

	# Each phase outlasts the deadline it tests: a request's head (2 s: the trickling and the
	# idle clients) or an answer's writing (10 s: the clients that never read).
	m_scrapes_despite "64 + 64 trickling clients" "$port" "$d" 8 \
		trickle:64@127.0.0.1 trickle:64@127.0.0.10+
	once=$(sed -n 's/.* once //p' <<<"$M_CLIENTS")
	t_expect_eq "trickling clients the server closed at least once ($M_CLIENTS)" 128 "$once"
	m_scrapes_despite "64 + 64 idle clients" "$port" "$d" 6 idle:64@127.0.0.1 idle:64@127.0.0.10+
	m_scrapes_despite "64 + 64 clients that never read" "$port" "$d" 13 \
		noread:64@127.0.0.1 noread:64@127.0.0.10+
	m_scrapes_despite "448 clients of every kind" "$port" "$d" 13 \
		trickle:64@127.0.0.1 trickle:64@127.0.0.10+ idle:64@127.0.0.1 idle:64@127.0.0.80+ \
		noread:64@127.0.0.1 noread:64@127.0.0.150+ trickle:64@127.0.1.1+
	kill -INT "$pid"
	wait "$pid" || t_fail "sink exited with $?: $(cat "$d/out")"
}

# Wait for N more interval reports: the writer has had N more texts to write.
m_wait_intervals() { # out n
	wait_reports "$1" "$2" 30 || t_fail "no $2 more interval reports: $(tail -n 2 "$1")"
}

m_said_twice() { # out: has the sink said twice that the file is not written?
	[ "$(grep -c 'm.prom: not written' "$1")" -ge 2 ]
}

# Fill a file system until it refuses.
m_fill() { # file
	dd if=/dev/zero of="$1" bs=4k >/dev/null 2>&1
	return 0
}

# --metrics-file on a small tmpfs that fills up, is freed, fills again: one line
# when the writes start to fail, one when they work again, one at the second
# failure; nothing in the intervals between (before: one line every interval).
test_metrics_file_errors_said_once() {
	local d fs pid lines
	lab_setup --no-ipv6
	d=$(mktemp -d /tmp/xdpsg-metrics.XXXXXX)
	fs="$d/fs"
	mkdir "$fs"
	mount -t tmpfs -o size=256k,mode=0755 xdpsg-metrics "$fs" || t_skip "cannot mount a tmpfs"
	t_on_cleanup "umount '$fs'; rm -rf '$d'"
	lab_bg "$d/out" sink "$SINK" drop -j -i 100ms -d 200 --metrics-file "$fs/m.prom" "$SINK_IF"
	pid=$LAST_PID
	t_wait_for "$d/out" '"type":"ready"' 15 || t_fail "sink not ready: $(cat "$d/out")"
	t_wait_until 10 test -s "$fs/m.prom" || t_fail "no metrics file: $(cat "$d/out")"

	m_fill "$fs/fill"
	t_wait_for "$d/out" 'm.prom: not written' 20 || t_fail "a full file system is not reported"
	m_wait_intervals "$d/out" 10
	lines=$(grep -v '^{' "$d/out" | grep -F "$fs/m.prom")
	t_expect_eq "lines about the file after 10 intervals full ($lines)" 1 "$(wc -l <<<"$lines")"
	rm -f "$fs/fill"
	t_wait_for "$d/out" 'm.prom: written again' 20 || t_fail "the recovery is not reported"
	m_wait_intervals "$d/out" 10
	m_fill "$fs/fill"
	t_wait_until 20 m_said_twice "$d/out"
	m_wait_intervals "$d/out" 10
	kill -INT "$pid"
	wait "$pid" || t_fail "sink exited with $?: $(cat "$d/out")"
	lines=$(grep -v '^{' "$d/out" | grep -F "$fs/m.prom")
	t_expect_eq "lines saying the file is not written ($lines)" 2 "$(grep -c 'not written' <<<"$lines")"
	t_expect_eq "lines saying it is written again ($lines)" 1 "$(grep -c 'written again' <<<"$lines")"
	t_expect_eq "lines about the file in all ($lines)" 3 "$(wc -l <<<"$lines")"
}
