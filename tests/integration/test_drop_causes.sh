# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# xdp-sink xsk --drop-causes and xdp-sink drops: each run's lost frames are
# named by where they were dropped, the causes plus lost_unexplained less
# lost_overexplained equal the run's lost, and each cause equals the kernel's
# own counter of that layer (the tbf's dropped, the socket's ring counters).
# Exact counts only. The tracer is host-wide: the checks look at this test's
# runs and devices only.

SINK="$BUILD/xdp-sink"
SINK_HOOKS="$BUILD/test-hooks/xdp-sink" # reads XDPSG_TEST_DROPS_BTF
GEN="$BUILD/xdp-gen"

cs_sink_start() { # [options]: xdp-sink xsk --drop-causes, attached when this returns
	SOUT=$(mktemp)
	t_on_cleanup rm -f "$SOUT"
	lab_bg "$SOUT" sink "$SINK" xsk -j -q -d 300 --ring-size 32768 --drop-causes "$@" "$SINK_IF"
	SINK_PID=$LAST_PID
	wait_ready "$SOUT" "$SINK_PID" || t_fail "xsk sink did not start: $(cat "$SOUT")"
}

cs_sink_stop() {
	sleep 1 # what is in flight through the DUT's queue arrives
	kill -INT "$SINK_PID"
	wait "$SINK_PID"
	t_expect_eq "sink exit code" 0 $?
}

cs_gen() { # GEN_OUTFILE EXPR
	json_get "$1" summary "$2" || t_fail "no generator summary in $1: $(cat "$1")"
}

# cs_run RUN EXPR: EXPR (python, the run's object as r) on the sink's summary.
cs_run() {
	json_get "$SOUT" summary "[$2 for r in o['runs'] if r['run'] == $1][0]" ||
		t_fail "run $1 is not in the sink's summary: $(tail -n 1 "$SOUT")"
}

qdisc_dropped() { # NS DEV: the root qdisc's dropped counter
	tc -n "$1" -s -j qdisc show dev "$2" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["drops"])'
}

# The books balance for a run: what its generator sent less what the sink
# received is what the causes name (the tracer sees a run's last frames
# dropped too, which no sequence number can show lost), and the causes plus
# lost_unexplained less lost_overexplained are the sink's lost.
expect_run_explained() { # GEN_OUTFILE LABEL
	local run sent got lost causes un over
	run=$(cs_gen "$1" 'o["run"]')
	sent=$(cs_gen "$1" 'o["tx_packets"]')
	got=$(cs_run "$run" "r['received']")
	lost=$(cs_run "$run" "r['lost']")
	causes=$(cs_run "$run" "sum(c['packets'] for c in r['lost_causes'])")
	un=$(cs_run "$run" "r['lost_unexplained']")
	over=$(cs_run "$run" "r['lost_overexplained']")
	echo "$2: run $run sent $sent received $got lost $lost; causes $causes," \
		"unexplained $un, overexplained $over"
	echo "    $(cs_run "$run" "r['lost_causes']")"
	t_expect_eq "$2: causes + unexplained - overexplained = lost" "$lost" $((causes + un - over))
	t_expect_eq "$2: causes = sent - received" $((sent - got)) "$causes"
	t_expect_eq "$2: lost_unexplained" 0 "$un"
}

dut_lab() {
	lab_setup --no-ipv6 --dut forward --dut-qdisc tbf:20mbit:8kb:10ms
}

