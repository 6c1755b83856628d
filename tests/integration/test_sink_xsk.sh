# SPDX-License-Identifier: GPL-2.0
# xdp-sink xsk in the lab: exact delivery with stamps checked, forced gaps and
# duplicates reported exactly, two queues, a slow sink whose drops land at the
# right counter while the books still balance, the histogram file, bad input,
# following the receive CPU (by default, and always with --follow-rx) and the
# receive-CPU hint, the frame size chosen from the MTU, and the lab's veth pair
# deleted under both tools.

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"
GEN_HOOKS="$BUILD/test-hooks/xdp-gen" # reads XDPSG_TEST_SEQ_JUMP

# An xsk sink reporting every 100 ms (stop_xsk_sink waits on its reports).
start_xsk_sink() { # [options]
	XOUT=$(mktemp)
	t_on_cleanup rm -f "$XOUT"
	lab_bg "$XOUT" sink "$SINK" xsk -j -i 100ms -d 300 "$@" "$SINK_IF"
	XPID=$LAST_PID
	XJSON=$XOUT
	wait_ready "$XOUT" "$XPID" || t_fail "xsk sink did not start: $(cat "$XOUT")"
}

# stop_xsk_sink [DELIVERED | SEEN+ | idle | -]: stops the sink in XPID once
# it has delivered DELIVERED frames; once its program saw SEEN and its thread
# then delivers nothing new (drops expected; what is left in its ring
# drained); once it delivers nothing new (idle); or at once (-, the default:
# no traffic, traffic that still flows, or a text sink without reports). One
# that start_xsk_sink started (JSON) has its books checked.
stop_xsk_sink() {
	case ${1:--} in
	-) ;;
	idle) wait_idle "$XOUT" ;;
	*+)
		wait_total "$XOUT" interval xdp_packets "${1%+}"
		wait_idle "$XOUT"
		;;
	*) wait_total "$XOUT" interval rx_packets "$1" ;;
	esac
	kill -INT "$XPID"
	wait "$XPID"
	t_expect_eq "xsk sink exit code" 0 $?
	[ -z "${XJSON:-}" ] || check_verdicts_balance "$XJSON"
	XJSON=
}

xs() { # python expression on the summary object
	json_get "$XOUT" summary "$1"
}

expect_balanced() {
	t_expect_eq "unexplained" 0 "$(xs 'o["unexplained"]')"
	t_expect_eq "frame accounting" True "$(xs 'all(q["frames_balanced"] for q in o["sockets"])')"
}

# Exact delivery, in both rows of the clocks matrix: 100,000 live frames (three
# times the 32k frames the sink's ring holds), every one booked. One-way
# latency is figured only when the generator's clock is the sink's; across
# clocks the sink says why not, and the books are the same. No more frames than
# that: a paced live-frames run costs CPU time by the second.
test_sink_xsk_exact() {
	t_each_clocks sx_exact_body
}

sx_exact_body() {
	local n=100000
	clocks_lab_setup --no-ipv6
	# An AF_XDP receive ring has no backpressure: give the sink thread room
	# (32k frames, 160 ms at this rate) in case a busy machine delays it (with
	# 16k, a clean-clone run delivered 298,145 of 300,006).
	start_xsk_sink --ring-size 65536
	lab_exec gen "$GEN" kernel -q -n $n -r 200k "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen failed"
	stop_xsk_sink "$(with_marks $n)"
	t_expect_eq "delivered: the frames and their marks" "$(with_marks $n)" "$(xs 'o["rx_packets"]')"
	t_expect_eq "stamped" $n "$(xs 'o["stamped"]')"
	t_expect_eq "marks" $GEN_MARKS_PER_FLOW "$(xs 'o["marks"]')"
	t_expect_eq "lost" 0 "$(xs 'o["lost"]')"
	t_expect_eq "duplicates" 0 "$(xs 'o["duplicates"]')"
	t_expect_eq "reordered" 0 "$(xs 'o["reordered"]')"
	t_expect_eq "foreign" 0 "$(xs 'o["foreign"]')"
	t_expect_eq "forged" 0 "$(xs 'o["forged"]')"
	t_expect_eq "every stamp checked from the program's records" $n "$(xs 'o["rx_recorded"]')"
	t_expect_eq "the run's end seen" seen "$(xs 'o["runs"][0]["end"]')"
	t_expect_eq "the sink's count of the run" $n "$(xs 'o["runs"][0]["sent"]')"
	sx_expect_latency $n
	expect_balanced
}

