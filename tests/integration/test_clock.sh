# SPDX-License-Identifier: GPL-2.0
# The stamps' clock (xdp-gen --clock) against the sink's: one-way latency where
# both ends read one clock, with its error stated, whatever CLOCK_MONOTONIC
# each side has; none across two CLOCK_MONOTONICs, with one line saying why;
# a DUT's known delay measured across separate clocks; bad input.

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"

# clk_sink [options]: an xsk sink reporting every 100 ms; CK_OUT, CK_PID.
clk_sink() {
	CK_OUT=$(mktemp)
	t_on_cleanup rm -f "$CK_OUT"
	lab_bg "$CK_OUT" sink "$SINK" xsk -j -i 100ms -d 300 "$@" "$SINK_IF"
	CK_PID=$LAST_PID
	wait_ready "$CK_OUT" "$CK_PID" || t_fail "xsk sink did not start: $(cat "$CK_OUT")"
}

# clk_stop N: stop the sink once it delivered N frames.
clk_stop() {
	wait_total "$CK_OUT" interval rx_packets "$1"
	kill -INT "$CK_PID"
	wait "$CK_PID"
	t_expect_eq "xsk sink exit code" 0 $?
}

ck() { # python expression on the sink's summary
	json_get "$CK_OUT" summary "$1"
}

# In a lab whose generator reads a CLOCK_MONOTONIC a day ahead of the sink's,
# as another host's would be: stamped on CLOCK_TAI or CLOCK_REALTIME (which
# no time namespace shifts: one clock on one kernel), every mode's frames are
# timed one way, with a sync error of 0 and the reason; on CLOCK_MONOTONIC,
# none are, the books are as exact, and one line names the fix. The generator
# reports the clock it stamped on and this host's sync state.
test_clock_tai_across_namespaces() {
	t_clocks_separable || t_skip "$T_CLOCKS_WHY"
	local n=1000 mode clock gout p50
	lab_setup --no-ipv6 --separate-clocks
	gout=$(mktemp)
	t_on_cleanup rm -f "$gout"
	for mode in xsk kernel qdisc; do
		for clock in tai realtime monotonic; do
			[ "$mode" = xsk ] || [ "$clock" != realtime ] || continue
			[ "$mode" = xsk ] || [ "$clock" != monotonic ] || continue
			clk_sink
			lab_exec gen "$GEN" "$mode" -j -n $n -r 5000 --clock "$clock" "$GEN_IF" >"$gout" 2>&1 ||
				t_fail "xdp-gen $mode --clock $clock: $(tail -n 3 "$gout")"
			clk_stop "$(with_marks $n)"
			t_expect_eq "$mode $clock: the generator's clock" "$clock" \
				"$(json_get "$gout" summary 'o["clock"]["name"]')"
			t_expect_eq "$mode $clock: the generator's sync state" True \
				"$(json_get "$gout" summary 'type(o["clock"]["synchronised"]) is bool and o["clock"]["sync_error_ns"] >= 0')"
			t_expect_eq "$mode $clock: lost" 0 "$(ck 'o["lost"]')"
			t_expect_eq "$mode $clock: stamped" $n "$(ck 'o["stamped"]')"
			t_expect_eq "$mode $clock: the run's clock" "$clock" "$(ck 'o["runs"][0]["clock"]["name"]')"
			if [ "$clock" = monotonic ]; then
				t_expect_eq "$mode $clock: state" other "$(ck 'o["runs"][0]["clock"]["state"]')"
				t_expect_eq "$mode $clock: no latency" 0 "$(ck '(o["latency_ns"] or {}).get("count", 0)')"
				t_expect_eq "$mode $clock: no error stated" None "$(ck 'o["runs"][0]["clock"]["sync_error_ns"]')"
				t_expect_eq "$mode $clock: why" True \
					"$(ck '"CLOCK_MONOTONIC" in o["runs"][0]["clock"]["latency"] and "--clock tai" in o["runs"][0]["clock"]["latency"]')"
			else
				t_expect_eq "$mode $clock: state" same "$(ck 'o["runs"][0]["clock"]["state"]')"
				t_expect_eq "$mode $clock: timed, or untimed by the sample" $n \
					"$(ck 'o["latency_ns"]["count"] + o["rx_untimed"]')"
				# A send time placed on the wrong clock is off by a day, or by up to 2 s
				# (the stamp's wrap): a one-way latency on this lab's pair is far below.
				p50=$(ck 'o["latency_ns"]["p50"]')
				echo "$mode --clock $clock: one-way p50 $p50 ns"
				t_expect_le "$mode $clock: latency p50 (ns)" 50000000 "$p50"
				t_expect_eq "$mode $clock: sync error" 0 "$(ck 'o["runs"][0]["clock"]["sync_error_ns"]')"
				t_expect_eq "$mode $clock: its basis" True \
					"$(ck '"one kernel" in o["runs"][0]["clock"]["sync_error_basis"]')"
			fi
			t_expect_eq "$mode $clock: unexplained" 0 "$(ck 'o["unexplained"]')"
		done
	done
}

