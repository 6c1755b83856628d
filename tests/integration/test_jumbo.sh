# SPDX-License-Identifier: GPL-2.0
# Jumbo frames (issue #41): a link with an MTU of 9000, where a frame no longer
# fits one buffer. The sink's verdict programs load frags-aware there and count
# whole frames; a mode that cannot take them yet says so and leaves nothing.

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"

# The sink's books of 9000-byte frames from the qdisc generator, in each verdict
# mode: every frame counted once, its bytes those of all its buffers. The kernel
# is the judge: the veth's rx_packets, and its rx_bytes, which veth counts from
# the end of the Ethernet header (14 bytes a frame less than the wire's).
test_jumbo_sink_verdicts() {
	local n=10000 size=9000 want mode out p0 p1 b0 b1 got
	lab_setup --no-ipv6 --mtu 9000
	want=$(with_marks $n)
	for mode in drop pass tx; do
		out=$(mktemp)
		t_on_cleanup rm -f "$out"
		p0=$(iface_stat "$SINK_NS" "$SINK_IF" rx packets)
		b0=$(iface_stat "$SINK_NS" "$SINK_IF" rx bytes)
		lab_bg "$out" sink "$SINK" "$mode" -j -v -n "$want" -d 60 "$SINK_IF"
		local pid=$LAST_PID
		wait_ready "$out" "$pid" || t_fail "$mode: sink did not start: $(cat "$out")"
		t_has "$out" "loaded frags-aware" || t_fail "$mode: not loaded frags-aware: $(cat "$out")"
		lab_exec gen "$GEN" qdisc -q -s $size -n $n "$GEN_IF" ||
			t_fail "$mode: xdp-gen qdisc -s $size failed"
		wait "$pid" || t_fail "$mode: sink exited $?: $(tail -n 5 "$out")"
		p1=$(iface_stat "$SINK_NS" "$SINK_IF" rx packets)
		b1=$(iface_stat "$SINK_NS" "$SINK_IF" rx bytes)
		t_expect_eq "$mode: ip -s link rx packets" "$want" $((p1 - p0))
		t_expect_eq "$mode: summary rx_packets" "$want" "$(json_get "$out" summary 'o["rx_packets"]')"
		t_expect_eq "$mode: summary $mode verdicts" "$want" \
			"$(json_get "$out" summary "o['actions']['$mode']")"
		got=$(json_get "$out" summary 'o["rx_bytes"]')
		t_expect_eq "$mode: summary rx_bytes = the veth's rx_bytes + 14 a frame" \
			$((b1 - b0 + 14 * (p1 - p0))) "$got"
		t_expect_ge "$mode: rx_bytes hold whole frames" $((n * size)) "$got"
		check_verdicts_balance "$out"
		wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "$mode: program still attached after exit"
	done
}

# A 1500-byte link keeps the single-buffer programs: nothing there pays for frames
# of several buffers.
test_jumbo_not_below_1500() {
	local out
	lab_setup --no-ipv6
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" sink "$SINK" drop -j -v -n 100 -d 60 "$SINK_IF"
	local pid=$LAST_PID
	wait_ready "$out" "$pid" || t_fail "sink did not start: $(cat "$out")"
	lab_exec gen "$GEN" qdisc -q -n 94 "$GEN_IF" || t_fail "xdp-gen qdisc failed"
	wait "$pid" || t_fail "sink exited $?: $(tail -n 5 "$out")"
	t_has "$out" "frags-aware" && t_fail "loaded frags-aware on a 1500-byte link: $(cat "$out")"
	t_expect_eq "summary rx_packets" 100 "$(json_get "$out" summary 'o["rx_packets"]')"
}

# xdp-sink xsk takes frames of one buffer for now: on a 9000-byte link it says why
# it cannot attach, with the MTU and what to do, in one line; exit 2; nothing left.
test_jumbo_xsk_refused() {
	local out rc
	lab_setup --no-ipv6 --mtu 9000
	out=$(lab_exec sink "$SINK" xsk -q -d 5 "$SINK_IF" 2>&1)
	rc=$?
	t_expect_eq "exit code" 2 "$rc"
	t_expect_eq "lines printed" 1 "$(grep -c . <<<"$out")"
	[[ "$out" == *"MTU (9000)"*"mtu 3000"*"xdp-sink drop"* ]] ||
		t_fail "expected the MTU, the fix and the modes that take jumbo frames, got: $out"
	wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "a refused run left a program attached"
	lab_exec sink test -e /sys/fs/bpf/xdp-sink && t_fail "a refused run left pins"
	return 0
}

# A size a generator mode cannot send on a 9000-byte link: one line naming the limit
# and the mode that sends it, exit 2, nothing attached. qdisc sends up to the MTU.
test_jumbo_gen_sizes() {
	local what args pat msg rc
	lab_setup --no-ipv6 --mtu 9000
	while IFS='|' read -r what args pat; do
		# shellcheck disable=SC2086
		msg=$(lab_exec gen "$GEN" $args -n 10 -q "$GEN_IF" 2>&1 >/dev/null)
		rc=$?
		t_expect_eq "$what: exit code" 2 "$rc"
		t_expect_eq "$what: lines ($msg)" 1 "$(grep -c . <<<"$msg")"
		[[ "$msg" == *"$pat"* ]] || t_fail "$what: expected '$pat', got: $msg"
		wait_xdp "$GEN_NS" "$GEN_IF" none || t_fail "$what: left a program attached"
	done <<-'LIST'
		xsk 9000 bytes|xsk -s 9000|4096 bytes at most); use -s 4096 or less, or 'xdp-gen qdisc'
		xsk 3000 bytes in 2048|xsk -s 3000 --frame-size 2048|use --frame-size 4096
		kernel 4000 bytes|kernel -s 4000|(3408, a kernel limit); use -s 3408 or less, or 'xdp-gen xsk --frame-size 4096'
		kernel 9000 bytes|kernel -s 9000|or 'xdp-gen qdisc'
		qdisc above the MTU|qdisc -s 9100|the 9014-byte maximum frame (MTU 9000 + 14)
	LIST
	lab_exec gen "$GEN" qdisc -s 9014 -n 10 -q "$GEN_IF" || t_fail "qdisc -s 9014 (the MTU's frame) refused"
}