# --read-frames: the same books, every frame read from its UMEM frame and no
# record taken.
test_sink_xsk_read_frames() {
	local n=20000
	lab_setup --no-ipv6
	start_xsk_sink --read-frames --ring-size 65536
	lab_exec gen "$GEN" kernel -q -n $n -r 100k "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen failed"
	stop_xsk_sink "$(with_marks $n)"
	t_expect_eq "stamped" $n "$(xs 'o["stamped"]')"
	t_expect_eq "lost, duplicates, reordered" "0 0 0" \
		"$(xs '" ".join(str(o[k]) for k in ("lost", "duplicates", "reordered"))')"
	t_expect_eq "no record taken" 0 "$(xs 'o["rx_recorded"]')"
	sx_expect_latency $n
	expect_balanced
}

# sx_expect_latency N: N frames timed one way when the generator's clock is the
# sink's (the lab's env says), none when it is not, with the clock named.
sx_expect_latency() {
	if [ "$(lab_clock_offset gen)" = "$(lab_clock_offset sink)" ]; then
		t_expect_eq "the run's clock" same "$(xs 'o["runs"][0]["clock"]["state"]')"
		t_expect_eq "latency samples, or untimed by the sample" "$1" \
			"$(xs 'o["latency_ns"]["count"] + o["rx_untimed"]')"
		t_expect_ge "latency p50 > 0" 1 "$(xs 'o["latency_ns"]["p50"]')"
		t_expect_eq "percentiles ordered" True \
			"$(xs '[o["latency_ns"][k] for k in ("min","p50","p90","p99","p999","max")] == sorted(o["latency_ns"][k] for k in ("min","p50","p90","p99","p999","max"))')"
	else
		t_expect_eq "the run's clock" other "$(xs 'o["runs"][0]["clock"]["state"]')"
		t_expect_eq "the clocks' offset (s)" "$(($(lab_clock_offset gen) - $(lab_clock_offset sink)))" \
			"$(xs 'round(o["runs"][0]["clock"]["offset_s"])')"
		t_expect_eq "no one-way latency across clocks" 0 "$(xs '(o["latency_ns"] or {}).get("count", 0)')"
		t_expect_eq "IPDV still figured" True "$(xs 'o["ipdv_ns"]["count"] > 0')"
	fi
}

# Latency from the kernel's receive time (the program's metadata), not the thread's
# read: every stamped frame says which; the jitter figures are there per run and in
# total, one IPDV per frame after the first (one queue, one run). Books only.
test_sink_xsk_latency_basis() {
	local n=2000
	lab_setup --no-ipv6
	start_xsk_sink
	lab_exec gen "$GEN" xsk -q -n $n -r 2000 "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen failed"
	stop_xsk_sink $n
	t_expect_eq "stamped" $n "$(xs 'o["stamped"]')"
	t_expect_eq "latency basis" "kernel receive time" "$(xs 'o["latency_basis"]')"
	# At 2 kpps every frame is timed, unless a stalled CPU hands the program a
	# backlog close together: then the sample skips some (untimed, in no figure).
	t_expect_eq "frames timed by the kernel, or untimed" $n \
		"$(xs 'o["rx_time_kernel"] + o["rx_untimed"]')"
	t_expect_eq "frames timed by the read" 0 "$(xs 'o["rx_time_user"]')"
	t_expect_eq "IPDV samples: one per timed frame but the first" True \
		"$(xs 'o["ipdv_ns"]["count"] == o["rx_time_kernel"] - 1 == o["runs"][0]["ipdv_ns"]["count"]')"
	t_expect_eq "jitter figures" True \
		"$(xs 'o["jitter_ns"] >= 0 and o["runs"][0]["jitter_ns"] == o["jitter_ns"] and o["ipdv_ns"]["p50"] <= o["ipdv_ns"]["p99"]')"
	expect_balanced
}

# Forced gaps and duplicates, in both rows of the clocks matrix: the books
# are sequence numbers alone, whatever the generator's clock.
test_sink_xsk_forced_gap_and_duplicates() {
	t_each_clocks sx_gap_body
}

sx_gap_body() {
	clocks_lab_setup --no-ipv6
	# A jump of +57 in flow 0's sequence: exactly 57 lost.
	start_xsk_sink --ring-size 65536
	XDPSG_TEST_SEQ_JUMP=50000:57 lab_exec gen env XDPSG_TEST_SEQ_JUMP=50000:57 "$GEN_HOOKS" xsk -q \
		-n 100000 -r 100k "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen failed"
	stop_xsk_sink "$(with_marks 100000)"
	t_expect_eq "delivered" "$(with_marks 100000)" "$(xs 'o["rx_packets"]')"
	t_expect_eq "lost after a forced gap of 57" 57 "$(xs 'o["lost"]')"
	t_expect_eq "duplicates" 0 "$(xs 'o["duplicates"]')"
	expect_balanced
	# A jump of -23: the next 23 sequence numbers go out again, with new send
	# times: the books are sequence numbers alone (the key says who sent
	# them), so those are 23 duplicates.
	start_xsk_sink --ring-size 65536
	lab_exec gen env XDPSG_TEST_SEQ_JUMP=50000:-23 "$GEN_HOOKS" xsk -q -n 100000 -r 100k "$GEN_IF" \
		>/dev/null 2>&1 || t_fail "xdp-gen failed"
	stop_xsk_sink 100000
	t_expect_eq "a rewind of 23: duplicates" 23 "$(xs 'o["duplicates"]')"
	t_expect_eq "stamped, in the books" 100000 "$(xs 'o["stamped"]')"
	t_expect_eq "lost" 0 "$(xs 'o["lost"]')"
	expect_balanced
}

