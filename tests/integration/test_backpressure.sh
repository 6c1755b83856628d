# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The backpressure lab (testenv.sh backpressure): the qdisc overflows under a
# slow sink and the books balance; a fast sink behind a sender that waits
# (the system's socket buffer) drops nothing; noqueue moves the drops to the
# veth; the AF_XDP and live-frames generators show their own backpressure
# signals and balance; a generator stall fails the run cleanly. Every run is
# 1 s; each test's lab is removed by the runner, and by t_cleanup if the runner
# dies. The tests run beside others: the sink is slowed by --cost and the
# sender of the no-drops case waits on its socket buffer, so neither verdict
# depends on the CPUs the run gets (5 runs of the file at -j4 beside another
# -j4 run of the suite, all passed; the file ran alone before).

# bp_run OUT ERR [runner options]: run the scenario in a lab of its own
# (BP_NAME) with --json; its exit code is in BP_RC.
bp_run() {
	local out=$1 err=$2
	shift 2
	# The test's python for bp_get (lab_setup starts it in tests that make a lab):
	# without it each field read was a python start, most of the CPU beside the run's.
	json_server_start
	BP_NAME=$(printf 'p%x%03x' $(($$ % 4096)) $((RANDOM % 4096)))
	T_LABS+=("$BP_NAME")
	t_on_cleanup rm -f "$out" "$err"
	"$TESTENV" backpressure --name "$BP_NAME" --duration 1 --json "$@" >"$out" 2>"$err"
	BP_RC=$?
}

# bp_get FILE EXPR: a field of the runner's summary line.
bp_get() {
	json_get "$1" summary "$2" || t_fail "no summary line in the runner's output: $(cat "$1")"
}

bp_expect_ok() { # out err
	[ "$BP_RC" -eq 0 ] || t_fail "runner exited $BP_RC: $(tail -n 5 "$2")"
	t_expect_eq "unexplained" 0 "$(bp_get "$1" 'o["unexplained"]')"
	t_expect_eq "every check balances" "0" \
		"$(bp_get "$1" 'sum(abs(c["unexplained"]) for c in o["checks"])')"
	t_expect_eq "balanced" True "$(bp_get "$1" 'o["balanced"]')"
}

# Nothing of the lab left: state, namespaces, processes.
bp_expect_gone() { # name
	# Which window it was left in (STATUS setting-up or ready, its namespaces or not)
	# is the clue to a leak seen once in a clean-clone run, not reproduced.
	[ ! -e "$T_STATE_DIR/$1.state" ] ||
		t_fail "lab $1 left its state file ($(grep -h '^STATUS=' "$T_STATE_DIR/$1.state")," \
			"namespaces: $(ip netns list | awk '{ print $1 }' | grep -E "^$1-" | tr '\n' ' '))"
	! ip netns list | awk '{ print $1 }' | grep -qE "^$1-(gen|sink)$" || t_fail "lab $1 left namespaces"
	! pgrep -f "xdp-(gen|sink) .*$1-[gs]\$" >/dev/null || t_fail "lab $1 left processes"
}

# The scenario's known answer, in both rows of the clocks matrix (the
# generator a day ahead of the sink in the "separate" row): every frame the
# qdisc refused is its drop, every one accepted reaches the sink, and the
# tracer names the drops.
test_backpressure_qdisc_overflow() {
	t_each_clocks bp_overflow_body
}

