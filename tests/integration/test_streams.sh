# SPDX-License-Identifier: GPL-2.0
# Several streams in one run (--stream, --streams), in every xdp-gen mode that
# takes them: three streams of different kinds at different rates, each with
# its own count, into `xdp-sink xsk`, which books each stream's run by itself:
# per stream received = sent = its count, lost 0, duplicates 0, the
# generator's streams[].run joined to the sink's runs[].run. The kernel is a
# second judge of one mixed run (its ICMP echo count). Bad input, including a
# stream file's syntax error at line N and its semantic error at line M, is one
# line and exit 2. No rate or time is asserted: the rates only shape the run.

GEN="$BUILD/xdp-gen"

# name|spec|count: UDP 60 B, TCP SYN in VLAN 100, ICMP echo in VXLAN 42.
STREAMS=(
	"udp|name=udp,size=60,rate=20k,count=2000|2000"
	"syn|name=syn,proto=tcp,tcp-flags=S,vlan=100,dst-port=80,rate=10k,count=1000|1000"
	"vx|name=vx,proto=icmp,encap=vxlan:42,rate=5k,count=500|500"
)

# Every mode takes --stream.
needs_streams() { # MODE
	mode_has "$1" stream || t_fail "xdp-gen $1 takes no --stream"
}

stream_args() {
	local row
	for row in "${STREAMS[@]}"; do
		IFS='|' read -r _ spec _ <<<"$row"
		printf -- '--stream\n%s\n' "$spec"
	done
}

streams_books_body() { # MODE
	local mode=$1 sout gout spid row name count run workers
	local -a args
	needs_streams "$mode"
	mapfile -t args < <(stream_args)
	sout=$(mktemp)
	gout=$(mktemp)
	t_on_cleanup rm -f "$sout" "$gout"
	xsk_sink_bg "$sout"
	spid=$LAST_PID
	# Two workers: each stream's flows are split over them, each flow by one.
	workers=$(gen_workers "$mode" 2) || t_fail "no worker option in $mode"
	# shellcheck disable=SC2086
	lab_exec gen "$GEN" "$mode" $workers "${args[@]}" -j -q "$GEN_IF" >"$gout" 2>&1 ||
		t_fail "xdp-gen $mode with three streams failed: $(cat "$gout")"
	t_expect_eq "streams in the summary" 3 "$(json_get "$gout" summary 'len(o["streams"])')"
	t_expect_eq "the run's count: the streams' sum" 3500 "$(json_get "$gout" summary 'o["requested"]')"
	t_expect_eq "sent in total" 3500 "$(json_get "$gout" summary 'o["tx_packets"]')"
	wait_total "$sout" interval rx_packets 3500 30 ||
		t_fail "the sink read $(json_total "$sout" interval rx_packets) of 3500 frames"
	kill -INT "$spid" 2>/dev/null
	wait "$spid"
	t_expect_eq "runs the sink booked" 3 "$(json_get "$sout" summary 'len(o["runs"])')"
	for row in "${STREAMS[@]}"; do
		IFS='|' read -r name _ count <<<"$row"
		run=$(json_get "$gout" summary "[s['run'] for s in o['streams'] if s['name'] == '$name'][0]")
		t_expect_eq "$name: sent" "$count" \
			"$(json_get "$gout" summary "[s['tx_packets'] for s in o['streams'] if s['name'] == '$name'][0]")"
		t_expect_eq "$name (run $run): [received, lost, duplicates]" "[[$count, 0, 0]]" \
			"$(json_get "$sout" summary "[[r['received'], r['lost'], r['duplicates']] for r in o['runs'] if r['run'] == $run]")"
	done
}

test_streams_books() {
	lab_setup --no-ipv6 --queues 2
	t_each_mode streams_books_body
}

icmp_in() {
	lab_exec sink nstat -asz IcmpInEchos | awk '$1 == "IcmpInEchos" { print $2 }'
}

icmp_at_least() { # N
	[ "$(icmp_in)" -ge "$1" ]
}

