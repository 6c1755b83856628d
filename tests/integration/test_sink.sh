# SPDX-License-Identifier: GPL-2.0
# xdp-sink drop/pass/tx/redirect in the lab: exact counts from the summary, the
# JSON, the pinned map and the kernel's link counters; clean exits; bad input.

SINK="$BUILD/xdp-sink"
SEND="$BUILD/tests/pktsend"

send() { # count [extra pktsend options]
	local n=$1
	shift
	lab_exec gen "$SEND" -q -n "$n" --dst-mac "$SINK_MAC" --src-ip "$GEN_IP4" \
		--dst-ip "$SINK_IP4" "$@" "$GEN_IF" || t_fail "pktsend failed"
}

# Sum of one field over queues and CPUs in a pinned stats map.
pinned_sum() { # field
	json_text "$(lab_exec sink bpftool -j map dump pinned "/sys/fs/bpf/xdp-sink/$SINK_IF/stats")" \
		"sum(v['value']['$1'] for e in o for v in e['formatted']['values'])"
}

# Does the pinned stats map hold N of FIELD (summed)? The sum in PINNED_GOT.
pinned_is() { # field n
	PINNED_GOT=$(pinned_sum "$1")
	[ "$PINNED_GOT" = "$2" ]
}

# UDP datagrams the sink namespace's stack found no socket for (/proc/net/snmp).
udp_noports() {
	ip netns exec "$SINK_NS" awk '/^Udp: [0-9]/ {print $3}' /proc/net/snmp
}

noports_reached() { # n
	[ "$(udp_noports)" -ge "$1" ]
}

stop_and_wait() { # pid
	kill -INT "$1" 2>/dev/null
	wait "$1"
}

test_sink_drop_exact() {
	local n=300000 out=/tmp/$LAB_NAME.drop rx0 rx1
	lab_setup --no-ipv6
	rx0=$(iface_stat "$SINK_NS" "$SINK_IF" rx packets)
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" sink "$SINK" drop --pin -j -q -d 120 "$SINK_IF"
	local pid=$LAST_PID
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "sink did not attach: $(cat "$out")"
	send $n
	# The pinned map is readable by anyone with bpftool while the sink runs.
	t_wait_until 5 pinned_is packets "$n"
	t_expect_eq "packets in the pinned map" "$n" "$PINNED_GOT"
	t_expect_eq "drop verdicts in the pinned map" "$n" "$(pinned_sum drop)"
	rx1=$(iface_stat "$SINK_NS" "$SINK_IF" rx packets)
	t_expect_eq "ip -s link rx packets on $SINK_IF" "$n" "$((rx1 - rx0))"
	stop_and_wait "$pid"
	t_expect_eq "summary rx_packets" "$n" "$(json_get "$out" summary 'o["rx_packets"]')"
	t_expect_eq "summary drop verdicts" "$n" "$(json_get "$out" summary 'o["actions"]["drop"]')"
	t_expect_eq "summary queue 0" "$n" "$(json_get "$out" summary 'o["queues"][0]["rx_packets"]')"
	t_expect_eq "stop reason" "SIGINT" "$(json_get "$out" summary 'o["stop_reason"]')"
	check_verdicts_balance "$out"
	wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "program still attached after exit"
	lab_exec sink test -e "/sys/fs/bpf/xdp-sink/$SINK_IF" && t_fail "pins left behind"
	return 0
}

