# SPDX-License-Identifier: GPL-2.0
# A DUT that is a host of its own: its drop tracer (xdp-sink drops --local
# --metrics-listen) read by the sink over the lab's management network
# (--drop-causes-from) and joined with the sink's books by run id, while the
# sink's own tracer counts only its own namespace (--drop-causes local), so
# that one kernel acts out two hosts without counting a drop twice; a source
# that does not answer; bad input.

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"
DCF_PORT=9464 # in the DUT's namespace: no other test's

# dcf_lab: the DUT a host of its own, with a tbf that drops, and a management network.
dcf_lab() {
	lab_setup --no-ipv6 --separate-clocks --mgmt --dut bridge --dut-qdisc tbf:20mbit:8kb:10ms
	DCF_URL="http://$DUT_MGMT_IP4:$DCF_PORT/metrics"
}

# dcf_sink [options]: xdp-sink xsk --drop-causes local, JSON into DCF_OUT.
dcf_sink() {
	DCF_OUT=$(mktemp) DCF_ERR=$(mktemp)
	t_on_cleanup rm -f "$DCF_OUT" "$DCF_ERR"
	lab_bg "$DCF_OUT" sink sh -c 'exec "$@" 2>"$0"' "$DCF_ERR" "$SINK" xsk -j -q -d 300 \
		--ring-size 32768 --drop-causes local "$@" "$SINK_IF"
	DCF_PID=$LAST_PID
	wait_ready "$DCF_OUT" "$DCF_PID" || t_fail "xsk sink did not start: $(cat "$DCF_OUT" "$DCF_ERR")"
}

dcf_stop() {
	sleep 1 # what is in flight through the DUT's queue arrives
	kill -INT "$DCF_PID"
	wait "$DCF_PID"
	t_expect_eq "sink exit code" 0 $?
}

dcf_run() { # EXPR on the sink's only run, as r
	json_get "$DCF_OUT" summary "[$1 for r in o['runs']][0]"
}

# The issue's case: per run, the DUT's QDISC_DROP read from its host equals
# what the tbf dropped (less the run's marks it dropped, booked apart), every
# lost frame is named, and none twice: the sink's own tracer saw nothing of
# the DUT's namespace.
test_drop_causes_from_dut_host() {
	local dout g run d0 d1 q marks local_n
	dcf_lab
	dout=$(mktemp) g=$(mktemp)
	t_on_cleanup rm -f "$dout" "$g"
	lab_bg "$dout" dut "$SINK" drops --local -j -i 200ms -d 300 \
		--metrics-listen "$DUT_MGMT_IP4:$DCF_PORT"
	wait_ready "$dout" "$LAST_PID" || t_fail "the DUT's tracer did not start: $(cat "$dout")"
	dcf_sink --drop-causes-from "$DCF_URL"
	d0=$(json_text "$(tc -n "$DUT_NS" -s -j qdisc show dev "$DUT_SINK_IF")" 'o[0]["drops"]')
	lab_exec gen "$GEN" xsk -s 500 -r 50000 -n 10000 -j -q "$GEN_IF" >"$g" ||
		t_fail "generator: $(cat "$g")"
	dcf_stop
	d1=$(json_text "$(tc -n "$DUT_NS" -s -j qdisc show dev "$DUT_SINK_IF")" 'o[0]["drops"]')
	run=$(json_get "$g" summary 'o["run"]')
	t_expect_eq "the sink's run is the generator's" "$run" "$(dcf_run "r['run']")"
	q=$(dcf_run "sum(c['packets'] for c in r['lost_causes'] if c['source'] == '$DCF_URL'
		and c['reason'] == 'QDISC_DROP' and c['dev'] == '$DUT_SINK_IF' and c['identified'])")
	local_n=$(dcf_run "sum(c['packets'] for c in r['lost_causes'] if c['source'] == 'local')")
	marks=$(($(json_get "$g" summary 'o["marks"]') - $(dcf_run "r['marks']")))
	echo "the tbf dropped $((d1 - d0)): the run's QDISC_DROP read from the DUT $q, marks $marks; local causes $local_n"
	t_expect_ge "frames the tbf dropped" 1000 "$q"
	t_expect_eq "the tbf's dropped = the remote QDISC_DROP + the marks'" $((d1 - d0)) $((q + marks))
	t_expect_eq "lost = the remote causes" "$(dcf_run "r['lost'] + r['missing_head']")" "$q"
	t_expect_eq "unexplained" 0 "$(dcf_run "r['lost_unexplained']")"
	t_expect_eq "over-explained" 0 "$(dcf_run "r['lost_overexplained']")"
	t_expect_eq "nothing of the DUT's namespace counted here" 0 "$local_n"
	t_expect_eq "the source read at the end" True \
		"$(json_get "$DCF_OUT" summary 'o["drop_causes"]["sources"][0]["read_at_end"]')"
	t_expect_eq "no error" None "$(json_get "$DCF_OUT" summary 'o["drop_causes"]["sources"][0]["error"]')"
}

# A source that does not answer: one line naming it, the run goes on, and
# its share is unexplained, never zero. Then bad input: one line, exit 2,
# nothing attached.
test_drop_causes_from_unreachable() {
	local g lost out rc
	dcf_lab
	g=$(mktemp)
	t_on_cleanup rm -f "$g"
	dcf_sink --drop-causes-from "$DCF_URL"
	lab_exec gen "$GEN" xsk -s 500 -r 50000 -n 5000 -j -q "$GEN_IF" >"$g" ||
		t_fail "generator: $(cat "$g")"
	dcf_stop
	[ "$(grep -c -- "--drop-causes-from $DCF_URL: cannot connect" "$DCF_ERR")" = 1 ] ||
		t_fail "not one line naming the source: $(cat "$DCF_ERR")"
	lost=$(dcf_run "r['lost'] + r['missing_head']")
	t_expect_ge "frames lost at the tbf" 1000 "$lost"
	t_expect_eq "all of them unexplained" "$lost" "$(dcf_run "r['lost_unexplained']")"
	t_expect_eq "no cause" 0 "$(dcf_run "len(r['lost_causes'])")"
	t_expect_eq "never read" 0 "$(json_get "$DCF_OUT" summary 'o["drop_causes"]["sources"][0]["reads"]')"
	t_expect_eq "why" True \
		"$(json_get "$DCF_OUT" summary '"Connection refused" in o["drop_causes"]["sources"][0]["error"]')"
	for args in "--drop-causes local --drop-causes-from ftp://$DUT_MGMT_IP4/" \
		"--drop-causes local --drop-causes-from http://$DUT_MGMT_IP4:70000/" \
		"--drop-causes-from $DCF_URL" "--drop-causes=nowhere"; do
		# shellcheck disable=SC2086 # a word list
		out=$(lab_exec sink "$SINK" xsk -d 1 $args "$SINK_IF" 2>&1)
		rc=$?
		t_expect_eq "$args: exit code" 2 $rc
		t_expect_eq "$args: one line" 1 "$(printf '%s\n' "$out" | wc -l)"
		[[ "$out" == *--drop-causes* ]] || t_fail "$args: the option is not named: $out"
		ip -n "$SINK_NS" link show "$SINK_IF" | grep -q 'xdp' &&
			t_fail "$args: a program was left attached"
	done
	return 0
}
