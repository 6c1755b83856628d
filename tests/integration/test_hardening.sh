# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Regressions of the hardening review (issue 15): names never cut short, output
# files that survive a failed run and never follow a symlink, gnuplot never runs
# what a results file says, ethtool counters that change size, deadlines that
# cannot wrap, a stop that wakes a sender blocked behind a qdisc, nothing left
# attached by a killed tool, and no test hooks in the production binaries.

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"
GEN_HOOKS="$BUILD/test-hooks/xdp-gen"
ASAN_SINK="$BUILD/sanitize/xdp-sink"
ASAN_GEN="$BUILD/sanitize/xdp-gen"

# hd_stop_within PID SECONDS: SIGINT, then the process must be gone in time.
# Returns the exit code; fails the test if it hangs.
hd_stop_within() {
	local pid=$1 limit=$2
	kill -INT "$pid" 2>/dev/null
	t_wait_gone "$pid" "$limit" || t_fail "pid $pid still running ${limit}s after SIGINT (hang on stop)"
	wait "$pid"
}

hd_py() { # FILE CLASS: one class of a tests/py unittest file
	local out rc
	out=$(cd "$ROOT" && ROOT=$ROOT python3 -B "$ROOT/tests/py/$1" -v "$2" 2>&1)
	rc=$?
	[ $rc -eq 0 ] || t_fail "tests/py/$1 $2: expected exit 0, got $rc:"$'\n'"$(tail -n 30 <<<"$out")"
	grep -qE '^Ran [1-9][0-9]* tests? in' <<<"$out" ||
		t_fail "tests/py/$1 $2: expected tests to run, got: $(tail -n 3 <<<"$out")"
}

# 1. A name longer than IFNAMSIZ - 1 is refused, never cut to the 15-character
# prefix that names another interface (here a veth called exactly that), in
# every mode of both tools (a mode with --to: there).
HD_LONG=abcdefghijklmnopqrstuvwxyz

long_ifname_sink_body() { # MODE
	local msg
	if mode_has "$1" to xdp-sink; then
		msg=$(lab_exec sink "$SINK" "$1" -m skb -q -d 1 --to "$HD_LONG" "$SINK_IF" 2>&1)
		t_expect_eq "xdp-sink $1 --to exit code with a 26-character name" 2 $?
	else
		msg=$(lab_exec sink "$SINK" "$1" -m skb -q -d 1 "$HD_LONG" 2>&1)
		t_expect_eq "xdp-sink $1 exit code with a 26-character name" 2 $?
	fi
	[[ "$msg" == *"'$HD_LONG' is too long"* ]] || t_fail "xdp-sink $1 message: $msg"
}

long_ifname_gen_body() { # MODE
	local msg
	msg=$(lab_exec gen "$GEN" "$1" -q -n 10 "$HD_LONG" 2>&1)
	t_expect_eq "xdp-gen $1 exit code with a 26-character name" 2 $?
	[[ "$msg" == *"too long"* ]] || t_fail "xdp-gen $1 message: $msg"
}

test_hardening_long_ifname_refused() {
	local short=abcdefghijklmno msg ns rc=0
	lab_setup --no-ipv6
	for ns in "$SINK_NS" "$GEN_NS"; do
		ip -n "$ns" link add "$short" type veth peer name "${LAB_NAME}d" ||
			t_fail "cannot add $short in $ns"
		ip -n "$ns" link set "$short" up
		ip -n "$ns" link set "${LAB_NAME}d" up
	done
	t_each_mode --tool xdp-sink --needs xdp-mode long_ifname_sink_body || rc=1
	t_each_mode long_ifname_gen_body || rc=1
	msg=$(lab_exec gen "$BUILD/tests/pktsend" --dst-mac 02:00:00:00:00:02 -n 1 "$HD_LONG" 2>&1)
	t_expect_eq "pktsend exit code" 2 $?
	[[ "$msg" == *"too long"* ]] || t_fail "pktsend message: $msg"
	msg=$(lab_exec gen "$BUILD/tests/xsk-probe" "$HD_LONG" 2>&1)
	t_expect_eq "xsk-probe exit code" 2 $?
	[[ "$msg" == *"too long"* ]] || t_fail "xsk-probe message: $msg"
	wait_xdp "$SINK_NS" "$short" none || t_fail "a program was attached to $short"
	t_expect_eq "packets sent on $short" 0 "$(iface_stat "$GEN_NS" "$short" tx packets)"
	return $rc
}

