# SPDX-License-Identifier: GPL-2.0
# common/kern/kstats through tests/tools/kstats-dump in the lab: qdisc, link and veth
# counters against exact packet counts and against what tc reports.

KSDUMP="$BUILD/tests/kstats-dump"
KSEND="$BUILD/tests/pktsend"
KSINK="$BUILD/xdp-sink"
# Not the sink's address: the sink drops the frames without answering (no
# ICMP, no ARP), so the generator's transmit counters see only ours.
KS_DST_IP=10.11.0.99

ks_need_tools() {
	local t
	for t in "$KSDUMP" "$KSEND" "$@"; do
		[ -x "$t" ] || t_skip "$t not built (make all)"
	done
}

# ks_send_delta OUT SIDE IFNAME COUNT [SINK_OUT]: the delta of IFNAME's
# counters (read in SIDE's namespace) across sending COUNT frames from the
# generator and, with the JSON output of an xdp-sink -j -i on the receiver,
# until that sink has counted them all (NAPI on the receiver may run after
# the send returns; the checks show it if it never does).
ks_send_delta() {
	local out=$1 side=$2 ifname=$3 n=$4
	lab_exec "$side" "$KSDUMP" "$ifname" -- bash -c '
		ip netns exec "$1" "$2" -q -n "$3" --dst-mac "$4" --dst-ip "$5" "$6" || exit
		[ -z "$7" ] && exit
		. "$ROOT/tests/integration/lib.sh"
		wait_total "$7" interval rx_packets "$3" || true' \
		_ "$GEN_NS" "$KSEND" "$n" "$SINK_MAC" "$KS_DST_IP" "$GEN_IF" "${5:-}" >"$out" ||
		t_fail "kstats-dump/pktsend failed: $(cat "$out")"
}

# ks_get OUT EXPR: a value of the kstats object 'k' of the last line in OUT
# (through json_get, which answers without a python start of its own).
ks_get() {
	local type
	type=$(sed -n 's/^{"type":"\([a-z]*\)".*/\1/p' "$1" | tail -n 1)
	json_get "$1" "$type" "(lambda k: $2)(o[\"kstats\"])"
}

# ks_cmp_tc KSTATS_FILE TC_JSON_FILE: the root and every child agree with tc -s -j.
# For mq, the root also equals the sum of tc's children. Prints what differs.
ks_cmp_tc() {
	t_schema_note "$1"
	python3 - "$1" "$2" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("{")]
k = json.loads(lines[-1])["kstats"]["qdisc"]
tc = json.load(open(sys.argv[2]))
names = {"bytes": "sent_bytes", "packets": "sent_packets", "drops": "drops",
         "overlimits": "overlimits", "requeues": "requeues", "backlog": "backlog_bytes",
         "qlen": "qlen"}
bad = []
root = [q for q in tc if q.get("root")]
if len(root) != 1:
    bad.append("tc shows %d root qdiscs" % len(root))
else:
    root = root[0]
    if root["kind"] != k["kind"] or root["handle"] != k["handle"]:
        bad.append("root: tc %s %s, kstats %s %s" % (root["kind"], root["handle"], k["kind"], k["handle"]))
    for t, n in names.items():
        if root[t] != k[n]:
            bad.append("root %s: tc %s, kstats %s" % (t, root[t], k[n]))
    kids = [q for q in tc if not q.get("root") and q.get("parent", "").split(":")[0] + ":" == root["handle"]]
    kk = {c["parent"]: c for c in k.get("children", [])}
    if len(kids) != len(kk):
        bad.append("children: tc %d, kstats %d" % (len(kids), len(kk)))
    for c in kids:
        m = kk.get(c["parent"])
        if m is None or m["kind"] != c["kind"]:
            bad.append("child %s %s missing in kstats" % (c["kind"], c["parent"]))
            continue
        for t, n in names.items():
            if c[t] != m[n]:
                bad.append("child %s %s: tc %s, kstats %s" % (c["parent"], t, c[t], m[n]))
    if root["kind"] == "mq":
        for t, n in names.items():
            s = sum(c[t] for c in kids)
            if s != k[n]:
                bad.append("mq %s: tc children sum %s, kstats root %s" % (t, s, k[n]))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}

ks_drained() { # NS IFNAME: every qdisc on IFNAME empty (tc -s -j)?
	local out
	out=$(tc -n "$1" -s -j qdisc show dev "$2") || return 1
	! grep -qE '"qlen":[1-9]' <<<"$out"
}