# The known answer across separate clocks: an XDP DUT that spins 100 us per
# frame adds 100 us to the minimum one-way latency (the quietest frame of
# 500, which a busy machine delays more, never less), stamped on
# CLOCK_TAI by a generator a day ahead on CLOCK_MONOTONIC.
# quiet: the DUT spins 100 us a frame in softirq, where a burst holds the CPU's other NAPI work (another test's sink) for milliseconds
test_clock_dut_cost_known_answer() {
	t_clocks_separable || t_skip "$T_CLOCKS_WHY"
	local n=500 cost min0 min1 p50 extra mf gmf
	for cost in 0 100000; do
		extra=()
		[ "$cost" = 0 ] || extra=(--dut-cost "$cost")
		lab_setup --no-ipv6 --separate-clocks --mgmt --dut xdp "${extra[@]}"
		mf=$(mktemp) gmf=$(mktemp)
		t_on_cleanup rm -f "$mf" "$gmf"
		clk_sink --metrics-file "$mf"
		lab_exec gen "$GEN" xsk -q -n $n -r 1000 --clock tai --metrics-file "$gmf" "$GEN_IF" \
			>/dev/null 2>&1 || t_fail "xdp-gen failed"
		clk_stop "$(with_marks $n)"
		# The metrics say the same: the sink's error per run, the generator's own state.
		grep -q "^xdp_sink_clock_sync_error_seconds{.*run=\"$(printf %08x "$(ck 'o["runs"][0]["run"]')")\"} 0\$" "$mf" ||
			t_fail "no sync error of 0 in the sink's metrics: $(grep clock "$mf")"
		grep -q '^xdp_gen_clock_synchronised{.*clock="tai"} [01]$' "$gmf" ||
			t_fail "no clock state in the generator's metrics: $(grep clock "$gmf")"
		t_expect_eq "cost $cost: lost" 0 "$(ck 'o["lost"]')"
		t_expect_eq "cost $cost: the run's clock" same "$(ck 'o["runs"][0]["clock"]["state"]')"
		if [ "$cost" = 0 ]; then
			min0=$(ck 'o["latency_ns"]["min"]')
		else
			min1=$(ck 'o["latency_ns"]["min"]')
			p50=$(ck 'o["latency_ns"]["p50"]')
		fi
		t_lab teardown --name "$LAB_NAME" >/dev/null || t_fail "teardown failed"
		unset XDPSG_STAMP_KEY # the next lab's setup would take that lab's key as the caller's
	done
	echo "min without cost ${min0} ns, with ${min1} ns; p50 with ${p50} ns"
	t_expect_ge "added minimum (ns)" 85000 $((min1 - min0))
	t_expect_le "added minimum (ns)" 115000 $((min1 - min0))
	t_expect_ge "p50 with the cost (ns)" 100000 "$p50"
}

# An unknown clock: one line naming it and the choices, exit 2, nothing sent.
test_clock_bad_input() {
	local out rc
	out=$("$GEN" xsk --clock gps lo 2>&1)
	rc=$?
	t_expect_eq "exit code" 2 $rc
	t_expect_eq "one line" 1 "$(printf '%s\n' "$out" | wc -l)"
	[[ "$out" == *--clock* ]] || t_fail "the option is not named: $out"
	[[ "$out" == *monotonic* ]] || t_fail "the choices are not named: $out"
}

# --hw-time on veth: the program is bound to the device and asks the driver
# first; veth gives no hardware time to the lab's frames, so every frame falls
# back to the kernel's clock, and the basis counts add up to the stamped frames.
test_clock_hw_time_falls_back_on_veth() {
	local n=1000 id out xl
	lab_setup --no-ipv6
	clk_sink --hw-time
	id=$(ip -n "$SINK_NS" -j link show dev "$SINK_IF" | grep -o '"prog":{"id":[0-9]*' |
		grep -o '[0-9]*$' | head -n 1)
	[ -n "$id" ] || t_fail "no program attached to $SINK_IF"
	# The program with the kfunc, which the kernel loads only bound to a device.
	t_expect_eq "the program attached" xdp_sink_xsk_hw \
		"$(json_text "$(bpftool -j prog show id "$id")" 'o["name"]')"
	# Its bytes are xdp_sink_hw.bpf.c's: it calls the kfunc (the default object's does not).
	# Read whole, then searched: grep -q leaving early would fail bpftool (pipefail).
	xl=$(bpftool prog dump xlated id "$id") || t_fail "bpftool prog dump xlated id $id failed"
	grep -qE 'call [a-z_]*rx_timestamp#' <<<"$xl" ||
		t_fail "the --hw-time program calls no bpf_xdp_metadata_rx_timestamp"
	lab_exec gen "$GEN" xsk -q -n $n -r 5000 "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen failed"
	clk_stop "$(with_marks $n)"
	t_expect_eq "lost" 0 "$(ck 'o["lost"]')"
	t_expect_eq "no hardware time on veth" 0 "$(ck 'o["rx_time_hw"]')"
	t_expect_eq "the basis" "kernel receive time" "$(ck 'o["latency_basis"]')"
	t_expect_eq "the basis counts add up to the stamped frames" $n \
		"$(ck 'o["rx_time_hw"] + o["rx_time_kernel"] + o["rx_time_user"] + o["rx_untimed"]')"
	t_expect_eq "timed by the kernel, or untimed by the sample" $n \
		"$(ck 'o["rx_time_kernel"] + o["rx_untimed"]')"
	# Nothing to time without the books: one line, exit 2, nothing attached.
	out=$(lab_exec sink "$SINK" xsk --hw-time --no-verify -d 1 "$SINK_IF" 2>&1)
	t_expect_eq "--hw-time --no-verify: exit code" 2 $?
	t_expect_eq "--hw-time --no-verify: one line" 1 "$(printf '%s\n' "$out" | wc -l)"
	ip -n "$SINK_NS" link show "$SINK_IF" | grep -q xdp && t_fail "a program was left attached"
	return 0
}