# Two runs of one generator into one sink: the second is a restart, not loss.
# 100 kpps into 16,384 frames of ring room: 160 ms for a sink thread that a
# busy machine stalls (at 200 kpps a clean-clone run delivered 59,093 of 60,012).
test_sink_xsk_restart_is_not_loss() {
	lab_setup --no-ipv6 --qdisc pfifo:1000
	start_xsk_sink --ring-size 32768
	local g i
	g=$(mktemp)
	t_on_cleanup rm -f "$g"
	for i in 1 2; do
		lab_exec gen "$GEN" xsk -q -n 30000 -r 100k "$GEN_IF" >"$g" 2>&1 ||
			t_fail "run $i: exit code $?: $(tail -n 3 "$g")"
	done
	stop_xsk_sink "$(with_marks 60000 2)"
	t_expect_eq "delivered" "$(with_marks 60000 2)" "$(xs 'o["rx_packets"]')"
	t_expect_eq "restarts" 1 "$(xs 'o["restarts"]')"
	t_expect_eq "lost" 0 "$(xs 'o["lost"]')"
	t_expect_eq "duplicates" 0 "$(xs 'o["duplicates"]')"
}

test_sink_xsk_two_queues() {
	local n=50000
	lab_setup --no-ipv6 --queues 2
	# Two generator threads and two sink threads share the two CPUs here: a
	# modest rate keeps this a test of spreading and accounting, not capacity.
	# One second of it: a paced live-frames run costs CPU time by the second.
	start_xsk_sink --queues all --ring-size 32768
	lab_exec gen "$GEN" kernel -q -n $n -t 2 -r 50k "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen"
	stop_xsk_sink "$(with_marks $n 2)"
	t_expect_eq "sockets" 2 "$(xs 'len(o["sockets"])')"
	t_expect_eq "delivered" "$(with_marks $n 2)" "$(xs 'o["rx_packets"]')"
	t_expect_ge "socket 0 traffic" 1 "$(xs 'o["sockets"][0]["rx_packets"]')"
	t_expect_ge "socket 1 traffic" 1 "$(xs 'o["sockets"][1]["rx_packets"]')"
	t_expect_eq "lost" 0 "$(xs 'o["lost"]')"
	expect_balanced
}

test_sink_xsk_slow_sink_balances() {
	local seen delivered full gout
	lab_setup --no-ipv6
	# 3 us of work per packet caps the sink near 330 kpps; send faster.
	start_xsk_sink --cost 3000 --ring-size 512
	gout=$(mktemp) && t_on_cleanup rm -f "$gout"
	lab_exec gen "$GEN" kernel -j -q -n 500000 "$GEN_IF" >"$gout" 2>&1 ||
		t_fail "xdp-gen failed: $(cat "$gout")"
	stop_xsk_sink "$(json_get "$gout" summary 'o["transmitted"]')+"
	seen=$(xs 'o["xdp_packets"]')
	delivered=$(xs 'o["rx_packets"]')
	full=$(xs 'o["drops"]["xsk_rx_ring_full"]+o["drops"]["xsk_fill_ring_empty"]')
	# What the veth's ring could not take is the generator's failed, by name.
	t_expect_eq "transmitted + failed" "$(with_marks 500000)" \
		"$(json_get "$gout" summary 'o["transmitted"] + o["failed"]')"
	t_expect_eq "the program saw every packet transmitted" \
		"$(json_get "$gout" summary 'o["transmitted"]')" "$seen"
	t_expect_ge "kernel-side drops at the socket" 1 "$full"
	t_expect_eq "seen = delivered + socket drops" "$seen" $((delivered + full))
	expect_balanced
	# The stamps tell the same story: what was not delivered is lost.
	t_expect_ge "lost by the stamps" 1 "$(xs 'o["lost"]')"
}