bp_overflow_body() {
	local out err acc
	out=$(mktemp) err=$(mktemp)
	# shellcheck disable=SC2046 # the option is one word or none
	bp_run "$out" "$err" --limit 500 --keep $(t_clocks_opt)
	bp_expect_ok "$out" "$err"
	t_expect_ge "qdisc drops" 1 "$(bp_get "$out" 'o["qdisc_stats"]["drops"]')"
	t_expect_ge "qdisc requeues" 1 "$(bp_get "$out" 'o["qdisc_stats"]["requeues"]')"
	t_expect_eq "refused (and marks refused) = qdisc drops" \
		"$(bp_get "$out" 'o["refused"] + o["marks_refused"]')" \
		"$(bp_get "$out" 'o["qdisc_stats"]["drops"]')"
	acc=$(bp_get "$out" 'o["accepted"] + o["marks"]') # the frames and their marks
	t_expect_eq "accepted = received by the sink" "$acc" "$(bp_get "$out" 'o["received"]')"
	t_expect_eq "accepted = delivered" "$acc" "$(bp_get "$out" 'o["delivered"]')"
	t_expect_eq "nothing left in the qdisc" 0 "$(bp_get "$out" 'o["qdisc_stats"]["qlen"]')"
	# Where they were lost: the drop tracer names the qdisc's drops, the run's frames.
	t_expect_eq "the qdisc's drops = the run's QDISC_* drops by the tracer, and its marks'" \
		"$(bp_get "$out" 'o["qdisc_stats"]["drops"]')" \
		"$(bp_get "$out" 'o["drop_causes"]["run"] + o["drop_causes"]["marks"]')"
	t_expect_eq "the tracer check in the books" 1 \
		"$(bp_get "$out" 'len([c for c in o["checks"] if c["check"] == "drop tracer" and not c["unexplained"]])')"
	t_expect_eq "NAPI thread pinned and named" "napi/$BP_NAME-s-" \
		"$(bp_get "$out" 'o["napi_threads"][0].rstrip("0123456789")')"
	# --keep: the scenario's lab is still there, as set up.
	local st
	st=$(t_lab status --name "$BP_NAME") || t_fail "lab not kept"
	[[ "$st" == *"qdisc pfifo:500"*"tso off"*"ipv6 off"*"threaded napi on, scenario backpressure"* ]] ||
		t_fail "kept lab: $(head -n 1 <<<"$st")"
	if [ -n "$(t_clocks_opt)" ]; then
		[[ "$st" == *"separate clocks"* ]] || t_fail "kept lab's clocks: $st"
	fi
	tc -n "$BP_NAME-gen" qdisc show dev "$BP_NAME-g" | grep -q "pfifo.*limit 500p" || t_fail "pfifo limit 500 not set"
	t_lab teardown --name "$BP_NAME" >/dev/null || t_fail "teardown failed"
	bp_expect_gone "$BP_NAME"
}

test_backpressure_fast_sink_no_drops() {
	local out err acc
	out=$(mktemp) err=$(mktemp)
	# A fast sink and a sender that waits when it is behind: with the
	# system's socket buffer (some 200 KB, a few hundred frames charged to
	# the socket until the sink's program frees them) the pfifo's 1000
	# frames never fill, however long a busy machine keeps the sink's NAPI
	# thread off its CPU. With 64M of buffer (the scenario's default) a CI
	# run on a loaded machine saw 76 refused: a rate the sink "can take"
	# is a promise about the machine, the buffer is one about the books.
	bp_run "$out" "$err" --cost 0 --threads 1 --rate 100000 --sndbuf default
	bp_expect_ok "$out" "$err"
	acc=$(bp_get "$out" 'o["accepted"]')
	t_expect_ge "accepted" 1 "$acc"
	t_expect_eq "attempted = accepted" "$acc" "$(bp_get "$out" 'o["attempted"]')"
	t_expect_eq "refused" 0 "$(bp_get "$out" 'o["refused"]')"
	t_expect_eq "drops at every layer" 0 "$(bp_get "$out" 'sum(o["drops"].values())')"
	t_expect_eq "delivered: the frames and their marks" "$(bp_get "$out" 'o["accepted"] + o["marks"]')" \
		"$(bp_get "$out" 'o["delivered"]')"
	bp_expect_gone "$BP_NAME"
}

test_backpressure_noqueue_drops_at_veth() {
	local out err
	out=$(mktemp) err=$(mktemp)
	bp_run "$out" "$err" --qdisc noqueue
	bp_expect_ok "$out" "$err"
	t_expect_eq "qdisc kind" noqueue "$(bp_get "$out" 'o["qdisc_stats"]["kind"]')"
	t_expect_eq "qdisc drops" 0 "$(bp_get "$out" 'o["qdisc_stats"]["drops"]')"
	t_expect_ge "veth tx drops" 1 "$(bp_get "$out" 'o["drops"]["veth_tx"]')"
	t_expect_eq "refused (and marks refused) = veth tx drops" \
		"$(bp_get "$out" 'o["refused"] + o["marks_refused"]')" \
		"$(bp_get "$out" 'o["drops"]["veth_tx"]')"
	bp_expect_gone "$BP_NAME"
}

test_backpressure_xsk_gen_stalls() {
	local out err
	out=$(mktemp) err=$(mktemp)
	bp_run "$out" "$err" --gen xsk
	bp_expect_ok "$out" "$err"
	t_expect_ge "generator stalls (ring full, no free frame, kick busy)" 1 \
		"$(bp_get "$out" 'sum(o["gen_stalls"].values())')"
	t_expect_le "the qdisc bypassed" 10 "$(bp_get "$out" 'o["qdisc_stats"]["sent"]')"
	t_expect_eq "sent (marks too) = received by the sink" \
		"$(bp_get "$out" 'o["accepted"] + o["marks"]')" \
		"$(bp_get "$out" 'o["received"] + o["drops"]["veth_tx"]')"
	bp_expect_gone "$BP_NAME"
}