# ks_wait_drained NS IFNAME: until tc shows an empty root qdisc (at most 10 s).
ks_wait_drained() {
	t_wait_until 10 ks_drained "$1" "$2"
}

# ks_snapshot_vs_tc OUT_PREFIX: a kstats snapshot and tc's view of the generator
# veth, taken while nothing moves, agree field by field.
ks_snapshot_vs_tc() {
	local ks=$1.ks tcj=$1.tc diff
	ks_wait_drained "$GEN_NS" "$GEN_IF" || t_fail "qdisc on $GEN_IF did not drain"
	lab_exec gen "$KSDUMP" "$GEN_IF" >"$ks" || t_fail "kstats-dump failed: $(cat "$ks")"
	tc -n "$GEN_NS" -s -j qdisc show dev "$GEN_IF" >"$tcj" || t_fail "tc -s -j failed"
	diff=$(ks_cmp_tc "$ks" "$tcj") || t_fail "kstats and tc disagree: $diff; tc: $(cat "$tcj")"
}

# ks_tmp VAR: a temporary file's name in VAR, removed at cleanup with its .ks and .tc
# siblings. Not $(ks_tmp): the cleanup would be the subshell's, and the files would stay.
ks_tmp() {
	local -n _ks_file=$1
	_ks_file=$(mktemp /tmp/xdpsg-kstats.XXXXXX)
	t_on_cleanup rm -f "$_ks_file" "$_ks_file.ks" "$_ks_file.tc"
}

test_kstats_pfifo_exact() {
	local n=1000 out
	ks_need_tools
	lab_setup --no-ipv6 --qdisc pfifo:100
	ks_tmp out
	ks_send_delta "$out" gen "$GEN_IF" $n
	t_expect_eq "qdisc kind" pfifo "$(ks_get "$out" 'k["qdisc"]["kind"]')"
	t_expect_eq "qdisc sent_packets delta" $n "$(ks_get "$out" 'k["qdisc"]["sent_packets"]')"
	t_expect_eq "qdisc sent_bytes delta" $((n * 60)) "$(ks_get "$out" 'k["qdisc"]["sent_bytes"]')"
	t_expect_eq "qdisc drops delta" 0 "$(ks_get "$out" 'k["qdisc"]["drops"]')"
	t_expect_eq "qdisc qlen after" 0 "$(ks_get "$out" 'k["qdisc"]["qlen"]')"
	t_expect_eq "link tx_packets delta" $n "$(ks_get "$out" 'k["link"]["tx_packets"]')"
	t_expect_eq "link tx_dropped delta" 0 "$(ks_get "$out" 'k["link"]["tx_dropped"]')"
	t_expect_eq "veth object on a veth" True "$(ks_get "$out" '"veth" in k')"
	t_expect_eq "veth tx_xdp_xmit (no XDP here)" 0 "$(ks_get "$out" 'k["veth"]["tx_xdp_xmit"]')"
	ks_snapshot_vs_tc "$out"
}

test_kstats_tbf_drops_match_tc() {
	local out drops over
	ks_need_tools
	lab_setup --no-ipv6 --qdisc tbf:1mbit:10kb:10ms
	ks_tmp out
	# 2000 x 60 B at 1 mbit/s: about a second; the sender retries what tbf refuses.
	ks_send_delta "$out" gen "$GEN_IF" 2000
	t_expect_eq "qdisc kind" tbf "$(ks_get "$out" 'k["qdisc"]["kind"]')"
	drops=$(ks_get "$out" 'k["qdisc"]["drops"]')
	over=$(ks_get "$out" 'k["qdisc"]["overlimits"]')
	t_expect_ge "tbf drops + overlimits delta" 1 $((drops + over))
	# What the qdisc accepted = what it sent + what it still holds.
	t_expect_eq "tbf sent + qlen" 2000 \
		"$(ks_get "$out" 'k["qdisc"]["sent_packets"] + k["qdisc"]["qlen"]')"
	ks_snapshot_vs_tc "$out"
}

