# SPDX-License-Identifier: GPL-2.0
# pcap in and out: xdp-gen xsk --pcap replays a capture of mixed frames and
# xdp-sink xsk --capture writes them back byte for byte; --capture-what
# anomalies keeps the two frames around a forced gap and nothing else; bad
# captures and capture options are refused before anything is attached.

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"
GEN_HOOKS="$BUILD/test-hooks/xdp-gen" # reads XDPSG_TEST_SEQ_JUMP
PCAPTOOL="$ROOT/tests/integration/pcaptool.py"
# The marks xdp-gen sends with a run of one flow (docs/stamp.md): 2 start, 4 end.
GEN_MARKS=6

# A directory for this test's files, removed at cleanup.
pcap_dir() {
	PDIR=$(mktemp -d /tmp/xdpsg-pcap.XXXXXX)
	t_on_cleanup rm -rf "$PDIR"
}

# An xsk sink reporting every 100 ms (stop_capture_sink waits on its reports).
start_capture_sink() { # [options]
	XOUT="$PDIR/sink.out"
	lab_bg "$XOUT" sink "$SINK" xsk -j -i 100ms -d 300 "$@" "$SINK_IF"
	XPID=$LAST_PID
	wait_ready "$XOUT" "$XPID" || t_fail "xsk sink did not start: $(cat "$XOUT")"
}

# Once the sink has counted FRAMES, stop it and check its books.
stop_capture_sink() { # FRAMES [--sample N, for a drop sink]
	wait_total "$XOUT" interval rx_packets "$1"
	kill -INT "$XPID"
	wait "$XPID"
	t_expect_eq "xsk sink exit code" 0 $?
	check_verdicts_balance "$XOUT" "${3:-}"
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
	stop_capture_sink 440
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
	stop_capture_sink 400
	t_expect_eq "stamped" $((stampable * 10)) "$(xs 'o["stamped"]')"
	t_expect_eq "foreign" $(((total - stampable) * 10)) "$(xs 'o["foreign"]')"
	t_expect_eq "lost" 0 "$(xs 'o["lost"]')"
	res=$(python3 "$PCAPTOOL" stamped "$PDIR/mixed.pcap" "$PDIR/stamped.pcap" 10) || t_fail "$res"
}

# A capture of xdp-gen's own traffic replayed without --stamp carries the
# captured run's send times, which a sink started since rejects: xdp-gen says
# so when it loads the file, the sink when every stamped frame was stale.
test_pcap_replay_old_stamps_hinted() {
	local g s ps res
	lab_setup --no-ipv6
	pcap_dir
	g=$PDIR/gen.out
	s=$PDIR/sink.txt
	start_capture_sink --capture "$PDIR/ours.pcap"
	lab_exec gen "$GEN" xsk -q -n 200 "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen xsk failed"
	stop_capture_sink 200
	# The data frames alone: the marks are not what this is about.
	res=$(python3 "$PCAPTOOL" nomarks "$PDIR/ours.pcap") || t_fail "$res"
	lab_bg "$s" sink "$SINK" xsk -d 60 "$SINK_IF"
	ps=$LAST_PID
	t_wait_for "$s" 'Ctrl-C to stop' 20 || t_fail "sink did not start: $(cat "$s")"
	lab_exec gen "$GEN" xsk -q --pcap "$PDIR/ours.pcap" -n 200 "$GEN_IF" >"$g" 2>&1 ||
		t_fail "replay failed: $(cat "$g")"
	grep -q 'ours.pcap: 200 of 200 frames carry xdp-gen stamps .*add --stamp' "$g" ||
		t_fail "xdp-gen gave no --stamp hint: $(cat "$g")"
	t_wait_for "$s" 'total 200 ' 20 || t_fail "the sink did not count 200: $(cat "$s")"
	lab_exec gen "$GEN" xsk -q --pcap "$PDIR/ours.pcap" -n 200 "$GEN_IF" >"$g" 2>&1 ||
		t_fail "the second replay failed: $(cat "$g")"
	t_wait_for "$s" 'total 400 ' 20 || t_fail "the sink did not count 400: $(cat "$s")"
	kill -INT "$ps"
	wait "$ps"
	# The stamps are genuine (the key says so): the captured run's own frames,
	# sent twice, so the second time duplicates: the 128 the reorder window
	# holds, and 72 late (behind it: duplicates or very late originals).
	grep -q '^  checked:  400 stamped, .* duplicates 128, reordered 0, late 72, runs 1$' "$s" ||
		t_fail "not booked as the captured run sent twice: $(cat "$s")"
	# With --stamp: no hint, and the sink checks every frame.
	lab_exec gen "$GEN" xsk -q --pcap "$PDIR/ours.pcap" --stamp -n 10 "$GEN_IF" >"$g" 2>&1 ||
		t_fail "replay --stamp failed: $(cat "$g")"
	! grep -q 'add --stamp' "$g" || t_fail "a hint with --stamp given: $(cat "$g")"
}