icmp_judge_body() { # MODE
	local mode=$1 before out
	needs_streams "$mode"
	before=$(icmp_in)
	# IMIX after a tunnel: a frame buffer a VXLAN frame wrote its longer
	# headers into carries a large echo request next; its checksum holds only
	# if the payload behind the echo's headers was written again.
	out=$(lab_exec gen "$GEN" "$mode" --stream name=vx,encap=vxlan:42,imix=true,count=3000,rate=30k \
		--stream name=echo,proto=icmp,imix=true,count=1000,rate=10k -j -q "$GEN_IF" 2>&1) ||
		t_fail "xdp-gen $mode: $out"
	# Its marks are echo requests too (docs/stamp.md): 6 of its one flow; the other stream's none.
	t_expect_eq "the ICMP stream's marks" 6 "$(python3 -c 'import json, sys
o = [json.loads(l) for l in sys.stdin if l.startswith("{\"type\":\"summary\"")][-1]
print(o["streams"][1]["marks"])' <<<"$out")"
	t_wait_until 10 icmp_at_least $((before + 1006))
	t_expect_eq "IcmpInEchos: up by the ICMP stream's count and marks" 1006 \
		$(($(icmp_in) - before))
}

intervals_body() { # MODE
	local mode=$1 gout
	needs_streams "$mode"
	gout=$(mktemp)
	t_on_cleanup rm -f "$gout"
	t_schema_note "$gout"
	lab_exec gen "$GEN" "$mode" -i 100ms -j --stream name=a,rate=20k,count=8000 \
		--stream name=b,proto=tcp,vlan=7,rate=5k,count=2000 "$GEN_IF" >"$gout" 2>&1 ||
		t_fail "xdp-gen $mode failed: $(cat "$gout")"
	# shellcheck disable=SC2016
	t_expect_eq "each stream's intervals add up to its summary, [intervals, summary]" \
		"[[8000, 8000], [2000, 2000]]" "$(python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ivs = [r for r in recs if r.get("type") == "interval"]
summ = [r for r in recs if r.get("type") == "summary"][-1]
print([[sum(r["streams"][i]["tx_packets"] for r in ivs), s["tx_packets"]]
       for i, s in enumerate(summ["streams"])])' "$gout")"
	# The run's rate verdict is the streams' own: each has its rate and its span.
	t_expect_eq "the run's rate_reached: every stream's, asked their sum" "True" \
		"$(json_get "$gout" summary 'o["rate_reached"] == all(s["rate_reached"] for s in o["streams"]) and o["rate_asked"] == 25000')"
	t_expect_ge "intervals with both streams sending" 2 "$(python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print(sum(1 for r in recs if r.get("type") == "interval" and
          all(s["tx_packets"] > 0 for s in r["streams"])))' "$gout")"
}

# A stream that misses its rate fails the run's verdict: "fast" asks a rate no
# generator here reaches, beside "slow" at 1k pps, which is judged on its own.
# 20,000 frames at 1000M pps would take 20 us: no CPU here sends them that fast.
rate_missed_body() { # MODE
	local mode=$1 out
	needs_streams "$mode"
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_exec gen "$GEN" "$mode" -j --stream name=slow,rate=1k,count=200 \
		--stream name=fast,rate=1000M,count=20000 "$GEN_IF" >"$out" 2>&1 ||
		t_fail "xdp-gen $mode failed: $(cat "$out")"
	# Whether "slow" made its rate depends on the CPU it got beside "fast" (no
	# timed assertion): only that it is judged on its own.
	t_expect_eq "[slow judged, fast reached]" "[True, False]" \
		"$(json_get "$out" summary '[isinstance(o["streams"][0]["rate_reached"], bool), o["streams"][1]["rate_reached"]]')"
	t_expect_eq "the run's rate_reached" "False" "$(json_get "$out" summary 'o["rate_reached"]')"
	lab_exec gen "$GEN" "$mode" --stream name=slow,rate=1k,count=200 \
		--stream name=fast,rate=1000M,count=20000 "$GEN_IF" >"$out" 2>&1 ||
		t_fail "xdp-gen $mode failed: $(cat "$out")"
	grep -q "stream 1 fast .*(NOT reached, asked 1.00G)" "$out" ||
		t_fail "the text does not say the fast stream missed its rate: $(grep stream "$out")"
	grep -qE "stream 0 slow .*\((NOT reached, )?asked 1.00k\)" "$out" ||
		t_fail "the text does not judge the slow stream: $(grep stream "$out")"
}

test_streams_rate_missed() {
	lab_setup --no-ipv6 --gro on
	t_each_mode rate_missed_body
}

