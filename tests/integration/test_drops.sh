# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The drop tracer (bpf/xdp_drops.bpf.c, user/sink/drops.c) through its test tool
# drops-probe: every frame a run lost has a named cause, and the causes add
# up to what the run lost (generator's count less the sink's), each equal to
# the kernel's own counter of that layer: the tbf's and the pfifo's dropped,
# the veth's xdp_xmit_errors, the AF_XDP socket's ring counters. Frames
# without a stamp, or with one whose tag fails (forged), are never a run's
# and take none of its entries; the stamp is found behind VLAN tags, in IPv6
# and after IPv4 options, and never by a walk that leaves the tracer's copy.
# The tracer is host-wide: every check looks only at this test's devices
# (their names carry the lab's) or at frames stamped under the test's key.

PROBE="$BUILD/tests/drops-probe"
SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"

# probe_start [options]: the tracer, in the background, attached when this returns.
probe_start() {
	POUT=$(mktemp)
	t_on_cleanup rm -f "$POUT"
	"$PROBE" "$@" >"$POUT" 2>&1 &
	PROBE_PID=$!
	T_PIDS+=("$PROBE_PID")
	t_wait_for "$POUT" '"type":"ready"' 20 || t_fail "drops-probe did not attach: $(cat "$POUT")"
	[[ "$(head -n 1 "$POUT")" == *'"kfree_skb"'* ]] || t_fail "kfree_skb not attached: $(cat "$POUT")"
}

probe_stop() {
	kill -INT "$PROBE_PID"
	wait "$PROBE_PID"
	t_expect_eq "drops-probe exit code" 0 $?
	json_get "$POUT" summary 'o["overflow"]' >/dev/null || t_fail "no probe summary: $(cat "$POUT")"
	t_expect_eq "tracer overflow" 0 "$(json_get "$POUT" summary 'o["overflow"]')"
}

# dsum EXPR [AGG]: packets of the tracer's counts c for which EXPR holds (AGG
# "keys": how many such counts there are). By the test's python (lab_setup
# starts it), not a python start each: EXPR's lines are joined, as a request
# is one line (EXPR is evaluated in parentheses, where a line break is a space).
PY_FUNCS+='
def dsum(path, expr, agg):
    n = 0
    for line in open(path):
        if line.startswith("{"):
            c = json.loads(line)
            if c.get("type") == "count" and eval("(%s)" % expr, {"c": c}):
                n += c["packets"] if agg == "packets" else 1
    return 0, "%s\n" % n, ""
'

dsum() {
	t_schema_note "$POUT"
	py_ask dsum "$POUT" "${1//$'\n'/ }" "${2:-packets}"
}

# For the log, should an expectation fail: this lab's counts.
dshow() {
	grep "\"$LAB_NAME" "$POUT" | sed 's/^/    /'
}

sink_start() { # [options]: xdp-sink xsk on the sink side, attached when this returns
	SOUT=$(mktemp)
	t_on_cleanup rm -f "$SOUT"
	lab_bg "$SOUT" sink "$SINK" xsk -j -q -d 300 --ring-size 32768 "$@" "$SINK_IF"
	SINK_PID=$LAST_PID
	t_wait_for "$SOUT" '"type":"ready"' 20 || t_fail "xsk sink did not start: $(cat "$SOUT")"
}

sink_stop() {
	sleep 1 # what is in flight through the DUT's queue arrives
	kill -INT "$SINK_PID"
	wait "$SINK_PID"
	t_expect_eq "sink exit code" 0 $?
}

sink_get() { # python expression on the sink's summary
	json_get "$SOUT" summary "$1"
}

gen_get() { # GEN_OUTFILE EXPR: on the generator's summary
	json_get "$1" summary "$2" || t_fail "no generator summary in $1: $(cat "$1")"
}

# What a run lost: its generator's count less what the sink received of it.
run_lost() { # GEN_OUTFILE
	local run sent got
	run=$(gen_get "$1" 'o["run"]')
	sent=$(gen_get "$1" 'o["tx_packets"]')
	got=$(sink_get "sum(r['received'] for r in o['runs'] if r['run'] == $run)")
	echo $((sent - got))
}

# The root qdisc's dropped counter: qdisc_drops NS DEV
qdisc_drops() {
	json_text "$(tc -n "$1" -s -j qdisc show dev "$2")" 'o[0]["drops"]'
}