test_sink_count_and_text_summary() {
	local n=100000 out
	lab_setup --no-ipv6
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" sink "$SINK" drop --parse -n $n -d 120 "$SINK_IF"
	local pid=$LAST_PID
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "sink did not attach"
	send $n
	wait "$pid" || t_fail "sink exited with $?: $(cat "$out")"
	grep -q "^xdp-sink drop $SINK_IF: 100,000 packets" "$out" ||
		t_fail "text summary missing or wrong: $(cat "$out")"
	grep -q "stopped by count" "$out" || t_fail "stop reason not count: $(cat "$out")"
	grep -q "udp4 100,000, udp6 0, tcp4 0, tcp6 0, icmp4 0, icmp6 0, other 0; errors 0" "$out" ||
		t_fail "--parse summary wrong: $(cat "$out")"
	# A text run (what it checks): its verdicts line must add up all the same.
	grep -q "verdicts: drop 100,000, pass 0, tx 0, redirect 0, aborted 0$" "$out" ||
		t_fail "verdicts do not add up to 100000 drops: $(grep verdicts "$out")"
	wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "program still attached after --count"
}

test_sink_pass_reaches_stack() {
	local n=50000 out noports0 noports1
	lab_setup --no-ipv6
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	noports0=$(udp_noports)
	lab_bg "$out" sink "$SINK" pass -j -q -d 120 "$SINK_IF"
	local pid=$LAST_PID
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "sink did not attach"
	send $n
	# The stack has had them all (or never will: the check below says how many).
	t_wait_until 10 noports_reached $((noports0 + n))
	stop_and_wait "$pid"
	noports1=$(udp_noports)
	t_expect_eq "pass verdicts" "$n" "$(json_get "$out" summary 'o["actions"]["pass"]')"
	check_verdicts_balance "$out"
	# The stack saw every datagram: nothing listens on the port, so each is NoPorts.
	t_expect_eq "UDP NoPorts in the sink namespace" "$n" "$((noports1 - noports0))"
}

test_sink_tx_bounces() {
	local n=100000 out gout
	lab_setup --no-ipv6
	out=$(mktemp)
	gout=$(mktemp)
	t_on_cleanup rm -f "$out" "$gout"
	# The generator side counts what comes back; its XDP program gives it NAPI.
	lab_bg "$gout" gen "$SINK" drop -j -i 100ms -d 120 "$GEN_IF"
	local gpid=$LAST_PID
	lab_bg "$out" sink "$SINK" tx -j -q -d 120 "$SINK_IF"
	local pid=$LAST_PID
	wait_xdp "$GEN_NS" "$GEN_IF" && wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "attach failed"
	send $n
	wait_total "$gout" interval rx_packets $n
	stop_and_wait "$pid"
	stop_and_wait "$gpid"
	t_expect_eq "tx verdicts" "$n" "$(json_get "$out" summary 'o["actions"]["tx"]')"
	t_expect_eq "xdp_tx_errors" 0 "$(json_get "$out" summary 'o["drops"]["xdp_tx_errors"]')"
	t_expect_eq "bounced frames seen by the generator side" "$n" \
		"$(json_get "$gout" summary 'o["rx_packets"]')"
	check_verdicts_balance "$out"
	check_verdicts_balance "$gout"
}

test_sink_tx_without_peer_napi_is_counted() {
	local n=20000 out
	lab_setup --no-ipv6 --gro off
	lab_exec gen ethtool -K "$GEN_IF" gro off >/dev/null 2>&1
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" sink "$SINK" tx -j -i 100ms -d 120 "$SINK_IF"
	local pid=$LAST_PID
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "attach failed"
	send $n
	wait_total "$out" interval xdp_tx_errors $n
	stop_and_wait "$pid"
	# Every bounced frame is lost in the kernel, and the summary says where.
	t_expect_eq "xdp_tx_errors" "$n" "$(json_get "$out" summary 'o["drops"]["xdp_tx_errors"]')"
	grep -q "needs an XDP program or GRO on" "$out" || t_fail "no explanation: $(cat "$out")"
	check_verdicts_balance "$out"
}