# Each interval report says what each stream sent in it (JSON streams[],
# a "streams:" part of the text line): they add up to the summary's, exactly.
test_streams_intervals() {
	lab_setup --no-ipv6 --gro on
	t_each_mode intervals_body
}

# The kernel as the second judge: the sink side's stack answers every echo
# request of the ICMP stream, and only those (the VXLAN stream's are not echoes).
test_streams_kernel_judge() {
	lab_setup --no-ipv6 --gro on
	lab_exec sink sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv4.icmp_msgs_per_sec=1000000000 ||
		t_fail "sysctl"
	t_each_mode icmp_judge_body
}

# bad_stream WANT ARGS...: exit 2, one line on stderr containing WANT.
bad_stream() {
	local want=$1 err rc=0
	shift
	err=$(lab_exec gen "$GEN" xsk -n 10 "$@" "$GEN_IF" 2>&1 >/dev/null) || rc=$?
	t_expect_eq "exit code of $*" 2 "$rc"
	t_expect_eq "stderr lines of $* ($err)" 1 "$(printf '%s\n' "$err" | wc -l)"
	[[ "$err" == *"$want"* ]] || t_fail "$*: expected '$want', got: $err"
}

test_streams_bad_input() {
	local dir i err rc
	lab_setup --no-ipv6
	dir=$(mktemp -d)
	t_on_cleanup rm -rf "$dir"
	bad_stream "--stream 0: unknown key 'prto' (keys: name, proto," --stream prto=tcp
	bad_stream "--stream 1: --proto: unknown value 'sctp'" --stream size=60 --stream proto=sctp
	bad_stream "--stream 0: --rate 'fast'" --stream rate=fast
	bad_stream "--stream 0: --vlan 4096" --stream vlan=100/4096
	bad_stream "--stream 0: 'proto' is not key=value" --stream proto
	bad_stream "--stream 0: size 60 is below the 76-byte minimum" \
		--stream proto=tcp,vlan=7,size=60
	bad_stream "--stream and --streams both" --stream count=1 --streams "$dir/none.json"
	bad_stream "count= add up to 25, not the -n 10" --stream count=20 --stream count=5
	printf '[\n  {"name": "a", "count": 5},\n  {"name": "b"\n   "proto": "tcp"}\n]\n' >"$dir/syntax.json"
	bad_stream "--streams $dir/syntax.json line 4: expected ',' or '}'" --streams "$dir/syntax.json"
	printf '[\n  {"name": "a", "count": 5},\n  {"name": "b",\n   "proto": "tcp",\n   "prto": "udp"}\n]\n' \
		>"$dir/key.json"
	bad_stream "--streams $dir/key.json line 5: stream 1: unknown key 'prto'" \
		--streams "$dir/key.json"
	printf '[\n  {"count": 5},\n\n  {"proto": "tcp", "vlan": 100,\n   "size": 64}\n]\n' >"$dir/size.json"
	bad_stream "--streams $dir/size.json line 4: stream 1: size 64 is below the 76-byte minimum" \
		--streams "$dir/size.json"
	# A NUL is refused, not read as the end of a number: "count": 5\0zzz is not 5.
	printf '[\n  {"name": "a",\n   "count": 5\000zzz}\n]\n' >"$dir/nul.json"
	bad_stream "--streams $dir/nul.json line 3 column 14: a NUL byte; the file must be JSON text" \
		--streams "$dir/nul.json"
	{
		printf '[{"count": 1}'
		for i in $(seq 16); do printf ',\n{"count": %d}' "$i"; done
		printf ']\n'
	} >"$dir/many.json"
	bad_stream "many.json line 17: stream 16: more than 16 streams; give at most 16" \
		--streams "$dir/many.json"
	# Kernel mode shapes one stream only (one line, exit 2, nothing left behind).
	err=$(lab_exec gen "$GEN" kernel -n 10 -r 1k --burst 4 --stream count=1 "$GEN_IF" 2>&1 \
		>/dev/null) || rc=$?
	t_expect_eq "exit code of kernel --burst --stream" 2 "${rc:-0}"
	[[ "$err" == *"--burst and --poisson shape one stream"* ]] ||
		t_fail "kernel --burst --stream: got: $err"
	xdp_detached "$GEN_NS" "$GEN_IF" || t_fail "a refused run left a program on $GEN_IF"
}