qdisc_empty() { # NS DEV: the root qdisc holds nothing: each frame was sent or dropped
	[ "$(json_text "$(tc -n "$1" -s -j qdisc show dev "$2")" 'o[0]["qlen"]')" = 0 ]
}

# udp_noports_ge NS N: the namespace's UDP stack has refused N datagrams (no socket) or more.
udp_noports_ge() {
	[ "$(ip netns exec "$1" nstat -az UdpNoPorts | awk '$1 == "UdpNoPorts" { print $2 }')" -ge "$2" ]
}

veth_stat() { # NS DEV NAME-PATTERN: the sum of the matching ethtool -S counters
	ip netns exec "$1" ethtool -S "$2" | awk -v p="$3" '$1 ~ p { n += $2 } END { print n + 0 }'
}

# Every frame the run lost is named, and the names add up: the tracer's count
# for the run equals the run's loss, and every frame of it is the run's own.
expect_causes_add_up() { # GEN_OUTFILE LABEL
	local run lost causes
	run=$(gen_get "$1" 'o["run"]')
	lost=$(run_lost "$1")
	causes=$(dsum "c['kind'] == 'run' and c['run'] == $run")
	echo "$2: run $run lost $lost, causes $causes"
	t_expect_eq "$2: causes add up to the frames lost" "$lost" "$causes"
}

dut_lab() {
	lab_setup --no-ipv6 --dut forward --dut-qdisc tbf:20mbit:8kb:10ms
}

