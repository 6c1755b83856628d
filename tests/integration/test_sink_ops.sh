# SPDX-License-Identifier: GPL-2.0
# xdp-bench's modes in xdp-sink: redirect-cpu (a cpumap, frames counted and
# dropped or passed on other CPUs) judged by the kernel's own cpumap
# tracepoints, and the packet operations (--packet-op read-data|swap-macs)
# judged by tcpdump on the far side.

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"

# The kernel's cpumap tracepoints, in a tracefs instance of this test's own
# (where the host has no tracefs mounted, it is mounted in a mount namespace
# of the call's own: the host's /sys/kernel/tracing stays as it is; the
# instance is the kernel's, so it outlives each call). Mounted already (perf
# mounts it), it is used as it is: a second mount on it fails with EBUSY,
# which made this test skip in a clean CI run after a perf session.
trace_fs() { # SHELL-COMMAND, run in the instances directory
	unshare -m sh -c '{ [ -d /sys/kernel/tracing/instances ] ||
		mount -t tracefs nodev /sys/kernel/tracing; } &&
		cd /sys/kernel/tracing/instances && eval "$1"' sh "$1"
}

cpumap_trace_start() {
	TRACE_INST=xdpsg_$LAB_NAME
	t_on_cleanup trace_fs "'rmdir $TRACE_INST'"
	trace_fs "mkdir $TRACE_INST && echo 8192 > $TRACE_INST/buffer_size_kb &&
		echo 1 > $TRACE_INST/events/xdp/xdp_cpumap_enqueue/enable &&
		echo 1 > $TRACE_INST/events/xdp/xdp_cpumap_kthread/enable" ||
		t_skip "no tracefs instance for the cpumap tracepoints"
}

# What the tracepoints say, as JSON: per target CPU the frames enqueued and
# dropped at the enqueue; per kthread CPU the frames it processed and what
# the cpumap program did with them.
cpumap_trace_read() { # OUTFILE
	trace_fs "echo 0 > $TRACE_INST/tracing_on; cat $TRACE_INST/trace" | python3 -c '
import collections, json, re, sys
enq, drops, done, xdrop, xpass = (collections.Counter() for _ in range(5))
for line in sys.stdin:
    f = dict(re.findall(r"(\w+)=(\S+)", line))
    if "xdp_cpumap_enqueue:" in line:
        enq[f["to_cpu"]] += int(f["processed"])
        drops[f["to_cpu"]] += int(f["drops"])
    elif "xdp_cpumap_kthread:" in line:
        done[f["cpu"]] += int(f["processed"])
        xdrop[f["cpu"]] += int(f["xdp_drop"])
        xpass[f["cpu"]] += int(f["xdp_pass"])
print(json.dumps({"enqueued": enq, "enqueue_drops": drops, "processed": done,
                  "xdp_drop": xdrop, "xdp_pass": xpass}))' >"$1"
}

trace_get() { # FILE EXPR: EXPR on the tracepoints' JSON o
	json_file "$1" "$2"
}

