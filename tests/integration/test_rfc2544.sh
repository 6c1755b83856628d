# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The RFC 2544 runner (testenv.sh rfc2544, testenv/rfc2544.py) through the
# three DUTs of 'testenv.sh setup --dut'. Only the known-answer test checks a
# rate: a tbf on the DUT's egress makes it deterministic (50 Mbit/s of 60-byte
# frames, as tbf counts them without FCS, is 104,167 pps). The others check that
# the runner finishes, reports what it must and leaves nothing behind. Trials are
# short and searches coarse to keep each test under a minute.

# rf_run OUT ERR [runner options]: the runner with --json on a lab of its own
# (RF_NAME, made with --dut by the runner); its exit code is in RF_RC.
rf_run() {
	local out=$1 err=$2
	shift 2
	# The test's python for rf_get (lab_setup starts it in tests that make a lab): a
	# python start for each field read was most of the CPU left beside the runner's.
	json_server_start
	RF_NAME=$(printf 'r%x%03x' $(($$ % 4096)) $((RANDOM % 4096)))
	T_LABS+=("$RF_NAME")
	RF_OUT=$(mktemp -d /tmp/xdpsg-rfc2544-test.XXXXXX)
	t_on_cleanup rm -rf "$out" "$err" "$RF_OUT"
	"$TESTENV" rfc2544 --name "$RF_NAME" --json --out "$RF_OUT" "$@" >"$out" 2>"$err"
	RF_RC=$?
}

# rf_get FILE TYPE EXPR: a field of the last line of TYPE in the runner's output.
rf_get() {
	json_get "$1" "$2" "$3" || t_fail "no '$2' line in the runner's output: $(tail -n 5 "$1")"
}

rf_expect_ok() { # out err
	[ "$RF_RC" -eq 0 ] || t_fail "runner exited $RF_RC: $(tail -n 5 "$2")"
}

rf_expect_gone() { # name
	[ ! -e "$T_STATE_DIR/$1.state" ] || t_fail "lab $1 left its state file"
	! ip netns list | awk '{ print $1 }' | grep -qE "^$1-(gen|sink|dut)$" || t_fail "lab $1 left namespaces"
}