# 2. --hist: a run that fails leaves the file as it was; a symlink is refused;
# a run that works replaces the file.
test_hardening_hist_file() {
	local dir msg
	lab_setup --no-ipv6
	dir=$(mktemp -d)
	t_on_cleanup rm -rf "$dir"
	echo "precious" >"$dir/h.csv"
	msg=$(lab_exec sink "$SINK" xsk --hist "$dir/h.csv" --queues 5 -d 1 "$SINK_IF" 2>&1)
	t_expect_eq "exit code with a queue that does not exist" 2 $?
	t_expect_eq "--hist file after a failed run" precious "$(cat "$dir/h.csv")"
	echo "target" >"$dir/target"
	ln -s "$dir/target" "$dir/link.csv"
	msg=$(lab_exec sink "$SINK" xsk --hist "$dir/link.csv" -d 1 "$SINK_IF" 2>&1)
	t_expect_eq "exit code for a symlinked --hist" 2 $?
	[[ "$msg" == *symlink* ]] || t_fail "symlink message: $msg"
	t_expect_eq "symlink target" target "$(cat "$dir/target")"
	wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "a refused run left a program attached"
	lab_exec sink "$SINK" xsk --hist "$dir/h.csv" -q -d 500ms "$SINK_IF" >/dev/null 2>&1 ||
		t_fail "a short xsk run with --hist failed"
	grep -q precious "$dir/h.csv" && t_fail "--hist was not rewritten by a good run"
	[ -s "$dir/h.csv" ] || t_fail "--hist is empty after a good run"
	t_expect_eq "files in the --hist directory" 3 "$(find "$dir" -mindepth 1 | wc -l)"
}

# 2. The Python writers (bench results, plots, the lab record) and deps.sh.
test_hardening_script_outputs() {
	local fake log out
	hd_py test_outputs.py WriteFile
	hd_py test_xdpsg_lab.py RecordNoFollow
	# deps.sh writes its apt log to a new file, never to a fixed name in /tmp.
	fake=$(mktemp -d)
	t_on_cleanup rm -rf "$fake"
	printf '#!/bin/sh\necho "E: apt-get stub: $*"\n[ "$1" = update ] && exit 0\nexit 100\n' >"$fake/apt-get"
	chmod +x "$fake/apt-get"
	log=/tmp/xdpsg-deps.log
	if [ ! -e "$log" ] && [ ! -L "$log" ]; then
		echo keep >"$fake/target"
		ln -s "$fake/target" "$log"
		t_on_cleanup rm -f "$log"
	fi
	out=$(PATH="$fake:$PATH" XDPSG_DEPS_EXTRA=xdpsg-no-such-package "$ROOT/scripts/deps.sh" 2>&1)
	t_expect_eq "deps.sh exit code when apt-get fails" 1 $?
	[[ "$out" == *"see /tmp/xdpsg-deps."*".log"* ]] || t_fail "deps.sh names its log: $out"
	[ -e "$fake/target" ] && t_expect_eq "symlink target of the old fixed log" keep "$(cat "$fake/target")"
	rm -f /tmp/xdpsg-deps.*.log
	return 0
}

# 3. bench/plot: strings of a results file never run as gnuplot commands.
test_hardening_plot_escaping() {
	hd_py test_outputs.py PlotEscaping
}