# The sink stopped (SIGSTOP) under traffic: its socket drops what its 512-entry
# ring cannot hold, the program runs out of room for records while their
# tickets go on, and once the sink runs again it books frames from records and
# reads the others whole (a ticket without a record, a batch with gaps where
# the socket dropped). The books balance, every loss a named drop.
test_sink_xsk_records_across_a_pause() {
	local gout gpid n=200000 ok=0 drops
	lab_setup --no-ipv6
	start_xsk_sink --ring-size 512 --no-follow-rx
	gout=$(mktemp) && t_on_cleanup rm -f "$gout"
	lab_bg "$gout" gen "$GEN" kernel -j -i 100ms -n $n -r 100k "$GEN_IF"
	gpid=$LAST_PID
	wait_total "$XOUT" interval rx_packets 10000 || t_fail "the sink delivered nothing"
	t_on_cleanup kill -CONT "$XPID"
	kill -STOP "$XPID"
	# 40,000 frames (twice the record ring) go by while it is stopped.
	wait_total "$gout" interval transmitted 80000 30 || ok=1
	kill -CONT "$XPID"
	[ $ok = 0 ] || t_fail "the generator did not go on while the sink was stopped"
	wait "$gpid" || t_fail "xdp-gen failed: $(cat "$gout")"
	stop_xsk_sink "$(json_get "$gout" summary 'o["transmitted"]')+"
	drops=$(xs 'o["drops"]["xsk_rx_ring_full"] + o["drops"]["xsk_fill_ring_empty"]')
	t_expect_ge "the socket dropped while the sink was stopped" 30000 "$drops"
	t_expect_eq "lost: the socket's drops" "$drops" "$(xs 'o["lost"]')"
	t_expect_eq "stamped + lost" $n "$(xs 'o["stamped"] + o["lost"]')"
	t_expect_eq "duplicates, reordered" "0 0" "$(xs '"%d %d" % (o["duplicates"], o["reordered"])')"
	t_expect_eq "frames checked from records, and frames read whole" True \
		"$(xs '0 < o["rx_recorded"] < o["stamped"]')"
	expect_balanced
}

test_sink_xsk_no_verify_and_hist() {
	local hist
	lab_setup --no-ipv6
	hist=$(mktemp --suffix .csv)
	t_on_cleanup rm -f "$hist"
	# Ring room (16k frames, 160 ms at 100 kpps) for a sink thread that a busy
	# machine stalls: at the default ring and 200 kpps a clean-clone run timed
	# 18,958 of 20,000.
	start_xsk_sink --hist "$hist" --ring-size 32768
	lab_exec gen "$GEN" kernel -q -n 20000 -r 100k "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen"
	stop_xsk_sink "$(with_marks 20000)"
	# The samples are the timed frames: all 20000, less those the receive-time
	# sample skipped when the program got frames close together (untimed).
	t_expect_eq "latency samples + untimed" 20000 "$(xs 'o["latency_ns"]["count"] + o["rx_untimed"]')"
	t_expect_eq "histogram rows sum to the samples" "$(xs 'o["latency_ns"]["count"]')" \
		"$(python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1]))); print(sum(int(x[-1]) for x in r[1:]))' "$hist")"
	start_xsk_sink --no-verify --ring-size 32768
	lab_exec gen "$GEN" kernel -q -n 20000 -r 100k "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen"
	stop_xsk_sink "$(with_marks 20000)"
	t_expect_eq "delivered without verification, marks too" "$(with_marks 20000)" \
		"$(xs 'o["rx_packets"]')"
	t_expect_eq "no loss fields without verification" False "$(xs '"lost" in o')"
	# --read-data reads each frame and changes nothing in the books.
	start_xsk_sink --no-verify --read-data --ring-size 32768
	lab_exec gen "$GEN" kernel -q -n 20000 -r 100k "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen"
	stop_xsk_sink "$(with_marks 20000)"
	t_expect_eq "delivered with --read-data, marks too" "$(with_marks 20000)" \
		"$(xs 'o["rx_packets"]')"
	expect_balanced
}

test_sink_xsk_bad_input() {
	lab_setup --no-ipv6
	local x="$TESTENV exec --name $LAB_NAME sink --" msg rc
	for args in "--queues 3" "--zero-copy" "--no-verify --hist /tmp/h.csv" \
		"--hist /nonexistent/dir/h.csv" "--ring-size 1000" "--frame-size 3000" "--cpus 0,1" \
		"--read-data" "--read-frames --no-verify" "--read-frames=1"; do
		msg=$($x "$SINK" xsk $args "$SINK_IF" 2>&1 >/dev/null)
		rc=$?
		t_expect_eq "exit code for '$args'" 2 "$rc"
		t_expect_eq "one line for '$args' ($msg)" 1 "$(printf '%s\n' "$msg" | grep -c .)"
	done
	msg=$(ip -n "$SINK_NS" -d link show dev "$SINK_IF")
	[[ "$msg" == *prog/xdp* ]] && t_fail "a refused run left a program attached"
	return 0
}

