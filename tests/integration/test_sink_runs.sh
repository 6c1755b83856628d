# SPDX-License-Identifier: GPL-2.0
# The sink's verdicts with traffic that is not tidy: several generators at
# once, a gap in one of them, forged frames, and a paced kernel generator run
# ten times into a sink with default options. Each generator run has its own
# books in the summary's "runs"; nothing one run (or a forger) does may show
# in another's.
# serial-file: exact books of unpaced runs; a CPU shared with another test starves the sink

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"
GEN_HOOKS="$BUILD/test-hooks/xdp-gen" # reads XDPSG_TEST_SEQ_JUMP

# Default options but the ring: 32768 entries (16384 frames, 41 ms at 400 kpps)
# let the books be tested on a busy machine that stalls the sink's thread for
# longer than the default's 4096 frames last (a CI run once lost 1681 frames
# of one run with 8192).
runs_sink() { # [options]: start xdp-sink xsk, reporting every 100 ms, once it is ready
	ROUT=$(mktemp)
	t_on_cleanup rm -f "$ROUT"
	lab_bg "$ROUT" sink "$SINK" xsk -j -i 100ms -d 300 --ring-size 32768 "$@" "$SINK_IF"
	RPID=$LAST_PID
	wait_ready "$ROUT" "$RPID" || t_fail "xsk sink did not start: $(cat "$ROUT")"
}

# runs_stop GENUINE: once the sink has delivered the generators' GENUINE
# frames and then nothing new (forged frames come on top), stop it.
runs_stop() { # [PACKETS]: wait until the sink has read that many (else: until idle)
	[ -z "${1:-}" ] || wait_total "$ROUT" interval rx_packets "$1"
	wait_idle "$ROUT"
	kill -INT "$RPID"
	wait "$RPID"
	t_expect_eq "sink exit code" 0 $?
	check_verdicts_balance "$ROUT"
	# For the log: where packets went, should an expectation fail.
	echo "sink drops: $(rs 'o["drops"]'), runs: $(rs '[(r["run"], r["received"], r["lost"]) for r in o["runs"]]')"
}

rs() { # python expression on the sink's summary
	json_get "$ROUT" summary "$1"
}

gen_json() { # OUTFILE ARGS...: a generator run in the background, JSON summary to OUTFILE
	local out=$1
	shift
	lab_bg "$out" gen "$GEN" "$@" -j -q "$GEN_IF"
}

# The sink's books of one generator run, by the run id the generator reported.
run_of() { # GEN_OUTFILE EXPR(on r)
	local id
	id=$(json_get "$1" summary 'o["run"]') || t_fail "no summary from the generator in $1: $(cat "$1")"
	rs "[r for r in o['runs'] if r['run'] == $id][0]" >/dev/null 2>&1 ||
		t_fail "the sink has no books for run $id: $(rs '[r["run"] for r in o["runs"]]')"
	rs "(lambda r: $2)([r for r in o['runs'] if r['run'] == $id][0])"
}

# Every packet the program saw, from the veth's own counters.
veth_xdp_packets() {
	ip netns exec "$SINK_NS" ethtool -S "$SINK_IF" |
		awk '/rx_queue_[0-9]+_xdp_packets:/ { n += $2 } END { print n + 0 }'
}

# One generator run's books in one look:
# "sent received lost duplicates late latency-samples(+untimed) largest-100us-burst".
PY_FUNCS+='
def run_books(gen_out, sink_out):
    g, k = last_of(gen_out, "summary"), last_of(sink_out, "summary")
    r = [r for r in k["runs"] if r["run"] == g["run"]]
    r = r[0] if r else {"received": "none", "lost": "-", "duplicates": "-", "late": "-",
                        "latency_ns": {"count": "-"}, "burst_100us_max": "-"}
    return 0, "%s %s %s %s %s %s %s\n" % (g["tx_packets"], r["received"], r["lost"],
                                         r["duplicates"], r["late"],
                                         r["latency_ns"]["count"] + r["untimed"]
                                         if "untimed" in r else "-",
                                         r["burst_100us_max"]), ""
'

