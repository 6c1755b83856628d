# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# 'testenv.sh disrupt': events under a paced stream through the DUT, each with the loss
# episodes that followed it. Every lost frame is an event's or counted apart;
# the stream comes back after each event; the DUT is left as it was; bad input and
# Ctrl-C leave nothing armed or running.

# dr_run OUT ARGS...: testenv.sh disrupt --name LAB ARGS --json into OUT; fails the test
# if it fails.
dr_run() {
	local out=$1
	shift
	"$TESTENV" disrupt --name "$LAB_NAME" "$@" --json >"$out" 2>"$out.err" ||
		t_fail "disrupt $* exited $?: $(tail -n 3 "$out.err") $(tail -n 1 "$out")"
	t_json_tee <"$out" >/dev/null
}

# dr_books OUT: every lost frame is an event's or during none; the traffic came back.
dr_books() {
	local s
	s=$(tail -n 1 "$1")
	t_expect_eq "every event done" True "$(json_text "$s" 'o["events_done"] == o["events_asked"]')"
	t_expect_eq "lost = the events' frames + those during none" \
		"$(json_text "$s" 'o["lost"]')" \
		"$(json_text "$s" 'sum(e["frames"] for e in o["events"]) + o["unattributed"]["frames"]')"
	t_expect_eq "every episode kept and attributed" 0 "$(json_text "$s" 'o["episodes_not_kept"]')"
	t_expect_eq "the traffic came back after the last event (unaccounted, lost at end)" "0 0" \
		"$(json_text "$s" '"%d %d" % (o["unaccounted"], o["lost_at_end"])')"
}

# dr_dut_state: what the events touch in the DUT, to compare before and after.
dr_dut_state() {
	ip -n "$DUT_NS" route show dev "$DUT_SINK_IF"
	ip -n "$DUT_NS" neigh show dev "$DUT_SINK_IF" nud permanent
	tc -n "$DUT_NS" qdisc show dev "$DUT_SINK_IF" root | sed -E 's/ refcnt [0-9]+//; s/ [0-9a-f]+: root/ root/'
	ip -n "$DUT_NS" -br link show dev "$DUT_SINK_IF"
}

# An XDP DUT: a 50 ms blackhole is one episode of exactly the frames its window dropped;
# a link flap after it is an episode of its own; the window is not left armed.
test_disrupt_xdp_events() {
	[ -x "$BUILD/xdp-sink" ] || t_skip "xdp-sink not built"
	lab_setup --no-ipv6 --dut xdp
	dr_xdp_events
}

# The same where the generator's side has a CLOCK_MONOTONIC of its own (another host's):
# the stream's stamps on TAI, which no time namespace shifts, still meet the events.
test_disrupt_separate_clocks() {
	[ -x "$BUILD/xdp-sink" ] || t_skip "xdp-sink not built"
	t_clocks_separable || t_skip "$T_CLOCKS_WHY"
	lab_setup --no-ipv6 --dut xdp --separate-clocks
	dr_xdp_events
}

dr_xdp_events() {
	local out e1
	out=$(mktemp)
	t_on_cleanup rm -f "$out" "$out.err"
	dr_run "$out" --event blackhole:50ms --event link-flap
	dr_books "$out"
	e1=$(head -n 1 "$out")
	t_expect_eq "event 1 is the blackhole" "blackhole 50000000" \
		"$(json_text "$e1" '"%s %d" % (o["kind"], o["window_ns"])')"
	t_expect_eq "the blackhole: its episodes' frames = what its window dropped" \
		"$(json_text "$e1" 'o["dropped"]')" "$(json_text "$e1" 'o["frames"]')"
	t_expect_eq "the blackhole: one episode if it dropped anything" \
		"$(json_text "$e1" '1 if o["dropped"] else 0')" "$(json_text "$e1" 'o["loss_episodes"]')"
	"$TESTENV" blackhole --name "$LAB_NAME" --for 1ms >/dev/null 2>&1 ||
		t_fail "a blackhole window was left armed"
}

