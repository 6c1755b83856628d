# SPDX-License-Identifier: GPL-2.0
# Round trip without clock sync: xdp-gen xsk --rtt into xdp-sink tx --reflect.
# Every frame sent comes back exactly once through the reflector, and the
# generator's books say so; the round-trip percentiles are there and ordered.
# No time is asserted: the machine's speed is not the test's business.

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"

start_reflector() { # [xdp-sink tx options]
	REFL_OUT=$(mktemp)
	t_on_cleanup rm -f "$REFL_OUT"
	lab_bg "$REFL_OUT" sink "$SINK" tx --reflect -j -i 100ms -d 300 "$@" "$SINK_IF"
	REFL_PID=$LAST_PID
	wait_ready "$REFL_OUT" "$REFL_PID" || t_fail "reflector did not start: $(cat "$REFL_OUT")"
}

stop_reflector() {
	kill -INT "$REFL_PID" 2>/dev/null
	wait "$REFL_PID"
}

test_rtt_reflector_exact() {
	local n=5000 gout field v
	lab_setup --no-ipv6
	start_reflector
	gout=$(mktemp)
	t_on_cleanup rm -f "$gout"
	lab_exec gen "$GEN" xsk --rtt -n $n -r 20000 -j -q "$GEN_IF" >"$gout" 2>&1 ||
		t_fail "xdp-gen --rtt failed: $(cat "$gout")"
	stop_reflector
	t_expect_eq "frames sent" $n "$(json_get "$gout" summary 'o["rtt"]["sent"]')"
	t_expect_eq "frames back" $n "$(json_get "$gout" summary 'o["rtt"]["received"]')"
	t_expect_eq "lost on the return" 0 "$(json_get "$gout" summary 'o["rtt"]["lost"]')"
	t_expect_eq "duplicates" 0 "$(json_get "$gout" summary 'o["rtt"]["duplicates"]')"
	t_expect_eq "foreign" 0 "$(json_get "$gout" summary 'o["rtt"]["foreign"]')"
	t_expect_eq "round trips timed" $n "$(json_get "$gout" summary 'o["rtt"]["rtt_ns"]["count"]')"
	v=$(json_get "$gout" summary \
		'(lambda l: 0 < l["min"] <= l["p50"] <= l["p90"] <= l["p99"] <= l["max"])(o["rtt"]["rtt_ns"])')
	[ "$v" = True ] || t_fail "round-trip percentiles missing or out of order: $(tail -1 "$gout")"
	# The reflector returns the run's 6 marks too; the books keep the frames only.
	t_expect_eq "marks" 6 "$(json_get "$gout" summary 'o["marks"]')"
	t_expect_eq "reflected by the sink, marks too" $((n + 6)) \
		"$(json_get "$REFL_OUT" summary 'o["actions"]["tx"]')"
	t_expect_eq "xdp_tx_errors" 0 "$(json_get "$REFL_OUT" summary 'o["drops"]["xdp_tx_errors"]')"
	xdp_detached "$GEN_NS" "$GEN_IF" || t_fail "xdp-gen left its --rtt program on $GEN_IF"
}

# The text summary and the metrics file carry the round trip too.
test_rtt_text_and_metrics() {
	local n=1000 gout prom v
	lab_setup --no-ipv6
	start_reflector
	gout=$(mktemp)
	prom=$(mktemp -u /tmp/xdpsg-rtt.XXXXXX.prom)
	t_on_cleanup rm -f "$gout" "$prom"
	lab_exec gen "$GEN" xsk --rtt -n $n -r 10000 --metrics-file "$prom" "$GEN_IF" >"$gout" 2>&1 ||
		t_fail "xdp-gen --rtt failed: $(cat "$gout")"
	stop_reflector
	grep -q "rtt: .*1,000 of 1,000 back, lost 0, duplicates 0" "$gout" ||
		t_fail "no round-trip books in the text summary: $(cat "$gout")"
	grep -q "rtt: .*min .*, p50 .*, p90 .*, p99 .*, max " "$gout" ||
		t_fail "no round-trip percentiles in the text summary: $(cat "$gout")"
	grep -q "^xdp_gen_rtt_frames_total{.*kind=\"received\"} $n$" "$prom" ||
		t_fail "no received count in the metrics: $(grep rtt "$prom")"
	grep -q "^xdp_gen_rtt_seconds_count{.*} $n$" "$prom" ||
		t_fail "no round-trip histogram in the metrics: $(grep rtt "$prom")"
	if command -v promtool >/dev/null; then
		v=$(promtool check metrics <"$prom" 2>&1) || t_fail "promtool check metrics: $v"
		[ -z "$v" ] || t_fail "promtool check metrics complains: $v"
	fi
}

test_rtt_needs_stamps() {
	local out rc=0
	lab_setup --no-ipv6
	out=$(lab_exec gen "$GEN" xsk --rtt --no-stamp -n 10 "$GEN_IF" 2>&1) || rc=$?
	t_expect_eq "exit code" 2 "$rc"
	[[ "$out" == *"--rtt times frames by their stamps; drop --no-stamp"* ]] ||
		t_fail "unexpected message: $out"
	xdp_detached "$GEN_NS" "$GEN_IF" || t_fail "a refused --rtt left a program on $GEN_IF"
}

# A return that arrives on a queue without a socket cannot be timed: it is
# counted under its cause (no_socket), so received + no_socket = sent, and
# the run's 6 marks, which come back the same way (the program counts UDP
# frames without reading them). On veth the reflected frame lands on the
# receive queue of the CPU that sent it back: sending on queue 0 from CPU 1
# brings the returns, marks too, to queue 1.
test_rtt_return_on_queue_without_socket() {
	local n=1000 gout
	[ "$(nproc)" -ge 2 ] || t_skip "needs 2 CPUs"
	lab_setup --no-ipv6 --queues 2
	start_reflector
	gout=$(mktemp)
	t_on_cleanup rm -f "$gout"
	lab_exec gen "$GEN" xsk --rtt -n $n -r 10000 --queues 0 --cpus 1 -j -q "$GEN_IF" \
		>"$gout" 2>&1 || t_fail "xdp-gen --rtt failed: $(cat "$gout")"
	stop_reflector
	t_expect_eq "marks" 6 "$(json_get "$gout" summary 'o["marks"]')"
	t_expect_eq "back + no_socket = sent + marks" $((n + 6)) \
		"$(json_get "$gout" summary 'o["rtt"]["received"] + o["rtt"]["no_socket"]')"
	t_expect_ge "returns on the queue without a socket" 1 \
		"$(json_get "$gout" summary 'o["rtt"]["no_socket"]')"
	t_expect_eq "lost = no_socket, less the marks" \
		"$(json_get "$gout" summary 'o["rtt"]["no_socket"] - o["marks"]')" \
		"$(json_get "$gout" summary 'o["rtt"]["lost"]')"
	grep -q "came back on queues without a socket" "$gout" || t_fail "no warning: $(cat "$gout")"
}