# 4. The ethtool counter count follows the channel count on veth: both tools
# (the ASan build) read --kernel-stats while it changes, and must neither overrun
# a buffer (older kernels copy out the new count whatever was asked) nor read
# stale or empty counters (this one answers a stale count with none).
# sanitized: runs the ASan tools
test_hardening_ethtool_count_changes() {
	local gout sout gpid spid i rc
	[ -x "$ASAN_SINK" ] && [ -x "$ASAN_GEN" ] ||
		t_fail "the ASan tools are not built; run 'make SANITIZE=1 tools' (tests/run.sh builds them for build/)"
	lab_setup --no-ipv6 --queues 4
	lab_exec sink ethtool -L "$SINK_IF" rx 1 tx 1 || t_fail "ethtool -L on $SINK_IF"
	lab_exec gen ethtool -L "$GEN_IF" rx 1 tx 1 || t_fail "ethtool -L on $GEN_IF"
	gout=$(mktemp) sout=$(mktemp)
	t_on_cleanup rm -f "$gout" "$sout"
	lab_bg "$sout" sink env ASAN_OPTIONS=detect_leaks=0 "$ASAN_SINK" drop -j -i 100ms \
		--kernel-stats -d 120 "$SINK_IF"
	spid=$LAST_PID
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "sink did not attach: $(cat "$sout")"
	lab_bg "$gout" gen env ASAN_OPTIONS=detect_leaks=0 "$ASAN_GEN" qdisc -j -i 100ms \
		--kernel-stats -r 1000 -d 120 "$GEN_IF"
	gpid=$LAST_PID
	wait_total "$gout" interval tx_packets 1 || t_fail "xdp-gen did not send: $(tail -n 20 "$gout")"
	for i in 4 2 4; do
		# XDP on the sink side needs its rx queues >= the generator side's tx
		# queues: grow the sink side first, shrink it last.
		if [ "$i" -eq 4 ]; then
			lab_exec sink ethtool -L "$SINK_IF" rx "$i" tx "$i" || t_fail "ethtool -L $SINK_IF $i"
			lab_exec gen ethtool -L "$GEN_IF" rx "$i" tx "$i" || t_fail "ethtool -L $GEN_IF $i"
		else
			lab_exec gen ethtool -L "$GEN_IF" rx "$i" tx "$i" || t_fail "ethtool -L $GEN_IF $i"
			lab_exec sink ethtool -L "$SINK_IF" rx "$i" tx "$i" || t_fail "ethtool -L $SINK_IF $i"
		fi
		# Each tool has read the counters twice since the change (or died).
		wait_reports "$sout" 2
		wait_reports "$gout" 2
		kill -0 "$spid" 2>/dev/null || t_fail "xdp-sink died with $i channels: $(tail -n 20 "$sout")"
		kill -0 "$gpid" 2>/dev/null || t_fail "xdp-gen died with $i channels: $(tail -n 20 "$gout")"
	done
	# Both read the counters of the 4 queues there are now, and the sink's
	# still move (this kernel answers a stale count with no counters at all).
	t_expect_eq "veth queues the sink reads" 4 \
		"$(json_get "$sout" interval 'len(o["kernel_stats"]["veth"]["queues"])')"
	t_expect_eq "veth queues xdp-gen reads" 4 \
		"$(json_get "$gout" interval 'len(o["kernel_stats"]["veth"]["queues"])')"
	t_expect_ge "frames the sink's veth counted in the last interval" 1 \
		"$(json_get "$sout" interval 'o["kernel_stats"]["veth"]["rx_xdp_packets"]')"
	hd_stop_within "$gpid" 10
	rc=$?
	[ "$rc" = 0 ] || grep -v "^{" "$gout" | head -40 >&2
	t_expect_eq "xdp-gen exit code" 0 "$rc"
	hd_stop_within "$spid" 10
	rc=$?
	[ "$rc" = 0 ] || grep -v "^{" "$sout" | head -40 >&2
	t_expect_eq "xdp-sink exit code" 0 "$rc"
	check_verdicts_balance "$sout"
	grep -q AddressSanitizer "$gout" "$sout" && t_fail "ASan: $(grep -h -A5 AddressSanitizer "$gout" "$sout")"
	return 0
}

