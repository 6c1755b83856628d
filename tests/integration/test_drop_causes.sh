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
	json_text "$(tc -n "$1" -s -j qdisc show dev "$2")" 'o[0]["drops"]'
}

# The books balance for a run: what its generator sent less what the sink
# received is the sink's lost (its END marks close the books: frames dropped
# after the last one that arrived are in lost_at_end) and the frames missing
# before the first that arrived (two generators into one tbf: one's first
# frames may find it full), every one of them named
# by the causes, and the causes plus lost_unexplained less lost_overexplained
# are the sink's lost, once the unidentified drops taken as its missing marks
# (marks_charged: a slow sink's full ring drops marks too) are set apart. The
# sink's own count of the run (the marks' "sent") is the generator's.
expect_run_explained() { # GEN_OUTFILE LABEL
	local run sent got lost causes un over said mc head
	run=$(cs_gen "$1" 'o["run"]')
	sent=$(cs_gen "$1" 'o["tx_packets"]')
	got=$(cs_run "$run" "r['received']")
	lost=$(cs_run "$run" "r['lost']")
	causes=$(cs_run "$run" "sum(c['packets'] for c in r['lost_causes'])")
	un=$(cs_run "$run" "r['lost_unexplained']")
	over=$(cs_run "$run" "r['lost_overexplained']")
	said=$(cs_run "$run" "r['sent']")
	mc=$(cs_run "$run" "r['marks_charged']")
	head=$(cs_run "$run" "r['missing_head']")
	echo "$2: run $run sent $sent (the sink's count $said) received $got lost $lost" \
		"(at the end $(cs_run "$run" "r['lost_at_end']"), missing before the first $head);" \
		"causes $causes," \
		"unexplained $un, overexplained $over, marks charged $mc"
	echo "    $(cs_run "$run" "r['lost_causes']")"
	t_expect_eq "$2: the run's end seen" seen "$(cs_run "$run" "r['end']")"
	t_expect_eq "$2: the sink's count of the run = the generator's" "$sent" "$said"
	t_expect_eq "$2: lost + missing before the first = sent - received" $((sent - got)) \
		$((lost + head))
	t_expect_eq "$2: causes + unexplained - overexplained - marks charged = lost + head" \
		$((lost + head)) $((causes + un - over - mc))
	t_expect_eq "$2: causes - marks charged = sent - received" $((sent - got)) $((causes - mc))
	t_expect_eq "$2: lost_unexplained" 0 "$un"
	t_expect_eq "$2: lost_overexplained" 0 "$over"
}

dut_lab() {
	lab_setup --no-ipv6 --dut forward --dut-qdisc tbf:20mbit:8kb:10ms
}

# The issue's case, as separate hosts would see it (the clocks matrix: the
# "separate" row runs the generator a day ahead and the DUT two): most frames
# dropped at the DUT's tbf, each generator mode in turn into one sink. For
# each run the books close exactly (see expect_run_explained), the tbf's
# dropped is the run's QDISC_DROP there plus the marks it dropped, and the
# metrics carry the cause. Then a text sink without --drop-causes: its RESULT
# line's lost is what live frames sent less what it checked, no cause needed.
# (Over veth the xsk and qdisc generators feel the tbf's queue through their
# sockets' send buffers, as no generator on another host would: 500-byte frames
# outgrow the tbf's 8 kB and the drops come anyway.)
# long: one run per mode through a tbf that drops
test_drop_causes_dut_tbf() {
	t_each_clocks dct_tbf_body
}