run_books() { # GEN_OUTFILE
	py_call run_books "$1" "$ROUT"
}

expect_clean_run() { # GEN_OUTFILE LABEL
	local sent received lost dups late lat burst
	read -r sent received lost dups late lat burst <<<"$(run_books "$1")" ||
		t_fail "$2: no books: $(cat "$1")"
	t_expect_ge "$2: sent" 1 "$sent"
	t_expect_eq "$2: received = what its generator sent" "$sent" "$received"
	t_expect_eq "$2: lost" 0 "$lost"
	t_expect_eq "$2: duplicates" 0 "$dups"
	t_expect_eq "$2: late" 0 "$late"
	t_expect_eq "$2: latency samples" "$sent" "$lat"
}

# expect_run_books GEN_OUTFILE LABEL: one run of several, on a machine that
# may stall the sink: what it received and what it saw missing never exceed
# what its generator sent, nothing arrived twice or late, and each frame it
# received was timed.
# Frames dropped are the drops' books (per run the sink cannot know the
# last frames it never saw).
expect_run_books() {
	local sent received lost dups late lat burst
	read -r sent received lost dups late lat burst <<<"$(run_books "$1")" ||
		t_fail "$2: no books: $(cat "$1")"
	t_expect_ge "$2: sent" 1 "$sent"
	t_expect_ge "$2: received" 1 "$received"
	t_expect_le "$2: received + lost <= sent" "$sent" $((received + lost))
	t_expect_eq "$2: duplicates" 0 "$dups"
	t_expect_eq "$2: late" 0 "$late"
	t_expect_eq "$2: latency samples" "$received" "$lat"
}

test_sink_runs_concurrent_generators() {
	local ga gb gc g sent vd0 vd drops
	# Two AF_XDP generators need a transmit queue each. Modest rates and a
	# deep ring, but a busy machine may still stall the sink (a CI run
	# received 109,735 of the first run's 120,000): this is a test of the
	# books, so every frame sent must be received or dropped where named.
	lab_setup --no-ipv6 --queues 2
	runs_sink --queues all
	ga=$(mktemp) gb=$(mktemp) gc=$(mktemp)
	t_on_cleanup rm -f "$ga" "$gb" "$gc"
	vd0=$(iface_stat "$GEN_NS" "$GEN_IF" tx dropped)
	# AF_XDP at 60 kpps, live frames at 40 kpps and a second AF_XDP run at
	# 20 kpps, all at once into one sink.
	gen_json "$ga" xsk -n 120000 -r 60k
	local pa=$LAST_PID
	gen_json "$gb" kernel -n 80000 -r 40k
	local pb=$LAST_PID
	gen_json "$gc" xsk -n 40000 -r 20k --queues 1 --cpus 1
	local pc=$LAST_PID
	wait "$pa" || t_fail "xsk generator: $(cat "$ga")"
	wait "$pb" || t_fail "kernel generator: $(cat "$gb")"
	wait "$pc" || t_fail "second xsk generator: $(cat "$gc")"
	sent=0
	for g in "$ga" "$gb" "$gc"; do
		sent=$((sent + $(json_get "$g" summary 'o["tx_packets"]')))
	done
	t_expect_eq "sent" 240000 "$sent"
	# The generators' veth drops what its peer's ring cannot take (the live
	# frames generator's xdp_xmit errors among them); the rest reaches the
	# sink's program.
	vd=$(($(iface_stat "$GEN_NS" "$GEN_IF" tx dropped) - vd0))
	wait_total "$ROUT" interval xdp_packets $((sent - vd))
	runs_stop
	expect_run_books "$ga" "xsk run"
	expect_run_books "$gb" "kernel run"
	expect_run_books "$gc" "second xsk run"
	t_expect_eq "three runs" 3 "$(rs 'len(o["runs"])')"
	t_expect_eq "stamped = received by the runs" "$(rs 'o["stamped"]')" \
		"$(rs 'sum(r["received"] for r in o["runs"])')"
	t_expect_eq "foreign" 0 "$(rs 'o["foreign"]')"
	drops=$(rs 'sum(v for v in o["drops"].values() if isinstance(v, int))')
	t_expect_eq "sent = stamped + the sink's drops + the veth's" "$sent" \
		$(($(rs 'o["stamped"]') + drops + vd))
	t_expect_le "lost: only frames dropped where named" $((drops + vd)) "$(rs 'o["lost"]')"
	t_expect_eq "the program saw what the veth counted" "$(veth_xdp_packets)" \
		"$(rs 'o["xdp_packets"]')"
	t_expect_eq "unexplained" 0 "$(rs 'o["unexplained"]')"
}

