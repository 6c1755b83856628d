# SPDX-License-Identifier: GPL-2.0
# xdp-gen in the lab: exact counts at xdp-sink, several workers, rate
# accuracy, valid frames on the wire (checked by an independent parser), clean
# exits and bad input, each written once and run for every mode xdp-gen lists
# (t_each_mode); then what only one mode does.

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"
GEN_HOOKS="$BUILD/test-hooks/xdp-gen" # reads XDPSG_TEST_STALL
# IPv6 frames in a lab without IPv6 (no neighbour discovery to count): the
# addresses an IPv6 lab would have.
GEN_V6=(--ipv6 --src-ip fd00:11::1 --dst-ip fd00:11::2)
# Marks a flow sends besides its data frames (docs/stamp.md): 2 start, 4 end.

# flows_of "OPTIONS": the flows of an xdp-gen run with these options (one
# per thread or stream unless --flows or a stream's flows= says otherwise).
# Asked of the test's python (py_ask), as are the clock and key readings of
# test_gen_timens_clock: a python start for each cost more than the reading.
PY_FUNCS+='
def flows_of(opts):
    import re
    opts = opts.split()
    streams = [o for i, o in enumerate(opts) if i and opts[i - 1] == "--stream"]
    def flows(spec, default):
        m = re.search(r"(?:^|,)flows=(\d+)", spec)
        return int(m.group(1)) if m else default
    workers = 1
    for i, o in enumerate(opts[:-1]):
        if o in ("-t", "--threads"):
            workers = int(opts[i + 1])
        if o == "--queues":
            workers = len(opts[i + 1].split(","))
    run_flows = next((int(opts[i + 1]) for i, o in enumerate(opts[:-1]) if o == "--flows"),
                     workers)
    return 0, "%d\n" % (sum(flows(s, run_flows) for s in streams) if streams else run_flows), ""

# The host'"'"'s CLOCK_MONOTONIC in ns, as a python the test starts would read it: the
# server runs on the host'"'"'s clock, as the test'"'"'s shell does.
def mono_ns():
    import time
    return 0, "%d\n" % time.clock_gettime_ns(time.CLOCK_MONOTONIC), ""

# The id of the stamp key in FILE (testenv/xdpsg/stamp.py), as the tools print it.
def stamp_key_id(path):
    from xdpsg import stamp
    return 0, "%s\n" % stamp.Key.from_file(path).id, ""
'

flows_of() {
	py_ask flows_of "$1"
}

# Start xdp-sink drop on the sink side, reporting every 100 ms (stop_sink
# waits on its reports); SINK_PID and SINK_OUT are set.
start_sink() { # [sink options]
	SINK_OUT=$(mktemp)
	t_on_cleanup rm -f "$SINK_OUT"
	lab_bg "$SINK_OUT" sink "$SINK" drop -j -i 100ms -d 300 "$@" "$SINK_IF"
	SINK_PID=$LAST_PID
	wait_ready "$SINK_OUT" "$SINK_PID" || t_fail "sink did not start: $(cat "$SINK_OUT")"
}

# stop_sink [EXPECTED]: once the sink has counted EXPECTED packets (without,
# once it counts nothing new), stop it and check its books. The checks after
# read its summary: a wait that ends without the count shows there.
stop_sink() {
	if [ -n "${1:-}" ]; then
		wait_total "$SINK_OUT" interval rx_packets "$1"
	else
		wait_idle "$SINK_OUT"
	fi
	kill -INT "$SINK_PID"
	wait "$SINK_PID"
	check_verdicts_balance "$SINK_OUT"
}

sink_total() {
	json_get "$SINK_OUT" summary 'o["rx_packets"]'
}

# gen_run OUT MODE OPTIONS...: xdp-gen MODE -j -q OPTIONS on the lab's
# generator interface, its output in OUT; fails the test if the run fails.
gen_run() {
	local out=$1 mode=$2
	shift 2
	lab_exec gen "$GEN" "$mode" -j -q "$@" "$GEN_IF" >"$out" 2>&1 ||
		t_fail "xdp-gen $mode $* failed: $(tail -n 5 "$out")"
}

# gen_books OUT [N [EXPR...]]: the books of the xdp-gen run in OUT, held to
# the rules for what its mode reports (by the fields of its summary, not by
# its name), and prints the frames that left for the sink, its marks
# (docs/stamp.md) with them: they take the frames' way out, and the kernel
# counts them with the frames, never in tx_packets:
# - with N: N sent, stopped by count, and 6 marks a flow (2 start, 4 end);
# - every queue's frames balance (frames_balanced), none outstanding;
# - a mode whose frames the kernel can still fail after the send
#   (transmitted): transmitted + failed = sent + marks, at least one transmitted,
#   nothing unexplained or unconfirmed; its tracepoints, where attached,
#   counted the same and no refused redirect; what left is what transmitted;
# - a mode whose frames the qdisc can refuse (refused): every frame offered
#   (attempted) and, into a fast sink, none refused; with --kernel-stats the
#   qdisc sent them all;
# - otherwise, with N, the link sent them all, and the marks (the kernel's tx counter);
# - each EXPR (python on the summary o, with n = N) is true.
# One python call for all of it (py_call, lib.sh).
PY_FUNCS+='
def gen_books(path, n="", *exprs):
    n = int(n) if n else None
    o = None
    for line in open(path):
        if line.startswith("{\"type\":\"summary\""):
            o = json.loads(line)
    if o is None:
        return 1, "", "no summary in %s: %s\n" % (path, open(path).read()[-600:])
    bad = []
    def expect(what, want, got):
        if want != got:
            bad.append("%s: expected %r, got %r" % (what, want, got))
    sent, marks = o["tx_packets"], o["marks"]
    if n is not None:
        expect("sent", n, sent)
        expect("stop reason", "count", o["stop_reason"])
        # A worker with no share of the count (more workers than frames) sends no marks.
        if n >= len(o["queues"]):
            expect("marks, %d a flow" % o["marks_per_flow"], o["marks_per_flow"] * o["flows"],
                   marks)
    for q in o["queues"]:
        if "frames_balanced" in q:
            expect("queue %s frame accounting (%s)" % (q["queue"], q.get("frame_accounting")),
                   True, q["frames_balanced"])
    expect("outstanding at exit", 0, o.get("outstanding", 0))
    left = sent + marks
    if "transmitted" in o:
        left = o["transmitted"]
        expect("transmitted + failed = sent + marks", sent + marks,
               o["transmitted"] + o["failed"])
        if sent and not o["transmitted"]:
            bad.append("nothing transmitted of %d sent" % sent)
        expect("unexplained", 0, o["unexplained"])
        expect("unconfirmed", 0, o["unconfirmed"])
        tp = o.get("tracepoints")
        if tp and "devmap_xmit_sent" in tp:  # --own-counts
            expect("tracepoint xdp_devmap_xmit sent", o["transmitted"], tp["devmap_xmit_sent"])
            expect("tracepoint xdp_devmap_xmit drops", o["failed"], tp["devmap_xmit_drops"])
        if tp:
            expect("refused redirects (the device was up)", 0, tp["redirect_err"])
    elif "refused" in o:
        expect("attempted", sent, o["attempted"])
        expect("refused by the qdisc (a fast sink, default buffers)", 0, o["refused"])
        if "kernel_stats" in o:
            expect("sent by the qdisc, marks too", sent + marks,
                   o["kernel_stats"]["qdisc"]["sent_packets"])
    elif n is not None:
        expect("sent by the link, marks too", sent + marks, o["kernel"]["link_tx_packets"])
    for e in exprs:
        try:
            ok = eval(e, {"o": o, "n": n})
        except Exception as x:
            ok = "%s: %s" % (type(x).__name__, x)
        if ok is not True:
            bad.append("%s: %s" % (e, ok))
    if bad:
        return 1, "xdp-gen %s, %s: %s\n" % (o["mode"], path, "; ".join(bad)), ""
    return 0, "%d\n" % left, ""
