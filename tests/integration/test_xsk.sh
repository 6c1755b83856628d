# SPDX-License-Identifier: GPL-2.0
#
# Integration tests of the AF_XDP memory core (common/xsk/umem, frame_alloc,
# xsk_queue) through tests/tools/xsk-probe, in the sink namespace of a lab.
# Sourced by tests/run.sh after lib.sh; each test_xsk_* runs in its own bash
# process and removes its lab on every exit path.

XP="$BUILD/tests/xsk-probe"

xp_need() {
	[ -x "$XP" ] || t_fail "$XP is missing: run 'make BUILD=$BUILD all' first"
}

# xp_field FILE EXPR: a value of the probe's JSON line (o is the object).
xp_field() {
	json_get "$1" xsk-probe "$2" || t_fail "no xsk-probe JSON line in $1: $(cat "$1")"
}

# The node sysfs links cpu $1 to (0 on a kernel without NUMA).
xp_cpu_node() {
	local l
	for l in /sys/devices/system/cpu/cpu"$1"/node*; do
		[ -e "$l" ] && { basename "$l" | tr -dc 0-9; return; }
	done
	echo 0
}

# Registration, ring sizes, placement, accounting and a real transmit.
test_xsk_probe_copy_mode() {
	local out before after node
	xp_need
	lab_setup --no-ipv6
	out=$(mktemp) && t_on_cleanup "rm -f $out"
	before=$(iface_stat "$GEN_NS" "$GEN_IF" rx packets)
	lab_exec sink "$XP" --cpu 0 --rx-size 512 --tx-size 256 --fill-size 1024 \
		--comp-size 512 --frames 2048 --send 64 "$SINK_IF" >"$out" ||
		t_fail "xsk-probe failed: $(cat "$out")"
	after=$(iface_stat "$GEN_NS" "$GEN_IF" rx packets)
	node=$(xp_cpu_node 0)

	t_expect_eq "bound mode on veth" copy "$(xp_field "$out" 'o["mode"]')"
	t_expect_eq "rx ring" 512 "$(xp_field "$out" 'o["rings"]["rx"]')"
	t_expect_eq "tx ring" 256 "$(xp_field "$out" 'o["rings"]["tx"]')"
	t_expect_eq "fill ring" 1024 "$(xp_field "$out" 'o["rings"]["fill"]')"
	t_expect_eq "completion ring" 512 "$(xp_field "$out" 'o["rings"]["comp"]')"
	# The kernel took the whole fill ring: it is really that big.
	t_expect_eq "fill ring entries posted" 1024 "$(xp_field "$out" 'o["levels"]["fill"]')"
	t_expect_eq "frames" 2048 "$(xp_field "$out" 'o["frames"]')"
	t_expect_eq "UMEM bytes" $((2048 * 4096)) "$(xp_field "$out" 'o["umem"]["bytes"]')"
	t_expect_eq "UMEM node = node of cpu 0" "$node" "$(xp_field "$out" 'o["umem"]["node"]')"
	t_expect_eq "every page on that node" 2048 \
		"$(xp_field "$out" "o['umem']['per_node'].get('$node', 0)")"
	t_expect_eq "placement proven" True "$(xp_field "$out" 'o["umem"]["placed"]')"
	t_expect_eq "veth has no NIC node" -1 "$(xp_field "$out" 'o["umem"]["nic_node"]')"
	t_expect_eq "allocator check" True "$(xp_field "$out" 'o["alloc"]["ok"]')"
	t_expect_eq "frames on the kernel rx side" 1024 "$(xp_field "$out" 'o["alloc"]["kernel_rx"]')"
	t_expect_eq "sent" 64 "$(xp_field "$out" 'o["sent"]')"
	t_expect_eq "completed" 64 "$(xp_field "$out" 'o["completed"]')"
	t_expect_eq "tx invalid descriptors" 0 "$(xp_field "$out" 'o["stats"]["tx_invalid_descs"]')"
	t_expect_ge "frames the generator side received" $((before + 64)) "$after"
}