# N frames spread over CPUs 0 and 1: the sink's per-CPU books are the
# kernel's (each kthread's processed and xdp_drop), a frame redirected but not
# seen is one the enqueue dropped, and the round robin halves the frames.
# serial: the cpumap's tracepoints are host-wide: another test's cpumap adds to its counts
test_sink_ops_redirect_cpu() {
	local n=20000 out trace pid cpu
	[ "$(nproc)" -ge 2 ] || t_skip "needs two CPUs"
	lab_setup --no-ipv6
	out=$(mktemp)
	trace=$(mktemp)
	t_on_cleanup rm -f "$out" "$trace"
	cpumap_trace_start
	lab_bg "$out" sink "$SINK" redirect-cpu -j -q -n $n -d 60 --cpu 0,1 "$SINK_IF"
	pid=$LAST_PID
	wait_ready "$out" "$pid" || t_fail "redirect-cpu did not start: $(cat "$out")"
	# Paced: exact counts, not a race of the cpumap's kthreads with a CPU another test shares.
	lab_exec gen "$GEN" kernel -q --no-stamp -n $n -r 200k "$GEN_IF" >/dev/null ||
		t_fail "xdp-gen kernel failed"
	wait "$pid"
	t_expect_eq "sink exit code" 0 $?
	cpumap_trace_read "$trace"
	echo "sink: $(json_get "$out" summary 'o["cpumap"], o["drops"]'); tracepoints: $(cat "$trace")"
	check_verdicts_balance "$out"
	t_expect_eq "received" $n "$(json_get "$out" summary 'o["rx_packets"]')"
	t_expect_eq "redirected to a CPU" $n "$(json_get "$out" summary 'o["actions"]["redirect"]')"
	for cpu in 0 1; do
		t_expect_eq "CPU $cpu: the sink's count = the kthread's processed" \
			"$(trace_get "$trace" "o['processed'].get('$cpu', 0)")" \
			"$(json_get "$out" summary "[c['packets'] for c in o['cpumap']['cpus'] if c['cpu'] == $cpu][0]")"
		t_expect_eq "CPU $cpu: dropped there = the kthread's xdp_drop" \
			"$(trace_get "$trace" "o['xdp_drop'].get('$cpu', 0)")" \
			"$(json_get "$out" summary "[c['drop'] for c in o['cpumap']['cpus'] if c['cpu'] == $cpu][0]")"
		# One sending thread: frames arrive on one CPU, whose round robin alternates.
		t_expect_eq "CPU $cpu: enqueued, half the frames" $((n / 2)) \
			"$(trace_get "$trace" "o['enqueued'].get('$cpu', 0)")"
	done
	t_expect_eq "cpumap_unseen = the enqueue's drops" \
		"$(trace_get "$trace" "sum(o['enqueue_drops'].values())")" \
		"$(json_get "$out" summary 'o["drops"]["cpumap_unseen"]')"
	t_expect_eq "no CPU but 0 and 1" "[]" \
		"$(trace_get "$trace" "sorted((set(o['enqueued']) | set(o['processed'])) - {'0', '1'})")"
}

# --remote-action pass: the frames reach the stack of the sink's namespace
# (IpInReceives, the kernel's count) from the remote CPU. The CPU's queue holds
# every frame (--qsize above n): its kthread, on a CPU that another test keeps
# busy, may start late but drops nothing (a clean-clone run once had 456 of
# 5,000 dropped at the default 2048).
test_sink_ops_redirect_cpu_pass() {
	local n=5000 out pid before after
	lab_setup --no-ipv6
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" sink "$SINK" redirect-cpu -j -q -n $n -d 60 --cpu 1 --qsize 8192 \
		--remote-action pass "$SINK_IF"
	pid=$LAST_PID
	wait_ready "$out" "$pid" || t_fail "redirect-cpu did not start: $(cat "$out")"
	before=$(ip netns exec "$SINK_NS" nstat -asz IpInReceives | awk '/IpInReceives/ { print $2 }')
	lab_exec gen "$GEN" kernel -q --no-stamp -n $n -r 100k "$GEN_IF" >/dev/null || t_fail "xdp-gen failed"
	wait "$pid"
	t_expect_eq "sink exit code" 0 $?
	after=$(ip netns exec "$SINK_NS" nstat -asz IpInReceives | awk '/IpInReceives/ { print $2 }')
	check_verdicts_balance "$out"
	t_expect_eq "dropped at the CPU's queue" 0 "$(json_get "$out" summary 'o["drops"]["cpumap_unseen"]')"
	t_expect_eq "passed on CPU 1" "[[1, $n, 0]]" \
		"$(json_get "$out" summary '[[c["cpu"], c["pass"], c["drop"]] for c in o["cpumap"]["cpus"]]')"
	t_expect_eq "the stack's IpInReceives" $n $((after - before))
}

