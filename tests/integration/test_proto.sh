# SPDX-License-Identifier: GPL-2.0
# xdp-gen's header vocabulary (--proto, --tcp-flags, --vlan, --encap) judged by
# the kernel, not by our parser: the sink side has no XDP program and hands
# every frame to the stack (GRO on: kernel mode's veth peer needs NAPI), and
# the stack's own counters must move by exactly the count sent: ICMP echo
# requests answered (also behind VLAN priority tags), SYN cookies sent, VLAN
# and tunnel devices' receive counters. Then scapy decodes captured frames of every kind (checksums,
# fields, the stamp at the L4 payload's start), and bad input is refused.

GEN="$BUILD/xdp-gen"
JUDGE=(/usr/bin/python3 "$ROOT/tests/integration/proto_judge.py")
N=10000

# The sink namespace's counter NAME (nstat: absolute, history untouched).
kstat() { # NAME
	lab_exec sink nstat -asz "$1" | awk -v n="$1" '$1 == n { print $2 }'
}

dev_rx() { # DEV
	lab_exec sink cat "/sys/class/net/$1/statistics/rx_packets"
}

count_ge() { # WANT CMD...: does CMD print WANT or more?
	local want=$1 v
	shift
	v=$("$@") && [ "${v:-0}" -ge "$want" ]
}

# expect_delta WHAT BEFORE CMD...: once CMD reads BEFORE + SENT (bounded wait:
# the stack may still be working through the last frames), it must read
# exactly that.
expect_delta() {
	local what=$1 before=$2
	shift 2
	t_wait_until 10 count_ge $((before + SENT)) "$@"
	t_expect_eq "$what: up by the frames and their marks" "$SENT" "$(($("$@") - before))"
}

# gen_send MODE OPTIONS...: send N frames at 100 kpps (paced, so the stack keeps up on
# a CPU another test shares: the counts are exact, not a race), or fail saying why. SENT: the
# frames and their marks (docs/stamp.md), which are of the frames' kind: the
# stack counts them alike.
SENT=
gen_send() {
	local mode=$1 out line sum=
	shift
	out=$(lab_exec gen "$GEN" "$mode" -j -q -n "$N" -r 100k "$@" "$GEN_IF" 2>&1) ||
		t_fail "xdp-gen $mode $* -n $N: $out"
	# The last summary, read by the test's python (json_text), not by a python start
	# of its own for each of the file's sixty sends.
	while IFS= read -r line; do
		[[ "$line" == '{"type":"summary"'* ]] && sum=$line
	done <<<"$out"
	SENT=$(json_text "$sum" 'o["tx_packets"] + o["marks"]') && [ -n "$SENT" ] ||
		t_fail "no summary from xdp-gen: $out"
}

V6=() # filled once the lab exists: IPv6 ends, given (no neighbour lookup needed)
lab_proto() {
	lab_setup --gro on
	V6=(--ipv6 --src-ip "$GEN_IP6" --dst-ip "$SINK_IP6" --dst-mac "$SINK_MAC")
}

icmp_body() { # MODE
	local b1 b2
	b1=$(kstat IcmpInEchos)
	b2=$(kstat IcmpOutEchoReps)
	gen_send "$1" --proto icmp --flows 4
	expect_delta IcmpInEchos "$b1" kstat IcmpInEchos
	expect_delta IcmpOutEchoReps "$b2" kstat IcmpOutEchoReps
	b1=$(kstat Icmp6InEchos)
	b2=$(kstat Icmp6OutEchoReplies)
	gen_send "$1" --proto icmp "${V6[@]}"
	expect_delta Icmp6InEchos "$b1" kstat Icmp6InEchos
	expect_delta Icmp6OutEchoReplies "$b2" kstat Icmp6OutEchoReplies
}

# Every echo request the generator sends, IPv4 and ICMPv6, is answered: the
# kernel accepted each checksum (echo replies are not rate-limited, and the
# limits are lifted anyway).
test_proto_icmp() {
	lab_proto
	lab_exec sink sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv4.icmp_msgs_per_sec=1000000000 \
		net.ipv6.icmp.ratelimit=0 || t_fail "sysctl"
	t_each_mode icmp_body
}

# The sink veth's frames the stack dropped as for another host (a VLAN tag
# whose VID no device takes lands there); ip shows the counter once it is not 0.
otherhost() {
	json_text "$(ip -n "$SINK_NS" -j -s -s link show dev "$SINK_IF")" 'o[0]["stats64"]["rx"].get("otherhost", 0)'
}