test_sink_xsk_starts_under_traffic() {
	lab_setup --no-ipv6
	local gout
	gout=$(mktemp) && t_on_cleanup rm -f "$gout"
	# Traffic first, then the sink, stopped while it still flows: its books
	# must balance all the same.
	lab_bg "$gout" gen "$GEN" kernel -j -i 100ms -d 30 "$GEN_IF" --fix-peer
	wait_total "$gout" interval tx_packets 1 || t_fail "xdp-gen did not send: $(cat "$gout")"
	start_xsk_sink --ring-size 32768
	wait_total "$XOUT" interval rx_packets 10000 || t_fail "the sink delivered no traffic"
	stop_xsk_sink -
	t_expect_ge "delivered" 1 "$(xs 'o["rx_packets"]')"
	expect_balanced
}

# --follow-rx: the generator's thread on CPU 0 runs the sink veth's receive
# path too (veth receives in the sender's softirq); the sink's thread starts
# on CPU 1 and must move there once, and the books must balance across the
# move: every frame sent is delivered or counted where it was dropped.
# serial: where the receive CPU is and which CPU the sink follows is the test; another test's load moves both
test_sink_xsk_follow_rx() {
	local n=600000 sent
	[ "$(nproc)" -ge 2 ] || t_skip "needs 2 CPUs"
	lab_setup --no-ipv6
	start_xsk_sink --follow-rx --cpus 1 --ring-size 32768
	lab_exec gen "$GEN" kernel -j -q --cpus 0 -n $n -r 600k "$GEN_IF" >"$XOUT.gen" 2>&1 ||
		t_fail "xdp-gen failed: $(tail -n 3 "$XOUT.gen")"
	t_on_cleanup rm -f "$XOUT.gen"
	stop_xsk_sink $n+
	sent=$(json_get "$XOUT.gen" summary 'o["tx_packets"]')
	t_expect_eq "sent" $n "$sent"
	t_expect_eq "the thread followed the receive path to CPU 0" 0 "$(xs 'o["sockets"][0]["cpu"]')"
	t_expect_eq "moved once" 1 "$(xs 'o["sockets"][0]["cpu_moves"]')"
	t_expect_eq "follow" always "$(xs 'o["sockets"][0]["follow"]')"
	t_expect_eq "receive CPU" 0 "$(xs 'o["sockets"][0]["rx_cpu"]')"
	t_expect_eq "delivered + dropped at the socket = sent, with the marks" "$(with_marks $n)" \
		"$(xs 'o["rx_packets"] + o["drops"]["xsk_fill_ring_empty"] + o["drops"]["xsk_rx_ring_full"]')"
	t_expect_eq "lost = dropped at the socket" "$(xs 'o["lost"]')" \
		"$(xs 'o["drops"]["xsk_fill_ring_empty"] + o["drops"]["xsk_rx_ring_full"]')"
	t_expect_eq "duplicates" 0 "$(xs 'o["duplicates"]')"
	expect_balanced
}

# Without --frame-size the sink takes 2048-byte UMEM frames when the MTU's
# frames fit (and a full-size frame is delivered whole), 4096 when they do
# not; --frame-size wins over both.
test_sink_xsk_frame_size_from_mtu() {
	lab_setup --no-ipv6
	start_xsk_sink --ring-size 32768
	lab_exec gen "$GEN" kernel -q -s 1514 -n 1000 -r 100k "$GEN_IF" >/dev/null 2>&1 ||
		t_fail "xdp-gen failed"
	stop_xsk_sink "$(with_marks 1000)"
	t_expect_eq "MTU 1500: 2048-byte frames" 2048 "$(xs 'o["sockets"][0]["frame_size"]')"
	t_expect_eq "1514-byte frames delivered" 1000 "$(xs 'o["stamped"]')"
	t_expect_eq "bytes: the frames' and their marks' (108 each)" \
		$((1514000 + 108 * GEN_MARKS_PER_FLOW)) "$(xs 'o["rx_bytes"]')"
	expect_balanced
	ip -n "$SINK_NS" link set dev "$SINK_IF" mtu 3000 || t_fail "cannot set the MTU"
	start_xsk_sink
	stop_xsk_sink
	t_expect_eq "MTU 3000: 4096-byte frames" 4096 "$(xs 'o["sockets"][0]["frame_size"]')"
	ip -n "$SINK_NS" link set dev "$SINK_IF" mtu 1500 || t_fail "cannot set the MTU"
	start_xsk_sink --frame-size 4096
	stop_xsk_sink
	t_expect_eq "--frame-size 4096 given" 4096 "$(xs 'o["sockets"][0]["frame_size"]')"
}