test_drops_dut_tbf() {
	local g run tbf q
	dut_lab
	probe_start
	sink_start
	g=$(mktemp)
	t_on_cleanup rm -f "$g"
	# 500-byte frames at up to 100 kpps into 20 Mbit/s: most cannot pass.
	lab_exec gen "$GEN" xsk -s 500 -n 60000 -r 100000 -j -q "$GEN_IF" >"$g" ||
		t_fail "generator: $(cat "$g")"
	sink_stop
	probe_stop
	dshow
	run=$(gen_get "$g" 'o["run"]')
	tbf=$(qdisc_drops "$DUT_NS" "$DUT_SINK_IF")
	q=$(dsum "c['kind'] == 'run' and c['run'] == $run and c['dev'] == '$DUT_SINK_IF' and
		c['ns'] == '$DUT_NS' and c['reason'].startswith('QDISC_')")
	t_expect_ge "frames the tbf dropped" 10000 "$tbf"
	t_expect_eq "the run's QDISC_* drops on the DUT's egress = the tbf's dropped" "$tbf" "$q"
	t_expect_eq "unstamped drops there" 0 \
		"$(dsum "c['kind'] == 'unstamped' and c['dev'] == '$DUT_SINK_IF'")"
	expect_causes_add_up "$g" "tbf run"
}

test_drops_backpressure_qdisc() {
	local out err name q m drops
	out=$(mktemp) err=$(mktemp)
	t_on_cleanup rm -f "$out" "$err"
	name=$(printf 'p%x%03x' $(($$ % 4096)) $((RANDOM % 4096)))
	T_LABS+=("$name")
	# The scenario's lab and the tracer share the test's key (a lab keeps an
	# XDPSG_STAMP_KEY its caller set).
	t_key_file XDPSG_STAMP_KEY
	export XDPSG_STAMP_KEY
	# The test's python for json_get and dsum: there is no lab_setup to start it.
	json_server_start
	probe_start
	# A second, as test_backpressure_qdisc_overflow's run of the same pfifo: the pfifo
	# overflows within milliseconds, and the unpaced sender's second more only costs CPU.
	"$TESTENV" backpressure --name "$name" --duration 1 --limit 500 --json >"$out" 2>"$err" ||
		t_fail "backpressure scenario failed: $(tail -n 5 "$err")"
	probe_stop
	LAB_NAME=$name dshow
	drops=$(json_get "$out" summary 'o["qdisc_stats"]["drops"]') || t_fail "no summary: $(cat "$out")"
	q=$(dsum "c['kind'] == 'run' and c['dev'] == '$name-g' and c['reason'].startswith('QDISC_')")
	# A mark the pfifo refused is sent again (the generator's marks_refused).
	m=$(dsum "c['kind'] == 'mark' and c['dev'] == '$name-g' and c['reason'].startswith('QDISC_')")
	t_expect_ge "pfifo drops" 1 "$drops"
	t_expect_eq "the run's QDISC_* drops on the generator veth (frames and marks) = the pfifo's dropped" \
		"$drops" $((q + m))
	t_expect_eq "the marks the pfifo dropped = the generator's marks_refused" \
		"$(json_get "$out" summary 'o["marks_refused"]')" "$m"
	t_expect_eq "unstamped drops there" 0 "$(dsum "c['kind'] == 'unstamped' and c['dev'] == '$name-g'")"
	t_expect_eq "nothing else of the runs dropped on the generator veth" "$q" \
		"$(dsum "c['kind'] == 'run' and c['dev'] == '$name-g'")"
}

# A slow AF_XDP sink fed by live frames, its NAPI in a thread: the veth's ring
# overflows (frames seen: per run) and the socket's rings do (no frame: unidentified).
test_drops_slow_xsk_sink() {
	local g run xmit_err0 xmit sock redir lost causes mlost mnamed
	lab_setup --no-ipv6 --threaded-napi
	probe_start
	sink_start --cost 2000
	g=$(mktemp)
	t_on_cleanup rm -f "$g"
	xmit_err0=$(veth_stat "$GEN_NS" "$GEN_IF" 'xdp_xmit_errors')
	lab_exec gen "$GEN" kernel -n 2000000 -j -q "$GEN_IF" >"$g" || t_fail "generator: $(cat "$g")"
	sink_stop
	probe_stop
	dshow
	run=$(gen_get "$g" 'o["run"]')
	xmit=$(dsum "c['kind'] in ('run', 'mark') and c['run'] == $run and c['reason'] == 'XDP_XMIT' and
		c['dev'] == '$GEN_IF' and c['ns'] == '$GEN_NS'")
	t_expect_eq "the run's XDP_XMIT drops (frames and marks) = the veth's xdp_xmit_errors" \
		$(($(veth_stat "$GEN_NS" "$GEN_IF" 'xdp_xmit_errors') - xmit_err0)) "$xmit"
	sock=$(dsum "c['kind'] == 'unidentified' and c['reason'].startswith('XSK_') and
		c['dev'] == '$SINK_IF'")
	t_expect_eq "XSK_* drops = the socket's ring counters" \
		"$(sink_get 'o["drops"]["xsk_fill_ring_empty"] + o["drops"]["xsk_rx_ring_full"]')" "$sock"
	redir=$(dsum "c['reason'].startswith('XDP_REDIRECT_') and c['dev'] == '$GEN_IF'")
	t_expect_eq "redirect failures = the generator's not_queued" \
		"$(gen_get "$g" 'o["drops"]["not_queued"]')" "$redir"
	# One run was active: the frames no cause names by run are the socket's. The
	# socket cannot tell a mark from a frame (XSK_* drops are unidentified), so
	# the books balance over both: frames and marks lost = drops of either.
	lost=$(run_lost "$g")
	causes=$(dsum "c['kind'] == 'run' and c['run'] == $run")
	mlost=$(($(gen_get "$g" 'o["marks"]') - $(sink_get "sum(r['marks'] for r in o['runs'] if r['run'] == $run)")))
	mnamed=$(dsum "c['kind'] == 'mark' and c['run'] == $run")
	echo "run $run lost $lost and $mlost marks: $causes by run, $mnamed marks by run, $sock at the socket, $redir not queued"
	t_expect_ge "frames lost" 1 "$lost"
	t_expect_eq "causes add up to the frames and marks lost" $((lost + mlost)) \
		$((causes + mnamed + sock + redir))
}

test_drops_two_runs_one_dut() {
	local ga gb pa pb qa qb qm ra rb
	dut_lab
	probe_start
	sink_start
	ga=$(mktemp) gb=$(mktemp)
	t_on_cleanup rm -f "$ga" "$gb"
	# AF_XDP and AF_PACKET at once through the tbf: 500-byte frames, 40 kpps each.
	lab_bg "$ga" gen "$GEN" xsk -s 500 -n 40000 -r 40000 -j -q "$GEN_IF"
	pa=$LAST_PID
	lab_bg "$gb" gen "$GEN" qdisc -s 500 -n 40000 -r 40000 --src-port 2000 -j -q "$GEN_IF"
	pb=$LAST_PID
	wait "$pa" || t_fail "xsk generator: $(cat "$ga")"
	wait "$pb" || t_fail "qdisc generator: $(cat "$gb")"
	sink_stop
	probe_stop
	dshow
	ra=$(gen_get "$ga" 'o["run"]')
	rb=$(gen_get "$gb" 'o["run"]')
	[ "$ra" != "$rb" ] || t_fail "both generators have run id $ra"
	qa=$(dsum "c['kind'] == 'run' and c['run'] == $ra and c['dev'] == '$DUT_SINK_IF' and
		c['reason'].startswith('QDISC_')")
	qb=$(dsum "c['kind'] == 'run' and c['run'] == $rb and c['dev'] == '$DUT_SINK_IF' and
		c['reason'].startswith('QDISC_')")
	t_expect_ge "run A's tbf drops" 1 "$qa"
	t_expect_ge "run B's tbf drops" 1 "$qb"
	# and their marks, which the tbf drops like any frame (counted apart, as kind mark)
	qm=$(dsum "c['kind'] == 'mark' and c['run'] in ($ra, $rb) and c['dev'] == '$DUT_SINK_IF' and
		c['reason'].startswith('QDISC_')")
	t_expect_eq "the tbf's dropped = run A's + run B's, marks apart" \
		"$(qdisc_drops "$DUT_NS" "$DUT_SINK_IF")" $((qa + qb + qm))
	expect_causes_add_up "$ga" "run A (xsk)"
	expect_causes_add_up "$gb" "run B (qdisc)"
	t_expect_eq "drops of neither run's frames" 0 \
		"$(dsum "c['kind'] == 'run' and c['run'] not in ($ra, $rb) and
			c['dev'].startswith('$LAB_NAME')")"
}

test_drops_stray_unstamped() {
	local g pg run q u m
	dut_lab
	probe_start
	sink_start
	g=$(mktemp)
	t_on_cleanup rm -f "$g"
	lab_bg "$g" gen "$GEN" xsk -s 500 -n 40000 -r 40000 -j -q "$GEN_IF"
	pg=$LAST_PID
	# Frames without a stamp, as fast as they go, to the same qdisc at the same time.
	lab_exec gen "$BUILD/tests/pktsend" -q -s 500 -n 20000 --dst-mac "$DUT_GEN_MAC" \
		--src-ip "$GEN_IP4" --dst-ip "$SINK_IP4" "$GEN_IF" || t_fail "pktsend failed"
	wait "$pg" || t_fail "generator: $(cat "$g")"
	sink_stop
	probe_stop
	dshow
	run=$(gen_get "$g" 'o["run"]')
	q=$(dsum "c['kind'] == 'run' and c['dev'] == '$DUT_SINK_IF' and c['reason'].startswith('QDISC_')")
	u=$(dsum "c['kind'] == 'unstamped' and c['dev'] == '$DUT_SINK_IF' and
		c['reason'].startswith('QDISC_')")
	# The run's marks (a few START/END frames a flow) meet the same tbf.
	m=$(dsum "c['kind'] == 'mark' and c['dev'] == '$DUT_SINK_IF' and c['reason'].startswith('QDISC_')")
	t_expect_ge "stray frames the tbf dropped" 1 "$u"
	t_expect_eq "the tbf's dropped = the run's frames' and marks' + the stray frames'" \
		"$(qdisc_drops "$DUT_NS" "$DUT_SINK_IF")" $((q + m + u))
	t_expect_eq "the run's tbf drops are all the run's" "$q" \
		"$(dsum "c['kind'] == 'run' and c['run'] == $run and c['dev'] == '$DUT_SINK_IF' and
			c['reason'].startswith('QDISC_')")"
	expect_causes_add_up "$g" "run with stray traffic"
}

# dframes KIND [options]: dropframes.py from the generator's side (its address and MAC).
dframes() {
	lab_exec gen env PYTHONPATH="$ROOT/testenv" python3 "$ROOT/tests/integration/dropframes.py" \
		"$@" --if "$GEN_IF" --src-mac "$GEN_MAC" --src-ip "$GEN_IP4"
}

udp_noports() { # NS: the namespace's UdpNoPorts
	ip netns exec "$1" nstat -asz UdpNoPorts | awk '$1 == "UdpNoPorts" { print $2 }'
}

# More runs than the run books hold: what does not fit is counted as
# uncharged (by reason and device), never lost silently, never folded into
# another run. The frames are stamped under a key of the test's own, so no
# other run on the host can take the books' entries, and the test can run
# beside others.
test_drops_overflow() {
	local key n ours sent unch
	lab_setup --no-ipv6
	t_key_file key
	probe_start --drop-runs 16 --stamp-key "$key"
	# 40 runs of 50 frames each to a port nobody listens on: NO_SOCKET.
	sent=$(dframes runs --key "$key" --dst-mac "$SINK_MAC" --dst-ip "$SINK_IP4" --runs 40 \
		--count 50 --run 0x5eed0000) || t_fail "could not send the frames"
	echo "sent $sent"
	# The drops happen in the receiving softirq: wait for the kernel to have counted them all.
	t_wait_until 10 udp_noports_ge "$SINK_NS" "${sent//[!0-9]/}" ||
		t_fail "the sink side refused only $(ip netns exec "$SINK_NS" nstat -az UdpNoPorts) of $sent"
	probe_stop
	ours="c['kind'] == 'run' and 0x5eed0000 <= c['run'] < 0x5eed0000 + 40"
	n=$(dsum "$ours")
	unch=$(json_get "$POUT" summary 'o["uncharged"]')
	t_expect_eq "run keys counted: the run books' size" 16 "$(dsum "$ours" keys)"
	t_expect_eq "entries the summary says are used" 16 "$(json_get "$POUT" summary 'o["runs_used"]')"
	t_expect_eq "the books' size in the summary" 16 "$(json_get "$POUT" summary 'o["drop_runs"]')"
	t_expect_ge "uncharged" 1 "$unch"
	t_expect_eq "counted by run + uncharged = the frames sent" 2000 $((n + unch))
	t_expect_eq "uncharged drops by reason and device = the summary's uncharged" "$unch" \
		"$(dsum "c['kind'] == 'uncharged'")"
	t_expect_eq "runs counted in part" 0 "$(dsum "$ours and c['packets'] % 50" keys)"
}

# Frames of each shape the parser knows, stamped, dropped at a tbf on the
# generator veth with their headers as sent: IPv4, IPv6, 802.1Q and QinQ
# tags, IPv4 options, an IPv6 hop-by-hop header. An IPv4 fragment and a frame
# with a wrong magic carry no stamp the tracer may believe.
test_drops_frame_shapes() {
	local sent r i
	lab_setup --no-ipv6 --qdisc tbf:1mbit:4kb:1ms
	probe_start
	sent=$(dframes shapes --dst-mac "$SINK_MAC" --count 100 --run 0x5eed2000) ||
		t_fail "could not send the frames"
	t_wait_until 10 qdisc_empty "$GEN_NS" "$GEN_IF" || t_fail "the tbf never emptied"
	probe_stop
	dshow
	echo "sent $sent"
	for i in 0 1 2 3 4 5; do
		r=$((0x5eed2000 + i))
		t_expect_ge "shape $i (run $r): drops found by the stamp" 1 \
			"$(dsum "c['kind'] == 'run' and c['run'] == $r and c['dev'] == '$GEN_IF'")"
	done
	t_expect_eq "an IPv4 fragment is no run's" 0 "$(dsum "c['kind'] == 'run' and c['run'] == 0x5eed2006")"
	t_expect_eq "a wrong magic is no run's" 0 "$(dsum "c['kind'] == 'run' and c['run'] == 0x5eed2007")"
	t_expect_eq "the tbf's dropped = the runs' + unstamped" \
		"$(qdisc_drops "$GEN_NS" "$GEN_IF")" \
		"$(dsum "c['dev'] == '$GEN_IF' and c['ns'] == '$GEN_NS' and c['reason'].startswith('QDISC_')")"
	t_expect_ge "unstamped drops (the fragments and wrong magics)" 1 \
		"$(dsum "c['kind'] == 'unstamped' and c['dev'] == '$GEN_IF'")"
}

# Thousands of stamps with distinct run ids and wrong tags, dropped at a
# closed port, then a genuine run through the DUT's tbf: the forged frames
# take no run's entry (counted as forged, by reason and device), and the
# genuine run's drops are all its own. Genuine marks are counted apart.
test_drops_forged_runs() {
	local g run tbf q sent nop0 nop forged dut_ip
	dut_lab
	dut_ip=$(dut_gen_ip4) || t_fail "the DUT has no IPv4 address on $DUT_GEN_IF"
	probe_start
	nop0=$(udp_noports "$DUT_NS")
	# To the DUT's own address, a port nobody listens on: 5,000 run ids, 200 of them marks.
	sent=$(dframes forged --dst-mac "$DUT_GEN_MAC" --dst-ip "$dut_ip" --count 5000 \
		--marks 200 --run 0x5eed4000) || t_fail "could not send the forged frames"
	echo "sent $sent"
	# Genuine marks of five runs, dropped there too.
	dframes runs --dst-mac "$DUT_GEN_MAC" --dst-ip "$dut_ip" --runs 5 --count 0 \
		--marks 4 --run 0x5eed6000 >/dev/null || t_fail "could not send the marks"
	sink_start
	g=$(mktemp)
	t_on_cleanup rm -f "$g"
	lab_exec gen "$GEN" xsk -s 500 -n 30000 -r 100000 -j -q "$GEN_IF" >"$g" ||
		t_fail "generator: $(cat "$g")"
	sink_stop
	probe_stop
	run=$(gen_get "$g" 'o["run"]')
	nop=$(($(udp_noports "$DUT_NS") - nop0))
	forged=$(dsum "c['kind'] == 'forged' and c['dev'] == '$DUT_GEN_IF' and c['ns'] == '$DUT_NS'")
	echo "forged drops at $DUT_GEN_IF: $forged; UdpNoPorts there $nop"
	t_expect_eq "forged drops at the DUT = the frames forged" 5000 "$forged"
	t_expect_eq "NO_SOCKET drops there (forged + marks) = the DUT's UdpNoPorts" "$nop" \
		"$(dsum "c['dev'] == '$DUT_GEN_IF' and c['ns'] == '$DUT_NS' and c['reason'] == 'NO_SOCKET'")"
	t_expect_eq "entries of the forged run ids" 0 \
		"$(dsum "c['kind'] in ('run', 'mark') and 0x5eed4000 <= c['run'] < 0x5eed4000 + 5000" keys)"
	t_expect_eq "genuine marks, counted as marks" 20 \
		"$(dsum "c['kind'] == 'mark' and 0x5eed6000 <= c['run'] < 0x5eed6005")"
	t_expect_eq "genuine marks counted as a run's frames" 0 \
		"$(dsum "c['kind'] == 'run' and 0x5eed6000 <= c['run'] < 0x5eed6005")"
	t_expect_eq "uncharged" 0 "$(json_get "$POUT" summary 'o["uncharged"]')"
	tbf=$(qdisc_drops "$DUT_NS" "$DUT_SINK_IF")
	q=$(dsum "c['kind'] == 'run' and c['run'] == $run and c['dev'] == '$DUT_SINK_IF' and
		c['reason'].startswith('QDISC_')")
	t_expect_ge "frames the tbf dropped" 1000 "$tbf"
	t_expect_eq "the genuine run's QDISC_* drops = the tbf's dropped" "$tbf" "$q"
	expect_causes_add_up "$g" "genuine run"
}

# The walk moves forward only: a 488-byte IPv6 hop-by-hop header takes it
# past the tracer's copy, where it must stop (the frame is unidentified), not
# wrap back to the frame's start, where this frame holds a stamp of another
# run (its tag right, in the IPv6 addresses).
test_drops_walk_forward_only() {
	local sent tbf
	lab_setup --no-ipv6 --qdisc tbf:1mbit:4kb:1ms
	probe_start
	sent=$(dframes wrap --dst-mac "$SINK_MAC" --count 100 --run 0x5eed3000) ||
		t_fail "could not send the frames"
	t_wait_until 10 qdisc_empty "$GEN_NS" "$GEN_IF" || t_fail "the tbf never emptied"
	probe_stop
	dshow
	echo "sent $sent"
	tbf=$(qdisc_drops "$GEN_NS" "$GEN_IF")
	t_expect_ge "frames the tbf dropped" 50 "$tbf"
	t_expect_eq "drops charged to the run a wrapped walk finds" 0 \
		"$(dsum "c['kind'] in ('run', 'mark') and c['run'] == 0x5eed3000")"
	t_expect_eq "drops charged to the run whose stamp lies beyond the copy" 0 \
		"$(dsum "c['kind'] in ('run', 'mark') and c['run'] == 0x5eed3001")"
	t_expect_eq "the tbf's dropped, all unidentified (their stamp unread)" "$tbf" \
		"$(dsum "c['kind'] == 'unidentified' and c['dev'] == '$GEN_IF' and c['ns'] == '$GEN_NS' and
			c['reason'].startswith('QDISC_')")"
}

# Names of our programs loaded now (bpftool shows at most 15 characters).
our_progs() {
	bpftool prog list 2>/dev/null | grep -oE 'name drops_[a-z_]+' | sort | tr '\n' ' '
}

# serial: counts the tracer programs loaded on the host
test_drops_cannot_load() {
	local before msg rc
	before=$(our_progs)
	msg=$("$PROBE" --btf /nonexistent/vmlinux -d 1 2>&1)
	rc=$?
	t_expect_eq "exit code, no BTF" 2 "$rc"
	t_expect_eq "one line, no BTF" 1 "$(wc -l <<<"$msg")"
	[[ "$msg" == *"/nonexistent/vmlinux"* ]] || t_fail "message does not name the file: $msg"
	# Without privileges (a user namespace has none over the host).
	msg=$(unshare -U "$PROBE" -d 1 2>&1)
	rc=$?
	t_expect_eq "exit code, unprivileged" 2 "$rc"
	t_expect_eq "one line, unprivileged" 1 "$(wc -l <<<"$msg")"
	[[ "$msg" == *"needs root"* ]] || t_fail "message does not say what is missing: $msg"
	msg=$("$PROBE" --max-entries 0 2>&1)
	t_expect_eq "exit code, bad option" 2 $?
	[[ "$msg" == *"--max-entries"* ]] || t_fail "message does not name the option: $msg"
	t_expect_eq "programs of ours after the failures" "$before" "$(our_progs)"
	# The same check sees a tracer that is attached, and one that has gone.
	probe_start
	[[ "$(our_progs)" == *"name drops_kfree_skb"* ]] || t_fail "bpftool does not show the tracer"
	probe_stop
	t_expect_eq "programs of ours after a run" "$before" "$(our_progs)"
}

# drops_text_at_least FILE KIND N: the intervals of a text tracer show N drops of KIND.
drops_text_at_least() {
	awk -v k="$2" -v n="$3" '/^Summary/ { exit } $1 == k { gsub(",", "", $NF); s += $NF }
		END { exit !(s >= n) }' "$1"
}

# The text summary ends in one RESULT line, every drop by kind. Under a key
# of this test's own (other tests' frames are forged then), a run of 200
# frames to a MAC that is not the sink's: the stack drops them (OTHERHOST)
# and its 6 marks: exactly "runs' frames 200 (of 1 run), their marks 6".
test_drops_result_line() {
	local key out
	lab_setup --no-ipv6
	t_key_file key
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	XDPSG_STAMP_KEY=$key "$SINK" drops -i 100ms -d 300 >"$out" 2>&1 &
	local pid=$!
	T_PIDS+=("$pid")
	t_wait_for "$out" 'tracing drops host-wide' 20 || t_fail "the tracer did not start: $(cat "$out")"
	lab_exec gen env XDPSG_STAMP_KEY="$key" "$GEN" xsk -q -n 200 --dst-mac 02:00:00:00:00:99 \
		"$GEN_IF" >/dev/null || t_fail "xdp-gen failed"
	# Until the intervals have shown them all (the last end mark goes 50 ms after the run).
	t_wait_until 10 drops_text_at_least "$out" run 200 ||
		t_fail "the run's drops never showed: $(cat "$out")"
	t_wait_until 10 drops_text_at_least "$out" mark 6 || t_fail "the marks' drops never showed"
	kill -INT "$pid"
	wait "$pid" || t_fail "xdp-sink drops failed: $(cat "$out")"
	[ "$(grep -c '^RESULT: ' "$out")" = 1 ] || t_fail "not one RESULT line: $(cat "$out")"
	t_has "$out" "^RESULT: [0-9,]* frames dropped in [0-9.]* s: runs' frames 200 (of 1 run), their marks 6, forged [0-9,]*, unidentified [0-9,]*, unstamped [0-9,]*" ||
		t_fail "RESULT: $(grep RESULT "$out")"
}