'

gen_books() {
	py_call gen_books "$@"
}

# --- every mode -------------------------------------------------------------

# Exactly N frames of each family leave, each accounted for by the mode's own
# books (gen_books), and the sink receives what left. A busy machine can
# overrun the peer's 256-frame ring in a mode that redirects into it (68,401
# of 1,000,000 once on CI): those frames are failed by name, so the books
# hold, not a rate. The lab's pfifo is what the qdisc mode's books read; the
# other modes go around it.
count_exact_body() { # MODE
	local mode=$1 n=300000 out total=0 left fam
	start_sink
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	for fam in ipv4 ipv6; do
		if [ $fam = ipv4 ]; then
			gen_run "$out" "$mode" -n $n --kernel-stats
		else
			gen_run "$out" "$mode" -n $n --kernel-stats "${GEN_V6[@]}" --dst-mac "$SINK_MAC"
		fi
		left=$(gen_books "$out" $n 'o["kernel_stats"]["qdisc"]["kind"] == "pfifo"') ||
			t_fail "$fam: $left"
		total=$((total + left))
	done
	stop_sink $total
	t_expect_eq "received by xdp-sink" $total "$(sink_total)"
}

test_gen_count_exact() {
	lab_setup --no-ipv6 --qdisc pfifo:1000
	t_each_mode count_exact_body
}

# Two sending workers (threads, or a queue each): an odd count splits with the
# remainder on the first worker, at full speed and paced at an odd rate, and
# the sink's two queues both see traffic (16 flows: where the kernel picks
# the transmit queue, it hashes the flow); one frame ends a two-worker run by
# itself, and 1 pps shared by two is not unlimited. Every frame that left
# arrives.
two_workers_body() { # MODE
	local mode=$1 out w n=200001 total=0 left
	w=$(gen_workers "$mode" 2)
	start_sink
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	# shellcheck disable=SC2086
	gen_run "$out" "$mode" -n $n $w --flows 16 --src-port 1000-1015
	left=$(gen_books "$out" $n 'len(o["queues"]) == 2' \
		'o["queues"][0]["tx_packets"] == (n + 1) // 2' \
		'o["queues"][1]["tx_packets"] == n // 2') || t_fail "full speed: $left"
	total=$((total + left))
	# 0.2 s of it: in kernel mode a paced run costs CPU time by the second.
	# shellcheck disable=SC2086
	gen_run "$out" "$mode" -n 20001 -r 100001 $w
	left=$(gen_books "$out" 20001 'o["queues"][0]["tx_packets"] == 10001' \
		'o["queues"][1]["tx_packets"] == 10000') || t_fail "paced: $left"
	total=$((total + left))
	# shellcheck disable=SC2086
	timeout 20 "$TESTENV" exec --name "$LAB_NAME" gen -- "$GEN" "$mode" -j -q -n 1 $w \
		"$GEN_IF" >"$out" 2>&1 || t_fail "-n 1 $w did not end by itself: $(cat "$out")"
	left=$(gen_books "$out" 1) || t_fail "one frame: $left"
	total=$((total + left))
	# shellcheck disable=SC2086
	timeout 20 "$TESTENV" exec --name "$LAB_NAME" gen -- "$GEN" "$mode" -j -q -r 1 -d 1 $w \
		"$GEN_IF" >"$out" 2>&1 || t_fail "-r 1 -d 1 $w failed: $(cat "$out")"
	left=$(gen_books "$out" "" 'o["tx_packets"] <= 2') || t_fail "1 pps: $left"
	total=$((total + left))
	stop_sink $total
	t_expect_eq "received" $total "$(sink_total)"
	t_expect_ge "sink queue 0 traffic" 1 "$(json_get "$SINK_OUT" summary 'o["queues"][0]["rx_packets"]')"
	t_expect_ge "sink queue 1 traffic" 1 "$(json_get "$SINK_OUT" summary 'o["queues"][1]["rx_packets"]')"
}

test_gen_two_workers() {
	lab_setup --no-ipv6 --queues 2 --qdisc pfifo:1000
	t_each_mode --needs 'threads|queues' two_workers_body
}

# The rate limiter: 100 kpps for the 2 s run, within 1% of 100 kpps times
# the time the run took by its own clock (a stop can land a few ms late,
# sending at the rate all the while: that is not the limiter's error), and
# every frame that left arrives.
# --rate: never faster than asked (the pacer's cap), and what the summary says
# of the rate is what its own numbers say: rate_reached exactly when the
# frames over the sending come to 99% of it. Whether this machine reaches it
# is not asserted (a busy machine may not); the pacer's exactness is
# test_pace's.
rate_body() { # MODE
	local mode=$1 out sent left ms want
	start_sink
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	gen_run "$out" "$mode" --rate 100000 -d 1
	left=$(gen_books "$out" "" 'o["stop_reason"] == "duration"') || t_fail "$left"
	sent=$(json_get "$out" summary 'o["tx_packets"]')
	ms=$(json_get "$out" summary 'int(o["send_s"] * 1000)')
	want=$((100 * ms))
	# One batch of slack: a frame due at the end of the span may leave with it.
	t_expect_le "packets at 100 kpps over $ms ms of sending" $((want * 101 / 100 + 256)) "$sent"
	t_expect_eq "rate_reached says what the numbers say" True \
		"$(json_get "$out" summary 'o["rate_reached"] == (o["tx_packets"] * 100 >= 99 * 100000 * o["send_s"] * 0.9999)')"
	t_expect_eq "rate_asked" 100000 "$(json_get "$out" summary 'o["rate_asked"]')"
	stop_sink "$left"
	t_expect_eq "received" "$left" "$(sink_total)"
}

# quiet: compares the frames sent with the time spent sending, which a shared CPU stretches
test_gen_rate() {
	lab_setup --no-ipv6 --qdisc pfifo:1000
	t_each_mode rate_body
}

# The frames every mode sends in test_gen_frames_valid, one capture each:
# "label|frames flows|pcapcheck.py options|xdp-gen options".
FRAME_VARIANTS=(
	"ipv4|200 8||--flows 8 --src-port 1000-1003 --dst-port 2000-2001"
	"ipv4 1500|200 5||-s 1500 --src-ip 10.11.0.1-10.11.0.9 --flows 5"
	"ipv6|200 4|--ipv6|--ipv6 --flows 4 --dst-port 7000-7003"
	"ipv6 random|200 16|--ipv6|--ipv6 --random --flows 16 --src-port 100-115 -s 200"
	"no stamp|200 0|--no-stamp|--no-stamp -s 42"
)