# 6. A duration whose end overflows 64-bit nanoseconds does not end the run.
test_hardening_huge_duration() {
	local sout gout spid gpid
	lab_setup --no-ipv6
	sout=$(mktemp) gout=$(mktemp)
	t_on_cleanup rm -f "$sout" "$gout"
	lab_bg "$sout" sink "$SINK" drop -j -i 100ms -d 5124095h "$SINK_IF"
	spid=$LAST_PID
	wait_ready "$sout" "$spid" || t_fail "xdp-sink -d 5124095h did not start: $(cat "$sout")"
	lab_bg "$gout" gen "$GEN" kernel -j -i 100ms -r 1000 -d 5124095h "$GEN_IF"
	gpid=$LAST_PID
	# A deadline that wrapped ends the run at its first tick: three reports
	# and still running, it did not.
	wait_reports "$gout" 3
	kill -0 "$gpid" 2>/dev/null || t_fail "xdp-gen -d 5124095h ended at once: $(cat "$gout")"
	wait_reports "$sout" 3
	kill -0 "$spid" 2>/dev/null || t_fail "xdp-sink -d 5124095h ended at once: $(cat "$sout")"
	hd_stop_within "$gpid" 5
	t_expect_eq "xdp-gen stop reason" SIGINT "$(json_get "$gout" summary 'o["stop_reason"]')"
	hd_stop_within "$spid" 5
	t_expect_eq "xdp-sink stop reason" SIGINT "$(json_get "$sout" summary 'o["stop_reason"]')"
	check_verdicts_balance "$sout"
}

# hd_threads_blocked PID N: N threads of PID sleep in the kernel's send path
# (their wchan), which is where sendmmsg blocks when the socket buffer is full.
hd_threads_blocked() {
	local t n=0 w
	for t in /proc/"$1"/task/*; do
		w=$(cat "$t/wchan" 2>/dev/null)
		[[ "$w" == *send* ]] && n=$((n + 1))
	done
	[ $n -ge "$2" ]
}

# 7. xdp-gen qdisc blocked in sendmmsg behind a qdisc that holds every frame
# and sends none: Ctrl-C must end it within 2 s.
test_hardening_qdisc_stop_unblocks() {
	local out pid rc start secs
	lab_setup --no-ipv6
	# 8 bit/s with a 100 MB queue: the qdisc takes frames and never lets them go,
	# so the senders' socket buffers fill and sendmmsg blocks.
	lab_exec gen tc qdisc replace dev "$GEN_IF" root tbf rate 8bit burst 1600 limit 100000000 ||
		t_fail "cannot install tbf"
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" gen "$GEN" qdisc -j -t 2 -d 60 "$GEN_IF"
	pid=$LAST_PID
	# Blocked within milliseconds (the stall detector would end the run a
	# second later): both sending threads wait for socket buffer space.
	t_wait_until 5 hd_threads_blocked "$pid" 2 ||
		t_fail "xdp-gen's threads are not blocked in a send: $(cat /proc/"$pid"/task/*/wchan)"
	kill -0 "$pid" 2>/dev/null || t_fail "xdp-gen ended before the stop: $(cat "$out")"
	# Gone long before the 60 s run would end: the blocked sends were woken (a hang
	# waits for the duration). A bound, not a speed: a busy machine has time to spare.
	hd_stop_within "$pid" 20
	rc=$?
	grep -q '"type":"summary"' "$out" || t_fail "no summary after the stop: $(cat "$out")"
	[ "$rc" -le 1 ] || t_fail "exit code $rc: $(cat "$out")"
}

# 9. SIGKILL leaves nothing attached (BPF links), and the next run needs no
# --force. With --pin (in every mode that takes it: the attachment is made
# the same way with or without), the pins outlive the kill by design (README)
# and the attachment does not.
sigkill_sink_round() { # MODE OPTIONS...
	local mode=$1 out pid
	shift
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" sink "$SINK" "$mode" "$@" -j -d 120 "$SINK_IF"
	pid=$LAST_PID
	wait_ready "$out" "$pid" || t_fail "$mode $* did not start: $(cat "$out")"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	wait_xdp "$SINK_NS" "$SINK_IF" none ||
		t_fail "$mode $*: a program is still attached after SIGKILL"
	lab_exec sink "$SINK" "$mode" ${HD_TO:+--to "$HD_TO"} -j -q -d 300ms "$SINK_IF" >"$out" 2>&1 ||
		t_fail "$mode $*: the run after SIGKILL failed without --force: $(cat "$out")"
	check_verdicts_balance "$out"
	wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "$mode: attached after a clean run"
}