vlan_untag_body() { # MODE
	local b
	b=$(kstat IcmpInEchos)
	gen_send "$1" --vlan 0 --vlan-prio 5 --proto icmp --flows 4
	expect_delta "IcmpInEchos through an 802.1Q priority tag" "$b" kstat IcmpInEchos
	b=$(kstat IcmpInEchos)
	gen_send "$1" --vlan 0 --vlan 0 --proto icmp
	expect_delta "IcmpInEchos through 802.1ad and 802.1Q priority tags" "$b" kstat IcmpInEchos
	b=$(otherhost)
	gen_send "$1" --vlan 100
	expect_delta "otherhost drops of VLAN 100 (no device takes it)" "$b" otherhost
}

# This kernel has no VLAN devices (test_proto_devices skips them), but its
# receive path still reads every tag: it strips an 802.1ad or 802.1Q tag
# with VID 0 (a priority tag, RFC 802.1Q) and hands the frame on, so every
# echo request behind one or two of them is answered (the stack accepted
# the tags' layout and every checksum behind them); a tag with VID 100 that
# no device takes is counted as a frame for another host, one per frame.
test_proto_vlan_untag() {
	lab_proto
	lab_exec sink sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv4.icmp_msgs_per_sec=1000000000 ||
		t_fail "sysctl"
	t_each_mode vlan_untag_body
}

syn_body() { # MODE
	local b
	b=$(kstat TcpExtSyncookiesSent)
	gen_send "$1" --proto tcp --tcp-flags S --dst-port 80
	expect_delta "TcpExtSyncookiesSent (IPv4)" "$b" kstat TcpExtSyncookiesSent
	b=$(kstat TcpExtSyncookiesSent)
	gen_send "$1" --proto tcp --tcp-flags S --dst-port 80 --flows 8 --src-port 2000-2007 \
		"${V6[@]}"
	expect_delta "TcpExtSyncookiesSent (IPv6)" "$b" kstat TcpExtSyncookiesSent
}

# A listening socket with syncookies=2 answers every SYN with a cookie, so
# each SYN the kernel accepts (checksum, addresses, flags) counts once.
test_proto_tcp_syncookies() {
	local out
	lab_proto
	lab_exec sink sysctl -qw net.ipv4.tcp_syncookies=2 || t_fail "sysctl"
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	lab_bg "$out" sink /usr/bin/python3 -c '
import socket, time
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", 80))
s.listen(4096)
print("listening", flush=True)
time.sleep(600)'
	t_wait_for "$out" listening 10 || t_fail "no listener: $(cat "$out")"
	t_each_mode syn_body
}

# make_dev NAME ip-link-args...: the device, up; 1 if this kernel lacks its type.
make_dev() {
	local name=$1
	shift
	lab_exec sink ip link add name "$name" "$@" 2>/dev/null || return 1
	lab_exec sink ip link set "$name" up || t_fail "ip link set $name up"
}

dev_body() { # MODE DEV OPTIONS...
	local mode=$1 dev=$2 b
	shift 2
	b=$(dev_rx "$dev")
	gen_send "$mode" "$@"
	expect_delta "$dev rx_packets" "$b" dev_rx "$dev"
}

# The kernel's VXLAN devices take every frame (VNI 42 over IPv4, 43 over IPv6
# with the outer UDP checksum they insist on there).
test_proto_vxlan() {
	lab_proto
	make_dev vx42 type vxlan id 42 dstport 4789 local "$SINK_IP4" ||
		t_skip "this kernel has no VXLAN devices"
	make_dev vx43 type vxlan id 43 dstport 4789 local "$SINK_IP6" || t_fail "vxlan over IPv6"
	# Inner sources vary: the one thing that moves the outer UDP checksum per flow.
	t_each_mode dev_body vx42 --encap vxlan:42 --flows 16 --src-ip 10.11.0.100-10.11.0.115
	t_each_mode dev_body vx43 --encap vxlan:43 "${V6[@]}" --outer-src-ip "$GEN_IP6" \
		--outer-dst-ip "$SINK_IP6"
}

# GENEVE, GRE and IP in IP devices, and VLAN/QinQ devices: where this kernel
# has them (a kernel built without them makes these SKIP; test_proto_decode
# still judges those frames with scapy, and the kernel's own reading of the
# outer VLAN tag).
tunnel_dev_case() { # NAME DEV-ARGS -- GEN-OPTIONS
	local name=$1 args=()
	shift
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	if ! make_dev "$name" "${args[@]}"; then
		echo "SKIP $name: this kernel cannot make '${args[*]}'"
		return 0
	fi
	DEVS_RAN=$((DEVS_RAN + 1))
	t_each_mode dev_body "$name" "$@"
}

DEVS_RAN=0