test_sink_redirect() {
	local n=100000 out rout err
	lab_setup --no-ipv6
	out=$(mktemp)
	rout=$(mktemp)
	t_on_cleanup rm -f "$out" "$rout"
	# A third interface pair in the sink namespace: SINK_IF -> r0 -> r1.
	ip -n "$SINK_NS" link add "${LAB_NAME}r0" type veth peer name "${LAB_NAME}r1" ||
		t_fail "cannot add the redirect pair"
	ip -n "$SINK_NS" link set "${LAB_NAME}r0" up
	ip -n "$SINK_NS" link set "${LAB_NAME}r1" up
	lab_exec sink sysctl -qw "net.ipv6.conf.${LAB_NAME}r1.disable_ipv6=1"
	lab_exec sink sysctl -qw "net.ipv6.conf.${LAB_NAME}r0.disable_ipv6=1"
	# Preflight: r1 runs no NAPI yet, so r0 cannot take redirected frames.
	err=$(lab_exec sink "$SINK" redirect --to "${LAB_NAME}r0" "$SINK_IF" 2>&1)
	t_expect_eq "exit code without NAPI on the peer" 2 $?
	[[ "$err" == *"runs no NAPI"* ]] || t_fail "preflight message: $err"
	wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "refused run left a program attached"

	lab_bg "$rout" sink "$SINK" drop -j -i 100ms -d 120 "${LAB_NAME}r1"
	local rpid=$LAST_PID
	wait_xdp "$SINK_NS" "${LAB_NAME}r1" || t_fail "receiver did not attach"
	lab_bg "$out" sink "$SINK" redirect --to "${LAB_NAME}r0" -j -q -d 120 "$SINK_IF"
	local pid=$LAST_PID
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "redirect did not attach: $(cat "$out")"
	send $n
	wait_total "$rout" interval rx_packets $n
	stop_and_wait "$pid"
	stop_and_wait "$rpid"
	t_expect_eq "redirect verdicts" "$n" "$(json_get "$out" summary 'o["actions"]["redirect"]')"
	t_expect_eq "xmit errors" 0 "$(json_get "$out" summary 'o["drops"]["xdp_xmit_errors"]')"
	t_expect_eq "frames arriving at the far end" "$n" "$(json_get "$rout" summary 'o["rx_packets"]')"
	check_verdicts_balance "$out"
	check_verdicts_balance "$rout"
}

test_sink_signals_and_duration() {
	local out sig
	lab_setup --no-ipv6
	for sig in INT TERM; do
		out=$(mktemp)
		t_on_cleanup rm -f "$out"
		lab_bg "$out" sink "$SINK" drop --pin -j -d 120 "$SINK_IF"
		wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "attach failed"
		kill -$sig "$LAST_PID"
		wait "$LAST_PID"
		t_expect_eq "exit code after SIG$sig" 0 $?
		t_expect_eq "stop reason" "SIG$sig" "$(json_get "$out" summary 'o["stop_reason"]')"
		check_verdicts_balance "$out"
		wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "attached after SIG$sig"
		lab_exec sink test -e "/sys/fs/bpf/xdp-sink/$SINK_IF/stats" && t_fail "pins after SIG$sig"
	done
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_exec sink "$SINK" drop --pin -j -d 500ms "$SINK_IF" >"$out" 2>&1 ||
		t_fail "--duration run failed: $(cat "$out")"
	t_expect_eq "stop reason" duration "$(json_get "$out" summary 'o["stop_reason"]')"
	check_verdicts_balance "$out"
	wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "attached after --duration"
	lab_exec sink test -e "/sys/fs/bpf/xdp-sink/$SINK_IF" && t_fail "pins after --duration"
	# --keep-pins leaves the map for inspection, and a later run says so.
	lab_exec sink "$SINK" drop --pin --keep-pins -q -d 200ms "$SINK_IF" >/dev/null 2>&1
	lab_exec sink test -e "/sys/fs/bpf/xdp-sink/$SINK_IF/stats" || t_fail "--keep-pins removed pins"
	out=$(lab_exec sink "$SINK" drop --pin -d 200ms "$SINK_IF" 2>&1)
	t_expect_eq "exit code with stale pins" 2 $?
	[[ "$out" == *"still pinned"* ]] || t_fail "stale pin message: $out"
	lab_exec sink "$SINK" drop --pin --force -q -d 200ms "$SINK_IF" >/dev/null 2>&1 ||
		t_fail "--force did not take over stale pins"
	lab_exec sink test -e "/sys/fs/bpf/xdp-sink/$SINK_IF" && t_fail "pins after --force run"
	return 0
}