sigkill_sink_body() { # MODE
	local HD_TO=
	mode_has "$1" to xdp-sink && HD_TO="${LAB_NAME}r0"
	if ! mode_has "$1" pin xdp-sink; then
		sigkill_sink_round "$1" ${HD_TO:+--to "$HD_TO"}
		return
	fi
	sigkill_sink_round "$1" ${HD_TO:+--to "$HD_TO"} --pin
	lab_exec sink test -e "/sys/fs/bpf/xdp-sink/$SINK_IF" ||
		t_fail "$1 --pin: the pins did not outlive SIGKILL"
	lab_exec sink rm -rf "/sys/fs/bpf/xdp-sink/$SINK_IF"
}

# xdp-gen attaches nothing: killed in any mode, its interface holds no program.
sigkill_gen_body() { # MODE
	local mode=$1 out pid
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" gen "$GEN" "$mode" -j -i 100ms -r 1000 -d 120 "$GEN_IF"
	pid=$LAST_PID
	wait_total "$out" interval tx_packets 1 || t_fail "xdp-gen $mode did not send: $(cat "$out")"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	wait_xdp "$GEN_NS" "$GEN_IF" none || t_fail "xdp-gen $mode left a program on $GEN_IF"
	lab_exec gen "$GEN" "$mode" -q -n 1000 "$GEN_IF" >"$out" 2>&1 ||
		t_fail "xdp-gen $mode after SIGKILL: $(cat "$out")"
}

test_hardening_sigkill_leaves_nothing() {
	local r0 spid sout rc=0
	lab_setup --no-ipv6
	r0="${LAB_NAME}r0"
	ip -n "$SINK_NS" link add "$r0" type veth peer name "${LAB_NAME}r1" || t_fail "redirect pair"
	ip -n "$SINK_NS" link set "$r0" up
	ip -n "$SINK_NS" link set "${LAB_NAME}r1" up
	lab_exec sink ethtool -K "${LAB_NAME}r1" gro on >/dev/null # NAPI for redirected frames
	t_each_mode --tool xdp-sink --needs xdp-mode sigkill_sink_body || rc=1
	sout=$(mktemp)
	t_on_cleanup rm -f "$sout"
	lab_bg "$sout" sink "$SINK" drop -j -q -d 120 "$SINK_IF"
	spid=$LAST_PID
	wait_ready "$sout" "$spid" || t_fail "sink for the generator runs did not start: $(cat "$sout")"
	t_each_mode sigkill_gen_body || rc=1
	kill -INT "$spid"
	wait "$spid"
	check_verdicts_balance "$sout"
	return $rc
}

# 11. The production xdp-gen has no test hooks: no code reads XDPSG_TEST_*; the
# test build does.
test_hardening_no_test_hooks_in_production() {
	local b out
	# grep -c reads all of strings' output (grep -q under pipefail would not).
	for b in "$GEN" "$SINK"; do
		t_expect_eq "XDPSG_TEST_ strings in $b" 0 "$(strings "$b" | grep -c XDPSG_TEST_)"
	done
	[ -x "$GEN_HOOKS" ] || t_fail "$GEN_HOOKS is not built; run 'make all'"
	t_expect_eq "hooks in the test build" 2 "$(strings "$GEN_HOOKS" | grep -cE 'XDPSG_TEST_(STALL|SEQ_JUMP)$')"
	# And it behaves so: XDPSG_TEST_STALL=1 does not stop a production run.
	lab_setup --no-ipv6 --qdisc pfifo:1000
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_exec gen env XDPSG_TEST_STALL=1 "$GEN" qdisc -j -q -r 1000 -d 2500ms "$GEN_IF" >"$out" 2>&1
	t_expect_eq "production xdp-gen exit code with XDPSG_TEST_STALL=1" 0 $?
	t_expect_eq "stop reason" duration "$(json_get "$out" summary 'o["stop_reason"]')"
}