dct_tbf_body() {
	local mf m label g run q d0 d1 marks got out lost tail
	clocks_lab_setup --no-ipv6 --dut forward --dut-qdisc tbf:20mbit:8kb:10ms
	mf=$(mktemp)
	t_on_cleanup rm -f "$mf"
	cs_sink_start --metrics-file "$mf"
	# The tbf passes some 5,000 of these a second: any of the runs gives it tens of
	# thousands to drop. (The kernel run's 60-byte frames, 41,667 a second through the
	# tbf, once met a DUT so busy that it forwarded fewer: the tbf dropped 183.) No
	# more than that: the frames, dropped or not, are the generator's and the DUT's CPU.
	for m in "xsk -s 500 -r 100000 -d 0.35" "kernel -s 500 -n 40000 --fix-peer" \
		"qdisc -s 500 -r 100000 -d 0.35"; do
		label="${m%% *}"
		g=$(mktemp)
		t_on_cleanup rm -f "$g"
		eval "G_$label=$g"
		d0=$(qdisc_dropped "$DUT_NS" "$DUT_SINK_IF")
		# shellcheck disable=SC2086 # a word list
		lab_exec gen "$GEN" $m -j -q "$GEN_IF" >"$g" || t_fail "$label: generator: $(cat "$g")"
		t_wait_until 10 dct_tbf_empty || t_fail "the tbf never emptied"
		d1=$(qdisc_dropped "$DUT_NS" "$DUT_SINK_IF")
		eval "D_$label=$((d1 - d0))"
	done
	cs_sink_stop
	t_expect_eq "forged" 0 "$(json_get "$SOUT" summary 'o["forged"]')"
	t_expect_eq "stray runs" 0 "$(json_get "$SOUT" summary 'o["stray_runs"]')"
	t_expect_eq "unplaced" 0 "$(json_get "$SOUT" summary 'o["unchecked"]["unplaced"]')"
	for label in xsk kernel qdisc; do
		eval "g=\$G_$label d1=\$D_$label"
		expect_run_explained "$g" "$label"
		run=$(cs_gen "$g" 'o["run"]')
		q=$(cs_run "$run" "sum(c['packets'] for c in r['lost_causes'] if c['dev'] == '$DUT_SINK_IF'
			and c.get('ns') == '$DUT_NS' and c['reason'] == 'QDISC_DROP' and c['identified'])")
		marks=$(($(cs_gen "$g" 'o["marks"]') - $(cs_run "$run" "r['marks']")))
		echo "$label: the tbf dropped $d1: the run's $q, marks $marks"
		t_expect_ge "$label: frames the tbf dropped" 1000 "$q"
		t_expect_eq "$label: the tbf's dropped = the run's QDISC_DROP there + its marks'" \
			"$d1" $((q + marks))
		grep -q "^xdp_sink_lost_by_cause_total{.*run=\"$(printf %08x "$run")\",reason=\"QDISC_DROP\",device=\"$DUT_SINK_IF\",netns=\"$DUT_NS\"} $q\$" "$mf" ||
			t_fail "$label: no QDISC_DROP sample of $q in the metrics: $(grep lost_by_cause "$mf")"
	done
	# device is the drop's; the sink's own is left off, not a second device label.
	if grep -E '^xdp_sink_lost_by_cause_total\{(.*interface=|.*device=.*device=)' "$mf"; then
		t_fail "a drop-cause sample has interface= or device twice (above)"
	fi
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" sink "$SINK" xsk -d 300 --ring-size 32768 "$SINK_IF"
	SINK_PID=$LAST_PID
	t_wait_for "$out" 'Ctrl-C to stop' 20 || t_fail "text sink did not start: $(cat "$out")"
	lab_exec gen "$GEN" kernel -n 50000 --fix-peer -j -q "$GEN_IF" >"$g" ||
		t_fail "generator: $(cat "$g")"
	t_wait_until 10 dct_tbf_empty || t_fail "the tbf never emptied"
	cs_sink_stop
	grep '^RESULT' "$out"
	read -r got lost tail <<<"$(sed -nE 's/^RESULT: ([0-9,]+) stamped frames of 1 run checked: lost ([0-9,]+) \(([0-9,]+) after the last frame that arrived\).*/\1 \2 \3/p' "$out" | tr -d ,)"
	[ -n "$tail" ] || t_fail "no RESULT line of one run: $(tail -n 5 "$out")"
	# The tail is what the END marks showed: often 0 through a tbf, whose queue
	# holds the last frames sent and lets them out; the total is exact either way.
	t_expect_eq "RESULT: lost = 50,000 sent - checked" $((50000 - got)) "$lost"
	echo "RESULT: $tail of them after the last frame that arrived"
}

