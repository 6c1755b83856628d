# SPDX-License-Identifier: GPL-2.0
# pcap in and out: xdp-gen xsk --pcap replays a capture of mixed frames and
# xdp-sink xsk --capture writes them back byte for byte; --capture-what
# anomalies keeps the two frames around a forced gap and nothing else; bad
# captures and capture options are refused before anything is attached.

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"
GEN_HOOKS="$BUILD/test-hooks/xdp-gen" # reads XDPSG_TEST_SEQ_JUMP
PCAPTOOL="$ROOT/tests/integration/pcaptool.py"

# A directory for this test's files, removed at cleanup.
pcap_dir() {
	PDIR=$(mktemp -d /tmp/xdpsg-pcap.XXXXXX)
	t_on_cleanup rm -rf "$PDIR"
}

start_capture_sink() { # [options]
	XOUT="$PDIR/sink.out"
	lab_bg "$XOUT" sink "$SINK" xsk -j -q -d 300 "$@" "$SINK_IF"
	XPID=$LAST_PID
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "xsk sink did not attach: $(cat "$XOUT")"
}

stop_capture_sink() { # [--sample N, for a drop sink]
	sleep 0.5
	kill -INT "$XPID"
	wait "$XPID"
	t_expect_eq "xsk sink exit code" 0 $?
	check_verdicts_balance "$XOUT" "${2:-}"
}

xs() { # python expression on the sink's summary
	json_get "$XOUT" summary "$1"
}

# tcpdump reads the file and finds N frames in it.
expect_tcpdump_reads() { # file frames
	local n
	n=$(tcpdump -nr "$1" 2>/dev/null | wc -l) || t_fail "tcpdump -r $1 failed"
	t_expect_eq "frames tcpdump reads in $(basename "$1")" "$2" "$n"
}

test_pcap_replay_capture_exact() {
	local res total stampable
	lab_setup --no-ipv6
	pcap_dir
	res=$(python3 "$PCAPTOOL" make "$PDIR" "$GEN_MAC" "$SINK_MAC") || t_fail "pcaptool make: $res"
	read -r total stampable < <(awk '{ print $1, $(NF-5) }' <<<"$res")
	start_capture_sink --capture "$PDIR/got.pcap" --capture-what all
	# 400 frames: the 40-frame file ten times over, back to back; then once
	# more in the file's own timing.
	lab_exec gen "$GEN" xsk -q --pcap "$PDIR/mixed.pcap" -n 400 "$GEN_IF" >/dev/null 2>&1 ||
		t_fail "xdp-gen xsk --pcap failed"
	lab_exec gen "$GEN" xsk -q --pcap "$PDIR/mixed.pcap" --pcap-timing original -n 40 \
		"$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen xsk --pcap --pcap-timing original failed"
	stop_capture_sink
	t_expect_eq "delivered" 440 "$(xs 'o["rx_packets"]')"
	t_expect_eq "captured" 440 "$(xs 'o["captured"]')"
	t_expect_eq "capture_dropped" 0 "$(xs 'o["capture_dropped"]')"
	res=$(python3 "$PCAPTOOL" same "$PDIR/mixed.pcap" "$PDIR/got.pcap" 11) || t_fail "$res"
	expect_tcpdump_reads "$PDIR/got.pcap" 440
	# --stamp: the UDP frames with room carry a stamp the sink checks, the rest
	# go byte for byte ("N frames, ..., K with room for a stamp" from make).
	start_capture_sink --capture "$PDIR/stamped.pcap"
	lab_exec gen "$GEN" xsk -q --pcap "$PDIR/mixed.pcap" --stamp -n 400 "$GEN_IF" >/dev/null 2>&1 ||
		t_fail "xdp-gen xsk --pcap --stamp failed"
	stop_capture_sink
	t_expect_eq "stamped" $((stampable * 10)) "$(xs 'o["stamped"]')"
	t_expect_eq "foreign" $(((total - stampable) * 10)) "$(xs 'o["foreign"]')"
	t_expect_eq "lost" 0 "$(xs 'o["lost"]')"
	res=$(python3 "$PCAPTOOL" stamped "$PDIR/mixed.pcap" "$PDIR/stamped.pcap" 10) || t_fail "$res"
}