test_kstats_noqueue_and_bfifo() {
	local n=500 out
	ks_need_tools
	lab_setup --no-ipv6
	ks_tmp out
	ks_send_delta "$out" gen "$GEN_IF" $n
	t_expect_eq "default qdisc kind" noqueue "$(ks_get "$out" 'k["qdisc"]["kind"]')"
	t_expect_eq "noqueue sent_packets" 0 "$(ks_get "$out" 'k["qdisc"]["sent_packets"]')"
	t_expect_eq "link tx_packets delta" $n "$(ks_get "$out" 'k["link"]["tx_packets"]')"
	ks_snapshot_vs_tc "$out"

	tc -n "$GEN_NS" qdisc replace dev "$GEN_IF" root bfifo limit 30000 ||
		t_fail "tc qdisc replace bfifo failed"
	ks_send_delta "$out" gen "$GEN_IF" $n
	t_expect_eq "qdisc kind" bfifo "$(ks_get "$out" 'k["qdisc"]["kind"]')"
	t_expect_eq "bfifo sent_packets (new qdisc counts from zero)" $n \
		"$(ks_get "$out" 'k["qdisc"]["sent_packets"]')"
	ks_snapshot_vs_tc "$out"

	# The human block names the same layers.
	lab_exec gen "$KSDUMP" -t "$GEN_IF" >"$out" || t_fail "kstats-dump -t failed"
	grep -q "^  qdisc bfifo " "$out" || t_fail "expected a 'qdisc bfifo' line, got: $(cat "$out")"
	# A snapshot: both sends, 2 x 500, with a thousands separator.
	grep -q "^kernel $GEN_IF: link tx 1,000 pkts" "$out" ||
		t_fail "expected link tx 1,000, got: $(cat "$out")"
	return 0
}

test_kstats_mq_children() {
	local n=2000 out
	ks_need_tools
	lab_setup --no-ipv6 --queues 2
	tc -n "$GEN_NS" qdisc replace dev "$GEN_IF" root mq || t_fail "tc qdisc replace mq failed"
	ks_tmp out
	# One sender: its frames may all take one TX queue; the sums must hold anyway.
	ks_send_delta "$out" gen "$GEN_IF" $n
	t_expect_eq "qdisc kind" mq "$(ks_get "$out" 'k["qdisc"]["kind"]')"
	t_expect_eq "mq children" 2 "$(ks_get "$out" 'len(k["qdisc"]["children"])')"
	t_expect_eq "mq sent_packets delta" $n "$(ks_get "$out" 'k["qdisc"]["sent_packets"]')"
	t_expect_eq "children sum" $n \
		"$(ks_get "$out" 'sum(c["sent_packets"] for c in k["qdisc"]["children"])')"
	t_expect_eq "veth queues" 2 "$(ks_get "$out" 'len(k["veth"]["queues"])')"
	ks_snapshot_vs_tc "$out"
}

test_kstats_veth_rx_xdp() {
	local n=5000 out sinklog
	ks_need_tools "$KSINK"
	lab_setup --no-ipv6
	ks_tmp out
	ks_tmp sinklog
	lab_bg "$sinklog" sink "$KSINK" drop -j -i 100ms -d 60 "$SINK_IF"
	local spid=$LAST_PID
	wait_ready "$sinklog" "$spid" || t_fail "xdp-sink did not start: $(cat "$sinklog")"
	ks_send_delta "$out" sink "$SINK_IF" $n "$sinklog"
	t_expect_eq "veth rx_queue_0_xdp_packets delta" $n \
		"$(ks_get "$out" 'k["veth"]["queues"][0]["rx_xdp_packets"]')"
	t_expect_eq "veth rx_xdp_packets sum" $n "$(ks_get "$out" 'k["veth"]["rx_xdp_packets"]')"
	t_expect_eq "veth rx_xdp_drops (XDP_DROP)" $n "$(ks_get "$out" 'k["veth"]["rx_xdp_drops"]')"
	t_expect_eq "veth rx_drops (ring full)" 0 "$(ks_get "$out" 'k["veth"]["rx_drops"]')"
	# For frames from the peer's ndo_start_xmit, veth counts skb->len after
	# eth_type_trans pulled the Ethernet header: 46 of the 60 bytes.
	t_expect_eq "veth rx_xdp_bytes" $((n * 46)) "$(ks_get "$out" 'k["veth"]["rx_xdp_bytes"]')"
	t_expect_eq "sink qdisc (noqueue)" noqueue "$(ks_get "$out" 'k["qdisc"]["kind"]')"

	# The generator side of the same lab sees the frames leave.
	ks_send_delta "$out" gen "$GEN_IF" $n
	t_expect_eq "gen link tx_packets" $n "$(ks_get "$out" 'k["link"]["tx_packets"]')"
	kill -INT "$spid"
	wait "$spid"
	check_verdicts_balance "$sinklog"
	return 0
}

test_kstats_missing_interface() {
	local err rc
	ks_need_tools
	err=$("$KSDUMP" no-such-if0 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "exit code for a missing interface" 2 "$rc"
	[[ "$err" == *no-such-if0* ]] || t_fail "expected the name in the message, got '$err'"
}