dct_tbf_empty() {
	[ "$(json_text "$(tc -n "$DUT_NS" -s -j qdisc show dev "$DUT_SINK_IF")" 'o[0]["qlen"]')" = 0 ]
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
	local ga gb pa pb ra rb qa qb qm
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
	# and their marks the tbf dropped (in no run's causes: counted apart)
	qm=$(($(cs_run "$ra" "r['marks_dropped']") + $(cs_run "$rb" "r['marks_dropped']")))
	t_expect_eq "the tbf's dropped = run A's causes + run B's + their marks" \
		"$(qdisc_dropped "$DUT_NS" "$DUT_SINK_IF")" $((qa + qb + qm))
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
# serial: the slow sink must get its CPU back within the end marks' 50 ms, or the run's
# end goes unseen (CI at -j4 once: 'end not seen', the sink off its CPU longer)
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
# serial: the slow sink must get its CPU back within the end marks' 50 ms, or the run's
# end goes unseen (CI at -j4 once: 'end not seen', the sink off its CPU longer)
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

# dframes KIND [options]: dropframes.py from the generator's side (its address and MAC).
dframes() {
	lab_exec gen env PYTHONPATH="$ROOT/testenv" python3 "$ROOT/tests/integration/dropframes.py" \
		"$@" --if "$GEN_IF" --src-mac "$GEN_MAC" --src-ip "$GEN_IP4"
}

# Thousands of stamps with distinct run ids and wrong tags dropped on the
# host before a genuine run's: they take none of the tracer's run entries,
# and every frame the genuine run lost still has its cause.
test_drop_causes_forged_runs() {
	local g run q dut_ip sent
	dut_lab
	dut_ip=$(dut_gen_ip4) || t_fail "the DUT has no IPv4 address on $DUT_GEN_IF"
	cs_sink_start
	sent=$(dframes forged --dst-mac "$DUT_GEN_MAC" --dst-ip "$dut_ip" --count 5000 \
		--run 0x5eed4000) || t_fail "could not send the forged frames"
	echo "sent $sent"
	g=$(mktemp)
	t_on_cleanup rm -f "$g"
	lab_exec gen "$GEN" xsk -s 500 -n 30000 -r 100000 -j -q "$GEN_IF" >"$g" ||
		t_fail "generator: $(cat "$g")"
	cs_sink_stop
	run=$(cs_gen "$g" 'o["run"]')
	q=$(cs_run "$run" "sum(c['packets'] for c in r['lost_causes'] if c['dev'] == '$DUT_SINK_IF'
		and c['reason'] == 'QDISC_DROP' and c['identified'])")
	t_expect_ge "frames the tbf dropped" 1000 "$q"
	t_expect_eq "the run's QDISC_DROP on the DUT's egress = the tbf's dropped" \
		"$(qdisc_dropped "$DUT_NS" "$DUT_SINK_IF")" "$q"
	expect_run_explained "$g" "genuine run after 5,000 forged run ids"
	t_expect_ge "forged drops" 5000 "$(json_get "$SOUT" summary 'o["drop_causes"]["forged"]')"
	t_expect_eq "uncharged drops" 0 "$(json_get "$SOUT" summary 'o["drop_causes"]["uncharged"]')"
	t_expect_eq "forged run ids among the runs" 0 "$(json_get "$SOUT" summary \
		"len([c for c in o['drop_causes']['unseen_runs'] if 0x5eed4000 <= c['run'] < 0x5eed4000 + 5000])")"
}

# Run books made small (--drop-runs 16) fill with genuine runs (stamped under
# the test's key, which no other run on the host has): the drops of the runs
# that found no entry are counted as uncharged, and the text, the JSON and
# the metrics say how many and name the option that makes room.
test_drop_causes_run_books_full() {
	local key dut_ip mf d out unch n
	dut_lab
	dut_ip=$(dut_gen_ip4) || t_fail "the DUT has no IPv4 address on $DUT_GEN_IF"
	t_key_file key
	mf=$(mktemp) d=$(mktemp) out=$(mktemp)
	t_on_cleanup rm -f "$mf" "$d" "$out"
	"$SINK" drops -j -d 300 --drop-runs 16 --stamp-key "$key" >"$d" 2>&1 &
	T_PIDS+=("$!")
	DPID=$!
	t_wait_for "$d" '"type":"ready"' 20 || t_fail "drops did not start: $(cat "$d")"
	cs_sink_start --drop-runs 16 --stamp-key "$key" --metrics-file "$mf"
	# 40 runs of 50 frames to a port nobody listens on at the DUT.
	dframes runs --key "$key" --dst-mac "$DUT_GEN_MAC" --dst-ip "$dut_ip" --runs 40 --count 50 \
		--run 0x5eed0000 >/dev/null || t_fail "could not send the frames"
	cs_sink_stop
	kill -INT "$DPID"
	wait "$DPID"
	t_expect_eq "drops exit code" 0 $?
	unch=$(json_get "$SOUT" summary 'o["drop_causes"]["uncharged"]')
	n=$(json_get "$SOUT" summary "sum(c['packets'] for c in o['drop_causes']['unseen_runs']
		if 0x5eed0000 <= c['run'] < 0x5eed0000 + 40)")
	echo "xsk --drop-causes: $n drops by run, $unch uncharged"
	t_expect_ge "uncharged (xsk)" 1 "$unch"
	t_expect_eq "by run + uncharged = the frames sent (xsk)" 2000 $((n + unch))
	t_expect_eq "the run books' size (xsk)" 16 "$(json_get "$SOUT" summary 'o["drop_causes"]["drop_runs"]')"
	grep -q "^xdp_sink_drop_runs_uncharged_total{.*} $unch\$" "$mf" ||
		t_fail "no uncharged sample of $unch: $(grep uncharged "$mf")"
	grep -q "^# HELP xdp_sink_drop_runs_uncharged_total .*--drop-runs" "$mf" ||
		t_fail "the uncharged metric's help does not name --drop-runs: $(grep uncharged "$mf")"
	unch=$(json_get "$d" summary 'o["uncharged"]')
	t_expect_ge "uncharged (drops)" 1 "$unch"
	t_expect_eq "the run books' size (drops)" 16 "$(json_get "$d" summary 'o["drop_runs"]')"
	t_expect_eq "by run + uncharged = the frames sent (drops)" 2000 \
		$(($(json_get "$d" summary "sum(c['packets'] for c in o['counts'] if c['kind'] == 'run'
			and 0x5eed0000 <= c['run'] < 0x5eed0000 + 40)") + unch))
	# The text of both, on runs of their own.
	lab_bg "$out" sink "$SINK" xsk -d 300 --drop-causes --drop-runs 16 --stamp-key "$key" "$SINK_IF"
	SINK_PID=$LAST_PID
	t_wait_for "$out" 'Ctrl-C to stop' 20 || t_fail "sink did not start: $(cat "$out")"
	"$SINK" drops -d 300 --drop-runs 16 --stamp-key "$key" >"$d" 2>&1 &
	T_PIDS+=("$!")
	DPID=$!
	t_wait_for "$d" 'Ctrl-C to stop' 20 || t_fail "drops did not start: $(cat "$d")"
	dframes runs --key "$key" --dst-mac "$DUT_GEN_MAC" --dst-ip "$dut_ip" --runs 40 --count 50 \
		--run 0x5eed1000 >/dev/null || t_fail "could not send the frames"
	sleep 0.5
	kill -INT "$SINK_PID" "$DPID"
	wait "$SINK_PID" "$DPID"
	grep -E "run books .*full.*[0-9,]+ drops of runs .*--drop-runs" "$out" ||
		t_fail "the sink's text does not say the run books were full: $(tail -n 5 "$out")"
	grep -E "run books .*full.*[0-9,]+ drops of runs .*--drop-runs" "$d" ||
		t_fail "the drops command's text does not say the run books were full: $(tail -n 5 "$d")"
}

# Drops reported without their run on a device other than the sink's, with
# one sink over two runs in sequence (as RFC 2544 trials are): each run is
# charged the ones made while its frames were arriving, never the other's.
# Here the unidentified drops are each run's own frames whose stamp lies
# beyond the tracer's copy (in a GENEVE tunnel with long options), dropped at
# a closed port of the DUT, where only run A also has drops with a readable
# stamp.
test_drop_causes_unidentified_by_time() {
	local key dut_ip a b ra rb da db rd
	dut_lab
	dut_ip=$(dut_gen_ip4) || t_fail "the DUT has no IPv4 address on $DUT_GEN_IF"
	t_key_file key
	cs_sink_start --stamp-key "$key"
	ra=0x5eed7000 rb=0x5eed7001
	a=$(dframes mixed --key "$key" --dst-mac "$DUT_GEN_MAC" --dst-ip "$SINK_IP4" \
		--drop-ip "$dut_ip" --count 1000 --read --run $ra) || t_fail "could not send run A"
	sleep 0.5 # the runs apart
	b=$(dframes mixed --key "$key" --dst-mac "$DUT_GEN_MAC" --dst-ip "$SINK_IP4" \
		--drop-ip "$dut_ip" --count 1000 --run $rb) || t_fail "could not send run B"
	echo "run A sent $a; run B sent $b"
	cs_sink_stop
	da=$(json_text "$a" 'o["deep"]')
	db=$(json_text "$b" 'o["deep"]')
	rd=$(json_text "$a" 'o["read"]')
	echo "    A: $(cs_run $((ra)) "r['lost_causes']")"
	echo "    B: $(cs_run $((rb)) "r['lost_causes']")"
	t_expect_eq "run A: drops with their stamp read at the DUT" "$rd" \
		"$(cs_run $((ra)) "sum(c['packets'] for c in r['lost_causes'] if c['dev'] == '$DUT_GEN_IF'
			and c['identified'])")"
	t_expect_eq "run A: unidentified drops at the DUT charged to it" "$da" \
		"$(cs_run $((ra)) "sum(c['packets'] for c in r['lost_causes'] if c['dev'] == '$DUT_GEN_IF'
			and not c['identified'])")"
	t_expect_eq "run B: unidentified drops at the DUT charged to it" "$db" \
		"$(cs_run $((rb)) "sum(c['packets'] for c in r['lost_causes'] if c['dev'] == '$DUT_GEN_IF'
			and not c['identified'])")"
	t_expect_eq "unidentified drops at the DUT charged to no run" 0 \
		"$(json_get "$SOUT" summary "sum(c['packets'] for c in o['drop_causes']['unattributed']
			if c['dev'] == '$DUT_GEN_IF')")"
}

# Bad options of the tracer: one line naming the option, exit 2, nothing attached.
test_drop_causes_bad_options() {
	local out rc
	lab_setup --no-ipv6
	out=$(lab_exec sink "$SINK" xsk --drop-causes --drop-runs 8 -d 1 "$SINK_IF" 2>&1)
	rc=$?
	t_expect_eq "xsk --drop-runs 8: exit code" 2 "$rc"
	t_expect_eq "xsk --drop-runs 8: lines" 1 "$(grep -c . <<<"$out")"
	[[ "$out" == *"--drop-runs"* ]] || t_fail "the line does not name --drop-runs: $out"
	xdp_detached "$SINK_NS" "$SINK_IF" || t_fail "an XDP program was left on $SINK_IF"
	out=$(lab_exec sink "$SINK" xsk --drop-runs 64 -d 1 "$SINK_IF" 2>&1)
	rc=$?
	t_expect_eq "xsk --drop-runs without --drop-causes: exit code" 2 "$rc"
	[[ "$out" == *"goes with --drop-causes"* ]] || t_fail "the line does not say why: $out"
	out=$(lab_exec sink "$SINK" xsk --stamp-key /nonexistent/key -d 1 "$SINK_IF" 2>&1)
	rc=$?
	t_expect_eq "xsk --stamp-key /nonexistent/key: exit code" 2 "$rc"
	t_expect_eq "xsk --stamp-key /nonexistent/key: lines" 1 "$(grep -c . <<<"$out")"
	[[ "$out" == *"/nonexistent/key"* ]] || t_fail "the line does not name the file: $out"
	xdp_detached "$SINK_NS" "$SINK_IF" || t_fail "an XDP program was left on $SINK_IF"
	out=$("$SINK" drops --drop-runs 2000000 -d 1 2>&1)
	t_expect_eq "drops --drop-runs 2000000: exit code" 2 $?
	[[ "$out" == *"--drop-runs"* ]] || t_fail "the line does not name --drop-runs: $out"
	out=$("$SINK" drops --stamp-key /nonexistent/key -d 1 2>&1)
	rc=$?
	echo "$out"
	t_expect_eq "drops --stamp-key /nonexistent/key: exit code" 2 "$rc"
	t_expect_eq "drops --stamp-key /nonexistent/key: lines" 1 "$(grep -c . <<<"$out")"
	[[ "$out" == *"/nonexistent/key"* ]] || t_fail "the line does not name the file: $out"
}