test_pcap_anomalies_around_a_gap() {
	local res
	lab_setup --no-ipv6
	pcap_dir
	# A receive ring with room for 80 ms at this rate: a busy machine must not add gaps.
	start_capture_sink --capture "$PDIR/gap.pcap" --capture-what anomalies --ring-size 32768
	lab_exec gen env XDPSG_TEST_SEQ_JUMP=10000:57 "$GEN_HOOKS" xsk -q -n 20000 -r 200k \
		"$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen failed"
	stop_capture_sink
	t_expect_eq "delivered" 20000 "$(xs 'o["rx_packets"]')"
	t_expect_eq "lost" 57 "$(xs 'o["lost"]')"
	t_expect_eq "captured" 2 "$(xs 'o["captured"]')"
	res=$(python3 "$PCAPTOOL" gap "$PDIR/gap.pcap" 57) || t_fail "$res"
	expect_tcpdump_reads "$PDIR/gap.pcap" 2
}

# Exit code 2 and exactly one line on stderr.
expect_refused() { # label command...
	local label=$1 msg rc
	shift
	msg=$("$@" 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "exit code for $label" 2 "$rc"
	t_expect_eq "one line for $label ($msg)" 1 "$(printf '%s\n' "$msg" | grep -c .)"
}

test_pcap_bad_input() {
	local res f out
	lab_setup --no-ipv6
	pcap_dir
	res=$(python3 "$PCAPTOOL" make "$PDIR" "$GEN_MAC" "$SINK_MAC") || t_fail "pcaptool make: $res"
	local g="$TESTENV exec --name $LAB_NAME gen --" s="$TESTENV exec --name $LAB_NAME sink --"
	for f in truncated garbage linktype big cut empty missing; do
		expect_refused "--pcap $f.pcap" $g "$GEN" xsk -n 10 --pcap "$PDIR/$f.pcap" "$GEN_IF"
	done
	expect_refused "--pcap-timing slow" $g "$GEN" xsk -n 10 --pcap "$PDIR/mixed.pcap" \
		--pcap-timing slow "$GEN_IF"
	expect_refused "--rate with original timing" $g "$GEN" xsk -n 10 -r 1000 \
		--pcap "$PDIR/mixed.pcap" --pcap-timing original "$GEN_IF"
	expect_refused "--stamp without --pcap" $g "$GEN" xsk -n 10 --stamp "$GEN_IF"
	expect_refused "kernel --pcap" $g "$GEN" kernel -n 10 --pcap "$PDIR/mixed.pcap" "$GEN_IF"
	expect_refused "--capture into a missing directory" $s "$SINK" xsk \
		--capture /nonexistent/dir/x.pcap "$SINK_IF"
	expect_refused "anomalies without stamps" $s "$SINK" xsk --capture "$PDIR/x.pcap" \
		--capture-what anomalies --no-verify "$SINK_IF"
	expect_refused "--snaplen without --capture" $s "$SINK" xsk --snaplen 100 "$SINK_IF"
	for f in "$GEN_NS $GEN_IF" "$SINK_NS $SINK_IF"; do
		# shellcheck disable=SC2086
		out=$(ip -n ${f% *} -d link show dev ${f#* })
		[[ "$out" == *prog/xdp* ]] && t_fail "a refused run left a program on ${f#* }"
	done
	[ -e "$PDIR/x.pcap" ] && t_fail "a refused run left a capture file"
	return 0
}

test_pcap_drop_sample() {
	local out taken
	lab_setup --no-ipv6
	pcap_dir
	XOUT="$PDIR/drop.out"
	lab_bg "$XOUT" sink "$SINK" drop -j -q -d 300 --capture "$PDIR/s.pcap" --sample 100 \
		--snaplen 100 "$SINK_IF"
	XPID=$LAST_PID
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "drop sink did not attach: $(cat "$XOUT")"
	# One sending thread: the program runs on one CPU, so its 1-in-100 is exact.
	lab_exec gen "$GEN" kernel -q -n 100000 -r 200k "$GEN_IF" >/dev/null 2>&1 ||
		t_fail "xdp-gen failed"
	stop_capture_sink --sample 100
	t_expect_eq "dropped in the kernel" 100000 "$(xs 'o["rx_packets"]')"
	t_expect_eq "one in 100 sampled (taken + lost)" 1000 \
		"$(xs 'o["samples_taken"] + o["samples_lost"]')"
	taken=$(xs 'o["samples_taken"]')
	t_expect_eq "every sample taken is written" "$taken" "$(xs 'o["captured"]')"
	expect_tcpdump_reads "$PDIR/s.pcap" "$taken"
	out=$(tcpdump -nr "$PDIR/s.pcap" 2>&1 | head -1)
	[[ "$out" == *"snapshot length 100"* ]] || t_fail "snap length not 100: $out"
	expect_refused "--sample without --capture" "$TESTENV" exec --name "$LAB_NAME" sink -- \
		"$SINK" drop --sample 10 "$SINK_IF"
	return 0
}