test_sink_runs_gap_in_one_run() {
	local ga gb
	lab_setup --no-ipv6
	runs_sink
	ga=$(mktemp) gb=$(mktemp)
	t_on_cleanup rm -f "$ga" "$gb"
	# Run A skips 57 sequence numbers after 50,000 frames; run B is clean.
	lab_bg "$ga" gen env XDPSG_TEST_SEQ_JUMP=50000:57 "$GEN_HOOKS" xsk -n 100000 -r 60k -j -q \
		"$GEN_IF"
	local pa=$LAST_PID
	gen_json "$gb" kernel -n 80000 -r 40k
	local pb=$LAST_PID
	wait "$pa" || t_fail "generator A: $(cat "$ga")"
	wait "$pb" || t_fail "generator B: $(cat "$gb")"
	runs_stop 180000
	t_expect_eq "run A: exactly the gap is lost" 57 "$(run_of "$ga" 'r["lost"]')"
	t_expect_eq "run A: received" 100000 "$(run_of "$ga" 'r["received"]')"
	t_expect_eq "run A: duplicates" 0 "$(run_of "$ga" 'r["duplicates"]')"
	expect_clean_run "$gb" "run B"
	t_expect_eq "total lost" 57 "$(rs 'o["lost"]')"
}

# send_forged RUN SEQ TS_NS: one stamped UDP frame from the generator side.
send_forged() {
	lab_exec gen python3 - "$GEN_IF" "$GEN_MAC" "$SINK_MAC" "$GEN_IP4" "$SINK_IP4" "$@" <<'PY'
import socket, struct, sys, time
ifname, smac, dmac, sip, dip, run, seq, ts = sys.argv[1:9]
ts = time.monotonic_ns() + int(ts[4:]) if ts.startswith("now+") else \
    time.monotonic_ns() if ts == "now" else int(ts)
mac = lambda m: bytes(int(x, 16) for x in m.split(":"))
stamp = struct.pack("<HIHIIH", 0x3253, int(run, 0), 0, int(seq, 0), ts & 0xffffffff,
                    (ts >> 32) & 0xffff)
udp = struct.pack("!HHHH", 1024, 9, 8 + len(stamp), 0) + stamp
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                 socket.inet_aton(sip), socket.inet_aton(dip))
s = sum(struct.unpack("!10H", ip))
while s >> 16:
    s = (s & 0xffff) + (s >> 16)
ip = ip[:10] + struct.pack("!H", ~s & 0xffff) + ip[12:]
sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
sock.bind((ifname, 0))
sock.send(mac(dmac) + mac(smac) + b"\x08\x00" + ip + udp)
PY
}