test_backpressure_kernel_gen_xmit_errors() {
	local out err
	out=$(mktemp) err=$(mktemp)
	bp_run "$out" "$err" --gen kernel
	bp_expect_ok "$out" "$err"
	t_expect_ge "failed (xdp_xmit errors)" 1 "$(bp_get "$out" 'o["failed"]')"
	t_expect_eq "failed = the veth's xdp_xmit errors" "$(bp_get "$out" 'o["failed"]')" \
		"$(bp_get "$out" 'o["drops"]["xdp_xmit"]')"
	t_expect_eq "sent (marks too) = transmitted + failed" \
		"$(bp_get "$out" 'o["accepted"] + o["marks"]')" \
		"$(bp_get "$out" 'o["transmitted"] + o["failed"]')"
	t_expect_eq "transmitted = received by the sink" "$(bp_get "$out" 'o["transmitted"]')" \
		"$(bp_get "$out" 'o["received"]')"
	bp_expect_gone "$BP_NAME"
}

test_backpressure_xsk_sink_latency() {
	local out err
	out=$(mktemp) err=$(mktemp)
	bp_run "$out" "$err" --sink xsk
	bp_expect_ok "$out" "$err"
	t_expect_ge "qdisc drops" 1 "$(bp_get "$out" 'o["qdisc_stats"]["drops"]')"
	t_expect_ge "latency samples" 1 "$(bp_get "$out" 'o["latency_ns"]["count"]')"
	t_expect_ge "p99 >= p50" "$(bp_get "$out" 'o["latency_ns"]["p50"]')" \
		"$(bp_get "$out" 'o["latency_ns"]["p99"]')"
	t_expect_eq "the sink's own books" 0 "$(bp_get "$out" 'o["sink_own_unexplained"]')"
	bp_expect_gone "$BP_NAME"
}

# The generator a host of its own for the drop causes too (--mgmt): its
# tracer counts its namespace only and exports on the management network,
# and the xsk sink joins the qdisc's drops by run id from there. The join
# equals the generator host's count, which equals tc's; a second source that
# refuses the connection is named and read as nothing, and the books balance.
test_backpressure_mgmt_joins_gen_host_causes() {
	local out err bad=http://10.254.0.1:9/metrics
	out=$(mktemp) err=$(mktemp)
	bp_run "$out" "$err" --sink xsk --mgmt --limit 500 --drop-causes-from "$bad"
	bp_expect_ok "$out" "$err"
	local src="o['drop_cause_sources']"
	t_expect_eq "two sources" 2 "$(bp_get "$out" "len($src)")"
	t_expect_eq "the generator host's first" "True http://10.254.0.1:9464/metrics" \
		"$(bp_get "$out" "' '.join(map(str, ($src[0]['generator_host'], $src[0]['url'])))")"
	t_expect_eq "read at the end, no error" "True None" \
		"$(bp_get "$out" "' '.join(map(str, ($src[0]['read_at_end'], $src[0]['error'])))")"
	t_expect_ge "the qdisc's drops" 1 "$(bp_get "$out" 'o["qdisc_stats"]["drops"]')"
	t_expect_eq "joined = the generator host's count of the run's qdisc drops" \
		"$(bp_get "$out" 'o["drop_causes"]["run"]')" "$(bp_get "$out" "$src[0]['run_qdisc']")"
	t_expect_eq "the qdisc's drops = the run's by the generator host's tracer, and its marks'" \
		"$(bp_get "$out" 'o["qdisc_stats"]["drops"]')" \
		"$(bp_get "$out" 'o["drop_causes"]["run"] + o["drop_causes"]["marks"]')"
	t_expect_eq "the join check in the books" 1 \
		"$(bp_get "$out" 'len([c for c in o["checks"] if c["check"] == "drop causes joined" and not c["unexplained"]])')"
	t_expect_eq "the refusing source: not read, nothing from it" "False 0" \
		"$(bp_get "$out" "' '.join(map(str, ($src[1]['read_at_end'], $src[1]['run_qdisc'])))")"
	grep -q "note: the drop causes at $bad were not read at the end (.*refused" "$err" ||
		t_fail "the refusing source not named: $(cat "$err")"
	bp_expect_gone "$BP_NAME"
}