# With --cpus (and without --follow-rx) the sink stays where it was put, names
# the CPU its queue's packets arrive on, and (text summary) hints at the option.
# serial: where the receive CPU is and which CPU the sink follows is the test; another test's load moves both
test_sink_xsk_rx_cpu_hint() {
	local out
	[ "$(nproc)" -ge 2 ] || t_skip "needs 2 CPUs"
	lab_setup --no-ipv6
	start_xsk_sink --cpus 1 --ring-size 32768
	lab_exec gen "$GEN" kernel -q --cpus 0 -n 200000 -r 400k "$GEN_IF" >/dev/null 2>&1 ||
		t_fail "xdp-gen failed"
	stop_xsk_sink 200000+
	t_expect_eq "stayed on CPU 1" 1 "$(xs 'o["sockets"][0]["cpu"]')"
	t_expect_eq "no moves" 0 "$(xs 'o["sockets"][0]["cpu_moves"]')"
	t_expect_eq "follow" off "$(xs 'o["sockets"][0]["follow"]')"
	t_expect_eq "receive CPU" 0 "$(xs 'o["sockets"][0]["rx_cpu"]')"
	out=$(mktemp) && t_on_cleanup rm -f "$out"
	lab_bg "$out" sink "$SINK" xsk -q -d 300 --cpus 1 "$SINK_IF"
	XPID=$LAST_PID
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "xsk sink did not attach: $(cat "$out")"
	lab_exec gen "$GEN" kernel -q --cpus 0 -n 200000 -r 400k "$GEN_IF" >/dev/null 2>&1 ||
		t_fail "xdp-gen failed"
	# The hint needs the receive CPU only, which the first frame tells.
	stop_xsk_sink -
	grep -q "hint: queue 0's packets arrive on CPU 0; --follow-rx" "$out" ||
		t_fail "no --follow-rx hint: $(tail -n 4 "$out")"
}

# By default a verifying queue follows its receive CPU only when it falls
# behind there. Keeping up (200 kpps, room for 80 ms): it stays on its CPU.
# Every frame delivered is what "keeping up" means here, so it runs at rest:
# first among the serial tests, beside the sanitized build, its thread was once
# kept away for longer than its ring lasts (7,691 of 200,006 frames not
# delivered, cc84).
# quiet: where the receive CPU is and which CPU the sink follows is the test, and keeping up at 200 kpps; any other load, even an idle-priority build, moves both
test_sink_xsk_follow_auto_stays() {
	local last=$(($(nproc) - 1))
	[ "$(nproc)" -ge 2 ] || t_skip "needs 2 CPUs"
	lab_setup --no-ipv6
	start_xsk_sink --ring-size 32768
	lab_exec gen "$GEN" kernel -q --cpus 0 -n 200000 -r 200k "$GEN_IF" >/dev/null 2>&1 ||
		t_fail "xdp-gen failed"
	stop_xsk_sink "$(with_marks 200000)"
	t_expect_eq "delivered" "$(with_marks 200000)" "$(xs 'o["rx_packets"]')"
	t_expect_eq "follow" auto "$(xs 'o["sockets"][0]["follow"]')"
	t_expect_eq "no moves" 0 "$(xs 'o["sockets"][0]["cpu_moves"]')"
	t_expect_eq "stayed on the last CPU" $last "$(xs 'o["sockets"][0]["cpu"]')"
	t_expect_eq "receive CPU" 0 "$(xs 'o["sockets"][0]["rx_cpu"]')"
	expect_balanced
}

# Behind on its own CPU (a busy loop at nice -20 shares it), the queue drops
# frames, moves to the receive CPU (where the sleeping xsk generator leaves
# room), delivers more there and keeps the move. The hog makes the scheduler
# put every other task of a busy machine on CPU 0, where a generator at nice 0
# woke a few times a second and sent its 100-frame catch-up: no 100 ms look
# had the 1000 frames the sink needs to judge, and it stayed "auto" (or
# "trial"). So the generator has the hog's priority (it still sleeps between
# frames) and runs until the sink has judged, at most 60 s.
# serial: where the receive CPU is and which CPU the sink follows is the test; another test's load moves both
test_sink_xsk_follow_auto_moves() {
	local last=$(($(nproc) - 1)) hog gen gout seen delivered socket
	[ "$(nproc)" -ge 2 ] || t_skip "needs 2 CPUs"
	lab_setup --no-ipv6
	start_xsk_sink --cost 2000
	nice -n -20 taskset -c $last sh -c 'while :; do :; done' &
	hog=$!
	t_on_cleanup kill $hog
	gout=$(mktemp) && t_on_cleanup rm -f "$gout"
	lab_bg "$gout" gen nice -n -20 "$GEN" xsk -q --cpus 0 -r 100k -d 60 "$GEN_IF"
	gen=$LAST_PID
	t_wait_for "$XOUT" '"follow":"\(moved\|returned\)"' 60 ||
		t_fail "the sink never judged a move: $(tail -n 1 "$XOUT")"
	kill -INT "$gen"
	wait "$gen" || t_fail "xdp-gen failed: $(tail -n 3 "$gout")"
	kill $hog
	stop_xsk_sink idle
	t_expect_eq "follow" moved "$(xs 'o["sockets"][0]["follow"]')"
	t_expect_eq "moved once" 1 "$(xs 'o["sockets"][0]["cpu_moves"]')"
	t_expect_eq "now on the receive CPU" 0 "$(xs 'o["sockets"][0]["cpu"]')"
	seen=$(xs 'o["xdp_packets"]')
	delivered=$(xs 'o["rx_packets"]')
	socket=$(xs 'o["drops"]["xsk_rx_ring_full"]+o["drops"]["xsk_fill_ring_empty"]')
	t_expect_ge "dropped at the socket before the move" 1 "$socket"
	t_expect_eq "seen = delivered + socket drops" "$seen" $((delivered + socket))
	expect_balanced
}

