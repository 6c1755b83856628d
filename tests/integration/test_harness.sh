# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# What the test library (lib.sh) itself promises the tests that use it.

# lab_bg empties its output file before it returns. A test that starts one tool after
# another into the same file and waits for each one's ready line must never read the
# previous tool's lines: the background shell's own '>' runs only once the child is
# scheduled, and a wait that began first saw the old ready line, then an empty file,
# and failed as "did not start" (test_sink_ops_read_data and
# test_pcap_capture_replaces_only_when_complete, 1 run in about 150).
test_harness_lab_bg_empties_a_reused_file() {
	local out i first
	lab_setup --no-ipv6
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	for i in 1 2 3 4 5; do
		echo '{"type":"ready"}' >"$out"
		lab_bg "$out" sink sleep 30
		# read, a builtin: no fork that would give the child its turn first
		first=
		IFS= read -r first <"$out"
		[ -z "$first" ] || t_fail "run $i: lab_bg returned with a line already in the file: $first"
		kill "$LAST_PID" 2>/dev/null
		wait "$LAST_PID" 2>/dev/null || true
	done
}

# The waits read a tool's lines in the test's shell, each once (jl_wait): a
# line written in two pieces counts once it is whole, a summary or a nested
# object's field of the same name counts for nothing, a file that appears late
# is read, and each wait ends as soon as its condition holds, or fails once its
# time is up.
test_harness_waits_read_lines_once() {
	local f g w
	f=$(mktemp) g=$(mktemp -u)
	t_on_cleanup rm -f "$f" "$g"
	{
		t_nap 0.1
		printf '{"type":"interval","rx_packets":5,"q":[{"rx_packets":100}]}\n' >>"$f"
		t_nap 0.1
		printf '{"type":"interval","rx_pa' >>"$f"
		t_nap 0.2
		printf 'ckets":7}\n{"type":"summary","rx_packets":1000}\n' >>"$f"
	} &
	w=$!
	wait_total "$f" interval rx_packets 12 5 || t_fail "wait_total 12: never (sum $JW_SUM)"
	wait "$w"
	t_expect_eq "the sum, each interval once" 12 "$JW_SUM"
	! wait_total "$f" interval rx_packets 13 0.2 || t_fail "wait_total 13 ended, with a sum of $JW_SUM"
	t_expect_eq "json_total agrees" 12 "$(json_total "$f" interval rx_packets)"
	! wait_reports "$f" 1 0.2 || t_fail "wait_reports 1 ended without a new report"
	# Reports that count 1 for half a second, then none, however late the wait's
	# first look is: it must wait through the 1s for a 0.
	{
		for w in 1 1 1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0; do
			t_nap 0.05
			printf '{"type":"interval","rx_packets":%d}\n' "$w" >>"$f"
		done
	} &
	w=$!
	wait_idle "$f" rx_packets 5 || t_fail "wait_idle: never ($JW_LINES lines, the last $JW_LAST)"
	kill "$w" 2>/dev/null
	wait "$w" 2>/dev/null
	t_expect_eq "idle: the last report counts none" 0 "$JW_LAST"
	t_expect_ge "idle: two reports at least after the first look" $((JW_MIN)) "$JW_LINES"
	[ "$JW_MIN" -ge 4 ] || t_fail "idle: the first look's 2 lines and 2 more, not $JW_MIN"
	{
		t_nap 0.2
		echo '{"type":"ready"}' >"$g"
	} &
	w=$!
	wait_ready "$g" "$w" 5 || t_fail "wait_ready: a file made late was not read"
	wait "$w"
	! wait_total "$g.none" interval rx_packets 1 0.1 || t_fail "wait_total on no file ended"
}

# wait_ready says no when the tool ends without its ready line, and yes when
# it wrote the line just before it ended.
test_harness_wait_ready_ended() {
	local f w
	f=$(mktemp)
	t_on_cleanup rm -f "$f"
	echo '{"type":"interval"}' >"$f"
	t_nap 0.01 &
	w=$!
	! wait_ready "$f" "$w" 2 2>/dev/null || t_fail "wait_ready: yes for a tool that ended without its line"
	: >"$f"
	echo '{"type":"ready"}' >>"$f" &
	w=$!
	wait "$w"
	wait_ready "$f" "$w" 2 || t_fail "wait_ready: no for a tool that wrote its line and ended"
}

# tests/run.sh's order under make check (SANITIZE_BUILD, root, -j > 1): the serial
# tests first, with the build as SCHED_IDLE; then the rest, the build back at
# SCHED_OTHER; the quiet tests last. A test marked both serial and sanitized fails:
# it would run before its ASan build. Run on a tree of its own holding only run.sh,
# lib.sh and one file of tests that write down where they ran.
test_harness_run_order_under_make_check() {
	local d out rc bp
	command -v chrt >/dev/null || t_skip "chrt (util-linux) not installed"
	t_mktemp d -d /tmp/xdpsg-order.XXXXXX
	t_on_cleanup rm -rf "$d"
	mkdir -p "$d/tests/integration"
	cp "$ROOT/tests/run.sh" "$d/tests/"
	cp "$ROOT/tests/integration/lib.sh" "$ROOT/tests/integration/schemacheck.py" \
		"$d/tests/integration/"
	ln -s "$ROOT/testenv" "$d/testenv"
	ln -s "$ROOT/docs" "$d/docs"
	cat >"$d/tests/integration/test_order.sh" <<-'SH'
		# shellcheck shell=bash
		order_note() { echo "$1 $(chrt -p "$SANITIZE_BUILD_PID" | sed -n 's/.*policy: //p')" >>"$ORDER_LOG"; }
		# quiet: measures nothing, but is marked so
		test_order_quiet() { order_note quiet; }
		test_order_any() { order_note any; }
		# serial: alone
		test_order_serial() { order_note serial; }
		# serial: alone
		# sanitized: and with the ASan tools
		test_order_both() { order_note both; }
	SH
	echo 0 >"$d/san.rc"
	sleep 60 &
	bp=$!
	t_on_cleanup kill "$bp"
	out=$(cd "$d" && ORDER_LOG=$d/order SANITIZE_BUILD=$d/san SANITIZE_BUILD_PID=$bp \
		TEST_TIMES='' tests/run.sh --integration -j 2 2>&1)
	rc=$?
	t_expect_eq "exit code (one test marked both)" 1 "$rc"
	[[ "$out" == *"[integration:test_order_both] FAIL (marked both '# serial:' and '# sanitized:'"* ]] ||
		t_fail "no failure for the test marked both: $out"
	t_expect_eq "where each ran, and the build's policy then" \
		"serial SCHED_IDLE|any SCHED_OTHER|quiet SCHED_OTHER" "$(paste -sd'|' "$d/order")"
	[[ "$out" == *"[phase:integration, serial, first, beside the sanitized build]"*"[phase:integration, 2 at a time]"*"[phase:integration, serial]"* ]] ||
		t_fail "phases out of order: $out"
}