# Kernel mode, stopped by a signal in the middle of three streams without a
# count (flat out, flat out in VLAN 100 at 1500 bytes, one paced) on two
# threads: it exits 0, its books balance (the kernel counted every frame
# the programs sent), the streams' frames add up to the run's, every
# stream sent some, and nothing stays attached.
test_streams_kernel_signal() {
	local gout pid
	lab_setup --no-ipv6 --queues 2
	lab_exec sink "$BUILD/xdp-sink" drop -q -d 60 "$SINK_IF" >/dev/null 2>&1 &
	t_on_cleanup kill -INT $!
	t_wait_until 10 xdp_attached "$SINK_NS" "$SINK_IF" || t_fail "the sink did not attach"
	gout=$(mktemp)
	t_on_cleanup rm -f "$gout"
	lab_bg "$gout" gen "$GEN" kernel -t 2 -j -i 200ms -d 60 --stream name=a \
		--stream name=b,vlan=100,size=1500 --stream name=c,proto=icmp,rate=2k "$GEN_IF"
	pid=$LAST_PID
	wait_reports "$gout" 3 || t_fail "xdp-gen kernel did not report: $(cat "$gout")"
	kill -INT "$pid"
	wait "$pid" || t_fail "xdp-gen kernel --stream failed at a signal: $(tail -n 3 "$gout")"
	t_expect_eq "stopped by" SIGINT "$(json_get "$gout" summary 'o["stop_reason"]')"
	t_expect_eq "the streams' frames add up to the run's" \
		"$(json_get "$gout" summary 'o["tx_packets"]')" \
		"$(json_get "$gout" summary 'sum(s["tx_packets"] for s in o["streams"])')"
	t_expect_eq "transmitted + failed = sent + marks" \
		"$(json_get "$gout" summary 'o["tx_packets"] + o["marks"]')" \
		"$(json_get "$gout" summary 'o["transmitted"] + o["failed"]')"
	t_expect_eq "marks: 6 a flow of each stream, the streams' own add up" \
		"$(json_get "$gout" summary '[6 * o["flows"]] * 2')" \
		"$(json_get "$gout" summary '[o["marks"], sum(s["marks"] for s in o["streams"])]')"
	t_expect_eq "unexplained" 0 "$(json_get "$gout" summary 'o["unexplained"]')"
	t_expect_eq "every stream sent" True \
		"$(json_get "$gout" summary 'all(s["tx_packets"] > 0 for s in o["streams"])')"
	t_expect_eq "the 1500-byte stream's bytes" \
		"$(json_get "$gout" summary 'o["streams"][1]["tx_packets"] * 1500')" \
		"$(json_get "$gout" summary 'o["streams"][1]["tx_bytes"]')"
	xdp_detached "$GEN_NS" "$GEN_IF" || t_fail "a program stayed on $GEN_IF"
}

# The metrics say which run is which stream: a tx counter per stream (label
# stream) that matches its count, and its run id as a gauge; promtool finds
# nothing wrong with the families.
test_streams_metrics() {
	local prom gout
	lab_setup --no-ipv6
	prom=$(mktemp)
	gout=$(mktemp)
	t_on_cleanup rm -f "$prom" "$gout"
	lab_exec gen "$GEN" xsk --metrics-file "$prom" --stream name=a,count=300 \
		--stream name=b,proto=tcp,vlan=5,count=200 -j -q "$GEN_IF" >"$gout" 2>&1 ||
		t_fail "xdp-gen failed: $(cat "$gout")"
	t_expect_eq "stream a's packets" 300 \
		"$(awk '/^xdp_gen_stream_tx_packets_total\{.*stream="a"/ { print $2 }' "$prom")"
	t_expect_eq "stream b's packets" 200 \
		"$(awk '/^xdp_gen_stream_tx_packets_total\{.*stream="b"/ { print $2 }' "$prom")"
	t_expect_eq "stream b's run" "$(json_get "$gout" summary 'o["streams"][1]["run"]')" \
		"$(awk '/^xdp_gen_stream_run\{.*stream="b"/ { print $2 }' "$prom")"
	if command -v promtool >/dev/null; then
		promtool check metrics <"$prom" || t_fail "promtool: $(promtool check metrics <"$prom" 2>&1)"
	fi
}