# follow_gen PATTERN FILE: a real-time kernel generator on CPU 0 until the
# sink writing FILE has judged its move (PATTERN appears), at most 60 s. A
# generator of a fixed second once ended with the sink still on trial: on a
# slow machine the judgement needs more looks than that.
follow_gen() {
	local gout gen
	gout=$(mktemp) && t_on_cleanup rm -f "$gout"
	lab_bg "$gout" gen chrt -f 10 "$GEN" kernel -q --cpus 0 -d 60 "$GEN_IF"
	gen=$LAST_PID
	t_wait_for "$2" "$1" 60 || t_fail "the sink never judged its move: $(tail -n 3 "$2")"
	kill -INT "$gen"
	wait "$gen" || t_fail "xdp-gen failed: $(tail -n 3 "$gout")"
}

# Behind on its own CPU (2 us of work a frame against an unpaced generator),
# the queue moves to the receive CPU, where a real-time generator outranks it:
# it delivers less there, goes back, and stays back; it says so as it goes.
# serial: where the receive CPU is and which CPU the sink follows is the test; another test's load moves both
test_sink_xsk_follow_auto_returns() {
	local last=$(($(nproc) - 1)) seen delivered socket out
	[ "$(nproc)" -ge 2 ] || t_skip "needs 2 CPUs"
	lab_setup --no-ipv6
	out=$(mktemp) && t_on_cleanup rm -f "$out"
	lab_bg "$out" sink "$SINK" xsk -d 300 --cost 2000 "$SINK_IF"
	XPID=$LAST_PID
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "xsk sink did not attach: $(cat "$out")"
	follow_gen "queue 0: .*\(it stays\|back on CPU\)" "$out"
	grep -q "queue 0: behind on CPU $last (.* dropped at its socket in 100 ms); trying its receive CPU 0" "$out" ||
		t_fail "no word of the move: $(grep 'queue 0:' "$out")"
	grep -q "queue 0: .* pps on its receive CPU 0, .* at home: back on CPU $last" "$out" ||
		t_fail "no word of the move back: $(grep 'queue 0:' "$out")"
	# A text sink: its summary says where the queue ended, whatever is still in its ring.
	stop_xsk_sink -
	grep -q "socket queue 0 .*cpu $last .*(follow returned)" "$out" ||
		t_fail "not back on CPU $last: $(grep 'socket queue' "$out")"
	grep -q "note: queue 0 delivered less on its receive CPU 0 .* went back to CPU $last" "$out" ||
		t_fail "no note on the move back: $(tail -n 4 "$out")"
	start_xsk_sink --cost 2000
	follow_gen '"follow":"\(moved\|returned\)"' "$XOUT"
	stop_xsk_sink idle
	t_expect_eq "follow" returned "$(xs 'o["sockets"][0]["follow"]')"
	t_expect_eq "there and back" 2 "$(xs 'o["sockets"][0]["cpu_moves"]')"
	t_expect_eq "back on the last CPU" $last "$(xs 'o["sockets"][0]["cpu"]')"
	seen=$(xs 'o["xdp_packets"]')
	delivered=$(xs 'o["rx_packets"]')
	socket=$(xs 'o["drops"]["xsk_rx_ring_full"]+o["drops"]["xsk_fill_ring_empty"]')
	t_expect_eq "seen = delivered + socket drops" "$seen" $((delivered + socket))
	expect_balanced
}