# pcap_split FILE N...: FILE's frames in pieces of N frames each, in order,
# as FILE.0, FILE.1, ...; fails unless FILE holds exactly the sum.
pcap_split() {
	python3 - "$@" <<'PY'
import struct, sys
path, sizes = sys.argv[1], [int(n) for n in sys.argv[2:]]
with open(path, "rb") as f:
    head = f.read(24)
    endian = "<" if struct.unpack("<I", head[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    recs = []
    while True:
        rec = f.read(16)
        if len(rec) < 16:
            break
        recs.append(rec + f.read(struct.unpack(endian + "IIII", rec)[2]))
if len(recs) != sum(sizes):
    sys.exit("%s: %d frames, expected %d (%s)" % (path, len(recs), sum(sizes), sizes))
for i, n in enumerate(sizes):
    with open("%s.%d" % (path, i), "wb") as f:
        f.write(head + b"".join(recs[:n]))
    recs = recs[n:]
PY
}

# What xdp-gen MODE puts on the wire, variant after variant into one capture,
# each checked by pcapcheck.py: the frames it sent, each valid, every flow
# there and, when stamped, gap-free. With two workers (where the mode has
# them) each flow stays gap-free too.
frames_valid_body() { # MODE
	local mode=$1 w v label want chk opts total=0 pcap tlog tpid i=0 res sizes=() n
	local variants=("${FRAME_VARIANTS[@]}")
	if w=$(gen_workers "$mode" 2); then
		variants+=("imix, 2 workers|3001 6||-r 20001 $w --imix --flows 6 --src-port 1000-1005")
	else
		variants+=("imix|200 3||--imix --flows 3 --src-port 5000-5002")
	fi
	for v in "${variants[@]}"; do
		IFS='|' read -r label want chk opts <<<"$v"
		# Each flow's marks with its frames, but without a stamp (pcapcheck counts them apart).
		n=$((${want% *} + (${want#* } ? GEN_MARKS_PER_FLOW * ${want#* } : 0)))
		sizes+=("$n")
		total=$((total + n))
	done
	pcap=$(mktemp --suffix .pcap) && tlog=$(mktemp) || t_fail "mktemp failed"
	# The cleanup is eval'd, and its glob expanded again then: never with an empty name,
	# which would leave '.*', the dotfiles of the test's directory.
	t_on_cleanup rm -f "$pcap" "$pcap.*" "$tlog"
	# --immediate-mode: frames reach tcpdump (and it exits after the last) at
	# once, not when a buffer block fills or times out; -s: with it the ring
	# has a slot per snap length, and 256 KiB slots leave room for 8 frames.
	# -B: the default 2 MiB ring holds about 1,000 such slots, 50 ms of the
	# 20 kpps variant: a make check run lost 98 of 4,235 frames there while
	# tcpdump waited for a CPU. 16 MiB holds the whole capture.
	lab_bg "$tlog" sink tcpdump -i "$SINK_IF" -nn -U --immediate-mode -s 2048 -B 16384 \
		-c $total -w "$pcap" udp
	tpid=$LAST_PID
	t_wait_for "$tlog" "listening on" 10 || t_fail "tcpdump did not start: $(cat "$tlog")"
	for v in "${variants[@]}"; do
		IFS='|' read -r label want chk opts <<<"$v"
		# shellcheck disable=SC2086
		lab_exec gen "$GEN" "$mode" -q -n "${want% *}" $opts "$GEN_IF" >/dev/null 2>&1 ||
			t_fail "$label: xdp-gen $mode failed"
	done
	t_wait_gone "$tpid" 5
	res=$(pcap_split "$pcap" "${sizes[@]}" 2>&1) || t_fail "$res; tcpdump: $(tail -n 3 "$tlog")"
	for v in "${variants[@]}"; do
		IFS='|' read -r label want chk opts <<<"$v"
		# shellcheck disable=SC2086
		res=$(python3 "$ROOT/tests/integration/pcapcheck.py" "$pcap.$i" $chk 2>&1) ||
			t_fail "$label: $res"
		[[ "$res" == "${want% *} frames ok, flows ${want#* },"*", marks $((${want#* } * GEN_MARKS_PER_FLOW))" ]] ||
			t_fail "$label: expected ${want% *} frames in ${want#* } flows, got: $res"
		echo "$label: $res"
		i=$((i + 1))
	done
}

# Every mode's frames are valid on the wire. xdp-sink pass gives the sink
# veth NAPI (live frames need it) and hands the frames on to tcpdump.
test_gen_frames_valid() {
	command -v tcpdump >/dev/null || t_skip "tcpdump not installed"
	lab_setup --queues 2
	SINK_OUT=$(mktemp)
	t_on_cleanup rm -f "$SINK_OUT"
	lab_bg "$SINK_OUT" sink "$SINK" pass -j -d 300 "$SINK_IF"
	wait_ready "$SINK_OUT" "$LAST_PID" || t_fail "sink did not start: $(cat "$SINK_OUT")"
	t_each_mode frames_valid_body
}

# SIGTERM mid-run: exit 0, a summary that says so, balanced books, and every
# frame that left arrives.
signals_body() { # MODE
	local mode=$1 out rc left
	start_sink
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" gen "$GEN" "$mode" -j -i 100ms -d 300 "$GEN_IF"
	wait_total "$out" interval tx_packets 1 || t_fail "xdp-gen $mode did not send: $(cat "$out")"
	kill -TERM "$LAST_PID"
	wait "$LAST_PID"
	rc=$?
	t_expect_eq "exit code after SIGTERM" 0 $rc
	left=$(gen_books "$out" "" 'o["stop_reason"] == "SIGTERM"') || t_fail "$left"
	stop_sink "$left"
	t_expect_eq "everything that left arrived" "$left" "$(sink_total)"
}

test_gen_signals() {
	lab_setup --no-ipv6 --qdisc pfifo:1000
	t_each_mode signals_body
}

gen_usage_error() { # what pattern cmd...
	local what=$1 pat=$2 msg rc lines
	shift 2
	msg=$("$@" 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "exit code for $what" 2 "$rc"
	lines=$(printf '%s\n' "$msg" | grep -c .)
	t_expect_eq "stderr lines for $what ($msg)" 1 "$lines"
	[[ "$msg" == *$pat* ]] || t_fail "$what: expected message containing '$pat', got: $msg"
}

# xdp-gen needs no bpffs: plain ip netns exec costs a tenth of testenv's exec.
# Bounded: a run that should have been refused and was not fails here, not
# at the test's timeout.
gen_ns() {
	timeout 20 ip netns exec "$GEN_NS" "$@"
}

# Bad input in every mode: exit 2, one line naming the problem. What only
# some modes take is tried where the mode takes it, and one option another
# mode has and this one lacks is refused by name.
bad_input_body() { # MODE
	local m=$1 opt
	gen_usage_error "unknown interface" "not found" gen_ns "$GEN" "$m" nosuchif0
	gen_usage_error "size above MTU" "MTU" gen_ns "$GEN" "$m" -s 1600 "$GEN_IF"
	gen_usage_error "size below headers" "minimum" gen_ns "$GEN" "$m" -s 50 "$GEN_IF"
	gen_usage_error "ipv6 too small" "minimum" gen_ns "$GEN" "$m" --ipv6 --dst-ip fd00::2 \
		--dst-mac 02:00:00:00:00:02 -s 60 "$GEN_IF"
	gen_usage_error "rate too high" "out of range" gen_ns "$GEN" "$m" -r 2G "$GEN_IF"
	gen_usage_error "count zero" "out of range" gen_ns "$GEN" "$m" -n 0 "$GEN_IF"
	gen_usage_error "batch too big" "out of range" gen_ns "$GEN" "$m" -b 4096 "$GEN_IF"
	gen_usage_error "port range reversed" "" gen_ns "$GEN" "$m" --src-port 2000-1000 "$GEN_IF"
	gen_usage_error "ip range reversed" "" gen_ns "$GEN" "$m" --src-ip 10.0.0.9-10.0.0.1 "$GEN_IF"
	gen_usage_error "bad MAC" "" gen_ns "$GEN" "$m" --dst-mac 02:00:zz:00:00:01 "$GEN_IF"
	gen_usage_error "too many flows" "--flows" gen_ns "$GEN" "$m" --flows 70000 "$GEN_IF"
	gen_usage_error "bad imix" "" gen_ns "$GEN" "$m" --imix-sizes 60:x "$GEN_IF"
	gen_usage_error "no neighbour" "neighbour" gen_ns "$GEN" "$m" --dst-ip 10.11.0.99 "$GEN_IF"
	gen_usage_error "no key file" "--stamp-key /nonexistent" gen_ns "$GEN" "$m" \
		--stamp-key /nonexistent "$GEN_IF"
	gen_usage_error "a short key file" "too short for a key" gen_ns "$GEN" "$m" \
		--stamp-key <(echo short) "$GEN_IF"
	gen_usage_error "\$XDPSG_STAMP_KEY naming no file" "\$XDPSG_STAMP_KEY /nonexistent" gen_ns \
		env XDPSG_STAMP_KEY=/nonexistent "$GEN" "$m" "$GEN_IF"
	if mode_has "$m" queues; then
		gen_usage_error "missing queue" "no queue 3" gen_ns "$GEN" "$m" --queues 3 "$GEN_IF"
	fi
	if mode_has "$m" zero-copy; then
		gen_usage_error "zero-copy on veth" "copy mode only" gen_ns "$GEN" "$m" --zero-copy \
			"$GEN_IF"
	fi
	if mode_has "$m" tx-budget; then
		gen_usage_error "tx budget below the kernel's" "--tx-budget 16 is outside" gen_ns "$GEN" \
			"$m" --tx-budget 16 "$GEN_IF"
		gen_usage_error "tx budget above the ring" "raise --ring-size" gen_ns "$GEN" "$m" \
			--tx-budget 4096 "$GEN_IF"
	fi
	if mode_has "$m" threads; then
		gen_usage_error "too many threads" "out of range" gen_ns "$GEN" "$m" -t 2000 "$GEN_IF"
	fi
	opt=$(awk -v m="$m" '$1 == m { for (i = 2; i <= NF; i++) own[$i] = 1; next }
		{ for (i = 2; i <= NF; i++) other[$i] = 1 }
		END { for (o in other) if (!(o in own)) { print o; exit } }' <<<"$T_MODES")
	if [ -n "$opt" ]; then
		gen_usage_error "--$opt, another mode's option" "--$opt is an option of" gen_ns "$GEN" "$m" \
			"--$opt" "$GEN_IF"
	fi
	if command -v setpriv >/dev/null; then
		gen_usage_error "no privileges" "CAP_" gen_ns setpriv --reuid 65534 --regid 65534 \
			--clear-groups --inh-caps=-all "$GEN" "$m" "$GEN_IF"
	fi
	return 0
}

# A sink runs: live frames need NAPI at the peer, and a refusal for that must
# not hide the one tested.
test_gen_bad_input() {
	gen_usage_error "no command" "missing command" "$GEN"
	lab_setup --no-ipv6
	start_sink
	t_modes_load xdp-gen
	t_each_mode bad_input_body
}

# capture_run PCAP N CMD...: CMD (on the generator side) while tcpdump on
# the sink side captures its first N UDP or TCP frames into PCAP.
capture_run() {
	local pcap=$1 n=$2 tlog tpid
	shift 2
	tlog=$(mktemp)
	t_on_cleanup rm -f "$tlog"
	lab_bg "$tlog" sink tcpdump -i "$SINK_IF" -Q in -nn -U --immediate-mode -B 65536 -s 2048 -c "$n" \
		-w "$pcap" udp or tcp
	tpid=$LAST_PID
	t_wait_for "$tlog" "listening on" 10 || t_fail "tcpdump did not start: $(cat "$tlog")"
	lab_exec gen "$@" || t_fail "$* failed"
	t_wait_gone "$tpid" 5 || t_fail "tcpdump did not see $n frames: $(cat "$tlog")"
}

# The stamps' clock is the generator's own CLOCK_MONOTONIC, as its process
# reads it, in every mode: xdp-gen in a time namespace a day ahead (unshare
# --time) stamps send times (unwrapped from their 24-bit ticks) that lie
# between two readings of the namespace's clock around the run. Kernel mode
# stamps the kernel's clock plus the namespace's offset: without it, each
# frame is a day off, which modulo the ticks' 2.15 s wrap is 0.29 s, and a
# window shorter than the wrap catches any such offset (stampcheck.py).
# Its streams' programs stamp the same way.
timens_body() { # MODE
	local mode=$1 pcap times out key v res peer=() n=400 host keyarg flows
	mode_has "$mode" fix-peer && peer=(--fix-peer)
	pcap=$(mktemp --suffix .pcap)
	times=$(mktemp)
	out=$(mktemp)
	key=$(mktemp)
	t_on_cleanup rm -f "$pcap" "$times" "$out" "$key"
	head -c 32 /dev/urandom | xxd -p >"$key"
	for v in "-n $n" "-n $n --stream proto=udp --stream proto=tcp,flows=2,src-port=1000-1001"; do
		# The streams sign with a key file of their own; the first run with the lab's.
		keyarg=
		[[ "$v" == *--stream* ]] && keyarg="--stamp-key $key"
		flows=$(flows_of "$v") || t_fail "flows of $v: $flows"
		for _ in 1 2 3; do
			host=$(py_ask mono_ns) || t_fail "the host's clock: $host"
			# The namespace's clock is read by a python started in it (-S: without
			# the site module, which a clock reading does not need, it starts sooner).
			# shellcheck disable=SC2016,SC2086 # the script expands in its own shell
			capture_run "$pcap" $((n + GEN_MARKS_PER_FLOW * flows)) \
				unshare --time --fork --monotonic=86400 bash -c '
				t() { python3 -S -c "import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))"; }
				out=$1
				shift
				t; "$@" >"$out" 2>&1 || exit 1; t' _ "$out" "$GEN" "$mode" -j -q $v $keyarg \
				"${peer[@]}" "$GEN_IF" >"$times"
			t_expect_ge "the namespace's clock is a day ahead" $((host + 86000000000000)) \
				"$(head -n 1 "$times")"
			# Judged only in a window shorter than the ticks' wrap (a busy machine may need another try).
			[ $(($(tail -n 1 "$times") - $(head -n 1 "$times"))) -lt 2000000000 ] && break
		done
		# Judged in the test's python (scapy imported once), whose environment may
		# predate the lab's key: the key is named.
		res=$(py_ask stampcheck "$ROOT/tests/integration/stampcheck.py" "$pcap" --data $n \
			--clock "$(head -n 1 "$times")" "$(tail -n 1 "$times")" \
			--key "$([ -n "$keyarg" ] && echo "$key" || echo "$STAMP_KEY")") ||
			t_fail "$v: $res"
		echo "$v: $res"
		t_expect_eq "the key the summary names" \
			"file $(py_ask stamp_key_id "$([ -n "$keyarg" ] && echo "$key" || echo "$XDPSG_STAMP_KEY")")" \
			"$(json_get "$out" summary 'o["stamp_key"]')"
	done
}

test_gen_timens_clock() {
	command -v tcpdump >/dev/null || t_skip "tcpdump not installed"
	command -v unshare >/dev/null || t_skip "unshare not installed"
	lab_setup --no-ipv6
	t_each_mode timens_body
}

# pcap_frames FILE: the frames in a pcap file tcpdump may still be writing
# (asked of the test's python, as a wait polls it).
PY_FUNCS+='
def pcap_frames(path):
    import struct
    try:
        d = open(path, "rb").read()
    except OSError:
        return 0, "0\n", ""
    n, off = 0, 24
    while off + 16 <= len(d):
        incl = struct.unpack_from("<I", d, off + 8)[0]
        if off + 16 + incl > len(d):
            break
        n, off = n + 1, off + 16 + incl
    return 0, "%d\n" % n, ""

# stampcheck.py run in this process: scapy is imported once a test, not once a capture.
_stampcheck = None

def stampcheck(script, *args):
    global _stampcheck
    import contextlib, importlib.util, io
    if _stampcheck is None:
        spec = importlib.util.spec_from_file_location("stampcheck", script)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _stampcheck = mod
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = _stampcheck.main(list(args))
    return rc, out.getvalue(), ""
'

pcap_frames() {
	py_ask pcap_frames "$1" 2>/dev/null || echo 0
}

pcap_has() { # FILE N
	[ "$(pcap_frames "$1")" -ge "$2" ]
}

# marks_case MODE LABEL JUDGE-OPTIONS -- XDP-GEN-OPTIONS: xdp-gen MODE -j -q
# while tcpdump captures what arrives at the sink; once every frame that left
# (gen_books: the frames and the marks) is in the capture and nothing more,
# stampcheck.py judges the marks, and the frames are the summary's
# tx_packets (unless a JUDGE-OPTION is --replay: a file's frames may carry
# no stamp). With "--bg" first among the xdp-gen options the run is stopped
# by SIGINT once it has sent.
marks_case() {
	local mode=$1 label=$2 jopts=() gopts=() pcap tlog out left res pid bg=
	shift 2
	while [ "$1" != -- ]; do
		jopts+=("$1")
		shift
	done
	shift
	[ "${1:-}" = --bg ] && bg=1 && shift
	gopts=("$@")
	pcap=$(mktemp --suffix .pcap)
	tlog=$(mktemp)
	out=$(mktemp)
	t_on_cleanup rm -f "$pcap" "$tlog" "$out"
	lab_bg "$tlog" sink tcpdump -i "$SINK_IF" -Q in -nn -U --immediate-mode -B 65536 -s 2048 \
		-w "$pcap"
	pid=$LAST_PID
	t_wait_for "$tlog" "listening on" 10 || t_fail "tcpdump did not start: $(cat "$tlog")"
	if [ -n "$bg" ]; then
		lab_bg "$out" gen "$GEN" "$mode" -j -i 100ms "${gopts[@]}" "$GEN_IF"
		wait_total "$out" interval tx_packets 100 || t_fail "$label: nothing sent: $(cat "$out")"
		kill -INT "$LAST_PID"
		wait "$LAST_PID" || t_fail "$label: exit code $? after SIGINT: $(tail -n 3 "$out")"
	else
		gen_run "$out" "$mode" "${gopts[@]}"
	fi
	left=$(gen_books "$out") || t_fail "$label: $left"
	t_wait_until 10 pcap_has "$pcap" "$left" ||
		t_fail "$label: $(pcap_frames "$pcap") frames captured of $left that left"
	kill -INT "$pid"
	t_wait_gone "$pid" 5
	t_expect_eq "$label: frames captured, no more than left" "$left" "$(pcap_frames "$pcap")"
	[[ " ${jopts[*]} " == *" --replay "* ]] ||
		jopts+=(--data "$(json_get "$out" summary 'o["tx_packets"]')")
	res=$(py_ask stampcheck "$ROOT/tests/integration/stampcheck.py" "$pcap" --marks \
		--key "$STAMP_KEY" "${jopts[@]}") || t_fail "$label: $res"
	t_expect_eq "$label: marks in the capture = the summary's" \
		"$(json_get "$out" summary 'o["marks"]')" \
		"$(json_text "$res" 'o["marks"]')"
	echo "$label: $res"
}

# The marks of every mode, on the wire: each flow's 2 start marks before its
# first frame and 4 end marks after the run's last, on the flow's own
# headers (tags, tunnel, protocol), whose counts are the flow's frames and
# the run's, under the run's key (stampcheck.py, with scapy and stamp.py);
# each stream a run of its own; none at the end with --no-end-mark; and a
# run stopped by --duration or SIGINT still ends with its end marks. The
# summary counts them apart from the frames (gen_books).
marks_body() { # MODE
	local mode=$1 w key pdir res
	w=$(gen_workers "$mode" 2)
	key=$(mktemp)
	pdir=$(mktemp -d)
	t_on_cleanup rm -rf "$key" "$pdir"
	head -c 32 /dev/urandom | xxd -p >"$key"
	# shellcheck disable=SC2086 # $w is a word list
	marks_case "$mode" "two workers, a key" --key "$key" -- -n 600 -r 100k $w --flows 6 \
		--src-port 1000-1005 --stamp-key "$key"
	marks_case "$mode" "tcp, a priority tag" -- -n 300 -r 100k --proto tcp --vlan 0 \
		--flows 3 --src-port 2000-2002
	# shellcheck disable=SC2086
	marks_case "$mode" "three streams" --runs 3 -- -n 300 -r 100k $w \
		--stream proto=udp,flows=2,src-port=1-2 --stream proto=tcp,flows=2,src-port=3-4 \
		--stream proto=icmp,encap=vxlan,flows=2
	marks_case "$mode" "no end marks" --no-end-mark -- -n 200 -r 100k --no-end-mark
	# Without stamps no marks: the frames alone leave (test_gen_frames_valid captures them).
	gen_run "$pdir/nostamp" "$mode" -n 500 --no-stamp
	res=$(gen_books "$pdir/nostamp" 500 'o["marks"] == 0' 'o["marks_per_flow"] == 0') ||
		t_fail "no stamp: $res"
	t_expect_eq "no stamp: what left" 500 "$res"
	# 1 kpps: a stop's end marks need no more frames before them, and each frame
	# captured is one more for scapy to judge.
	marks_case "$mode" "stopped by --duration" -- -r 1k -d 0.3
	marks_case "$mode" "stopped by SIGINT" -- --bg -r 1k -d 60
	if mode_has "$mode" stamp; then
		res=$(python3 "$ROOT/tests/integration/pcaptool.py" make "$pdir" "$GEN_MAC" \
			"$SINK_MAC") || t_fail "pcaptool make: $res"
		marks_case "$mode" "a replay" --replay -- --pcap "$pdir/mixed.pcap" --stamp -n 400
	fi
}

# long: every mode and end case, each a short run of its own
test_gen_marks() {
	command -v tcpdump >/dev/null || t_skip "tcpdump not installed"
	/usr/bin/python3 -c 'import scapy' 2>/dev/null || t_skip "python3-scapy not installed"
	lab_setup --no-ipv6 --queues 2 --gro on
	t_each_mode marks_body
}

# --- kernel mode (BPF_PROG_RUN live frames) ---

# The target goes down mid-run: the frames the kernel could not queue to it
# (xdp_redirect_err, never seen by the device's counters) are named, and
# the books still balance.
test_gen_kernel_target_down_midrun() {
	local out
	lab_setup --no-ipv6
	start_sink
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" gen "$GEN" kernel -j -i 100ms -d 30 --dst-mac "$SINK_MAC" --dst-ip "$SINK_IP4" \
		"$GEN_IF"
	local pid=$LAST_PID
	wait_total "$out" interval tx_packets 1 || t_fail "xdp-gen kernel did not send: $(cat "$out")"
	ip netns exec "$GEN_NS" ip link set "$GEN_IF" down
	# Down until a report names frames that found no device, then up again,
	# and sending on for two more reports.
	wait_total "$out" interval not_queued 1 ||
		t_fail "no frames not queued while the device was down: $(tail -n 2 "$out")"
	ip netns exec "$GEN_NS" ip link set "$GEN_IF" up
	wait_reports "$out" 2
	kill -INT "$pid"
	wait "$pid" || t_fail "xdp-gen kernel did not balance its books: $(tail -n 3 "$out")"
	stop_sink "$(json_get "$out" summary 'o["transmitted"]')"
	t_expect_ge "frames not queued while the device was down" 1 \
		"$(json_get "$out" summary 'o["drops"]["not_queued"]')"
	t_expect_eq "unexplained" 0 "$(json_get "$out" summary 'o["unexplained"]')"
	t_expect_eq "failed = not queued + xmit errors" \
		"$(json_get "$out" summary 'o["drops"]["not_queued"] + o["drops"]["xdp_xmit_errors"]')" \
		"$(json_get "$out" summary 'o["failed"]')"
	t_expect_eq "transmitted = received" "$(json_get "$out" summary 'o["transmitted"]')" \
		"$(sink_total)"
}

# Ctrl-Z and fg (SIGSTOP, then SIGCONT) in the middle of a kernel run, paced
# and not: the BPF_PROG_RUN call they cut short (EINTR) is no error. The run
# goes on to its count, the books hold the cut call's frames, the sink gets
# every one, and the sending span runs to the last call's end: a paced run of
# 30,000 frames at 20 kpps, catching up no faster than twice that, sends for
# 0.75 s at the least, so its span is well over 0.6 s (before, the run ended
# "stopped by error", its span that of its first call, 0.05 s).
test_gen_kernel_stopped_and_continued() {
	local out v n pid total=0 left i
	lab_setup --no-ipv6
	start_sink
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	for v in "30000 -r 20k" "5000000"; do
		n=${v%% *}
		# shellcheck disable=SC2086
		lab_bg "$out" gen "$GEN" kernel -j -i 100ms -n $v "$GEN_IF"
		pid=$LAST_PID
		wait_total "$out" interval tx_packets 1 || t_fail "-n $v: nothing sent: $(cat "$out")"
		for i in 1 2 3 4; do
			kill -STOP "$pid"
			t_nap 0.1
			kill -CONT "$pid"
			t_nap 0.1
		done
		wait "$pid" || t_fail "-n $v: exit code $?: $(tail -n 3 "$out")"
		left=$(gen_books "$out" "$n" 'o["stop_reason"] == "count"') || t_fail "-n $v: $left"
		total=$((total + left))
		[ "$n" != 30000 ] || t_expect_ge "the paced run's sending span, ms" 600 \
			"$(json_get "$out" summary 'int(o["send_s"] * 1000)')"
	done
	stop_sink "$total"
	t_expect_eq "received" "$total" "$(sink_total)"
}

rx_reached() { # NS IF MIN: has IF received MIN packets (ip -s link)?
	[ "$(iface_stat "$1" "$2" rx packets)" -ge "$3" ]
}

test_gen_kernel_peer_without_napi() {
	local msg rx0 rx1 gro out xmit n=50000
	lab_setup --no-ipv6 --gro off
	msg=$(lab_exec gen "$GEN" kernel -n 10 "$GEN_IF" 2>&1)
	t_expect_eq "exit code without NAPI at the peer" 2 $?
	[[ "$msg" == *"runs no NAPI"*"--fix-peer"* ]] || t_fail "message: $msg"
	t_expect_eq "nothing sent when refused" 0 "$(iface_stat "$GEN_NS" "$GEN_IF" tx packets)"
	rx0=$(iface_stat "$SINK_NS" "$SINK_IF" rx packets)
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_exec gen "$GEN" kernel -j -q -n $n --fix-peer "$GEN_IF" >"$out" 2>&1 ||
		t_fail "--fix-peer run failed: $(cat "$out")"
	xmit=$(json_get "$out" summary 'o["transmitted"]')
	t_expect_ge "transmitted with --fix-peer" 1 "$xmit"
	t_expect_eq "transmitted + failed with --fix-peer: the frames and their 6 marks" \
		$((n + 6)) $((xmit + $(json_get "$out" summary 'o["failed"]')))
	t_wait_until 5 rx_reached "$SINK_NS" "$SINK_IF" $((rx0 + xmit))
	rx1=$(iface_stat "$SINK_NS" "$SINK_IF" rx packets)
	t_expect_eq "received by the peer's stack" "$xmit" $((rx1 - rx0))
	gro=$(lab_exec sink ethtool -k "$SINK_IF")
	[[ "$gro" == *"generic-receive-offload: off"* ]] || t_fail "GRO not restored: $gro"
}

# Counters of the routing DUT's lab: the link counter NAME (rx or tx, as ip
# -s -s -j shows it) of a device, and a qdisc's drops.
link_count() { # NS DEV rx|tx FIELD
	json_text "$(ip -n "$1" -s -s -j link show dev "$2")" "o[0]['stats64']['$3'].get('$4', 0)"
}

qdisc_drops() { # NS DEV
	json_text "$(tc -n "$1" -s -j qdisc show dev "$2")" 'sum(q.get("drops", 0) for q in o)'
}

# dut_books: the frames that arrived at the sink veth and that the DUT's
# qdisc dropped since dut_mark.
dut_mark() {
	DUT_RX0=$(link_count "$SINK_NS" "$SINK_IF" rx packets)
	DUT_DROPS0=$(qdisc_drops "$DUT_NS" "$DUT_SINK_IF")
	DUT_OTHER0=$(link_count "$DUT_NS" "$DUT_GEN_IF" rx otherhost)
}

dut_books() {
	echo $(($(link_count "$SINK_NS" "$SINK_IF" rx packets) - DUT_RX0 + \
		$(qdisc_drops "$DUT_NS" "$DUT_SINK_IF") - DUT_DROPS0))
}

dut_books_ge() { # N
	[ "$(dut_books)" -ge "$1" ]
}

# Live frames through a routing DUT. --fix-peer turns GRO on at the DUT's
# ingress veth, whose skb then sits on the live frame's page: forwarding
# writes the DUT's Ethernet header and takes one off the TTL (fixing the
# checksum) in the page, which comes back to the generator's page pool. Every
# frame must still leave as built: all that left arrives at the sink veth or
# is dropped by the DUT's tbf, exactly (tc -s qdisc, ip -s link), and none is
# dropped at the DUT as for another host (OTHERHOST: it kept the DUT's MACs)
# or for its TTL or checksum. UDP, TCP, behind an 802.1Q priority tag (VID 0,
# which the DUT strips in place; this kernel has no VLAN devices, so a VID
# routing DUT would drop as not its own), and three streams of one flow each
# and of several. 50,000 frames a run: the pool's pages go round many times, and
# each frame forwarded costs the DUT's stack, charged to the generator.
test_gen_kernel_through_routing_dut() {
	local out v left got
	lab_setup --no-ipv6 --dut forward --dut-qdisc tbf:20mbit:8kb:10ms
	start_sink
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	for v in "" "--proto tcp" "--vlan 0" \
		"--stream proto=udp --stream proto=tcp --stream proto=udp,flows=3,src-port=1-3"; do
		dut_mark
		# shellcheck disable=SC2086 # a word list
		gen_run "$out" kernel -n 50000 --fix-peer $v
		left=$(gen_books "$out" 50000) || t_fail "${v:-udp}: $left"
		t_wait_until 10 dut_books_ge "$left"
		got=$(dut_books)
		echo "${v:-udp}: left $left, the sink's veth received + the tbf dropped $got," \
			"otherhost $(($(link_count "$DUT_NS" "$DUT_GEN_IF" rx otherhost) - DUT_OTHER0))"
		t_expect_eq "${v:-udp}: the sink veth's received + the tbf's drops = the frames and marks that left" \
			"$left" "$got"
		t_expect_eq "${v:-udp}: dropped at the DUT as for another host" 0 \
			$(($(link_count "$DUT_NS" "$DUT_GEN_IF" rx otherhost) - DUT_OTHER0))
	done
}

# Live frames: a frame above their size limit, more threads than CPUs or two
# on one CPU, and a peer whose only XDP program runs in generic (skb) mode
# (that gives it no NAPI) are refused.
test_gen_kernel_bad_input() {
	local msg out
	lab_setup --no-ipv6 --gro off
	gen_usage_error "frame too big for live frames" "live frames allow" gen_ns "$GEN" kernel \
		-s 3500 --dst-mac 02:00:00:00:00:02 lo
	gen_usage_error "too many threads" "one thread per CPU" gen_ns "$GEN" kernel -t 64 "$GEN_IF"
	gen_usage_error "threads on one CPU" "appears twice" gen_ns "$GEN" kernel -t 2 --cpus 0,0 \
		"$GEN_IF"
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" sink "$SINK" drop -m skb -j -q -d 300 "$SINK_IF"
	wait_ready "$out" "$LAST_PID" || t_fail "skb-mode sink did not start: $(cat "$out")"
	msg=$(gen_ns "$GEN" kernel -n 10 "$GEN_IF" 2>&1)
	t_expect_eq "exit code with only generic XDP at the peer" 2 $?
	[[ "$msg" == *"runs no NAPI"* ]] || t_fail "message: $msg"
}

# --- qdisc mode (AF_PACKET through the qdisc) ---

# serial: off by one frame (accepted vs the qdisc's sent + held) in a run beside another test
test_gen_qdisc_refused_is_qdisc_drops() {
	local out acc ref
	lab_setup --no-ipv6 --qdisc pfifo:200 --tso off --threaded-napi
	start_sink --cost 3000
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_exec gen "$GEN" qdisc -j -q -t 2 --sndbuf 64M -d 2 --kernel-stats "$GEN_IF" >"$out" 2>&1 ||
		t_fail "xdp-gen qdisc failed: $(cat "$out")"
	# The marks the qdisc took go its way too (the ones it refused are not in marks).
	acc=$(json_get "$out" summary 'o["tx_packets"] + o["marks"]')
	ref=$(json_get "$out" summary 'o["refused"]')
	t_expect_ge "refused under overflow" 1 "$ref"
	t_expect_eq "refused + marks refused (and sent again) = the qdisc's own drops" \
		"$(json_get "$out" summary 'o["refused"] + o["marks_refused"]')" \
		"$(json_get "$out" summary 'o["kernel_stats"]["qdisc"]["drops"]')"
	t_expect_eq "accepted + marks = the qdisc's sent + what it still holds" "$acc" \
		"$(json_get "$out" summary 'o["kernel_stats"]["qdisc"]["sent_packets"] + o["kernel_stats"]["qdisc"]["qlen"]')"
	stop_sink "$acc"
	t_expect_eq "everything accepted arrived" "$acc" "$(sink_total)"
}

test_gen_qdisc_stall_detected() {
	local out
	lab_setup --no-ipv6 --qdisc pfifo:1000
	start_sink
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	# The stall, not the 60 s, ends the run: the stop reason says so (no clock asked).
	lab_exec gen env XDPSG_TEST_STALL=1 "$GEN_HOOKS" qdisc -j -d 60 -r 1000 "$GEN_IF" >"$out" 2>&1
	t_expect_eq "exit code on a stall" 1 $?
	t_expect_eq "stop reason" stall "$(json_get "$out" summary 'o["stop_reason"]')"
	grep -q "stall: the pfifo qdisc" "$out" || t_fail "no stall message: $(cat "$out")"
}

# --- regressions found in review ---

test_gen_worker_error_fails_the_run() {
	local out rc
	lab_setup --no-ipv6 --qdisc pfifo:1000
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" gen "$GEN" qdisc -j -i 100ms -r 10000 -d 30 "$GEN_IF"
	local pid=$LAST_PID
	wait_total "$out" interval tx_packets 1 || t_fail "xdp-gen qdisc did not send: $(cat "$out")"
	# The link goes away under the sender: sendmmsg fails with ENETDOWN.
	ip -n "$GEN_NS" link set dev "$GEN_IF" down
	t_wait_gone "$pid" 5
	wait "$pid"
	rc=$?
	t_expect_eq "exit code when a sending thread fails" 1 "$rc"
	t_expect_eq "stop reason" error "$(json_get "$out" summary 'o["stop_reason"]')"
}

test_gen_xsk_paced_kicks() {
	local out sent kicks
	lab_setup --no-ipv6
	start_sink
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	# 50 kpps: 20 us between frames, so the pacer spins; it must not kick while spinning.
	lab_exec gen "$GEN" xsk -j -q -r 50000 -d 1 "$GEN_IF" >"$out" 2>&1 || t_fail "xdp-gen failed"
	sent=$(json_get "$out" summary 'o["tx_packets"]')
	kicks=$(json_get "$out" summary 'o["kicks"]')
	t_expect_le "kicks (at most one per frame sent)" "$sent" "$kicks"
	stop_sink "$sent"
}

# One xdp-gen kernel run's books are its own: all it sent is transmitted or
# failed, nothing unexplained, and it exited 0.
expect_own_books() { # out n rc
	t_expect_eq "$1: sent" "$2" "$(json_get "$1" summary 'o["tx_packets"]')"
	t_expect_eq "$1: transmitted + failed = its sent + its 6 marks" $(($2 + 6)) \
		"$(json_get "$1" summary 'o["transmitted"] + o["failed"]')"
	t_expect_eq "$1: unexplained" 0 "$(json_get "$1" summary 'o["unexplained"]')"
	t_expect_eq "$1: exit code (books balanced): $(tail -n 3 "$1")" 0 "$3"
}

# A kernel-mode start reads no kernel BTF (it was most of a start: 80-86 against
# 30-33 ms of CPU, paired), with streams (an object each) too; only --own-counts reads it, for the
# one offset its per-bulk tracepoint needs, and then counts exactly (below).
test_gen_kernel_start_reads_no_kernel_btf() {
	local args out
	lab_setup --no-ipv6
	start_sink
	for args in "-n 100" "--stream name=a,count=50 --stream name=b,count=50"; do
		# shellcheck disable=SC2086 # the options are words
		out=$(lab_exec gen "$GEN" kernel -vv $args "$GEN_IF" 2>&1) ||
			t_fail "xdp-gen kernel -vv $args failed: $(tail -n 3 <<<"$out")"
		grep -q "loading object 'xdp_gen_bpf'" <<<"$out" ||
			t_fail "xdp-gen kernel -vv $args: no libbpf debug lines to judge by"
		! grep -q 'loading kernel BTF' <<<"$out" ||
			t_fail "xdp-gen kernel $args read the kernel's BTF"
	done
	stop_sink
}

# --own-counts: two generators at once, in two labs (the same ifindex in each
# namespace), then two on one device, whose xdp_xmit counters count both: each
# run's books hold its own frames only, and the sink gets what they transmitted.
test_gen_kernel_tracepoints_per_process() {
	local a b ra rb outa outb n=2000000 lab1 if1 o x total=0
	lab_setup --no-ipv6
	lab1=$LAB_NAME
	if1=$GEN_IF
	start_sink
	outa=$(mktemp)
	outb=$(mktemp)
	t_on_cleanup rm -f "$outa" "$outb"
	lab_setup --no-ipv6
	start_sink
	"$TESTENV" exec --name "$lab1" gen -- "$GEN" kernel -j -q -n $n --own-counts "$if1" \
		>"$outa" 2>&1 &
	a=$!
	lab_exec gen "$GEN" kernel -j -q -n $n --own-counts "$GEN_IF" >"$outb" 2>&1 &
	b=$!
	wait $a
	ra=$?
	wait $b
	rb=$?
	# Sent or dropped at the peer's ring (two flat-out senders on two CPUs
	# can overrun it): n each, and each agrees with its own device.
	for o in "$outa" "$outb"; do
		t_expect_eq "$o: tracepoint count is its own, its 6 marks too" $((n + 6)) \
			"$(json_get "$o" summary 'o["tracepoints"]["devmap_xmit_sent"] + o["tracepoints"]["devmap_xmit_drops"]')"
		t_expect_eq "$o: tracepoint sent = transmitted" \
			"$(json_get "$o" summary 'o["transmitted"]')" \
			"$(json_get "$o" summary 'o["tracepoints"]["devmap_xmit_sent"]')"
	done
	expect_own_books "$outa" $n $ra
	expect_own_books "$outb" $n $rb
	total=$(json_get "$outb" summary 'o["transmitted"]')

	# Both on lab 2's device.
	lab_exec gen "$GEN" kernel -j -q -n $n --own-counts "$GEN_IF" >"$outa" 2>&1 &
	a=$!
	lab_exec gen "$GEN" kernel -j -q -n $n --own-counts "$GEN_IF" >"$outb" 2>&1 &
	b=$!
	wait $a
	ra=$?
	wait $b
	rb=$?
	expect_own_books "$outa" $n $ra
	expect_own_books "$outb" $n $rb
	for o in "$outa" "$outb"; do
		x=$(json_get "$o" summary 'o["transmitted"]')
		total=$((total + x))
		# The device's counters are shared; the run says so when it sees more than its own.
		t_expect_ge "$o: the device counted at least this run's" "$x" \
			"$(json_get "$o" summary 'o["kernel"]["xdp_xmit"]')"
	done
	stop_sink "$total"
	t_expect_eq "received by lab 2's sink = what its three runs transmitted" "$total" \
		"$(sink_total)"
}

# By default (no --own-counts, so no per-bulk tracepoint: it costs about 3%
# of the rate) the books are the device's counters, which count every sender:
# with a second sender on the device each run says its figures are shared,
# calls nothing unexplained (never negative) and exits 0. The same where the
# tracepoints cannot attach at all (the test hook stands for such a kernel).
test_gen_kernel_shared_device_default() {
	shared_device_body "$GEN"
	shared_device_body env XDPSG_TEST_NO_TRACEPOINTS=1 "$GEN_HOOKS"
}

shared_device_body() { # GENERATOR...
	local a ra rb outa outb o
	lab_setup --no-ipv6
	start_sink
	outa=$(mktemp)
	outb=$(mktemp)
	t_on_cleanup rm -f "$outa" "$outb"
	# A paced run, and once it sends a flat-out one; the first reads the
	# device's counters twice more after the second ended, then stops.
	lab_bg "$outa" gen "$@" kernel -j -i 200ms -r 100k -d 60 "$GEN_IF"
	a=$LAST_PID
	wait_total "$outa" interval tx_packets 1 || t_fail "first run did not start: $(cat "$outa")"
	lab_exec gen "$@" kernel -j -q -n 300000 "$GEN_IF" >"$outb" 2>&1
	rb=$?
	wait_reports "$outa" 2
	kill -INT "$a"
	wait "$a"
	ra=$?
	for o in "$outa" "$outb"; do
		t_expect_eq "$o: unexplained" 0 "$(json_get "$o" summary 'o["unexplained"]')"
		t_expect_eq "$o: counted by" device "$(json_get "$o" summary 'o["counted_by"]')"
		t_expect_eq "$o: another sender seen" True \
			"$(json_get "$o" summary 'o["other_senders"]')"
		t_expect_eq "$o: figures shared" True "$(json_get "$o" summary 'o["shared"]')"
		t_expect_ge "$o: the shared figure holds more than its own" \
			"$(json_get "$o" summary 'o["tx_packets"] + 1')" \
			"$(json_get "$o" summary 'o["transmitted"] + o["failed"]')"
		grep -q "another sender used $GEN_IF" "$o" || t_fail "$o: no warning: $(tail -n 2 "$o")"
	done
	t_expect_eq "exit code of the first run" 0 $ra
	t_expect_eq "exit code of the second run" 0 $rb
}

test_gen_xsk_busy_queue() {
	local out msg
	lab_setup --no-ipv6
	start_sink
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" gen "$GEN" xsk -j -i 100ms -r 1000 -d 30 "$GEN_IF"
	wait_total "$out" interval tx_packets 1 || t_fail "the first xdp-gen did not send: $(cat "$out")"
	msg=$(lab_exec gen "$GEN" xsk -q -n 10 "$GEN_IF" 2>&1)
	t_expect_eq "exit code when the queue has a socket already" 2 $?
	[[ "$msg" == *"already has an AF_XDP socket"* ]] || t_fail "message: $msg"
}

# --debug-alloc checks every frame free against a bitmap (double and foreign
# frees): with it on, the generator (built and replayed frames) and the xsk
# sink say so in their frame accounting, reject nothing and balance, and the
# counts stay exact. The link has a qdisc: without one, a veth whose peer's
# ring is full drops what AF_XDP hands it (the link's tx_dropped) and the
# socket completes those frames as sent; with one, the queue stops and the
# generator waits.
test_gen_xsk_debug_alloc() {
	local out xout pdir n=100001 res
	lab_setup --no-ipv6 --qdisc pfifo:1000
	out=$(mktemp)
	xout=$(mktemp)
	pdir=$(mktemp -d)
	t_on_cleanup rm -rf "$out" "$xout" "$pdir"
	# Paced, into a receive ring with room for 300 ms of it: a busy machine adds no drops.
	lab_bg "$xout" sink "$SINK" xsk -j -i 100ms -d 300 --debug-alloc --ring-size 32768 "$SINK_IF"
	SINK_PID=$LAST_PID
	wait_ready "$xout" "$SINK_PID" || t_fail "xsk sink did not start: $(cat "$xout")"
	lab_exec gen "$GEN" xsk -j -q -n $n -r 100000 --debug-alloc "$GEN_IF" >"$out" 2>&1 ||
		t_fail "xdp-gen --debug-alloc failed: $(cat "$out")"
	t_expect_eq "sent" $n "$(json_get "$out" summary 'o["tx_packets"]')"
	t_expect_eq "generator: link tx_dropped" 0 "$(json_get "$out" summary 'o["kernel"]["link_tx_dropped"]')"
	t_expect_eq "generator: frames balanced" True \
		"$(json_get "$out" summary 'o["queues"][0]["frames_balanced"]')"
	res=$(json_get "$out" summary 'o["queues"][0]["frame_accounting"]')
	[[ "$res" == *"debug: every free checked"* ]] ||
		t_fail "generator: --debug-alloc not in its frame accounting: $res"
	res=$(python3 "$ROOT/tests/integration/pcaptool.py" make "$pdir" "$GEN_MAC" "$SINK_MAC") ||
		t_fail "pcaptool make: $res"
	lab_exec gen "$GEN" xsk -j -q -n 401 --pcap "$pdir/mixed.pcap" --debug-alloc "$GEN_IF" \
		>"$out" 2>&1 || t_fail "xdp-gen --pcap --debug-alloc failed: $(cat "$out")"
	t_expect_eq "replayed" 401 "$(json_get "$out" summary 'o["tx_packets"]')"
	t_expect_eq "replay: frames balanced" True \
		"$(json_get "$out" summary 'o["queues"][0]["frames_balanced"]')"
	res=$(json_get "$out" summary 'o["queues"][0]["frame_accounting"]')
	[[ "$res" == *"debug: every free checked"* ]] ||
		t_fail "replay: --debug-alloc not in its frame accounting: $res"
	wait_total "$xout" interval rx_packets $((n + 6 + 401))
	kill -INT "$SINK_PID"
	wait "$SINK_PID"
	t_expect_eq "sink exit code" 0 $?
	# The built frames' run sent 6 marks; the replay without --stamp none.
	res=$(json_get "$xout" summary 'o["rx_packets"]')
	[ "$res" = $((n + 6 + 401)) ] || t_fail "sink: received $res, marks too, not" \
		"$((n + 6 + 401)); its drops: $(json_get "$xout" summary 'o["drops"]')"
	t_expect_eq "sink: stamped" $n "$(json_get "$xout" summary 'o["stamped"]')"
	t_expect_eq "sink: lost" 0 "$(json_get "$xout" summary 'o["lost"]')"
	t_expect_eq "sink: frames balanced" True \
		"$(json_get "$xout" summary 'o["sockets"][0]["frames_balanced"]')"
	res=$(json_get "$xout" summary 'o["sockets"][0]["frame_accounting"]')
	[[ "$res" == *"debug: every free checked"* ]] ||
		t_fail "sink: --debug-alloc not in its frame accounting: $res"
}
