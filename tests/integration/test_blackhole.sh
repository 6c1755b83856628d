# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# 'testenv.sh blackhole': the XDP DUT drops every frame for a known window. What
# the window dropped is what the sink's books lose, frame for frame; the window
# is never left armed (bad input, a second window, Ctrl-C).

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"

bh_lab() {
	[ -x "$SINK" ] || t_skip "xdp-sink not built"
	lab_setup --no-ipv6 --qdisc pfifo:1000 --dut xdp
}

# bh_sink: the verifying AF_XDP sink, reporting every 100 ms, once ready; its
# OpenMetrics in BH_METRICS.
bh_sink() {
	BH_SINK_OUT=$(mktemp)
	BH_METRICS=$(mktemp)
	t_on_cleanup rm -f "$BH_SINK_OUT" "$BH_METRICS"
	lab_bg "$BH_SINK_OUT" sink "$SINK" xsk -j -i 100ms -d 300 --ring-size 65536 \
		--metrics-file "$BH_METRICS" "$SINK_IF"
	BH_SINK_PID=$LAST_PID
	wait_ready "$BH_SINK_OUT" "$BH_SINK_PID" || t_fail "xsk sink did not start: $(cat "$BH_SINK_OUT")"
}

bh_sink_stop() {
	wait_idle "$BH_SINK_OUT"
	kill -INT "$BH_SINK_PID"
	wait "$BH_SINK_PID" || t_fail "the sink exited $?: $(tail -n 3 "$BH_SINK_OUT")"
	check_verdicts_balance "$BH_SINK_OUT"
}

# bh_run_of GEN_OUT EXPR: EXPR on the sink's books (r) of the generator's run.
bh_run_of() {
	local id
	id=$(json_get "$1" summary 'o["run"]') || t_fail "no generator summary in $1: $(cat "$1")"
	json_get "$BH_SINK_OUT" summary "(lambda r: $2)([r for r in o['runs'] if r['run'] == $id][0])" ||
		t_fail "the sink has no books of run $id"
}

# 50 ms windows in the middle of a paced run: the sink's books of the run lose
# exactly the frames the windows dropped; every other frame is received and
# checked; the drops arrived inside their window. A window that found no frame
# (the generator off the CPU for 50 ms on a busy machine) is followed by
# another, up to five, while the generator runs.
test_blackhole_lost_is_what_the_window_dropped() {
	local gout bout gpid rec d dropped=0 n=0 windows=0
	bh_lab
	bh_sink
	gout=$(mktemp)
	bout=$(mktemp)
	t_on_cleanup rm -f "$gout" "$bout"
	lab_bg "$gout" gen "$GEN" xsk -j -q -r 20000 -d 3 "$GEN_IF"
	gpid=$LAST_PID
	# Traffic flows through the DUT before a window opens.
	wait_total "$BH_SINK_OUT" interval rx_packets 2000 ||
		t_fail "no traffic through the DUT: $(tail -n 2 "$BH_SINK_OUT")"
	while [ "$dropped" -eq 0 ] && [ $n -lt 5 ] && ! t_gone "$gpid"; do
		n=$((n + 1))
		"$TESTENV" blackhole --name "$LAB_NAME" --for 50ms --json >"$bout" ||
			t_fail "blackhole failed: $(cat "$bout")"
		t_json_tee <"$bout" >/dev/null
		rec=$(cat "$bout")
		t_expect_eq "window $n: its length" 50000000 \
			"$(json_text "$rec" 'o["closed_ns"] - o["opened_ns"]')"
		t_expect_eq "window $n: drops inside it" True \
			"$(json_text "$rec" 'o["dropped"] == 0 or o["opened_ns"] <= o["first_drop_ns"] <= o["last_drop_ns"] < o["closed_ns"]')"
		d=$(json_text "$rec" 'o["dropped"]')
		dropped=$((dropped + d))
		[ "$d" -eq 0 ] || windows=$((windows + 1))
	done
	wait "$gpid" || t_fail "xdp-gen exited $?: $(tail -n 3 "$gout")"
	bh_sink_stop
	echo "$n window(s), $dropped frames dropped"
	t_expect_ge "frames the windows dropped" 1 "$dropped"
	t_expect_eq "lost = what the windows dropped" "$dropped" "$(bh_run_of "$gout" 'r["lost"]')"
	t_expect_eq "received + lost = sent" "$(json_get "$gout" summary 'o["tx_packets"]')" \
		"$(bh_run_of "$gout" 'r["received"] + r["lost"]')"
	t_expect_eq "duplicates, reordered, late" "0 0 0" \
		"$(bh_run_of "$gout" '"%d %d %d" % (r["duplicates"], r["reordered"], r["late"])')"
	# Each window that dropped frames stopped the traffic once: an episode of its frames.
	t_expect_eq "loss episodes: one a window that dropped" "$windows" \
		"$(bh_run_of "$gout" 'r["loss_episodes"]')"
	t_expect_eq "their frames: what the windows dropped" "$dropped 0" \
		"$(bh_run_of "$gout" '"%d %d" % (r["loss_episode_frames"], r["episodes_amended"])')"
	t_expect_eq "the episodes listed, one a window, add up" "$windows $dropped" \
		"$(bh_run_of "$gout" '"%d %d" % (len(r["episodes"]), sum(e["frames"] for e in r["episodes"]))')"
	t_expect_eq "outages: the longest of them, within their total" True \
		"$(bh_run_of "$gout" '0 < r["outage_max_ns"] <= r["outage_total_ns"] and r["outage_max_ns"] == r["episodes"][0]["outage_ns"]')"
	# The send times span the generator's frames: the sink's span is the generator's own
	# (a START mark that came first once made it the time since the clock's origin).
	# The outages' histogram has them all, by run.
	local id row spans
	id=$(printf '%08x' "$(json_get "$gout" summary 'o["run"]')")
	row=$(grep -E "^xdp_sink_outage_seconds_count\{.*run=\"$id\"" "$BH_METRICS")
	t_expect_eq "xdp_sink_outage_seconds_count of run $id ($row)" "$windows" "${row##* }"
	if command -v promtool >/dev/null; then
		promtool check metrics <"$BH_METRICS" >/dev/null 2>&1 ||
			t_fail "promtool check metrics: $(promtool check metrics <"$BH_METRICS" 2>&1 | head -n 3)"
	fi
	spans="[$(json_get "$gout" summary 'o["send_s"]'), $(bh_run_of "$gout" 'r["send_s"]')]"
	t_expect_eq "the sink's send span within the generator's (generator, sink: $spans)" True \
		"$(json_text "$spans" '0 < o[1] <= o[0] + 0.001')"
}

