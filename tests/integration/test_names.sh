# SPDX-License-Identifier: GPL-2.0
# Names that are not UTF-8: anyone can name a device in a namespace of their
# own 'ev\377' (or put an escape in it). Every output shows such a byte by
# one rule (common/base/fmt.c: \xHH), so the JSON parses, promtool takes the
# metrics, the pcapng's interface name is UTF-8 and the terminal gets no raw
# bytes. Python, promtool and tshark judge, not our own code.

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"
ODD=$'ev\377'

# Is FILE all UTF-8, with no byte under 0x20 but line ends and tabs?
names_clean() { # file what
	/usr/bin/python3 - "$1" "$2" <<-'EOF' || t_fail "$2 is not clean UTF-8"
		import sys
		b = open(sys.argv[1], 'rb').read()
		try:
		    t = b.decode('utf-8')
		except UnicodeDecodeError as e:
		    sys.exit('%s: %s' % (sys.argv[2], e))
		bad = [c for c in t if ord(c) < 0x20 and c not in '\n\t']
		if bad:
		    sys.exit('%s: control characters %r' % (sys.argv[2], bad))
	EOF
}

# odd_dev: a veth named ev\377 in the sink's namespace, its peer 'evp' beside it.
odd_dev() {
	ip -n "$SINK_NS" link add "$ODD" type veth peer name evp || t_fail "cannot make a device named ev\\377"
	ip -n "$SINK_NS" link set "$ODD" up
	ip -n "$SINK_NS" link set evp up
	ip netns exec "$SINK_NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
}

test_names_not_utf8_everywhere() {
	local d out prom pc v
	lab_setup --no-ipv6
	odd_dev
	d=$(mktemp -d)
	t_on_cleanup rm -rf "$d"
	out="$d/drop.json" prom="$d/drop.prom" pc="$d/c.pcapng"
	# JSON and metrics of a sink on it; json.loads reads every line.
	lab_exec sink "$SINK" drop -j -i 100ms -d 1 --metrics-file "$prom" "$ODD" >"$out" 2>&1 ||
		t_fail "xdp-sink drop on ev\\377 failed: $(cat "$out")"
	names_clean "$out" "xdp-sink drop -j"
	v=$(/usr/bin/python3 -c '
import json, sys
names = {json.loads(l).get("ifname") for l in open(sys.argv[1]) if l.strip()}
print(" ".join(sorted(n for n in names if n)))' "$out") || t_fail "json.loads refused: $(cat "$out")"
	t_expect_eq "the device's name in JSON" 'ev\xff' "$v"
	names_clean "$prom" "--metrics-file"
	if command -v promtool >/dev/null; then
		v=$(promtool check metrics <"$prom" 2>&1) || t_fail "promtool check metrics: $v"
	fi
	grep -qF 'device="ev\\xff"' "$prom" || t_fail "no device=\"ev\\\\xff\" label: $(grep device "$prom" | head -3)"
	# Text, a warning included (no such queue): no raw byte reaches the terminal.
	lab_exec sink "$SINK" drop -d 1 "$ODD" >"$d/text" 2>&1 || t_fail "text run failed: $(cat "$d/text")"
	lab_exec sink "$SINK" xsk --queues 7 -d 1 "$ODD" >>"$d/text" 2>&1
	names_clean "$d/text" "text output"
	grep -qF 'drop on ev\xff' "$d/text" || t_fail "the header does not name ev\\xff: $(cat "$d/text")"
	grep -qF 'ev\xff has no queue 7' "$d/text" || t_fail "the warning does not name ev\\xff: $(cat "$d/text")"
	# pcapng: tshark reads the interface name, UTF-8.
	lab_bg "$d/xsk.json" sink "$SINK" xsk -j -i 100ms -d 300 --capture "$pc" "$ODD"
	wait_ready "$d/xsk.json" "$LAST_PID" || t_fail "xsk on ev\\377 did not start: $(cat "$d/xsk.json")"
	lab_exec sink "$GEN" xsk -q -n 50 --dst-mac 02:00:00:00:00:99 --src-ip 10.99.0.1 \
		--dst-ip 10.99.0.2 evp >/dev/null 2>&1 || t_fail "xdp-gen from evp failed"
	wait_total "$d/xsk.json" interval rx_packets 50 || t_fail "the sink did not see the frames"
	kill -INT "$LAST_PID"
	wait "$LAST_PID" || t_fail "xsk sink on ev\\377 failed: $(cat "$d/xsk.json")"
	names_clean "$d/xsk.json" "xdp-sink xsk -j"
	if command -v tshark >/dev/null; then
		v=$(tshark -r "$pc" -T fields -e frame.interface_name -c 1 2>"$d/tshark.err") ||
			t_fail "tshark cannot read the capture: $(cat "$d/tshark.err")"
		t_expect_eq "the pcapng interface name" 'ev\xff:q0' "$v"
	fi
}

# The drop tracer's records and labels: OTHERHOST drops on ev\377 of a run sent to a MAC not its own.
test_names_not_utf8_drop_tracer() {
	local d v
	lab_setup --no-ipv6
	odd_dev
	d=$(mktemp -d)
	t_on_cleanup rm -rf "$d"
	lab_bg "$d/drops.json" sink "$SINK" drops -j -i 100ms -d 300 --metrics-file "$d/drops.prom"
	local tpid=$LAST_PID
	wait_ready "$d/drops.json" "$tpid" || t_fail "xdp-sink drops did not start: $(cat "$d/drops.json")"
	lab_exec sink "$GEN" xsk -q -n 200 --dst-mac 02:00:00:00:00:99 --src-ip 10.99.0.1 \
		--dst-ip 10.99.0.2 evp >/dev/null 2>&1 || t_fail "xdp-gen from evp failed"
	t_wait_until 10 grep -qF 'ev\\xff' "$d/drops.json"
	kill -INT "$tpid"
	wait "$tpid" || t_fail "xdp-sink drops failed: $(cat "$d/drops.json")"
	names_clean "$d/drops.json" "xdp-sink drops -j"
	v=$(/usr/bin/python3 -c '
import json, sys
devs = set()
for l in open(sys.argv[1]):
    o = json.loads(l)
    for c in o.get("counts") or []:
        if isinstance(c, dict) and c.get("dev"):
            devs.add(c["dev"])
print(" ".join(sorted(devs)))' "$d/drops.json") || t_fail "json.loads refused the tracer's records"
	[[ " $v " == *' ev\xff '* ]] || t_fail "no drops on ev\\xff in the tracer's records: $v"
	names_clean "$d/drops.prom" "the tracer's --metrics-file"
	grep -qF 'device="ev\\xff"' "$d/drops.prom" || t_fail "no device=\"ev\\\\xff\" label in the tracer's metrics"
	if command -v promtool >/dev/null; then
		v=$(promtool check metrics <"$d/drops.prom" 2>&1) || t_fail "promtool check metrics: $v"
	fi
}