# The issue's case: most frames dropped at the DUT's tbf, every one named.
test_drop_causes_dut_tbf() {
	local g run q mf
	dut_lab
	mf=$(mktemp)
	t_on_cleanup rm -f "$mf"
	cs_sink_start --metrics-file "$mf"
	g=$(mktemp)
	t_on_cleanup rm -f "$g"
	# 500-byte frames at up to 100 kpps into 20 Mbit/s: most cannot pass.
	lab_exec gen "$GEN" xsk -s 500 -n 30000 -r 100000 -j -q "$GEN_IF" >"$g" ||
		t_fail "generator: $(cat "$g")"
	cs_sink_stop
	run=$(cs_gen "$g" 'o["run"]')
	q=$(cs_run "$run" "sum(c['packets'] for c in r['lost_causes'] if c['dev'] == '$DUT_SINK_IF'
		and c.get('ns') == '$DUT_NS' and c['reason'] == 'QDISC_DROP' and c['identified'])")
	t_expect_ge "frames the tbf dropped" 10000 "$q"
	t_expect_eq "the run's QDISC_DROP on the DUT's egress = the tbf's dropped" \
		"$(qdisc_dropped "$DUT_NS" "$DUT_SINK_IF")" "$q"
	expect_run_explained "$g" "tbf run"
	grep -q "^xdp_sink_lost_by_cause_total{.*run=\"$(printf %08x "$run")\",reason=\"QDISC_DROP\",device=\"$DUT_SINK_IF\",netns=\"$DUT_NS\"} $q\$" "$mf" ||
		t_fail "no QDISC_DROP sample of $q in the metrics: $(grep lost_by_cause "$mf")"
	# device is the drop's; the sink's own is left off, not a second device label.
	grep -E '^xdp_sink_lost_by_cause_total\{(.*interface=|.*device=.*device=)' "$mf" &&
		t_fail "a drop-cause sample has interface= or device twice (above)"
	return 0
}

# The text summary: one line per run naming its causes.
test_drop_causes_text() {
	local out g run line
	dut_lab
	out=$(mktemp) g=$(mktemp)
	t_on_cleanup rm -f "$out" "$g"
	lab_bg "$out" sink "$SINK" xsk -d 300 --ring-size 32768 --drop-causes "$SINK_IF"
	SINK_PID=$LAST_PID
	t_wait_for "$out" 'Ctrl-C to stop' 20 || t_fail "sink did not start: $(cat "$out")"
	lab_exec gen "$GEN" xsk -s 500 -n 20000 -r 100000 -j -q "$GEN_IF" >"$g" ||
		t_fail "generator: $(cat "$g")"
	sleep 1
	kill -INT "$SINK_PID"
	wait "$SINK_PID"
	run=$(printf %08x "$(cs_gen "$g" 'o["run"]')")
	line=$(grep "^    run $run lost " "$out") || t_fail "no causes line for run $run: $(cat "$out")"
	echo "$line"
	[[ "$line" =~ lost\ [0-9,]+:\ QDISC_DROP\ $DUT_SINK_IF\ [0-9,]+,\ unexplained\ 0 ]] ||
		t_fail "the causes line does not name the tbf drops: $line"
}

# Two generator runs at once through one lossy DUT: each run's causes are its
# own frames' drops, and together they are the tbf's.
test_drop_causes_two_runs() {
	local ga gb pa pb ra rb qa qb
	dut_lab
	cs_sink_start
	ga=$(mktemp) gb=$(mktemp)
	t_on_cleanup rm -f "$ga" "$gb"
	lab_bg "$ga" gen "$GEN" xsk -s 500 -n 20000 -r 40000 -j -q "$GEN_IF"
	pa=$LAST_PID
	lab_bg "$gb" gen "$GEN" qdisc -s 500 -n 20000 -r 40000 --src-port 2000 -j -q "$GEN_IF"
	pb=$LAST_PID
	wait "$pa" || t_fail "xsk generator: $(cat "$ga")"
	wait "$pb" || t_fail "qdisc generator: $(cat "$gb")"
	cs_sink_stop
	ra=$(cs_gen "$ga" 'o["run"]')
	rb=$(cs_gen "$gb" 'o["run"]')
	[ "$ra" != "$rb" ] || t_fail "both generators have run id $ra"
	qa=$(cs_run "$ra" "sum(c['packets'] for c in r['lost_causes'])")
	qb=$(cs_run "$rb" "sum(c['packets'] for c in r['lost_causes'])")
	t_expect_ge "run A's causes" 1 "$qa"
	t_expect_ge "run B's causes" 1 "$qb"
	t_expect_eq "the tbf's dropped = run A's causes + run B's" \
		"$(qdisc_dropped "$DUT_NS" "$DUT_SINK_IF")" $((qa + qb))
	expect_run_explained "$ga" "run A (xsk)"
	expect_run_explained "$gb" "run B (qdisc)"
}