test_sink_runs_forged_frames() {
	local ga run ts0
	lab_setup --no-ipv6
	runs_sink
	ga=$(mktemp)
	t_on_cleanup rm -f "$ga"
	ts0=$(python3 -c 'import time; print(time.monotonic_ns())')
	lab_bg "$ga" gen "$GEN" xsk -n 150000 -r 50k "$GEN_IF"
	local pa=$LAST_PID
	t_wait_for "$ga" 'run [0-9a-f]\{8\}' 10 || t_fail "no run id in the start line: $(cat "$ga")"
	run=0x$(grep -o 'run [0-9a-f]\{8\}' "$ga" | head -n 1 | cut -d' ' -f2)
	# Forged while the genuine run's frames arrive.
	wait_total "$ROUT" interval rx_packets 1000 || t_fail "the sink gets none of the run's frames"
	send_forged 0xdeadbeef 5 now || t_fail "could not send a forged frame"
	# A jump of about 2^31, sent (it says) before the run began: implausible
	# however late it arrives (a send time of 'now' is plausible once the
	# generator has been done for 2 s, which a loaded machine can make happen).
	send_forged "$run" 0x7fff0000 "$ts0"
	send_forged "$run" 1 1            # sent at 1 ns
	send_forged "$run" 2 now+10000000000 # ten seconds in the future
	wait "$pa" || t_fail "generator: $(cat "$ga")"
	runs_stop 150000
	local sel="[r for r in o['runs'] if r['run'] == $((run))][0]"
	t_expect_eq "genuine run: received what was sent" 150000 "$(rs "$sel['received']")"
	t_expect_eq "genuine run: lost" 0 "$(rs "$sel['lost']")"
	t_expect_eq "genuine run: duplicates" 0 "$(rs "$sel['duplicates']")"
	t_expect_eq "genuine run: late" 0 "$(rs "$sel['late']")"
	t_expect_eq "genuine run: latency only from genuine frames (timed or untimed)" 150000 \
		"$(rs "$sel['latency_ns']['count'] + $sel['untimed']")"
	t_expect_eq "the jump: implausible" 1 "$(rs "$sel['implausible']")"
	t_expect_eq "sent at 1 ns: stale" 1 "$(rs "$sel['ts_stale']")"
	t_expect_eq "sent in the future" 1 "$(rs "$sel['ts_future']")"
	t_expect_eq "the unknown run is a run of its own" 1 \
		"$(rs "[r for r in o['runs'] if r['run'] == 0xdeadbeef][0]['received']")"
	t_expect_eq "rejected in the totals" 1 "$(rs 'o["rejected"]["implausible"]')"
	t_expect_eq "unexplained" 0 "$(rs 'o["unexplained"]')"
}

# A paced live-frames generator into a sink with default options (but the
# ring, see runs_sink): the frames are spread evenly, so nothing is lost, ten
# runs in a row. 250,000 frames a run (0.6 s at 400 kpps, 6,250 windows of
# 100 us): the pacing repeats every batch of 64, so a longer run adds time,
# not a window of another kind.
test_sink_runs_paced_kernel_default_sink() {
	local i out n=250000
	lab_setup --no-ipv6
	runs_sink
	for i in $(seq 10); do
		out=$(mktemp)
		t_on_cleanup rm -f "$out"
		lab_exec gen "$GEN" kernel -j -q -n $n -r 400000 "$GEN_IF" >"$out" 2>&1 ||
			t_fail "run $i: $(tail -n 3 "$out")"
		eval "G$i=$out"
	done
	# Every frame accounted for: what a run did not deliver was dropped at a
	# named place, the sockets or the veth's ring (the generator's failed).
	# Nothing lost at all is what a machine with a CPU to spare sees; a busy one
	# may stall the sink's thread past its ring, and that is counted, not hidden.
	runs_stop
	t_expect_eq "ten runs" 10 "$(rs 'len(o["runs"])')"
	local missing=0 failed=0
	for i in $(seq 10); do
		eval "out=\$G$i"
		local sent received lost dups late lat burst
		read -r sent received lost dups late lat burst <<<"$(run_books "$out")"
		t_expect_eq "run $i: sent" $n "$sent"
		t_expect_le "run $i: received" $n "$received"
		t_expect_le "run $i: lost counted, at most what is missing" $((n - received)) "$lost"
		t_expect_eq "run $i: duplicates" 0 "$dups"
		t_expect_eq "run $i: latency samples = received" "$received" "$lat"
		missing=$((missing + n - received))
		failed=$((failed + $(json_get "$out" summary 'o.get("failed", 0)')))
		# The program keeps frames at least half the interval apart: at most
		# 100 us / 1.25 us = 80 in any 100 us of send time (40 when even).
		t_expect_le "run $i: most frames in 100 us" 82 "$burst"
	done
	t_expect_eq "frames not received = dropped at the sockets + failed at the veth" "$missing" \
		"$(($(rs 'o["drops"]["xsk_rx_ring_full"] + o["drops"]["xsk_fill_ring_empty"] + o["drops"]["no_socket"]') + failed))"
}

