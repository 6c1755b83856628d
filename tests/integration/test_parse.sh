# SPDX-License-Identifier: GPL-2.0
# The parsing rule (include/bpf/parsing.h) judged by tools we did not write: a mixed
# capture made with scapy (every header kind the sink walks, fragments,
# foreign and malformed frames), classified by tshark; the sink's program
# (BPF_PROG_RUN) and its user-space reader must say what tshark says of
# every frame, and a live sink fed the frames over a veth must count them so.

SINK="$BUILD/xdp-sink"
JUDGE=(/usr/bin/python3 "$ROOT/tests/integration/parse_judge.py")

parse_judge_ready() {
	/usr/bin/python3 -c 'import scapy' 2>/dev/null || { t_skip "python3-scapy not installed (make deps)"; return 1; }
	command -v tshark >/dev/null || { t_skip "tshark not installed (make deps)"; return 1; }
}

# One capture for both checks: building it and reading it with tshark is most of the time.
test_parse_agrees_with_tshark() {
	local dir n pid
	parse_judge_ready || return 0
	lab_setup --no-ipv6
	dir=$(mktemp -d)
	t_on_cleanup rm -rf "$dir"
	"${JUDGE[@]}" build "$dir/mixed.pcap" || t_fail "building the capture failed"
	"$BUILD/tests/parse-probe" "$dir/mixed.pcap" >"$dir/probe" || t_fail "parse-probe failed"
	"${JUDGE[@]}" judge "$dir/mixed.pcap" "$dir/probe" >"$dir/judge" ||
		t_fail "the sink's parsing and tshark disagree: $(cat "$dir/judge")"
	# The same frames through a live sink on a veth: its counts are the frames'.
	n=$(wc -l <"$dir/probe")
	lab_bg "$dir/sink.json" sink "$SINK" drop --parse -j -q -n "$n" -d 60 "$SINK_IF"
	pid=$LAST_PID
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "sink did not attach: $(cat "$dir/sink.json")"
	lab_exec gen "${JUDGE[@]}" send "$dir/mixed.pcap" "$GEN_IF" || t_fail "sending failed"
	wait "$pid" || t_fail "sink exited with $?: $(cat "$dir/sink.json")"
	"${JUDGE[@]}" counts "$dir/probe" "$dir/sink.json" >"$dir/cmp" ||
		t_fail "the live sink's --parse counts differ from the frames': $(cat "$dir/cmp")"
}