# Defaults: fill ring twice the rx ring, completion = tx, 4096-byte frames.
test_xsk_probe_defaults() {
	local out
	xp_need
	lab_setup --no-ipv6
	out=$(mktemp) && t_on_cleanup "rm -f $out"
	lab_exec sink "$XP" "$SINK_IF" >"$out" || t_fail "xsk-probe failed: $(cat "$out")"
	t_expect_eq "default rx ring" 2048 "$(xp_field "$out" 'o["rings"]["rx"]')"
	t_expect_eq "default fill ring = 2 x rx" 4096 "$(xp_field "$out" 'o["rings"]["fill"]')"
	t_expect_eq "default completion ring" 2048 "$(xp_field "$out" 'o["rings"]["comp"]')"
	t_expect_eq "default frame size" 4096 "$(xp_field "$out" 'o["frame_size"]')"
	t_expect_eq "default frames = fill + tx" 6144 "$(xp_field "$out" 'o["frames"]')"
	t_expect_eq "auto mode asked" auto "$(xp_field "$out" 'o["asked_mode"]')"
	t_expect_eq "auto falls back to copy on veth" copy "$(xp_field "$out" 'o["mode"]')"
	t_expect_eq "need_wakeup" True "$(xp_field "$out" 'o["need_wakeup"]')"
	t_expect_eq "allocator check" True "$(xp_field "$out" 'o["alloc"]["ok"]')"
}

# Zero-copy asked explicitly on veth: exit 2 and a message that says why.
test_xsk_zerocopy_on_veth_refused() {
	local err rc
	xp_need
	lab_setup --no-ipv6
	err=$(lab_exec sink "$XP" --mode zero-copy "$SINK_IF" 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "exit code" 2 "$rc"
	grep -q "zero-copy" <<<"$err" || t_fail "expected the message to name zero-copy, got: $err"
	grep -q "veth supports copy mode only" <<<"$err" ||
		t_fail "expected the message to say veth supports copy mode only, got: $err"
	# Nothing was left bound: copy mode on the same queue still works.
	lab_exec sink "$XP" --mode copy "$SINK_IF" >/dev/null 2>&1 ||
		t_fail "copy mode after the refused zero-copy bind failed"
}

test_xsk_no_such_interface() {
	local err rc
	xp_need
	lab_setup --no-ipv6
	err=$(lab_exec sink "$XP" xdpsg-nosuch0 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "exit code" 2 "$rc"
	grep -q "interface 'xdpsg-nosuch0' not found" <<<"$err" ||
		t_fail "expected 'interface ... not found', got: $err"
}

# Two queues, one per cpu: each UMEM on its cpu's node; a queue that does not exist.
test_xsk_queue_per_cpu() {
	local out err rc q cpus
	xp_need
	cpus=$(nproc)
	[ "$cpus" -ge 2 ] || t_skip "needs 2 cpus, have $cpus"
	lab_setup --no-ipv6 --queues 2
	out=$(mktemp) && t_on_cleanup "rm -f $out"
	for q in 0 1; do
		lab_exec sink "$XP" --queue "$q" --cpu "$q" --rx-size 256 --tx-size 256 \
			"$SINK_IF" >"$out" || t_fail "xsk-probe on queue $q failed: $(cat "$out")"
		t_expect_eq "queue $q bound" "$q" "$(xp_field "$out" 'o["queue"]')"
		t_expect_eq "queue $q UMEM cpu" "$q" "$(xp_field "$out" 'o["umem"]["cpu"]')"
		t_expect_eq "queue $q UMEM node" "$(xp_cpu_node "$q")" \
			"$(xp_field "$out" 'o["umem"]["node"]')"
		t_expect_eq "queue $q placement" True "$(xp_field "$out" 'o["umem"]["placed"]')"
	done
	err=$(lab_exec sink "$XP" --queue 5 "$SINK_IF" 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "exit code for queue 5" 2 "$rc"
	grep -q "has no queue 5 (it has 2 rx queues)" <<<"$err" ||
		t_fail "expected 'has no queue 5 (it has 2 rx queues)', got: $err"
}

# XDP_MAX_TX_SKB_BUDGET (Linux 6.17+): accepted here, refused before.
test_xsk_tx_budget() {
	local out want
	xp_need
	lab_setup --no-ipv6
	out=$(mktemp) && t_on_cleanup "rm -f $out"
	lab_exec sink "$XP" --tx-budget 128 --send 300 "$SINK_IF" >"$out" ||
		t_fail "xsk-probe failed: $(cat "$out")"
	if [ "$(printf '%s\n6.17\n' "$(uname -r | cut -d- -f1)" | sort -V | head -n 1)" = 6.17 ]; then
		want=True
	else
		want=False # running kernel older than 6.17
	fi
	t_expect_eq "budget accepted on $(uname -r)" "$want" \
		"$(xp_field "$out" 'o["tx_budget"]["accepted"]')"
	t_expect_eq "all sent" 300 "$(xp_field "$out" 'o["completed"]')"
	t_expect_eq "allocator check" True "$(xp_field "$out" 'o["alloc"]["ok"]')"
}