test_sink_busy_stale_force() {
	local out msg
	lab_setup --no-ipv6
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" sink "$SINK" drop -q -d 120 "$SINK_IF"
	local pid=$LAST_PID
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "attach failed"
	msg=$(lab_exec sink "$SINK" drop -d 1 "$SINK_IF" 2>&1)
	t_expect_eq "exit code on a busy interface" 2 $?
	[[ "$msg" == *"in use by a running xdp-sink"*"--force"* ]] || t_fail "busy message: $msg"
	# A killed sink leaves nothing: its BPF link goes with the process.
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "SIGKILL left the program attached"
	# One of ours attached by netlink (an old build, a kernel without links) and
	# left without a holder is recognised as stale.
	lab_exec sink ip link set dev "$SINK_IF" xdpdrv object "$BUILD/xdp_sink.bpf.o" sec xdp \
		2>/dev/null || t_skip "ip cannot load $BUILD/xdp_sink.bpf.o"
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "netlink attach of xdp_sink.bpf.o"
	msg=$(lab_exec sink "$SINK" drop -d 1 "$SINK_IF" 2>&1)
	t_expect_eq "exit code with a stale program" 2 $?
	[[ "$msg" == *"stale xdp-sink program"*"--force"* ]] || t_fail "stale message: $msg"
	lab_exec sink "$SINK" drop --force -q -d 300ms "$SINK_IF" >/dev/null 2>&1 ||
		t_fail "--force failed"
	wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "program left after the --force run"
	# A foreign program is named.
	lab_exec sink ip link set dev "$SINK_IF" xdp object "$BUILD/xdp_sink.bpf.o" sec xdp 2>/dev/null ||
		lab_exec sink bpftool net attach xdp name xdp_bare_drop dev "$SINK_IF" 2>/dev/null
	if wait_xdp "$SINK_NS" "$SINK_IF"; then
		msg=$(lab_exec sink "$SINK" drop -d 1 "$SINK_IF" 2>&1)
		t_expect_eq "exit code with a foreign program" 2 $?
		[[ "$msg" == *"already has an XDP program"* || "$msg" == *"stale"* ]] ||
			t_fail "foreign message: $msg"
		lab_exec sink ip link set dev "$SINK_IF" xdp off
	fi
	return 0
}