test_pcap_anomalies_around_a_gap() {
	local res
	lab_setup --no-ipv6
	pcap_dir
	# A receive ring with room for 80 ms at this rate: a busy machine must not add gaps.
	start_capture_sink --capture "$PDIR/gap.pcap" --capture-what anomalies --ring-size 32768
	lab_exec gen env XDPSG_TEST_SEQ_JUMP=10000:57 "$GEN_HOOKS" xsk -q -n 20000 -r 200k \
		"$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen failed"
	stop_capture_sink 20000
	t_expect_eq "delivered, marks too" $((20000 + GEN_MARKS)) "$(xs 'o["rx_packets"]')"
	t_expect_eq "lost" 57 "$(xs 'o["lost"]')"
	t_expect_eq "captured" 2 "$(xs 'o["captured"]')"
	res=$(python3 "$PCAPTOOL" gap "$PDIR/gap.pcap" 57) || t_fail "$res"
	expect_tcpdump_reads "$PDIR/gap.pcap" 2
}

# pcapng: a run with a gap and 3 frames sent again, captured on a two-queue sink:
# one interface per queue, the verdicts as frame comments on exactly the frames
# they name (tshark finds exactly the duplicates), each queue's counts in its
# statistics block.
test_pcap_pcapng_verdicts() {
	local ng want
	command -v tshark >/dev/null || t_skip "tshark not installed (apt-get install tshark)"
	lab_setup --no-ipv6 --queues 2
	pcap_dir
	start_capture_sink --capture "$PDIR/v.pcapng" --capture-what anomalies
	# 40 frames of flow 0 in order with seq 20-24 skipped, then seq 42-44 again.
	lab_exec gen python3 "$ROOT/tests/integration/forge.py" "$GEN_IF" "$GEN_MAC" "$SINK_MAC" \
		"$GEN_IP4" "$SINK_IP4" resent 40 0x5eed >/dev/null || t_fail "forge.py resent failed"
	stop_capture_sink 43
	t_expect_eq "lost" 5 "$(xs 'o["lost"]')"
	t_expect_eq "duplicates" 3 "$(xs 'o["duplicates"]')"
	t_expect_eq "captured" 5 "$(xs 'o["captured"]')"
	ng=$(python3 "$ROOT/tests/integration/pcapngtool.py" "$PDIR/v.pcapng") || t_fail "pcapng: $ng"
	t_expect_eq "interfaces, one per queue" "['$SINK_IF:q0', '$SINK_IF:q1']" \
		"$(py_ng "$ng" 'o["interfaces"]')"
	want="['gap before', 19] ['gap after', 25] ['duplicate', 42] ['duplicate', 43] ['duplicate', 44]"
	t_expect_eq "verdict comments (run 0x5eed, flow 0)" "$want" "$(py_ng "$ng" '" ".join(
	    str([c.split(" run=")[0][7:], int(c.split("seq=")[1].split(";")[0])]) for i, c in o["frames"]
	    if c and c.startswith("xdpsg: ") and " run=24301 flow=0 " in c)')"
	# The frame after the gap ends a loss episode: its comment says which numbers, and how long.
	t_expect_eq "the gap's episode" "seq 20..24 (5 frames), outage" "$(py_ng "$ng" '[c.split("loss episode: ")[1].rsplit(" ", 1)[0]
	    for i, c in o["frames"] if c and "gap after" in c][0]')"
	t_expect_eq "tshark: frame.comment contains loss episode" 1 \
		"$(tshark -r "$PDIR/v.pcapng" -Y 'frame.comment contains "loss episode"' -T fields \
			-e frame.comment 2>/dev/null | grep -c 'seq=25; loss episode: seq 20\.\.24 (5 frames)')"
	t_expect_eq "frames, every one with a comment" 5 \
		"$(py_ng "$ng" 'sum(1 for i, c in o["frames"] if c)')"
	# Each queue's statistics: what its socket received, nothing dropped.
	t_expect_eq "isb_ifrecv per queue = the socket's rx_packets" \
		"$(xs '[s["rx_packets"] for s in o["sockets"]]')" \
		"$(py_ng "$ng" '[s["ifrecv"] for s in o["stats"]]')"
	t_expect_eq "isb_ifdrop, isb_osdrop" "[0, 0]" \
		"$(py_ng "$ng" '[sum(s["ifdrop"] for s in o["stats"]), sum(s["osdrop"] for s in o["stats"])]')"
	t_expect_eq "isb_usrdeliv, all queues" 5 "$(py_ng "$ng" 'sum(s["usrdeliv"] for s in o["stats"])')"
	# What a user types: tshark lists exactly the duplicates.
	t_expect_eq "tshark: frame.comment contains duplicate" \
		"xdpsg: duplicate run=24301 flow=0 seq=42,xdpsg: duplicate run=24301 flow=0 seq=43,xdpsg: duplicate run=24301 flow=0 seq=44" \
		"$(tshark -r "$PDIR/v.pcapng" -Y 'frame.comment contains "duplicate"' -T fields \
			-e frame.comment 2>/dev/null | paste -sd,)"
	t_expect_eq "tshark: the frames' interfaces" "$SINK_IF:q$(py_ng "$ng" 'o["frames"][0][0]')" \
		"$(tshark -r "$PDIR/v.pcapng" -T fields -e frame.interface_name 2>/dev/null | sort -u)"
}