# The veth pair is deleted under a running generator and sink: each notices
# within a tick, stops, says so on stderr and exits 1. What they counted up
# to then still balances: the generator names what it sent after the last
# reading of the device's counters as unconfirmed, and no counter wraps.
test_sink_xsk_iface_goes_away() {
	local gout sent xmit failed unconf
	lab_setup --no-ipv6
	start_xsk_sink
	gout=$(mktemp) && t_on_cleanup rm -f "$gout"
	lab_bg "$gout" gen "$GEN" kernel -j -q -d 30 "$GEN_IF"
	local gpid=$LAST_PID
	# Traffic flows (the books are checked, not the timing).
	wait_total "$XOUT" interval xdp_packets 10000 || t_fail "no traffic: $(tail -n 2 "$gout")"
	ip -n "$SINK_NS" link del "$SINK_IF" || t_fail "cannot delete $SINK_IF"
	wait "$gpid"
	t_expect_eq "xdp-gen exit code" 1 $?
	wait "$XPID"
	t_expect_eq "xdp-sink exit code" 1 $?
	t_expect_eq "xdp-gen stopped by" "interface gone" "$(json_get "$gout" summary 'o["stop_reason"]')"
	t_expect_eq "xdp-sink stopped by" "interface gone" "$(xs 'o["stop_reason"]')"
	grep -q "xdp-gen: $GEN_IF went away" "$gout" || t_fail "xdp-gen did not say so: $(tail -n 2 "$gout")"
	grep -q "xdp-sink: $SINK_IF went away" "$XOUT" || t_fail "xdp-sink did not say so: $(tail -n 2 "$XOUT")"
	sent=$(json_get "$gout" summary 'o["tx_packets"] + o["marks"]') # the frames and their marks
	xmit=$(json_get "$gout" summary 'o["transmitted"]')
	failed=$(json_get "$gout" summary 'o["failed"]')
	unconf=$(json_get "$gout" summary 'o["unconfirmed"]')
	t_expect_ge "sent before it went away" 1 "$sent"
	t_expect_ge "transmitted <= sent" "$xmit" "$sent"
	t_expect_eq "sent = transmitted + failed + unconfirmed" "$sent" $((xmit + failed + unconf))
	t_expect_eq "unexplained" 0 "$(json_get "$gout" summary 'o["unexplained"]')"
	t_expect_ge "the sink saw traffic" 1 "$(xs 'o["xdp_packets"]')"
	t_expect_le "the sink saw no more than was sent" "$sent" "$(xs 'o["xdp_packets"]')"
	expect_balanced
	check_verdicts_balance "$XOUT"
}

# Above about 1 Mpps on a CPU the program times one frame in 16 (the clock
# read costs as much as the rest of it): a full-rate run has untimed frames,
# booked like the others and in no latency figure; --time-all times them all.
# serial: how often frames are timed depends on how closely they arrive, which another test's load spreads
test_sink_xsk_rx_time_sampled() {
	local n=400000 opt
	lab_setup --no-ipv6
	for opt in "" --time-all; do
		start_xsk_sink $opt
		lab_exec gen "$GEN" kernel -q -n $n "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen failed"
		stop_xsk_sink $n+
		t_expect_eq "${opt:-default}: every stamped frame timed or untimed" True \
			"$(xs 'o["rx_time_kernel"] + o["rx_untimed"] == o["stamped"] > 0 and o["rx_time_user"] == 0')"
		t_expect_eq "${opt:-default}: latency from the timed frames" True \
			"$(xs 'o["latency_ns"]["count"] == o["rx_time_kernel"] and o["runs"][0]["untimed"] == o["rx_untimed"]')"
		if [ -z "$opt" ]; then
			t_expect_eq "full rate: the sample skipped frames" True "$(xs 'o["rx_untimed"] > o["rx_time_kernel"]')"
		else
			t_expect_eq "--time-all: none untimed" 0 "$(xs 'o["rx_untimed"]')"
		fi
		expect_balanced
	done
}

# The sample's real trigger is spacing, not rate: bursts of 64 back to back
# every 2 ms (32 kpps on average, far below 1 Mpps) leave frames untimed,
# and the text's timed line states that rule (a burst, under 1.02 us apart).
# serial: how often frames are timed depends on how closely they arrive, which another test's load spreads
test_sink_xsk_rx_time_sampled_in_bursts() {
	local out
	lab_setup --no-ipv6
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" sink "$SINK" xsk -d 300 "$SINK_IF"
	local pid=$LAST_PID
	"$TESTENV" ready --name "$LAB_NAME" sink || t_fail "sink did not start: $(cat "$out")"
	lab_exec gen "$GEN" kernel -q --burst 64 --burst-gap 2ms -n 6400 "$GEN_IF" >/dev/null 2>&1 ||
		t_fail "xdp-gen failed"
	kill -INT "$pid"
	wait "$pid"
	t_has "$out" '^  timed:    [0-9,]* of [0-9,]* stamped frames (frames reaching a CPU less than 1.02 us apart, in a burst or above about 1 Mpps' ||
		t_fail "no timed line stating the rule at 32 kpps in bursts: $(grep -E 'timed|RESULT' "$out")"
}