# A forwarding DUT with a queue: a route flap, a qdisc swap and a link flap; after each the
# stream comes back (the link's permanent neighbours put back; the events take longer than
# they ask, and the stream runs until the last gap is over), and the DUT is as it was.
test_disrupt_forward_events() {
	local out before
	lab_setup --no-ipv6 --dut forward --dut-qdisc tbf:100mbit:16kb:50ms
	out=$(mktemp)
	t_on_cleanup rm -f "$out" "$out.err"
	before=$(dr_dut_state)
	dr_run "$out" --event route-flap --event qdisc-replace --event link-flap:20ms
	dr_books "$out"
	t_expect_eq "the events, in order" "route-flap qdisc-replace link-flap" \
		"$(json_text "$(tail -n 1 "$out")" '" ".join(e["kind"] for e in o["events"])')"
	t_expect_eq "the DUT's route, neighbour, qdisc and link as before" "$before" "$(dr_dut_state)"
}

# dr_usage WHAT ARGS...: one line on stderr, exit code 2.
dr_usage() {
	local what=$1 err rc
	shift
	err=$("$TESTENV" disrupt "$@" 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "$what: exit code" 2 "$rc"
	t_expect_eq "$what: stderr lines (got: $err)" 1 "$(printf '%s\n' "$err" | grep -c .)"
}

test_disrupt_bad_input() {
	local xdp
	[ -x "$BUILD/xdp-sink" ] || t_skip "xdp-sink not built"
	lab_setup --no-ipv6 --dut xdp
	xdp=$LAB_NAME
	dr_usage "no --event" --name "$xdp"
	dr_usage "an unknown event" --name "$xdp" --event xdp-teleport
	dr_usage "a blackhole without its time" --name "$xdp" --event blackhole
	dr_usage "a blackhole longer than the gap" --name "$xdp" --event blackhole:2s --gap 1
	dr_usage "a bad time" --name "$xdp" --event link-flap:soon
	dr_usage "route-flap on an XDP DUT" --name "$xdp" --event route-flap
	dr_usage "qdisc-replace on an XDP DUT" --name "$xdp" --event qdisc-replace
	dr_usage "a rate of 0" --name "$xdp" --event link-flap --rate 0
	dr_usage "a lab that does not exist" --name "${xdp}x" --event link-flap
	lab_setup --no-ipv6 --dut forward
	dr_usage "a blackhole on a forwarding DUT" --name "$LAB_NAME" --event blackhole:10ms
	lab_setup --no-ipv6
	dr_usage "a lab without a DUT" --name "$LAB_NAME" --event link-flap
	LAB_NAME=$xdp
	"$TESTENV" blackhole --name "$xdp" --for 1ms >/dev/null 2>&1 ||
		t_fail "a blackhole window was left armed"
}

# Ctrl-C in the middle of a blackhole: exit 130, the window closed, no tool left running.
test_disrupt_interrupted_leaves_nothing() {
	local pid err left
	[ -x "$BUILD/xdp-sink" ] || t_skip "xdp-sink not built"
	lab_setup --no-ipv6 --dut xdp
	err=$(mktemp)
	t_on_cleanup rm -f "$err"
	"$TESTENV" disrupt --name "$LAB_NAME" --event blackhole:4s --gap 5 >/dev/null 2>"$err" &
	pid=$!
	T_PIDS+=("$pid")
	# Until the window is open (a second one is refused), then ^C.
	t_wait_until 20 eval '[[ "$("$TESTENV" blackhole --name "$LAB_NAME" --for 1ms 2>&1)" == *"already open"* ]]' ||
		t_fail "the blackhole never opened: $(cat "$err")"
	kill -INT "$pid"
	wait "$pid"
	t_expect_eq "exit code after SIGINT" 130 $?
	"$TESTENV" blackhole --name "$LAB_NAME" --for 1ms >/dev/null 2>&1 ||
		t_fail "the window was left armed after SIGINT"
	left=$(for s in GEN_NS SINK_NS; do ip netns pids "${!s}"; done | xargs -r ps -o comm= -p |
		grep -E 'xdp-(gen|sink)' || true)
	t_expect_eq "xdp-gen or xdp-sink left in the lab's sides" "" "$left"
}