test_proto_devices() {
	lab_proto
	tunnel_dev_case gn42 type geneve id 42 remote "$GEN_IP4" -- --encap geneve:42
	tunnel_dev_case gr1 type gre local "$SINK_IP4" remote "$GEN_IP4" -- --encap gre
	tunnel_dev_case ii1 type ipip local "$SINK_IP4" remote "$GEN_IP4" -- --encap ipip
	tunnel_dev_case gr6 type ip6gre local "$SINK_IP6" remote "$GEN_IP6" -- --encap gre \
		"${V6[@]}" --outer-src-ip "$GEN_IP6" --outer-dst-ip "$SINK_IP6"
	tunnel_dev_case v100 link "$SINK_IF" type vlan id 100 -- --vlan 100
	if make_dev q300 link "$SINK_IF" type vlan proto 802.1ad id 300; then
		tunnel_dev_case q200 link q300 type vlan id 200 -- --vlan 300 --vlan 200
	else
		echo "SKIP QinQ: this kernel has no 802.1ad devices"
	fi
	[ "$DEVS_RAN" -gt 0 ] ||
		t_skip "this kernel has no GENEVE, GRE, IPIP, ip6gre or VLAN devices (test_proto_decode judges those frames)"
}

# judge MODE JUDGE-ARGS -- GEN-OPTIONS: capture 400 frames in the sink
# namespace (every flow and IMIX size many times over), for scapy to decode at the end
# (proto_judge.py; SPEC lists them).
SPEC=
judge() {
	local mode=$1 jargs=() ready cap out
	shift
	while [ "$1" != -- ]; do
		jargs+=("$1")
		shift
	done
	shift
	ready=$(mktemp -u)
	cap=$(mktemp)
	out=$(mktemp)
	t_on_cleanup rm -f "$ready" "$cap" "$out"
	lab_bg "$out" sink "${JUDGE[@]}" capture "$SINK_IF" 400 "$ready" "$cap"
	t_wait_until 20 test -e "$ready" || t_fail "capture did not start: $(cat "$out")"
	N=400 gen_send "$mode" "$@"
	wait "$LAST_PID" || t_fail "capture of $mode $*: $(cat "$out")"
	echo "$cap 400 ${jargs[*]}" >>"$SPEC"
}

# Every kind, each from one mode (the modes take turns: all share one
# builder, and kernel mode has its own in BPF, so kernel mode gets the most).
# long: every kind of frame, judged by tshark
test_proto_decode() {
	/usr/bin/python3 -c 'import scapy' 2>/dev/null || t_skip "python3-scapy not installed"
	lab_proto
	SPEC=$(mktemp)
	t_on_cleanup rm -f "$SPEC"
	judge kernel --proto tcp --tcp-flags 18 -- --proto tcp --tcp-flags SA --flows 8 --src-port 1-8
	judge xsk --proto icmp -- --proto icmp
	judge qdisc --proto icmp --v6 -- --proto icmp "${V6[@]}"
	judge kernel --vlan 100 -- --vlan 100 --vlan-prio 5 --flows 4 --src-port 1-4
	judge xsk --vlan 300 --vlan 200 --proto tcp --v6 -- --vlan 300 --vlan 200 --proto tcp \
		"${V6[@]}"
	judge kernel --encap vxlan --vni 42 -- --encap vxlan:42 --flows 8 --dst-port 1-8 --imix
	judge qdisc --encap vxlan --vni 7 --v6 --outer-v6 -- --encap vxlan:7 "${V6[@]}" \
		--outer-src-ip "$GEN_IP6" --outer-dst-ip "$SINK_IP6"
	judge kernel --encap geneve --vni 16777215 --proto icmp -- --encap geneve:16777215 \
		--proto icmp
	judge xsk --encap geneve --vni 1 --outer-v6 -- --encap geneve:1 --outer-src-ip \
		"$GEN_IP6" --outer-dst-ip "$SINK_IP6" --dst-mac "$SINK_MAC" --flows 4 --src-port 9-12
	judge kernel --encap gre --proto tcp --v6 --outer-v6 -- --encap gre --proto tcp \
		"${V6[@]}" --outer-src-ip "$GEN_IP6" --outer-dst-ip "$SINK_IP6"
	judge qdisc --encap gre -- --encap gre
	judge kernel --encap ipip --v6 -- --encap ipip "${V6[@]}" --outer-src-ip "$GEN_IP4" \
		--outer-dst-ip "$SINK_IP4"
	judge xsk --encap ipip --vlan 9 -- --encap ipip --vlan 9 --flows 4 --src-port 5-8
	"${JUDGE[@]}" check "$SPEC" || t_fail "scapy found frames that are wrong (above)"
}