# The sink's own process in the lab's sink namespace.
sink_pid() {
	local p
	for p in $(ip netns pids "$SINK_NS"); do
		[ "$(cat /proc/"$p"/comm 2>/dev/null)" = xdp-sink ] && { echo "$p"; return 0; }
	done
	return 1
}

rss_kib() { # PID: resident set now, and its high-water mark
	awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { print r, h }' /proc/"$1"/status
}

forge() { # KIND COUNT [RUN]: forged stamps from the generator side
	lab_exec gen python3 "$ROOT/tests/integration/forge.py" "$GEN_IF" "$GEN_MAC" "$SINK_MAC" \
		"$GEN_IP4" "$SINK_IP4" "$@" >/dev/null || t_fail "forge.py $* failed"
}

# 1,000 forged frames of every kind (run ids by the hundred with impossible
# send times, new runs with plausible ones and flow 65535, random flows, and
# implausible claims on the genuine run itself), before and during a paced
# genuine run: that run's books are exact and the sink grows by far less
# than 64 MiB (before the fix: the rejected frames took every run slot and
# the genuine run was missing; each flow-65535 run cost 2.5 MiB).
test_sink_runs_forged_flood() {
	local ga run pid rss0 hwm0 rss1 hwm1 grown ts0
	lab_setup --no-ipv6
	runs_sink
	pid=$(sink_pid) || t_fail "no xdp-sink process in $SINK_NS"
	read -r rss0 hwm0 <<<"$(rss_kib "$pid")"
	forge rejected 300
	forge runs 200
	ga=$(mktemp)
	t_on_cleanup rm -f "$ga"
	ts0=$(python3 -c 'import time; print(time.monotonic_ns())')
	lab_bg "$ga" gen "$GEN" xsk -n 150001 -r 50k "$GEN_IF"
	local pa=$LAST_PID
	t_wait_for "$ga" 'run [0-9a-f]\{8\}' 10 || t_fail "no run id in the start line: $(cat "$ga")"
	run=0x$(grep -o 'run [0-9a-f]\{8\}' "$ga" | head -n 1 | cut -d' ' -f2)
	forge runs 200
	forge flows 200
	forge jumps 100 "$run" "$ts0"
	wait "$pa" || t_fail "generator: $(tail -n 3 "$ga")"
	read -r rss1 hwm1 <<<"$(rss_kib "$pid")"
	runs_stop 150001
	local sel="[r for r in o['runs'] if r['run'] == $((run))][0]"
	rs "$sel" >/dev/null 2>&1 || t_fail "the genuine run $run has no books"
	t_expect_eq "genuine run: received what was sent" 150001 "$(rs "$sel['received']")"
	t_expect_eq "genuine run: lost" 0 "$(rs "$sel['lost']")"
	t_expect_eq "genuine run: duplicates" 0 "$(rs "$sel['duplicates']")"
	t_expect_eq "genuine run: reopened" 0 "$(rs "$sel['reopened']")"
	t_expect_eq "genuine run: unplaced" 0 "$(rs "$sel['unplaced']")"
	t_expect_eq "the jumps and bad times on the genuine run: rejected" 100 \
		"$(rs "$sel['implausible'] + $sel['ts_future'] + $sel['ts_stale']")"
	t_expect_eq "the rejected runs' frames: counted" 350 \
		"$(rs 'o["rejected"]["ts_future"] + o["rejected"]["ts_stale"]')"
	t_expect_eq "nothing unplaced" 0 "$(rs 'o["rejected"]["unplaced"]')"
	t_expect_eq "every forged run reported, alone or folded" 601 \
		"$(rs 'len(o["runs"]) + o.get("runs_folded", 0)')"
	t_expect_eq "unexplained" 0 "$(rs 'o["unexplained"]')"
	grown=$(( (hwm1 > rss1 ? hwm1 : rss1) - rss0 ))
	echo "sink RSS: $rss0 KiB at the start, $rss1 KiB at the end (high-water $hwm1 KiB): grew $grown KiB"
	t_expect_le "the sink grew (KiB)" $((64 * 1024)) "$grown"
}
