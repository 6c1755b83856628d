# SPDX-License-Identifier: GPL-2.0
# The sink's books for every protocol and wrapping xdp-gen speaks: stamped
# frames that scapy builds (TCP, ICMP echo, VLAN and QinQ, IPv6 extension
# headers, VXLAN, GENEVE, GRE, IP in IP) are verified like UDP, each run's
# books exact; other traffic (ARP, ND, unstamped TCP, ICMP that is no echo)
# is foreign and touches no books.

SINK="$BUILD/xdp-sink"
FORGE_PROTO=(/usr/bin/python3 "$ROOT/tests/integration/forge_proto.py")

forged() { # FILE EXPR: EXPR on forge_proto.py's report o
	json_file "$1" "$2"
}

scapy_ready() {
	/usr/bin/python3 -c 'import scapy' 2>/dev/null || t_skip "python3-scapy not installed (make deps)"
}

# COUNT frames of each kind, lost 3 and 2 duplicates in each (forge_proto.py).
test_sink_proto_xsk_books() {
	local out forged kinds kind n=40 total sel pid
	scapy_ready
	lab_setup --no-ipv6
	out=$(mktemp)
	forged=$(mktemp)
	t_on_cleanup rm -f "$out" "$forged"
	lab_bg "$out" sink "$SINK" xsk -j -i 100ms -d 120 "$SINK_IF"
	pid=$LAST_PID
	wait_ready "$out" "$pid" || t_fail "xsk sink did not start: $(cat "$out")"
	lab_exec gen "${FORGE_PROTO[@]}" "$GEN_IF" "$GEN_MAC" "$SINK_MAC" "$GEN_IP4" "$SINK_IP4" \
		fd00::1 fd00::2 $n >"$forged" || t_fail "forge_proto.py failed: $(cat "$forged")"
	total=$(forged "$forged" 'sum(o["sent"].values()) + o["foreign"]')
	wait_total "$out" interval rx_packets "$total" 20 ||
		t_fail "the sink read $(json_total "$out" interval rx_packets) of $total frames"
	kill -INT "$pid"
	wait "$pid"
	t_expect_eq "sink exit code" 0 $?
	t_expect_eq "frames read" "$total" "$(json_get "$out" summary 'o["rx_packets"]')"
	kinds=$(forged "$forged" '" ".join(o["runs"])')
	for kind in $kinds; do
		sel="[r for r in o['runs'] if r['run'] == $(forged "$forged" "o['runs']['$kind']")]"
		t_expect_eq "$kind: books" "[[$((n + 2)), 3, 2, 0, 0]]" \
			"$(json_get "$out" summary "[[r['received'], r['lost'], r['duplicates'], r['reordered'], r['missing_head'] + r['unplaced']] for r in $sel]")"
	done
	t_expect_eq "runs: one per kind" "$(wc -w <<<"$kinds")" \
		"$(json_get "$out" summary 'o["runs_count"]')"
	t_expect_eq "foreign: every frame of other traffic" "$(forged "$forged" 'o["foreign"]')" \
		"$(json_get "$out" summary 'o["foreign"]')"
}

# The drop tracer finds the stamp by the same rule: the same frames, dropped
# by the sink namespace's stack (no program there; nobody listens, no VLAN or
# tunnel device), are each counted under their own run, whatever carried them.
test_sink_proto_drop_tracer() {
	local forged pout pid kind run sent
	scapy_ready
	lab_setup --no-ipv6
	forged=$(mktemp)
	pout=$(mktemp)
	t_on_cleanup rm -f "$forged" "$pout"
	"$BUILD/tests/drops-probe" >"$pout" 2>&1 &
	pid=$!
	T_PIDS+=("$pid")
	t_wait_for "$pout" '"type":"ready"' 20 || t_fail "drops-probe did not attach: $(cat "$pout")"
	lab_exec gen "${FORGE_PROTO[@]}" "$GEN_IF" "$GEN_MAC" "$SINK_MAC" "$GEN_IP4" "$SINK_IP4" \
		fd00::1 fd00::2 20 >"$forged" || t_fail "forge_proto.py failed: $(cat "$forged")"
	sleep 0.5 # the stack's drops of the last frames
	kill -INT "$pid"
	wait "$pid"
	t_expect_eq "drops-probe exit code" 0 $?
	# ICMP echo requests are answered, not dropped.
	for kind in $(forged "$forged" '" ".join(k for k in o["runs"] if k != "icmp4")'); do
		run=$(forged "$forged" "o['runs']['$kind']")
		sent=$(forged "$forged" "o['sent']['$kind']")
		t_expect_eq "$kind: the stack's drops of run $run, found by the stamp" "$sent" \
			"$(python3 -c 'import json, sys
print(sum(c["packets"] for c in map(json.loads, filter(lambda l: l.startswith("{"), open(sys.argv[1])))
          if c.get("type") == "count" and c.get("kind") == "run" and c.get("run") == int(sys.argv[2])))' \
				"$pout" "$run")"
	done
}