# The runner gives one line on stderr and exit 2, and makes no lab.
rf_expect_usage() { # what args...
	local what=$1 err rc name
	shift
	name=$(printf 'u%x%03x' $(($$ % 4096)) $((RANDOM % 4096)))
	T_LABS+=("$name")
	err=$("$TESTENV" rfc2544 --name "$name" "$@" 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "$what: exit code of 'rfc2544 $*'" 2 "$rc"
	t_expect_eq "$what: stderr lines of 'rfc2544 $*' (got: $err)" 1 "$(printf '%s\n' "$err" | grep -c .)"
	rf_expect_gone "$name"
}

test_rfc2544_bad_input() {
	local err rc
	rf_expect_usage "unknown DUT mode" --dut router
	rf_expect_usage "size below 64" --dut forward --sizes 63
	rf_expect_usage "size above 9018" --dut forward --sizes 64,9019
	rf_expect_usage "size not a number" --dut forward --sizes big
	rf_expect_usage "loss ratio 1" --dut forward --loss-ratio 1
	rf_expect_usage "negative loss ratio" --dut forward --loss-ratio -0.1
	rf_expect_usage "unknown test" --dut forward --tests speed
	rf_expect_usage "a lab that does not exist"
	rf_expect_usage "xdp DUT with a qdisc" --dut xdp --dut-qdisc pfifo:100
	rf_expect_usage "separate clocks in a lab it does not make" --separate-clocks
	# setup itself refuses the same.
	err=$("$TESTENV" setup --name rfx1 --dut router 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "setup --dut router: exit code" 2 "$rc"
	[[ "$err" == *"--dut"*"forward"* ]] || t_fail "setup --dut router: expected the modes in '$err'"
	rf_expect_gone rfx1
	# A lab without a DUT is refused, and stays as it was.
	lab_setup --no-ipv6
	err=$("$TESTENV" rfc2544 --name "$LAB_NAME" --sizes 64 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "rfc2544 on a lab without a DUT: exit code" 2 "$rc"
	[[ "$err" == *"no DUT"*"--dut"* ]] || t_fail "lab without a DUT: expected 'no DUT ... --dut' in '$err'"
	"$TESTENV" status --name "$LAB_NAME" >/dev/null || t_fail "the lab without a DUT must be left as it was"
}

# Interrupted while it makes its lab or runs a trial, by SIGINT or SIGTERM, the
# runner exits 130 and leaves nothing: no lab (with its DUT) and no tool.
test_rfc2544_interrupted_leaves_nothing() {
	local sig at out ns case
	out=$(mktemp -d /tmp/xdpsg-rfc2544-test.XXXXXX)
	t_on_cleanup rm -rf "$out"
	# From the lab's first record: while it is made, and mid-trial (both signals, where
	# the most is running).
	for case in INT:0 TERM:3 INT:3; do
		sig=${case%:*} at=${case#*:}
		RF_NAME=$(printf 'r%x%03x' $(($$ % 4096)) $((RANDOM % 4096)))
		T_LABS+=("$RF_NAME")
		T_INTERRUPT_FROM=$T_STATE_DIR/$RF_NAME.state \
			t_interrupt "$sig" "$at" "rf-$$-$sig-$at" "$TESTENV" rfc2544 --name "$RF_NAME" \
			--dut forward --json --out "$out" --sizes 64 --trial 5 --warmup 0.2 \
			--max-rate 20000 --tests throughput
		[ ! -e "$T_STATE_DIR/$RF_NAME.state" ] ||
			t_fail "SIG$sig at $at s left lab $RF_NAME's state file"
		for ns in gen sink dut; do
			! ip netns list | awk '{ print $1 }' | grep -qx "$RF_NAME-$ns" ||
				t_fail "SIG$sig at $at s left namespace $RF_NAME-$ns"
		done
	done
}

# The known answer: forward through tbf 50mbit, 64-byte frames: 104,167 pps,
# with the generator on a clock a day ahead of the sink's (the clocks
# matrix's "separate" row, where the kernel has time namespaces): the answer
# is the same, the latency is not figured, and the report says why. One row
# only, as it runs alone: the same clocks' latency is test_rfc2544_bridge's,
# _xdp's and _latency_floor's, and the search does not read the clocks.
# quiet: the generator must keep up with the tbf's rate
test_rfc2544_known_answer_tbf() {
	T_CLOCKS=same
	t_clocks_separable && T_CLOCKS=separate
	rf_known_answer_body
}

rf_known_answer_body() {
	local out err tp p50 ratio limited
	out=$(mktemp) err=$(mktemp)
	# shellcheck disable=SC2046 # the option is one word or none
	rf_run "$out" "$err" --dut forward --dut-qdisc tbf:50mbit:16kb:50ms --sizes 64 --trial 0.5 \
		--tests throughput,latency --max-trials 10 $(t_clocks_opt)
	rf_expect_ok "$out" "$err"
	# Where the lossy trials lost their frames: the tbf's drops are the run's QDISC_DROP causes.
	t_schema_note "$out"
	python3 - "$out" <<-'PY' || t_fail "a lossy trial does not name the tbf's drops as its causes"
		import json, sys
		bad, lossy = [], 0
		for line in open(sys.argv[1]):
		    t = json.loads(line) if line.startswith("{") else {}
		    if t.get("type") != "trial" or not t["lost"] or not t.get("dut_drops"):
		        continue
		    lossy += 1
		    q = sum(c["packets"] for c in t["lost_causes"] if c["reason"].startswith("QDISC_"))
		    text = [n for n in t["notes"] if n.startswith("lost %s: " % format(t["lost"], ","))]
		    print("trial %d: lost %d, tbf dropped %d, QDISC causes %d; %s"
		          % (t["n"], t["lost"], t["dut_drops"]["qdisc_drops"], q, text))
		    # Each drop has its own cause: the tbf's, and the sink's own when a busy
		    # machine stalls its thread (XSK_*), named as such.
		    tbf = t["dut_drops"]["qdisc_drops"]
		    if q != tbf or not text or (tbf and "QDISC_DROP" not in text[0]) \
		            or not text[0].endswith("unexplained 0"):
		        bad.append(t["n"])
		print("%d lossy trials checked" % lossy)
		sys.exit(1 if bad else 0)
	PY
	tp=$(rf_get "$out" throughput 'o["throughput_pps"]')
	ratio=$(python3 -c "print('%.4f' % ($tp / (50e6 / (60 * 8))))")
	# The answer is only known when the tbf is the limit: a machine so busy that the
	# generator (or the sink) cannot go past 104,167 pps measures itself, and the
	# runner says so (limited_by generator or sink) instead of blaming the DUT.
	# The tbf passes 0.91 of its nominal rate here (94-95 kpps at 50mbit, 189-192 at
	# 100mbit, measured), and over veth the generator feels its queue through its
	# socket, so the runner often names the generator for it. Hence 0.85, not 0.90
	# (at 100mbit the search's step below, 187,205 pps, was 0.899: a pass or a skip by
	# one step), and 50mbit, not 100: at 100mbit the sink, verifying with
	# --drop-causes, reached only 176 kpps in a clean-clone run, alone on the machine.
	limited=$(rf_get "$out" throughput 'o["limited_by"]')
	if [ "$limited" != dut ] && python3 -c "import sys; sys.exit(0 if $ratio < 0.85 else 1)"; then
		t_skip "the $limited reached only $tp pps here (machine busy?), below the tbf's 104,167: no known answer to check"
	fi
	python3 -c "import sys; sys.exit(0 if 0.85 <= $ratio <= 1.03 else 1)" ||
		t_fail "throughput $tp pps is $ratio of 104,167 pps; expected within [0.85, 1.03]: $(grep -c '"trial"' "$out") trials"
	t_expect_eq "wire size" 60 "$(rf_get "$out" throughput 'o["wire_size"]')"
	if [ -z "$(t_clocks_opt)" ]; then
		p50=$(rf_get "$out" throughput 'o["latency_ns"]["p50"]')
		t_expect_ge "latency p50 (ns) reported" 1 "$p50"
		t_expect_ge "latency p99.9 reported" 1 "$(rf_get "$out" throughput 'o["latency_ns"]["p999"]')"
	else
		# The runner made the lab with --separate-clocks: the generator a day ahead.
		t_expect_eq "no latency across clocks" None "$(rf_get "$out" throughput 'o["latency_ns"]')"
		rf_get "$out" latency 'o["dut"]["latency_note"]' | grep -q "CLOCK_MONOTONIC (86,400 s from this host's)" ||
			t_fail "the latency's note: $(rf_get "$out" latency 'o["dut"]')"
		rf_get "$out" latency 'o["floor"]["latency_note"]' | grep -q "CLOCK_MONOTONIC (86,400 s from this host's)" ||
			t_fail "the floor's note: $(rf_get "$out" latency 'o["floor"]')"
		t_has "$RF_OUT/rfc2544.md" "the DUT path's latency: not figured: the generator stamped its own host's CLOCK_MONOTONIC" ||
			t_fail "rfc2544.md does not say why there is no latency: $(cat "$RF_OUT/rfc2544.md")"
	fi
	t_expect_ge "trials" 2 "$(rf_get "$out" summary 'o["trials"]')"
	t_expect_eq "search steps = trials" "$(rf_get "$out" throughput 'o["trials"]')" \
		"$(rf_get "$out" throughput 'len(o["steps"])')"
	[ -s "$RF_OUT/rfc2544.md" ] || t_fail "no rfc2544.md in $RF_OUT"
	[ -s "$RF_OUT/rfc2544.json" ] || t_fail "no rfc2544.json in $RF_OUT"
	if command -v gnuplot >/dev/null; then
		[ -s "$RF_OUT/rfc2544-throughput.png" ] || t_fail "no rfc2544-throughput.png in $RF_OUT"
	fi
	rf_expect_gone "$RF_NAME"
}

# bridge and xdp: the runner finishes and reports every test. At a capped rate: no
# rate is judged here (the DUT-limited search is test_rfc2544_known_answer_tbf's),
# and unpaced trials only moved more frames, the generator's and sink's CPU time.
rf_dut_reports() { # mode
	local out err
	out=$(mktemp) err=$(mktemp)
	rf_run "$out" "$err" --dut "$1" --sizes 64 --trial 0.3 --warmup 0.1 --max-trials 3 \
		--max-rate 20000 --resolution 0.05 --loss-steps 2 --b2b-start 1000 --b2b-max 2000 \
		--b2b-steps 1
	rf_expect_ok "$out" "$err"
	# No rate is asserted: on a busy machine even the sink may be the limit.
	t_expect_ge "throughput trials" 1 "$(rf_get "$out" throughput 'o["trials"]')"
	t_expect_eq "what limited the throughput is named" True \
		"$(rf_get "$out" throughput 'o["limited_by"] in ("dut", "generator", "sink", "max-rate")')"
	t_expect_eq "latency reported with a throughput" True \
		"$(rf_get "$out" throughput 'o["throughput_pps"] == 0 or o["latency_ns"]["p50"] > 0')"
	t_expect_eq "DUT mode in the summary" "$1" "$(rf_get "$out" summary 'o["dut"]["mode"]')"
	t_expect_ge "loss rows" 1 "$(rf_get "$out" summary 'len(o["loss"][0]["rows"])')"
	t_expect_ge "back-to-back trials" 1 "$(rf_get "$out" b2b 'o["trials"]')"
	t_expect_eq "books per run or totals" True "$(rf_get "$out" summary 'o["books"] in ("per run", "sink totals")')"
	rf_expect_gone "$RF_NAME"
}

# long: a search of several trials through a bridge DUT
test_rfc2544_bridge() {
	rf_dut_reports bridge
}

# long: a search of several trials through an XDP DUT
test_rfc2544_xdp() {
	[ -x "$BUILD/xdp-sink" ] || t_skip "xdp-sink not built"
	rf_dut_reports xdp
}

# Latency from trials of its own with the sink at its lowest floor (the kernel's
# receive time), and the instrument's floor (generator straight into the sink, same size and rate)
# beside it, in JSON and in the report. No time is asserted.
test_rfc2544_latency_floor() {
	local out err tp
	[ -x "$BUILD/xdp-sink" ] || t_skip "xdp-sink not built"
	out=$(mktemp) err=$(mktemp)
	rf_run "$out" "$err" --dut xdp --sizes 64 --trial 0.5 --warmup 0.2 --max-trials 4 \
		--max-rate 20000 --resolution 0.05 --tests throughput,latency --no-plot
	rf_expect_ok "$out" "$err"
	tp=$(rf_get "$out" throughput 'o["throughput_pps"]')
	[ "$tp" != 0 ] || t_skip "no rate passed here (machine busy?): no latency trial to check"
	t_expect_eq "latency trials timed at the kernel's receive time, floor too" True \
		"$(rf_get "$out" latency 'o["dut"]["latency_basis"] == o["floor"]["latency_basis"] == "kernel receive time"')"
	t_expect_eq "the floor measured at the throughput rate, in a run of its own" True \
		"$(rf_get "$out" latency 'o["floor_latency_ns"]["p50"] > 0 and o["rate_pps"] == '"$tp"' and o["floor"]["run"] != o["dut"]["run"]')"
	t_expect_eq "the summary's latency is the latency trial's" True \
		"$(rf_get "$out" summary 'o["throughput"][0]["latency_ns"] == o["throughput"][0]["latency"]["dut"]["latency_ns"]')"
	grep -q 'instrument floor (generator -> sink, no DUT)' "$RF_OUT/rfc2544.md" ||
		t_fail "rfc2544.md does not print the floor: $(grep -i latency "$RF_OUT/rfc2544.md")"
	rf_expect_gone "$RF_NAME"
}

# Any interface pair: a lab made by hand, the runner given namespaces and
# interfaces; at a rate well below anything the lab drops, it passes at the
# maximum and says so.
# quiet: passing at the maximum needs a DUT and a sink that keep up
test_rfc2544_any_pair() {
	local out err res
	lab_setup --dut forward --no-ipv6
	out=$(mktemp) err=$(mktemp) res=$(mktemp -d)
	t_on_cleanup rm -rf "$out" "$err" "$res"
	python3 "$ROOT/testenv/rfc2544.py" --gen-if "$GEN_IF" --gen-ns "$GEN_NS" --sink-if "$SINK_IF" \
		--sink-ns "$SINK_NS" --sizes 128 --trial 0.5 --warmup 0.2 --max-rate 20000 \
		--tests throughput --json --no-plot --out "$res" >"$out" 2>"$err" ||
		t_fail "runner on $GEN_IF -> $SINK_IF failed: $(tail -n 5 "$err")"
	t_expect_eq "sent = received" "$(rf_get "$out" trial 'o["sent"]')" "$(rf_get "$out" trial 'o["received"]')"
	# On a busy machine the generator may fall short of even 20,000 pps: then the
	# search goes on below what it reached and must blame the generator, never the DUT.
	case $(rf_get "$out" throughput 'o["steps"][0]["result"]') in
	pass)
		t_expect_eq "throughput at the maximum" 20000 "$(rf_get "$out" throughput 'o["throughput_pps"]')"
		t_expect_eq "limited by" max-rate "$(rf_get "$out" throughput 'o["limited_by"]')"
		t_expect_eq "one trial" 1 "$(rf_get "$out" throughput 'o["trials"]')"
		;;
	shortfall)
		t_expect_eq "limited by" generator "$(rf_get "$out" throughput 'o["limited_by"]')"
		t_expect_eq "throughput within what the generator reached" True "$(rf_get "$out" throughput \
			'0 < o["throughput_pps"] <= o["steps"][0]["achieved_pps"]')"
		;;
	*) t_fail "the first trial at 20,000 pps through an idle DUT: $(rf_get "$out" throughput 'o["steps"][0]')" ;;
	esac
	t_expect_eq "wire size" 124 "$(rf_get "$out" trial 'o["wire_size"]')"
}

# --json is progress as well as a result: each trial's record is printed when
# the trial ends, while the run goes on, and the summary is the last record.
test_rfc2544_json_progress() {
	local out err res pid
	lab_setup --dut forward --no-ipv6
	out=$(mktemp) err=$(mktemp) res=$(mktemp -d)
	t_on_cleanup rm -rf "$out" "$err" "$res"
	# One throughput trial (the maximum passes), then three loss steps.
	python3 "$ROOT/testenv/rfc2544.py" --gen-if "$GEN_IF" --gen-ns "$GEN_NS" --sink-if "$SINK_IF" \
		--sink-ns "$SINK_NS" --sizes 128 --trial 0.5 --warmup 0.2 --max-rate 5000 \
		--tests throughput,loss --loss-steps 3 --json --no-plot --out "$res" \
		>"$out" 2>"$err" &
	pid=$!
	T_PIDS+=("$pid")
	t_wait_for "$out" '^{"type": "trial"' 60 || t_fail "no trial record: $(tail -n 5 "$err")"
	# Three more trials follow the first: the runner cannot have ended yet.
	t_gone "$pid" && t_fail "the first trial's record came only at the end: $(cat "$out")"
	wait "$pid" || t_fail "runner failed: $(tail -n 5 "$err")"
	t_schema_note "$out"
	t_expect_eq "the last record" summary \
		"$(json_text "$(tail -n 1 "$out")" 'o["type"]')"
	t_expect_eq "one trial record per trial" "$(rf_get "$out" summary 'o["trials"]')" \
		"$(grep -c '^{"type": "trial"' "$out")"
	t_expect_eq "trial records in order" True "$(python3 -c '
import json, sys
n = [json.loads(l)["n"] for l in open(sys.argv[1]) if l.startswith("{\"type\": \"trial\"")]
print(n == list(range(1, len(n) + 1)))' "$out")"
}