# More threads than a stream's count: a thread whose share of it is none
# sends none of it (a share of 0 is not "no limit"), and the run still ends
# by its count with exactly the frames asked. -d only bounds a wrong run.
small_share_body() { # MODE
	local mode=$1 gout workers
	needs_streams "$mode"
	gout=$(mktemp)
	t_on_cleanup rm -f "$gout"
	workers=$(gen_workers "$mode" 2) || t_fail "no worker option in $mode"
	# shellcheck disable=SC2086
	lab_exec gen "$GEN" "$mode" $workers -d 3 --stream name=one,count=1 \
		--stream name=many,count=100 -j -q "$GEN_IF" >"$gout" 2>&1 ||
		t_fail "xdp-gen $mode failed: $(cat "$gout")"
	t_expect_eq "[one, many] sent" "[1, 100]" \
		"$(json_get "$gout" summary '[s["tx_packets"] for s in o["streams"]]')"
	t_expect_eq "stopped by" count "$(json_get "$gout" summary 'o["stop_reason"]')"
}

test_streams_small_share() {
	lab_setup --no-ipv6 --queues 2 --gro on
	t_each_mode small_share_body
}

# IPv4 and IPv6 streams in one run (ipv6=true on one of them): each booked by
# itself, received = sent = count.
test_streams_ipv6_mixed() {
	local sout gout spid run name count
	lab_setup
	sout=$(mktemp)
	gout=$(mktemp)
	t_on_cleanup rm -f "$sout" "$gout"
	xsk_sink_bg "$sout"
	spid=$LAST_PID
	lab_exec gen "$GEN" xsk --stream name=v4,count=300 \
		--stream "name=v6,ipv6=true,src-ip=$GEN_IP6,dst-ip=$SINK_IP6,proto=tcp,count=200" \
		--dst-mac "$SINK_MAC" -j -q "$GEN_IF" >"$gout" 2>&1 || t_fail "xdp-gen failed: $(cat "$gout")"
	t_expect_eq "headers" "['IPv4 UDP', 'IPv6 TCP']" \
		"$(json_get "$gout" summary '[s["headers"] for s in o["streams"]]')"
	wait_total "$sout" interval rx_packets 500 30 ||
		t_fail "the sink read $(json_total "$sout" interval rx_packets) of 500 frames"
	kill -INT "$spid" 2>/dev/null
	wait "$spid"
	for name in v4:300 v6:200; do
		count=${name#*:}
		name=${name%:*}
		run=$(json_get "$gout" summary "[s['run'] for s in o['streams'] if s['name'] == '$name'][0]")
		t_expect_eq "$name (run $run): [received, lost, duplicates]" "[[$count, 0, 0]]" \
			"$(json_get "$sout" summary "[[r['received'], r['lost'], r['duplicates']] for r in o['runs'] if r['run'] == $run]")"
	done
}

# The RESULT of a streams run says what each stream reached, not the run's
# own rate against the sum of theirs (streams end apart: 10k pps "of 15k
# asked, reached" read as a contradiction), and JSON carries the same figures.
test_streams_result_each_rate() {
	local out
	lab_setup --no-ipv6
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_exec gen "$GEN" xsk --stream name=slow,rate=5000,count=5000 \
		--stream name=fast,rate=10000,count=5000 "$GEN_IF" >"$out" 2>&1 || t_fail "$(cat "$out")"
	# The verdict may go either way on a busy machine; its form may not.
	local re="^RESULT: 10,000 of 10,000 asked sent at .*, (every stream's rate reached|a stream's rate NOT reached) \\(slow [0-9.]+k of 5.00k pps( NOT reached)?, fast [0-9.]+k of 10.0k pps( NOT reached)?\\)\$"
	[[ "$(tail -n 1 "$out")" =~ $re ]] ||
		t_fail "RESULT: $(tail -n 1 "$out")"
	lab_exec gen "$GEN" xsk -j -q --stream name=slow,rate=5000,count=5000 \
		--stream name=fast,rate=10000,count=5000 "$GEN_IF" >"$out" 2>&1 || t_fail "$(cat "$out")"
	t_expect_eq "each stream's rate in JSON" "slow 5000 fast 10000" \
		"$(json_get "$out" summary '" ".join("%s %d" % (s["name"], s["rate_asked"]) for s in o["streams"])')"
}