# Bad input: one line naming the problem and the fix, exit 2. The options are
# one table and one builder for every mode: all of them in xsk mode, a few in
# the others.
bad_case() { # MODE OPTIONS
	local mode=$1 opts=$2 err rc
	# shellcheck disable=SC2086
	err=$(lab_exec gen "$GEN" "$mode" -n 1 $opts "$GEN_IF" 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "exit code of $mode $opts" 2 "$rc"
	t_expect_eq "stderr lines of $mode $opts ($err)" 1 "$(printf '%s\n' "$err" | wc -l)"
	case $err in xdp-gen:*) ;; *) t_fail "$opts: '$err' is not xdp-gen's one line" ;; esac
}

# Every kind the generator makes, from every mode, verified by the xsk sink:
# one run per kind (each its own run id), each run's books received = sent,
# lost 0, duplicates 0, and no frame foreign (the stamp found through every
# header). The stamp reader is ours, so the kernel judges above come first.
XSK_KINDS=("--proto tcp --tcp-flags PA" "--proto icmp" "--vlan 100 --vlan-prio 5"
	"--vlan 100 --vlan 200" "--encap vxlan:42" "--encap geneve:7" "--encap gre" "--encap ipip"
	"--proto tcp --tcp-flags S --encap gre --vlan 7" "--proto icmp --encap vxlan"
	"V6 --proto tcp" "V6 --proto icmp --encap ipip" "V6 --encap geneve --vlan 9")
# A run's books are exact at any count: 1000 frames a kind (20 ms at 50 kpps; the
# generator's CPU time goes with the frames, over 39 runs).
XSK_N=1000

xsk_books_body() { # MODE
	local sout gout spid k id ids=() opts
	sout=$(mktemp) gout=$(mktemp)
	t_on_cleanup rm -f "$sout" "$gout"
	xsk_sink_bg "$sout"
	spid=$LAST_PID
	for k in "${XSK_KINDS[@]}"; do
		# shellcheck disable=SC2206 # the kinds are word lists
		opts=($k)
		[ "${opts[0]}" = V6 ] &&
			opts=(--ipv6 --src-ip fd00::1 --dst-ip fd00::2 --dst-mac "$SINK_MAC" "${opts[@]:1}")
		lab_exec gen "$GEN" "$1" -j -q -n $XSK_N -r 50k "${opts[@]}" "$GEN_IF" >"$gout" 2>&1 ||
			t_fail "xdp-gen $1 $k: $(cat "$gout")"
		id=$(json_get "$gout" summary 'o["run"]') || t_fail "no generator summary: $(cat "$gout")"
		ids+=("$id:$k")
	done
	wait_total "$sout" interval rx_packets $((XSK_N * ${#XSK_KINDS[@]}))
	kill -INT "$spid"
	wait "$spid" || t_fail "xdp-sink xsk exited with $?"
	for id in "${ids[@]}"; do
		t_expect_eq "$1 ${id#*:}: books (received lost duplicates reordered)" "$XSK_N 0 0 0" \
			"$(json_get "$sout" summary "' '.join(str(r[k]) for r in o['runs'] if r['run'] == ${id%%:*} for k in ('received', 'lost', 'duplicates', 'reordered'))")"
	done
	t_expect_eq "$1: runs" ${#XSK_KINDS[@]} "$(json_get "$sout" summary 'len(o["runs"])')"
	t_expect_eq "$1: foreign" 0 "$(json_get "$sout" summary 'o["foreign"]')"
}

test_proto_xsk_sink_books() {
	lab_setup --no-ipv6
	t_each_mode xsk_books_body
}

test_proto_bad_input() {
	local opts mode
	lab_setup --no-ipv6
	while IFS= read -r opts; do
		bad_case xsk "$opts"
	done <<'EOF'
--encap vxlan:16777216
--encap geneve:-1
--encap gre:5
--encap mpls
--vlan 4096
--vlan 1 --vlan 2 --vlan 3
--vlan-prio 8 --vlan 1
--vlan-prio 1
--proto tcp --tcp-flags SX
--proto sctp
--tcp-flags S
--proto icmp --dst-port 80
--proto icmp --src-port 1000
--outer-dst-ip 10.0.0.1
--encap vxlan -s 100
--proto tcp --vlan 1 -s 72
--pcap /dev/null --proto tcp
EOF
	for mode in kernel qdisc; do
		bad_case $mode "--encap vxlan:16777216"
		bad_case $mode "--vlan 1 --vlan 2 --vlan 3"
		bad_case $mode "--proto tcp --tcp-flags Q"
	done
}