# Frames without a stamp dropped at the same qdisc are no run's.
test_drop_causes_stray_unstamped() {
	local g pg run q tbf
	dut_lab
	cs_sink_start
	g=$(mktemp)
	t_on_cleanup rm -f "$g"
	lab_bg "$g" gen "$GEN" xsk -s 500 -n 20000 -r 40000 -j -q "$GEN_IF"
	pg=$LAST_PID
	lab_exec gen "$BUILD/tests/pktsend" -q -s 500 -n 20000 --dst-mac "$DUT_GEN_MAC" \
		--src-ip "$GEN_IP4" --dst-ip "$SINK_IP4" "$GEN_IF" || t_fail "pktsend failed"
	wait "$pg" || t_fail "generator: $(cat "$g")"
	cs_sink_stop
	run=$(cs_gen "$g" 'o["run"]')
	q=$(cs_run "$run" "sum(c['packets'] for c in r['lost_causes'])")
	tbf=$(qdisc_dropped "$DUT_NS" "$DUT_SINK_IF")
	echo "tbf dropped $tbf, the run's causes $q"
	t_expect_ge "stray frames the tbf dropped (tbf's dropped - the run's)" 1 $((tbf - q))
	expect_run_explained "$g" "run with stray traffic"
	t_expect_ge "unstamped drops the tracer saw" $((tbf - q)) \
		"$(json_get "$SOUT" summary 'o["drop_causes"]["unstamped"]')"
}

# A slow sink fed by live frames: the veth's ring (XDP_XMIT, by run) and the
# socket's rings (XSK_*, no frame: charged to the only run on the device).
test_drop_causes_slow_xsk_sink() {
	local g run sock
	lab_setup --no-ipv6 --threaded-napi
	cs_sink_start --cost 2000
	g=$(mktemp)
	t_on_cleanup rm -f "$g"
	lab_exec gen "$GEN" kernel -n 1000000 -j -q "$GEN_IF" >"$g" || t_fail "generator: $(cat "$g")"
	cs_sink_stop
	run=$(cs_gen "$g" 'o["run"]')
	sock=$(cs_run "$run" "sum(c['packets'] for c in r['lost_causes'] if
		c['reason'].startswith('XSK_') and c['dev'] == '$SINK_IF' and not c['identified'])")
	t_expect_eq "XSK_* causes = the socket's ring counters" \
		"$(json_get "$SOUT" summary 'o["drops"]["xsk_fill_ring_empty"] + o["drops"]["xsk_rx_ring_full"]')" \
		"$sock"
	t_expect_ge "frames lost at the sink's rings or the veth's" 1 \
		"$(cs_run "$run" "sum(c['packets'] for c in r['lost_causes'])")"
	expect_run_explained "$g" "slow sink"
}