# bh_usage WHAT ARGS...: one line on stderr, exit code 2.
bh_usage() {
	local what=$1 err rc
	shift
	err=$("$TESTENV" "$@" 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "$what: exit code" 2 "$rc"
	t_expect_eq "$what: stderr lines (got: $err)" 1 "$(printf '%s\n' "$err" | grep -c .)"
}

# bh_unarmed WHEN: no window is open: a 1 ms one can be armed at once.
bh_unarmed() {
	"$TESTENV" blackhole --name "$LAB_NAME" --for 1ms >/dev/null ||
		t_fail "$1: a window was left armed"
}

# bh_open: a window is open: another one is refused, and says why.
bh_open() {
	local err
	err=$("$TESTENV" blackhole --name "$LAB_NAME" --for 1ms 2>&1)
	[ $? -eq 1 ] && [[ "$err" == *"already open"* ]]
}

# Bad input: one line, exit 2, nothing armed. A lab without an XDP DUT is refused too.
test_blackhole_bad_input() {
	bh_lab
	bh_usage "no --for" blackhole --name "$LAB_NAME"
	bh_usage "--for 0" blackhole --name "$LAB_NAME" --for 0
	bh_usage "--for 61s" blackhole --name "$LAB_NAME" --for 61s
	bh_usage "--for 50 parsecs" blackhole --name "$LAB_NAME" --for 50pc
	bh_usage "--for with status" status --name "$LAB_NAME" --for 1s
	bh_usage "--json with list" list --json
	bh_usage "a lab that does not exist" blackhole --name "${LAB_NAME}x" --for 1ms
	bh_unarmed "after bad input"
	lab_setup --no-ipv6 --dut forward
	bh_usage "a forward DUT" blackhole --name "$LAB_NAME" --for 1ms
	lab_setup --no-ipv6
	bh_usage "no DUT" blackhole --name "$LAB_NAME" --for 1ms
}

# A second window while one is open is refused (exit 1); Ctrl-C closes the open one at
# once (exit 130), and the DUT forwards every frame again.
test_blackhole_interrupted_and_refused() {
	local pid gout err
	bh_lab
	err=$(mktemp)
	t_on_cleanup rm -f "$err"
	"$TESTENV" blackhole --name "$LAB_NAME" --for 30s >/dev/null 2>"$err" &
	pid=$!
	T_PIDS+=("$pid")
	# Armed: it says so on stderr.
	t_wait_for "$err" 'drops every frame for 30000.000 ms' 10 || t_fail "never armed: $(cat "$err")"
	bh_open || t_fail "a second window was not refused as 'already open'"
	kill -INT "$pid"
	wait "$pid"
	t_expect_eq "exit code after SIGINT" 130 $?
	bh_unarmed "after SIGINT"
	bh_sink
	gout=$(mktemp)
	t_on_cleanup rm -f "$gout"
	lab_exec gen "$GEN" xsk -j -q -n 1000 -r 10000 "$GEN_IF" >"$gout" 2>&1 ||
		t_fail "xdp-gen failed: $(tail -n 3 "$gout")"
	bh_sink_stop
	t_expect_eq "frames through the DUT after SIGINT" "1000 0" \
		"$(bh_run_of "$gout" '"%d %d" % (r["received"], r["lost"])')"
}

# With --separate-clocks the record places the window on the generator's clock: its
# gen_offset_ns is the generator side's CLOCK_MONOTONIC offset, as 'env' says it.
test_blackhole_separate_clocks() {
	local rec
	[ -x "$SINK" ] || t_skip "xdp-sink not built"
	t_clocks_separable || t_skip "$T_CLOCKS_WHY"
	lab_setup --no-ipv6 --dut xdp --separate-clocks
	rec=$("$TESTENV" blackhole --name "$LAB_NAME" --for 1ms --json) || t_fail "blackhole failed: $rec"
	t_json_tee <<<"$rec" >/dev/null
	t_expect_eq "gen_offset_ns" "$(json_text "$GEN_CLOCK_OFFSET_S" 'int(round(o * 1e9))')" \
		"$(json_text "$rec" 'o["gen_offset_ns"]')"
	t_expect_eq "the generator's clock differs" True "$(json_text "$rec" 'o["gen_offset_ns"] != 0')"
}

# bh_forge KIND COUNT [ARG...]: stamps as forge.py makes them, from the generator side.
bh_forge() {
	lab_exec gen python3 "$ROOT/tests/integration/forge.py" "$GEN_IF" "$GEN_MAC" "$SINK_MAC" \
		"$GEN_IP4" "$SINK_IP4" "$@" >/dev/null || t_fail "forge.py $* failed"
}

# Two generators at once (AF_XDP and live frames), forgers and claimers among them, then
# windows: the forged frames touch no books, the one-frame claims have no episode, and
# each generator's books lose its share of what the windows dropped, as episodes.
test_blackhole_two_generators_and_forgers() {
	local ga gb bout pa pb rec d dropped=0 n=0 run sel
	command -v python3 >/dev/null || t_skip "python3 missing"
	bh_lab
	bh_sink
	ga=$(mktemp)
	gb=$(mktemp)
	bout=$(mktemp)
	t_on_cleanup rm -f "$ga" "$gb" "$bout"
	lab_bg "$ga" gen "$GEN" xsk -j -q -r 20000 -d 3 "$GEN_IF"
	pa=$LAST_PID
	lab_bg "$gb" gen "$GEN" kernel -j -q -r 20000 -d 3 "$GEN_IF"
	pb=$LAST_PID
	wait_total "$BH_SINK_OUT" interval rx_packets 4000 ||
		t_fail "no traffic through the DUT: $(tail -n 2 "$BH_SINK_OUT")"
	bh_forge forged 300
	bh_forge wrongkey 100
	bh_forge runs 100
	# Every forged frame seen before a window opens: the windows drop only the generators'.
	wait_total "$BH_SINK_OUT" interval forged 400 ||
		t_fail "the sink did not see the 400 forged frames: $(tail -n 1 "$BH_SINK_OUT")"
	while [ "$dropped" -eq 0 ] && [ $n -lt 5 ] && ! t_gone "$pa" && ! t_gone "$pb"; do
		n=$((n + 1))
		"$TESTENV" blackhole --name "$LAB_NAME" --for 50ms --json >"$bout" ||
			t_fail "blackhole failed: $(cat "$bout")"
		rec=$(cat "$bout")
		d=$(json_text "$rec" 'o["dropped"]')
		dropped=$((dropped + d))
	done
	wait "$pa" || t_fail "xdp-gen xsk exited $?: $(tail -n 3 "$ga")"
	wait "$pb" || t_fail "xdp-gen kernel exited $?: $(tail -n 3 "$gb")"
	bh_sink_stop
	echo "$n window(s), $dropped frames dropped"
	t_expect_ge "frames the windows dropped" 1 "$dropped"
	t_expect_eq "forged and under another key: forged" 400 "$(json_get "$BH_SINK_OUT" summary 'o["forged"]')"
	t_expect_eq "the generators lost what the windows dropped" "$dropped" \
		"$(( $(bh_run_of "$ga" 'r["lost"]') + $(bh_run_of "$gb" 'r["lost"]') ))"
	for g in "$ga" "$gb"; do
		t_expect_eq "$(json_get "$g" summary 'o["mode"]'): its lost frames are its episodes' frames" \
			"$(bh_run_of "$g" 'r["lost"]') 0" \
			"$(bh_run_of "$g" '"%d %d" % (r["loss_episode_frames"], r["episodes_amended"])')"
		t_expect_eq "$(json_get "$g" summary 'o["mode"]'): at most one episode a window" True \
			"$(bh_run_of "$g" "r['loss_episodes'] <= $n")"
	done
	run=$(json_get "$ga" summary 'o["run"]')
	sel="[r for r in o['runs'] if r['run'] not in ($run, $(json_get "$gb" summary 'o["run"]'))]"
	t_expect_eq "the claims: no episode, nothing lost" "0 0" \
		"$(json_get "$BH_SINK_OUT" summary "'%d %d' % (sum(r['loss_episodes'] for r in $sel), sum(r['lost'] for r in $sel))")"
	t_expect_eq "unexplained" 0 "$(json_get "$BH_SINK_OUT" summary 'o["unexplained"]')"
}