py_ng() { # JSON EXPR: EXPR over the pcapngtool output o
	json_text "$1" "$2"
}

# --capture-format overrides the name; without it the name decides; pcap stays the default.
test_pcap_capture_format() {
	local f magic name
	lab_setup --no-ipv6
	pcap_dir
	for f in "a.pcapng:0a0d0d0a" "b.pcap:4d3cb2a1" "c.cap --capture-format pcapng:0a0d0d0a" \
		"d.pcapng --capture-format pcap:4d3cb2a1"; do
		# shellcheck disable=SC2086
		start_capture_sink --capture "$PDIR"/${f%:*}
		lab_exec gen "$GEN" xsk -q -n 100 "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen failed"
		stop_capture_sink 100
		name=${f%%[ :]*}
		magic=$(od -An -tx1 -N4 "$PDIR/$name" | tr -d " ")
		t_expect_eq "first bytes of ${f%:*}" "${f##*:}" "$magic"
		expect_tcpdump_reads "$PDIR/$name" $((100 + GEN_MARKS))
	done
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
	expect_refused "--capture-format without --capture" $s "$SINK" xsk --capture-format pcapng \
		"$SINK_IF"
	expect_refused "--capture-format other" $s "$SINK" xsk --capture "$PDIR/x.pcap" \
		--capture-format pcapx "$SINK_IF"
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
	lab_bg "$XOUT" sink "$SINK" drop -j -i 100ms -d 300 --capture "$PDIR/s.pcap" --sample 100 \
		--snaplen 100 "$SINK_IF"
	XPID=$LAST_PID
	wait_ready "$XOUT" "$XPID" || t_fail "drop sink did not start: $(cat "$XOUT")"
	# One sending thread: the program runs on one CPU, so its 1-in-100 is exact.
	lab_exec gen "$GEN" kernel -q -n 100000 -r 200k "$GEN_IF" >/dev/null 2>&1 ||
		t_fail "xdp-gen failed"
	stop_capture_sink 100000 --sample 100
	t_expect_eq "dropped in the kernel, marks too" $((100000 + GEN_MARKS)) \
		"$(xs 'o["rx_packets"]')"
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

# --capture FILE replaces FILE only with a complete capture: a run refused
# after planning, or killed mid-run, leaves the old one whole.
no_temporaries() { # file
	local left
	left=$(find "$(dirname "$1")" -name "$(basename "$1").tmp.*" | wc -l)
	t_expect_eq "temporary files left beside $(basename "$1")" 0 "$left"
}

# The capture is a valid pcap of n stamped frames in order and the run's
# marks (pcapcheck.py) that tcpdump reads too.
expect_capture() { # file frames
	local res
	res=$(python3 "$ROOT/tests/integration/pcapcheck.py" "$1" 2>&1) || t_fail "pcapcheck $1: $res"
	[[ "$res" == "$2 frames ok"*", marks $GEN_MARKS" ]] ||
		t_fail "pcapcheck $1: expected $2 frames and $GEN_MARKS marks, got: $res"
	expect_tcpdump_reads "$1" $(($2 + GEN_MARKS))
}

SAMPLE_MODES=("xsk" "drop --sample 10")

test_pcap_capture_replaces_only_when_complete() {
	local f old mode hpid n
	lab_setup --no-ipv6
	pcap_dir
	f="$PDIR/c.pcap"
	start_capture_sink --capture "$f"
	lab_exec gen "$GEN" xsk -q -n 100 "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen failed"
	stop_capture_sink 100
	expect_capture "$f" 100
	no_temporaries "$f"
	old=$(md5sum <"$f")
	# Refused after planning: another sink holds the interface, which only the
	# attach finds out, after the capture was set up.
	lab_bg "$PDIR/holder.out" sink "$SINK" drop -q -d 120 "$SINK_IF"
	hpid=$LAST_PID
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "holder did not attach: $(cat "$PDIR/holder.out")"
	for mode in "${SAMPLE_MODES[@]}"; do
		# shellcheck disable=SC2086
		lab_exec sink "$SINK" $mode -q -d 1 --capture "$f" "$SINK_IF" >/dev/null 2>&1
		t_expect_eq "exit code of $mode --capture on a busy interface" 2 $?
		t_expect_eq "the old capture after a refused $mode run" "$old" "$(md5sum <"$f")"
		no_temporaries "$f"
	done
	kill -INT "$hpid"
	wait "$hpid"
	wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "holder left its program"
	# Killed (SIGKILL) mid-run, with frames captured: the old file is whole, and
	# a temporary file beside it is all the killed run leaves.
	for mode in "${SAMPLE_MODES[@]}"; do
		XOUT="$PDIR/killed.out"
		# shellcheck disable=SC2086
		lab_bg "$XOUT" sink "$SINK" $mode -j -i 100ms -d 300 --capture "$f" "$SINK_IF"
		XPID=$LAST_PID
		wait_ready "$XOUT" "$XPID" || t_fail "$mode did not start: $(cat "$XOUT")"
		lab_exec gen "$GEN" xsk -q -n 2000 "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen failed"
		wait_total "$XOUT" interval rx_packets 2000 || t_fail "$mode did not see the frames"
		kill -KILL "$XPID"
		wait "$XPID" 2>/dev/null
		t_expect_eq "the old capture after $mode was killed" "$old" "$(md5sum <"$f")"
		n=$(find "$PDIR" -name 'c.pcap.tmp.*' | wc -l)
		t_expect_eq "temporary files a killed $mode leaves" 1 "$n"
		rm -f "$f".tmp.*
		wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "$mode left its program after SIGKILL"
	done
	# A run that ends replaces it.
	start_capture_sink --capture "$f"
	lab_exec gen "$GEN" xsk -q -n 300 "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen failed"
	stop_capture_sink 300
	expect_capture "$f" 300
	no_temporaries "$f"
}

# A symlink at FILE is never written through: refused when planning, refused
# when it appears between the plan's check and the open, replaced (not
# followed) when it appears during the run.
test_pcap_capture_symlink() {
	local f victim vsum mode out
	lab_setup --no-ipv6
	pcap_dir
	f="$PDIR/c.pcap"
	victim="$PDIR/victim"
	echo "not a capture: must stay as it is" >"$victim"
	vsum=$(md5sum <"$victim")
	ln -s "$victim" "$f"
	for mode in "${SAMPLE_MODES[@]}"; do
		# shellcheck disable=SC2086
		expect_refused "$mode --capture SYMLINK" "$TESTENV" exec --name "$LAB_NAME" sink -- \
			"$SINK" $mode -d 1 --capture "$f" "$SINK_IF"
		t_expect_eq "victim after $mode was refused" "$vsum" "$(md5sum <"$victim")"
	done
	# gdb holds the sink at sink_setup(): planning (and its check) is done, the
	# capture is not opened yet. The symlink goes in there.
	if command -v gdb >/dev/null; then
		for mode in "${SAMPLE_MODES[@]}"; do
			rm -f "$f"
			# shellcheck disable=SC2086
			out=$(lab_exec sink gdb -q -batch -nx -iex 'set debuginfod enabled off' \
				-ex 'break sink_setup' -ex run -ex "shell ln -s $victim $f" \
				-ex continue --args "$SINK" $mode -q -d 1 --capture "$f" "$SINK_IF" 2>&1)
			t_expect_eq "victim after a symlink appeared before $mode opened the capture" \
				"$vsum" "$(md5sum <"$victim")"
			[[ "$out" == *"is a symlink"* && "$out" == *"exited with code 02"* ]] ||
				t_fail "$mode with a symlink swapped in: not refused: $out"
			no_temporaries "$f"
			wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "$mode left its program"
		done
	else
		echo "gdb missing: the symlink swapped in before the open is not tried"
	fi
	rm -f "$f"
	start_capture_sink --capture "$f"
	ln -s "$victim" "$f"
	lab_exec gen "$GEN" xsk -q -n 100 "$GEN_IF" >/dev/null 2>&1 || t_fail "xdp-gen failed"
	stop_capture_sink 100
	t_expect_eq "victim after a symlink appeared during the run" "$vsum" "$(md5sum <"$victim")"
	[ -L "$f" ] && t_fail "the symlink is still at $f: the capture did not replace it"
	expect_capture "$f" 100
	no_temporaries "$f"
}

pcap_seen_or_gone() { # OUT FRAMES PID
	json_total_ge "$1" interval rx_packets "$2" || t_gone "$3"
}

# A capture that cannot be written whole (the file system is full) fails the
# run, leaves the old file as it was and nothing beside it.
test_pcap_capture_disk_full() {
	local f old mode rc small
	lab_setup --no-ipv6
	pcap_dir
	# Outside PDIR: its rm -rf at cleanup runs before the unmount could.
	small=$(mktemp -d /tmp/xdpsg-full.XXXXXX)
	t_on_cleanup "umount '$small'; rmdir '$small'"
	mount -t tmpfs -o size=64k tmpfs "$small" || t_skip "cannot mount a tmpfs"
	f="$small/c.pcap"
	echo "the previous capture" >"$f"
	old=$(md5sum <"$f")
	for mode in "xsk" "drop --sample 1"; do
		XOUT="$PDIR/full.out"
		# shellcheck disable=SC2086
		lab_bg "$XOUT" sink "$SINK" $mode -j -i 100ms -d 300 --capture "$f" "$SINK_IF"
		XPID=$LAST_PID
		wait_ready "$XOUT" "$XPID" || t_fail "$mode did not start: $(cat "$XOUT")"
		# 5,000 frames of 80 bytes and more: several times what 64 KiB hold.
		lab_exec gen "$GEN" xsk -q -n 5000 -r 100k "$GEN_IF" >/dev/null 2>&1 ||
			t_fail "xdp-gen failed"
		# The sink counted them all, or ended on its own at the failed write.
		t_wait_until 10 pcap_seen_or_gone "$XOUT" 5000 "$XPID"
		kill -INT "$XPID"
		wait "$XPID"
		rc=$?
		t_expect_eq "exit code of $mode when the capture cannot be written ($(cat "$XOUT"))" \
			1 "$rc"
		grep -q "cannot write $f" "$XOUT" || t_fail "$mode did not say why: $(cat "$XOUT")"
		t_expect_eq "the old capture after $mode could not write" "$old" "$(md5sum <"$f")"
		no_temporaries "$f"
		wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "$mode left its program"
	done
}

# --stamp stamps a frame exactly when the sink will read the stamp back (one
# parsing rule, pkt_parse_udp): frames with IP lengths the sink rejects go
# unstamped and are foreign there, so no sequence number goes to a frame the
# sink cannot see and no gap appears; the generator says how many of the
# file's frames it stamped and why not the others.
test_pcap_stamp_one_rule() {
	local res total good bad other noroom passes=20 gout
	lab_setup --no-ipv6
	pcap_dir
	gout="$PDIR/gen.out"
	res=$(python3 "$PCAPTOOL" malformed "$PDIR" "$GEN_MAC" "$SINK_MAC") ||
		t_fail "pcaptool malformed: $res"
	# "18 frames: 11 stampable, 5 malformed, 1 not UDP, 1 with no room"
	read -r total good bad other noroom < <(tr -dc '0-9 ' <<<"$res" | awk '{ print $1, $2, $3, $4, $5 }')
	t_expect_ge "malformed frames in the file" 5 "$bad"
	start_capture_sink --capture "$PDIR/got.pcap"
	lab_exec gen "$GEN" xsk -j --pcap "$PDIR/malformed.pcap" --stamp -n $((total * passes)) \
		"$GEN_IF" >"$gout" 2>"$PDIR/gen.err" || t_fail "xdp-gen failed: $(cat "$PDIR/gen.err")"
	stop_capture_sink $((total * passes))
	t_expect_eq "generator: stamped" "$good" "$(json_get "$gout" summary 'o["pcap"]["stamped"]')"
	t_expect_eq "generator: unstamped, malformed" "$bad" \
		"$(json_get "$gout" summary 'o["pcap"]["unstamped"]["malformed"]')"
	t_expect_eq "generator: unstamped, not UDP" "$other" \
		"$(json_get "$gout" summary 'o["pcap"]["unstamped"]["not_udp"]')"
	t_expect_eq "generator: unstamped, no room" "$noroom" \
		"$(json_get "$gout" summary 'o["pcap"]["unstamped"]["no_room"]')"
	grep -q "$good of $total frames carry a stamp; unstamped: $other not IPv4/IPv6 UDP, $bad malformed" \
		"$PDIR/gen.err" || t_fail "no stamp report on stderr: $(cat "$PDIR/gen.err")"
	t_expect_eq "sink: delivered, marks too" $((total * passes + GEN_MARKS)) \
		"$(xs 'o["rx_packets"]')"
	t_expect_eq "sink: stamped" $((good * passes)) "$(xs 'o["stamped"]')"
	t_expect_eq "sink: foreign" $(((total - good) * passes)) "$(xs 'o["foreign"]')"
	t_expect_eq "sink: lost" 0 "$(xs 'o["lost"]')"
	t_expect_eq "sink: runs" 1 "$(xs 'len(o["runs"])')"
	t_expect_eq "sink: the run's received" $((good * passes)) "$(xs 'o["runs"][0]["received"]')"
	t_expect_eq "sink: the run's lost" 0 "$(xs 'o["runs"][0]["lost"]')"
	t_expect_eq "capture_dropped" 0 "$(xs 'o["capture_dropped"]')"
	# Malformed frames went byte for byte; stamped ones have right checksums.
	res=$(python3 "$PCAPTOOL" stamped "$PDIR/malformed.pcap" "$PDIR/got.pcap" $passes) ||
		t_fail "$res"
}

# Original timing schedules every frame in whole nanoseconds: a gap that,
# scaled by original:X, leaves that range is refused at load with one line
# naming the frame (the old code converted a double >= 2^64 to an integer,
# undefined, and sent the frame at once). The same file at full speed fits.
# sanitized: runs the ASan xdp-gen too
test_pcap_timing_enormous_gap() {
	local res msg rc g
	lab_setup --no-ipv6
	pcap_dir
	res=$(python3 "$PCAPTOOL" longgap "$PDIR" "$GEN_MAC" "$SINK_MAC") || t_fail "pcaptool: $res"
	for g in "$GEN" "$BUILD/sanitize/xdp-gen"; do
		[ -x "$g" ] || continue
		msg=$(lab_exec gen "$g" xsk -q -n 3 --pcap "$PDIR/longgap.pcap" \
			--pcap-timing original:0.001 "$GEN_IF" 2>&1 >/dev/null)
		rc=$?
		t_expect_eq "$g: exit code for an unschedulable gap" 2 "$rc"
		t_expect_eq "$g: one line ($msg)" 1 "$(printf '%s\n' "$msg" | grep -c .)"
		[[ "$msg" == *"frame 3 comes"*"cut the file before frame 3"* ]] ||
			t_fail "$g: message does not name frame 3 and the fix: $msg"
	done
	# Unscaled, a pass (about 21 years) fits: the first two frames go, 1 ms apart.
	lab_exec gen "$GEN" xsk -q -n 2 --pcap "$PDIR/longgap.pcap" --pcap-timing original \
		"$GEN_IF" >/dev/null 2>&1 || t_fail "original timing of the same file refused"
}