# Two runs one after the other into the slow sink (RFC 2544's warm-up and trial): the
# socket's drops, reported without the frame, are charged by when they happened.
test_drop_causes_slow_sink_two_runs() {
	local ga gb ra rb sock
	lab_setup --no-ipv6 --threaded-napi
	# A small ring: the socket drops frames too, not only the veth.
	cs_sink_start --cost 2000 --ring-size 512
	ga=$(mktemp) gb=$(mktemp)
	t_on_cleanup rm -f "$ga" "$gb"
	lab_exec gen "$GEN" kernel -n 500000 -j -q "$GEN_IF" >"$ga" || t_fail "generator A: $(cat "$ga")"
	sleep 0.5 # the runs apart: the sink's drops of each happen while only it arrives
	lab_exec gen "$GEN" kernel -n 500000 -j -q "$GEN_IF" >"$gb" || t_fail "generator B: $(cat "$gb")"
	cs_sink_stop
	ra=$(cs_gen "$ga" 'o["run"]')
	rb=$(cs_gen "$gb" 'o["run"]')
	sock=0
	for r in "$ra" "$rb"; do
		sock=$((sock + $(cs_run "$r" "sum(c['packets'] for c in r['lost_causes'] if
			c['reason'].startswith('XSK_') and not c['identified'])")))
	done
	t_expect_ge "XSK_* drops charged to the runs" 1 "$sock"
	t_expect_eq "XSK_* causes of both runs = the socket's ring counters" \
		"$(json_get "$SOUT" summary 'o["drops"]["xsk_fill_ring_empty"] + o["drops"]["xsk_rx_ring_full"]')" \
		"$sock"
	expect_run_explained "$ga" "slow sink, run A"
	expect_run_explained "$gb" "slow sink, run B"
}

# The tracer cannot load: one line naming what is missing, exit 2, nothing attached.
test_drop_causes_no_tracer() {
	local out rc
	lab_setup --no-ipv6
	[ -x "$SINK_HOOKS" ] || t_fail "$SINK_HOOKS is not built; run 'make all'"
	out=$(lab_exec sink env XDPSG_TEST_DROPS_BTF=/nonexistent/vmlinux "$SINK_HOOKS" xsk \
		--drop-causes -d 1 "$SINK_IF" 2>&1)
	rc=$?
	echo "$out"
	t_expect_eq "exit code" 2 "$rc"
	t_expect_eq "lines printed" 1 "$(grep -c . <<<"$out")"
	grep -q "drop tracer.*/nonexistent/vmlinux" <<<"$out" || t_fail "the line does not name the BTF file"
	xdp_detached "$SINK_NS" "$SINK_IF" || t_fail "an XDP program was left on $SINK_IF"
	out=$(env XDPSG_TEST_DROPS_BTF=/nonexistent/vmlinux "$SINK_HOOKS" drops -d 1 2>&1)
	rc=$?
	t_expect_eq "drops: exit code" 2 "$rc"
	t_expect_eq "drops: lines printed" 1 "$(grep -c . <<<"$out")"
}

# xdp-sink drops alone: a run's drops by run, reason and device, as JSON, text and metrics.
test_drop_causes_drops_cmd() {
	local d g run q mf
	dut_lab
	d=$(mktemp) g=$(mktemp) mf=$(mktemp)
	t_on_cleanup rm -f "$d" "$g" "$mf"
	"$SINK" drops -j -d 300 --metrics-file "$mf" >"$d" 2>&1 &
	T_PIDS+=("$!")
	DPID=$!
	t_wait_for "$d" '"type":"ready"' 20 || t_fail "drops did not start: $(cat "$d")"
	lab_exec gen "$GEN" xsk -s 500 -n 20000 -r 100000 -j -q "$GEN_IF" >"$g" ||
		t_fail "generator: $(cat "$g")"
	sleep 1
	kill -INT "$DPID"
	wait "$DPID"
	t_expect_eq "drops exit code" 0 $?
	run=$(cs_gen "$g" 'o["run"]')
	q=$(json_get "$d" summary "sum(c['packets'] for c in o['counts'] if c['kind'] == 'run' and
		c['run'] == $run and c['dev'] == '$DUT_SINK_IF' and c['reason'] == 'QDISC_DROP')")
	t_expect_ge "the run's tbf drops" 1 "$q"
	t_expect_eq "the run's QDISC_DROP = the tbf's dropped" "$(qdisc_dropped "$DUT_NS" "$DUT_SINK_IF")" "$q"
	grep -q "^xdp_sink_dropped_by_cause_total{.*kind=\"run\",run=\"$(printf %08x "$run")\",reason=\"QDISC_DROP\",device=\"$DUT_SINK_IF\",netns=\"$DUT_NS\"} $q\$" "$mf" ||
		t_fail "no QDISC_DROP sample of $q in the metrics: $(grep "$DUT_SINK_IF" "$mf")"
	# Host-wide: no device of its own, so the only device label is the drop's.
	grep -E '^xdp_sink_dropped_by_cause_total\{(.*interface=|.*device=.*device=)' "$mf" &&
		t_fail "a drop-cause sample has interface= or device twice (above)"
	return 0
}