# bp_gen_tracer NAME: the pid of the generator host's drop tracer (--mgmt) in lab NAME.
bp_gen_tracer() {
	local p
	for p in $(ip netns pids "$1-gen" 2>/dev/null); do
		[[ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" == *" drops "*"--local"* ]] &&
			{ echo "$p"; return 0; }
	done
	return 1
}

# The generator host's tracer killed (-9) mid-run: its counts are gone, so the
# run fails and says why (the qdisc's drops could not be checked), never a
# balanced run without the check; the lab and its tools are removed.
test_backpressure_mgmt_tracer_killed() {
	local out err pid i rc
	out=$(mktemp) err=$(mktemp)
	t_on_cleanup rm -f "$out" "$err"
	BP_NAME=$(printf 'p%x%03x' $(($$ % 4096)) $((RANDOM % 4096)))
	T_LABS+=("$BP_NAME")
	"$TESTENV" backpressure --name "$BP_NAME" --sink xsk --mgmt --duration 3 --rate 200000 \
		--json >"$out" 2>"$err" &
	local bp=$!
	T_PIDS+=("$bp")
	# The generator has started once its first interval line is out.
	t_wait_for "$out" '"type": *"interval"' 30 || t_fail "no interval: $(tail -n 3 "$err")"
	pid=$(bp_gen_tracer "$BP_NAME") || t_fail "no tracer in $BP_NAME-gen"
	kill -KILL "$pid"
	wait "$bp"
	rc=$?
	t_expect_eq "exit code" 1 "$rc"
	grep -q "FAILED: the drop tracer did not last the run (it exited -9 before the run ended)" "$err" ||
		t_fail "no word of the tracer: $(cat "$err")"
	grep -q 'books balance' "$err" && t_fail "a balanced run without the tracer's check: $(cat "$err")"
	bp_expect_gone "$BP_NAME"
}

test_backpressure_stall_fails_cleanly() {
	local out err
	out=$(mktemp) err=$(mktemp)
	# The stall, not the 30 s, ends the run: its stop reason says so (no clock asked).
	XDPSG_TEST_STALL=1 bp_run "$out" "$err" --duration 30
	t_expect_eq "exit code on a stall" 1 "$BP_RC"
	grep -q 'STALL: xdp-gen stopped with stop_reason "stall"' "$err" || t_fail "no stall message: $(cat "$err")"
	t_expect_eq "stop reason" stall "$(bp_get "$out" 'o["stop_reason"]')"
	t_expect_eq "ok" False "$(bp_get "$out" 'o["ok"]')"
	bp_expect_gone "$BP_NAME"
}

test_backpressure_bad_input() {
	local msg
	msg=$("$TESTENV" backpressure --name pbad --gen frob 2>&1)
	t_expect_eq "exit code for a bad --gen" 2 $?
	[[ "$msg" == *"--gen"* ]] || t_fail "message: $msg"
	msg=$("$TESTENV" backpressure --name pbad --gen xsk --threads 2 2>&1)
	t_expect_eq "exit code for xsk threads > queues" 2 $?
	msg=$("$TESTENV" setup --name pbad backpressure 2>&1)
	t_expect_eq "exit code for backpressure not first" 2 $?
	msg=$("$TESTENV" backpressure --name pbad --drop-causes-from http://10.254.0.3:9464/metrics 2>&1)
	t_expect_eq "exit code for --drop-causes-from with the drop sink" 2 $?
	[[ "$msg" == *"needs --sink xsk"* ]] || t_fail "message: $msg"
	msg=$("$TESTENV" backpressure --name pbad --sink xsk --drop-causes-from ftp://x/m 2>&1)
	t_expect_eq "exit code for a URL that is not http://" 2 $?
	[[ "$msg" == *"'ftp://x/m': not an http:// URL"* ]] || t_fail "message: $msg"
	"$TESTENV" backpressure --help | grep -q -- '--napi-cpu' || t_fail "--help lacks --napi-cpu"
	bp_expect_gone pbad
}

# Interrupted at any point (lab being made, traffic running, the end) by
# SIGINT or SIGTERM, the runner exits 130 and leaves nothing: no lab, and no
# tool, the host-wide drop tracer included (it was left running, holding its
# programs on kfree_skb, every time). The run's mark (t_interrupt) is in every
# process it starts, so what it left is found.
test_backpressure_interrupted_leaves_nothing() {
	local sig at case
	# From the lab's first record: while it is made, while the tools start, mid-run (both
	# signals, where the most is running). At a capped rate: every tool runs all the same,
	# and an unpaced generator into the slow sink was most of the test's CPU time.
	for case in INT:0 TERM:1.5 INT:3 TERM:3; do
		sig=${case%:*} at=${case#*:}
		BP_NAME=$(printf 'p%x%03x' $(($$ % 4096)) $((RANDOM % 4096)))
		T_LABS+=("$BP_NAME")
		T_INTERRUPT_FROM=$T_STATE_DIR/$BP_NAME.state \
			t_interrupt "$sig" "$at" "bp-$$-$sig-$at" "$TESTENV" backpressure --name "$BP_NAME" \
			--duration 3 --rate 20000 --json
		bp_expect_gone "$BP_NAME"
	done
}