# The remote CPU's kthread held off its CPU (a real-time busy loop there,
# 0.35 s) while the sink stops: the frames still in its queue are waited for,
# not called dropped. Before, the sink gave up after 100 ms without progress
# and booked them as cpumap_unseen.
# serial: a real-time loop takes CPU 1 from every other test
test_sink_ops_redirect_cpu_kthread_held_off() {
	local n=5000 out pid hog
	[ "$(nproc)" -ge 2 ] || t_skip "needs two CPUs"
	command -v chrt >/dev/null || t_skip "chrt not installed"
	lab_setup --no-ipv6
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" sink "$SINK" redirect-cpu -j -q -n $n -d 60 --cpu 1 --qsize 8192 "$SINK_IF"
	pid=$LAST_PID
	wait_ready "$out" "$pid" || t_fail "redirect-cpu did not start: $(cat "$out")"
	# timeout outside: at the loop's own priority on CPU 1 it would never run
	timeout 0.35 chrt -f 10 taskset -c 1 sh -c 'while :; do :; done' &
	hog=$!
	t_on_cleanup kill "$hog"
	t_nap 0.05
	lab_exec gen "$GEN" kernel -q --no-stamp --cpus 0 -n $n -r 100k "$GEN_IF" >/dev/null ||
		t_fail "xdp-gen failed"
	wait "$pid"
	t_expect_eq "sink exit code" 0 $?
	wait "$hog"
	check_verdicts_balance "$out"
	t_expect_eq "dropped at the CPU's queue" 0 "$(json_get "$out" summary 'o["drops"]["cpumap_unseen"]')"
	t_expect_eq "dropped on CPU 1" "[[1, $n]]" \
		"$(json_get "$out" summary '[[c["cpu"], c["drop"]] for c in o["cpumap"]["cpus"]]')"
}

# A CPU that does not exist: one line that names it and the fix, exit 2,
# nothing attached or pinned. Bad --qsize and --remote-action values likewise.
test_sink_ops_redirect_cpu_bad_input() {
	local err rc bad
	lab_setup --no-ipv6
	for bad in "--cpu 4000" "--cpu 0,4000" "--qsize 0" "--qsize 16385" "--remote-action tx" \
		"--packet-op swap"; do
		# shellcheck disable=SC2086
		err=$(lab_exec sink "$SINK" redirect-cpu --pin $bad "$SINK_IF" 2>&1 >/dev/null)
		rc=$?
		t_expect_eq "$bad: exit code" 2 $rc
		t_expect_eq "$bad: lines on stderr ($err)" 1 "$(printf '%s\n' "$err" | wc -l)"
		xdp_detached "$SINK_NS" "$SINK_IF" || t_fail "$bad: a program is left on $SINK_IF"
		! lab_exec sink test -e "/sys/fs/bpf/xdp-sink/$SINK_IF" ||
			t_fail "$bad: pins left in /sys/fs/bpf/xdp-sink/$SINK_IF"
	done
	err=$(lab_exec sink "$SINK" redirect-cpu --cpu 4000 "$SINK_IF" 2>&1 >/dev/null)
	[[ $err == *"CPU 4000 is not online"*"--cpu"* ]] || t_fail "the line does not name CPU 4000 and --cpu: $err"
}

# FILE: each frame's "SRC > DST" MAC addresses, as tcpdump reads them.
macs_of() {
	tcpdump -r "$1" -nn -e 2>/dev/null | awk '{ print $2, $3, $4 }' | sed 's/,$//' | sort | uniq -c |
		awk '{ print $1, $2, $3, $4 }'
}