expect_usage_error() { # what pattern cmd...
	local what=$1 pat=$2 msg rc lines
	shift 2
	msg=$("$@" 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "exit code for $what" 2 "$rc"
	lines=$(printf '%s\n' "$msg" | grep -c .)
	t_expect_eq "stderr lines for $what" 1 "$lines"
	[[ "$msg" == *$pat* ]] || t_fail "$what: expected message containing '$pat', got: $msg"
}

# A start reads no kernel BTF (5 MB: at every start it cost twice the rest of it,
# 73 against 23 ms of CPU, paired): the default object calls no kfunc. Only --hw-time,
# whose program calls one, reads it. libbpf says which it did at -vv.
test_sink_start_reads_no_kernel_btf() {
	local mode out
	lab_setup --no-ipv6
	for mode in drop pass tx xsk; do
		out=$(lab_exec sink "$SINK" "$mode" -vv -d 0.001 "$SINK_IF" 2>&1) ||
			t_fail "xdp-sink $mode -vv failed: $(tail -n 3 <<<"$out")"
		grep -q "loading object 'xdp_sink_bpf'" <<<"$out" ||
			t_fail "xdp-sink $mode -vv: no libbpf debug lines to judge by"
		! grep -q 'loading kernel BTF' <<<"$out" || t_fail "xdp-sink $mode read the kernel's BTF"
	done
	out=$(lab_exec sink "$SINK" xsk --hw-time -vv -d 0.001 "$SINK_IF" 2>&1) ||
		t_fail "xdp-sink xsk --hw-time -vv failed: $(tail -n 3 <<<"$out")"
	grep -q 'loading kernel BTF' <<<"$out" ||
		t_fail "xdp-sink xsk --hw-time did not resolve its kfunc in the kernel's BTF"
}

test_sink_bad_input() {
	lab_setup --no-ipv6
	local x="$TESTENV exec --name $LAB_NAME sink --"
	expect_usage_error "unknown interface" "not found" $x "$SINK" drop nosuchif0
	expect_usage_error "no command" "missing command" "$SINK"
	expect_usage_error "unknown command" "unknown command" "$SINK" sink "$SINK_IF"
	expect_usage_error "unknown option" "unknown option" $x "$SINK" drop --bogus "$SINK_IF"
	expect_usage_error "bad count" "not a number" $x "$SINK" drop -n lots "$SINK_IF"
	expect_usage_error "zero count" "out of range" $x "$SINK" drop -n 0 "$SINK_IF"
	expect_usage_error "cost too high" "out of range" $x "$SINK" drop --cost 5000000 "$SINK_IF"
	expect_usage_error "bad mode" "unknown value" $x "$SINK" drop -m hw "$SINK_IF"
	expect_usage_error "redirect without --to" "--to" $x "$SINK" redirect "$SINK_IF"
	expect_usage_error "redirect to itself" "interface itself" $x "$SINK" redirect --to "$SINK_IF" "$SINK_IF"
	expect_usage_error "redirect to nowhere" "not found" $x "$SINK" redirect --to nosuch0 "$SINK_IF"
	expect_usage_error "--to with drop" "--to is an option of xdp-sink redirect, not of drop" $x "$SINK" drop --to lo "$SINK_IF"
	expect_usage_error "native XDP on lo" "-m skb" $x "$SINK" drop -d 1 lo
	lab_exec sink ip link set dev "$SINK_IF" down
	expect_usage_error "interface down" "is down" $x "$SINK" drop "$SINK_IF"
	lab_exec sink ip link set dev "$SINK_IF" up
	if command -v setpriv >/dev/null; then
		expect_usage_error "no privileges" "CAP_" $x setpriv --reuid 65534 --regid 65534 \
			--clear-groups --inh-caps=-all "$SINK" drop "$SINK_IF"
	fi
	wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "a refused run left a program attached"
	wait_xdp "$SINK_NS" lo none || t_fail "a refused run left a program on lo"
	lab_exec sink test -e /sys/fs/bpf/xdp-sink && t_fail "a refused run left pins"
	return 0
}

test_sink_count_matches_kernel_after_stop() {
	local out xdp0 xdp1 n
	lab_setup --no-ipv6
	xdp0=$(lab_exec sink ethtool -S "$SINK_IF" | awk '/rx_queue_0_xdp_packets/ {print $2}')
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" sink "$SINK" drop -j -q -n 100000 -d 60 "$SINK_IF"
	local pid=$LAST_PID
	wait_xdp "$SINK_NS" "$SINK_IF" || t_fail "sink did not attach"
	# Traffic goes on after the count is reached: the summary must still hold
	# every packet the program counted (it detaches before the last reading).
	lab_bg /dev/null gen "$BUILD/xdp-gen" kernel -q -d 4 "$GEN_IF"
	wait "$pid"
	xdp1=$(lab_exec sink ethtool -S "$SINK_IF" | awk '/rx_queue_0_xdp_packets/ {print $2}')
	n=$(json_get "$out" summary 'o["rx_packets"]')
	t_expect_ge "stopped after the count" 100000 "$n"
	t_expect_eq "summary = the veth's own XDP count" $((xdp1 - xdp0)) "$n"
	check_verdicts_balance "$out"
}