# --packet-op swap-macs: a redirect hands the far side frames whose MAC
# addresses are swapped (without it they go as they came), and a bounce
# (tx, which swaps anyway) comes back addressed to its sender.
test_sink_ops_swap_macs() {
	local n=50 r0 r1 out pcap tlog plog tpid op
	command -v tcpdump >/dev/null || t_skip "tcpdump not installed"
	lab_setup --no-ipv6
	r0="${LAB_NAME}r0"
	r1="${LAB_NAME}r1"
	ip -n "$SINK_NS" link add "$r0" type veth peer name "$r1" || t_fail "cannot add $r0/$r1"
	ip -n "$SINK_NS" link set "$r0" up
	ip -n "$SINK_NS" link set "$r1" up
	out=$(mktemp)
	pcap=$(mktemp --suffix .pcap)
	tlog=$(mktemp)
	plog=$(mktemp)
	t_on_cleanup rm -f "$out" "$pcap" "$tlog" "$plog"
	# NAPI for redirected frames by an XDP program, not GRO: GRO would merge
	# the frames of one UDP flow before tcpdump counts them.
	lab_bg "$plog" sink "$SINK" pass -q -d 120 "$r1"
	wait_xdp "$SINK_NS" "$r1" || t_fail "xdp-sink pass on $r1 did not attach: $(cat "$plog")"
	# tcpdump -s 2048: its ring has a slot per snap length; the default's 256 KiB
	# slots leave room for 8 frames of a burst.
	for op in none swap-macs; do
		lab_bg "$tlog" sink timeout 20 tcpdump -i "$r1" -nn -U --immediate-mode -s 2048 -c $n -w "$pcap" udp
		tpid=$LAST_PID
		t_wait_for "$tlog" "listening on" 10 || t_fail "tcpdump did not start: $(cat "$tlog")"
		lab_bg "$out" sink "$SINK" redirect -j -q -n $n -d 60 --to "$r0" --packet-op $op "$SINK_IF"
		wait_ready "$out" "$LAST_PID" || t_fail "redirect did not start: $(cat "$out")"
		lab_exec gen "$GEN" kernel -q --no-stamp -n $n -r 100k "$GEN_IF" >/dev/null ||
			t_fail "xdp-gen failed"
		wait "$tpid" || t_fail "--packet-op $op: tcpdump on $r1 did not see $n frames: $(cat "$tlog"; cat "$out")"
		if [ $op = none ]; then
			t_expect_eq "redirect: MACs as they came" "$n $GEN_MAC > $SINK_MAC" "$(macs_of "$pcap")"
		else
			t_expect_eq "redirect --packet-op swap-macs: MACs swapped" \
				"$n $SINK_MAC > $GEN_MAC" "$(macs_of "$pcap")"
		fi
	done
	# The bounce: the generator's side (NAPI by an XDP program, to take them) sees its frames come back.
	lab_bg "$plog" gen "$SINK" pass -q -d 120 "$GEN_IF"
	wait_xdp "$GEN_NS" "$GEN_IF" || t_fail "xdp-sink pass on $GEN_IF did not attach: $(cat "$plog")"
	lab_bg "$tlog" gen timeout 20 tcpdump -i "$GEN_IF" -Q in -nn -U --immediate-mode -s 2048 -c $n -w "$pcap" udp
	tpid=$LAST_PID
	t_wait_for "$tlog" "listening on" 10 || t_fail "tcpdump did not start: $(cat "$tlog")"
	lab_bg "$out" sink "$SINK" tx -j -q -n $n -d 60 --packet-op swap-macs "$SINK_IF"
	wait_ready "$out" "$LAST_PID" || t_fail "tx did not start: $(cat "$out")"
	# Paced: exact counts, not a race of the cpumap's kthreads with a CPU another test shares.
	lab_exec gen "$GEN" kernel -q --no-stamp -n $n -r 200k "$GEN_IF" >/dev/null ||
		t_fail "xdp-gen kernel failed"
	wait "$tpid" || t_fail "tcpdump on $GEN_IF did not see $n bounced frames"
	t_expect_eq "tx --packet-op swap-macs: back to the sender" "$n $SINK_MAC > $GEN_MAC" \
		"$(macs_of "$pcap")"
}

# --packet-op read-data changes no verdict: every frame counted once, in each mode it applies to.
# (The generators here send no stamps, so no marks: exactly the frames asked for.)
test_sink_ops_read_data() {
	local n=10000 out mode
	lab_setup --no-ipv6
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	for mode in drop pass redirect-cpu; do
		lab_bg "$out" sink "$SINK" "$mode" -j -q -n $n -d 60 --packet-op read-data "$SINK_IF"
		wait_ready "$out" "$LAST_PID" || t_fail "$mode did not start: $(cat "$out")"
		lab_exec gen "$GEN" kernel -q --no-stamp -n $n -r 200k "$GEN_IF" >/dev/null || t_fail "xdp-gen failed"
		wait "$LAST_PID"
		t_expect_eq "$mode: exit code" 0 $?
		t_expect_eq "$mode: received" $n "$(json_get "$out" summary 'o["rx_packets"]')"
		t_expect_eq "$mode: aborted" 0 "$(json_get "$out" summary 'o["actions"]["aborted"]')"
		check_verdicts_balance "$out"
	done
}
