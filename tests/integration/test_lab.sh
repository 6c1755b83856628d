# SPDX-License-Identifier: GPL-2.0
#
# Integration tests of testenv/testenv.sh, the lab every other integration
# test runs in. Sourced by tests/run.sh after lib.sh; each test_lab_* function
# runs in its own bash process and removes its labs on every exit path.

TL_STATE_DIR=${TESTENV_STATE_DIR:-/run/xdpsg-testenv}

# tl_name SUFFIX: a lab name unique to this test process.
tl_name() {
	[ -n "${TL_BASE:-}" ] || TL_BASE=$(t_labname)
	echo "$TL_BASE$1"
}

# tl_setup NAME [setup options]: like lab_setup, with a name of our choosing. One
# python start (setup --env, whose stdout is env's: test_lab_env), not two; and,
# as lab_setup, the test's python for json_get (a python start a call without it).
tl_setup() {
	local name=$1 env
	shift
	json_server_start
	T_LABS+=("$name")
	env=$("$TESTENV" setup --env --name "$name" "$@") || t_fail "testenv setup --name $name $* failed"
	eval "$env" || t_fail "testenv setup --env --name $name gave no variables"
}

tl_ns_exists() { # ns
	awk '{ print $1 }' <<<"$(ip netns list)" | grep -qxF -- "$1"
}

# tl_listed LIST LINE: LIST has LINE, alone or with what uses the lab after it
# (a lab this test run owns is listed "in-use: its owner ... runs").
tl_listed() {
	grep -qxE -- "$(sed 's/[][\.*^$]/\\&/g' <<<"$2")( in-use: .*)?" <<<"$1"
}

tl_ns_busy() { # ns: a process runs in it
	[ -n "$(ip netns pids "$1" 2>/dev/null)" ]
}

# tl_assert_gone NAME [STATE_DIR]: nothing of lab NAME is left anywhere.
tl_assert_gone() {
	local name=$1 dir=${2:-$TL_STATE_DIR} ns
	for ns in "$name-gen" "$name-sink"; do
		if tl_ns_exists "$ns"; then
			t_fail "lab $name: expected no namespace $ns, got: $(ip netns list | tr '\n' ' ')"
		fi
	done
	[ ! -e "$dir/$name.state" ] || t_fail "lab $name: expected no $dir/$name.state, it exists"
	[ ! -e "$dir/$name.d" ] || t_fail "lab $name: expected no $dir/$name.d, it exists"
	if grep -E "(xdpsg-$name-|/$name\.d/|/run/netns/$name-)" /proc/mounts; then
		t_fail "lab $name: expected no mounts of the lab in /proc/mounts, found the lines above"
	fi
	if ip link show dev "$name-g" >/dev/null 2>&1 || ip link show dev "$name-s" >/dev/null 2>&1; then
		t_fail "lab $name: expected no $name-g/$name-s link in the host namespace, found one"
	fi
}

# tl_expect_usage WHAT ARGS...: testenv exits 2 with exactly one line on stderr.
tl_expect_usage() {
	local what=$1 err rc lines
	shift
	err=$("$TESTENV" "$@" 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "$what: exit code of 'testenv.sh $*'" 2 "$rc"
	lines=$(printf '%s\n' "$err" | grep -c .)
	t_expect_eq "$what: stderr lines of 'testenv.sh $*' (got: $err)" 1 "$lines"
}

test_lab_setup_teardown_twice() {
	local name i
	name=$(tl_name a)
	T_LABS+=("$name")
	for i in 1 2; do
		"$TESTENV" setup --name "$name" >/dev/null || t_fail "round $i: setup --name $name failed"
		tl_ns_exists "$name-gen" || t_fail "round $i: expected namespace $name-gen after setup"
		tl_ns_exists "$name-sink" || t_fail "round $i: expected namespace $name-sink after setup"
		[ -f "$TL_STATE_DIR/$name.state" ] || t_fail "round $i: expected state file $TL_STATE_DIR/$name.state"
		"$TESTENV" teardown --name "$name" >/dev/null || t_fail "round $i: teardown --name $name failed"
		tl_assert_gone "$name"
	done
	# Tearing down what is not there is success.
	"$TESTENV" teardown --name "$name" >/dev/null || t_fail "teardown of a removed lab: expected exit 0, got $?"
}

test_lab_two_labs_ping() {
	local a b mac_a out
	command -v ping >/dev/null || t_skip "ping not installed (apt-get install iputils-ping)"
	a=$(tl_name a)
	b=$(tl_name b)
	tl_setup "$a"
	mac_a=$GEN_MAC
	tl_setup "$b"
	[ "$mac_a" != "$GEN_MAC" ] || t_fail "labs $a and $b: expected different generator MACs, both are $mac_a"
	[ "$GEN_MAC" != "$SINK_MAC" ] || t_fail "lab $b: expected different MACs per side, both are $GEN_MAC"
	for LAB_NAME in "$a" "$b"; do
		lab_exec gen ping -c1 -W1 "$SINK_IP4" >/dev/null ||
			t_fail "lab $LAB_NAME: expected ping $SINK_IP4 from gen to succeed, it failed"
		lab_exec gen ping -c1 -W1 "$SINK_IP6" >/dev/null ||
			t_fail "lab $LAB_NAME: expected ping $SINK_IP6 from gen to succeed, it failed"
		lab_exec sink ping -c1 -W1 "$GEN_IP4" >/dev/null ||
			t_fail "lab $LAB_NAME: expected ping $GEN_IP4 from sink to succeed, it failed"
	done
	out=$("$TESTENV" list)
	tl_listed "$out" "$a queues=1 qdisc=none" || t_fail "list: expected a line '$a queues=1 qdisc=none', got: $out"
	tl_listed "$out" "$b queues=1 qdisc=none" || t_fail "list: expected a line '$b queues=1 qdisc=none', got: $out"
}

test_lab_queues() {
	local out rx tx
	lab_setup --queues 2
	t_expect_eq "QUEUES from env" 2 "$QUEUES"
	# veth reports separate rx/tx channels (no combined ones).
	out=$(lab_exec gen ethtool -l "$GEN_IF") || t_fail "ethtool -l $GEN_IF failed: $out"
	rx=$(echo "$out" | awk '/^Current/ { cur = 1 } cur && /^RX:/ { print $2 }')
	tx=$(echo "$out" | awk '/^Current/ { cur = 1 } cur && /^TX:/ { print $2 }')
	t_expect_eq "ethtool -l $GEN_IF current RX" 2 "$rx"
	t_expect_eq "ethtool -l $GEN_IF current TX" 2 "$tx"
	out=$(lab_exec sink ethtool -l "$SINK_IF")
	rx=$(echo "$out" | awk '/^Current/ { cur = 1 } cur && /^RX:/ { print $2 }')
	t_expect_eq "ethtool -l $SINK_IF current RX" 2 "$rx"
	out=$("$TESTENV" list)
	tl_listed "$out" "$LAB_NAME queues=2 qdisc=none" ||
		t_fail "list: expected a line '$LAB_NAME queues=2 qdisc=none', got: $out"
}

test_lab_qdisc() {
	local out
	tl_setup "$(tl_name p)" --qdisc pfifo:500 --queues 2
	out=$(tc -n "$GEN_NS" qdisc show dev "$GEN_IF" root)
	[[ "$out" == "qdisc pfifo "*" limit 500p"* ]] || t_fail "pfifo:500: expected 'qdisc pfifo ... limit 500p' on $GEN_IF, got '$out'"
	out=$(tc -n "$SINK_NS" qdisc show dev "$SINK_IF" root)
	[[ "$out" == "qdisc noqueue"* ]] || t_fail "sink side: expected its default noqueue, got '$out'"
	out=$("$TESTENV" status --name "$LAB_NAME") || t_fail "status --name $LAB_NAME failed"
	[[ "$out" == *"qdisc pfifo"*"limit 500p"*"Sent "* ]] ||
		t_fail "status: expected the pfifo qdisc with counters in its output, got: $out"

	tl_setup "$(tl_name b)" --qdisc bfifo:30000
	out=$(tc -n "$GEN_NS" qdisc show dev "$GEN_IF" root)
	[[ "$out" == "qdisc bfifo "*" limit 30000b"* ]] || t_fail "bfifo:30000: expected 'qdisc bfifo ... limit 30000b', got '$out'"

	tl_setup "$(tl_name t)" --qdisc tbf:100mbit:32kb:50ms
	out=$(tc -n "$GEN_NS" qdisc show dev "$GEN_IF" root)
	[[ "$out" == "qdisc tbf "*"rate 100Mbit burst 32Kb"* ]] || t_fail "tbf:100mbit:32kb:50ms: expected 'qdisc tbf ... rate 100Mbit burst 32Kb', got '$out'"

	tl_setup "$(tl_name n)" --qdisc none
	out=$(tc -n "$GEN_NS" qdisc show dev "$GEN_IF" root)
	[[ "$out" == "qdisc noqueue"* ]] || t_fail "none: expected noqueue on $GEN_IF, got '$out'"

	tl_expect_usage "bad qdisc kind" setup --name "$(tl_name x)" --qdisc sfq:10
	tl_expect_usage "pfifo without limit" setup --name "$(tl_name x)" --qdisc pfifo
	tl_expect_usage "pfifo limit 0" setup --name "$(tl_name x)" --qdisc pfifo:0
	tl_expect_usage "tbf missing latency" setup --name "$(tl_name x)" --qdisc tbf:1mbit:10kb
	tl_assert_gone "$(tl_name x)"
}

test_lab_bpffs_persists() {
	local map out
	lab_setup
	map="p_$LAB_NAME" # map names are global: make it this lab's
	lab_exec gen mountpoint -q /sys/fs/bpf || t_fail "exec gen: expected /sys/fs/bpf to be a mountpoint"
	lab_exec sink mountpoint -q /sys/fs/bpf || t_fail "exec sink: expected /sys/fs/bpf to be a mountpoint"
	lab_exec gen bpftool map create /sys/fs/bpf/tl_pin type array key 4 value 4 entries 1 name "$map" ||
		t_fail "exec gen: bpftool map create /sys/fs/bpf/tl_pin failed"
	lab_exec gen bpftool map update pinned /sys/fs/bpf/tl_pin key 0 0 0 0 value 42 0 0 0 ||
		t_fail "second exec gen: expected the pin from the first exec, update failed"
	out=$(lab_exec gen bpftool -j map dump pinned /sys/fs/bpf/tl_pin) ||
		t_fail "third exec gen: expected to dump the pinned map, failed: $out"
	[[ "$out" == *'"0x2a"'* ]] || t_fail "third exec gen: expected value 0x2a in the dump, got '$out'"
	# The sides are two hosts: their bpffs are separate.
	lab_exec sink test -e /sys/fs/bpf/tl_pin && t_fail "exec sink: expected no tl_pin (gen's bpffs), found it"
	"$TESTENV" teardown --name "$LAB_NAME" >/dev/null || t_fail "teardown --name $LAB_NAME failed"
	tl_assert_gone "$LAB_NAME"
	# Freeing the map is not instant when exec's mount namespaces are still
	# being released: allow a moment.
	for _ in $(seq 30); do
		grep -q "name $map " <<<"$(bpftool map show 2>/dev/null)" || return 0
		sleep 0.1
	done
	t_fail "after teardown: expected map $map (pinned in the lab) to be freed, bpftool map show still lists it"
}

test_lab_exec_exit_code() {
	local rc
	lab_setup
	lab_exec sink sh -c 'exit 7'
	rc=$?
	t_expect_eq "exit code passed through exec" 7 "$rc"
	# Without '--', and with the name after the side.
	out=$("$TESTENV" exec sink --name "$LAB_NAME" ip -o link show dev "$SINK_IF") ||
		t_fail "exec without '--' failed: $out"
	[[ "$out" == *"$SINK_IF"* ]] || t_fail "exec sink: expected to see $SINK_IF, got '$out'"
	lab_exec gen ip link show dev "$SINK_IF" >/dev/null 2>&1 &&
		t_fail "exec gen: expected $SINK_IF to be invisible in the gen namespace"
	return 0
}

# testenv/README.md runs the tools by name in the lab: exec finds the checkout's
# build/ without PATH saying so, and a tool it cannot find gets a line saying
# how, with the lab's --name (the shell said only "xdp-sink: not found").
test_lab_exec_finds_the_tools() {
	local out rc sys=/usr/sbin:/usr/bin:/sbin:/bin empty
	lab_setup
	out=$(PATH=$sys "$TESTENV" exec --name "$LAB_NAME" sink -- xdp-sink --version 2>&1) ||
		t_fail "exec -- xdp-sink with the system PATH: $out"
	[[ "$out" == "xdp-sink "* ]] || t_fail "xdp-sink --version in the lab: $out"
	PATH=$sys command -v xdp-gen >/dev/null && t_skip "xdp-gen is installed on the system PATH"
	empty=$(mktemp -d)
	t_on_cleanup rmdir "$empty"
	out=$(PATH=$sys BUILD=$empty "$TESTENV" exec --name "$LAB_NAME" gen -- xdp-gen -d 1 x 2>&1)
	rc=$?
	t_expect_eq "exit code of a tool not found" 127 "$rc"
	[[ "$out" == *"'xdp-gen' not found: "*"make install"*"exec --name $LAB_NAME gen -- build/xdp-gen"* ]] ||
		t_fail "the not-found line: $out"
	t_expect_eq "lines said" 1 "$(wc -l <<<"$out")"
}

test_lab_rollback() {
	local name step rc err
	name=$(tl_name r)
	T_LABS+=("$name")
	for step in netns veth sysctl offload qdisc up addr neigh threaded bpffs key clocks 'done'; do
		err=$(TESTENV_FAIL_AT=$step "$TESTENV" setup --name "$name" --queues 2 \
			--qdisc pfifo:100 --threaded-napi --gro on 2>&1 >/dev/null)
		rc=$?
		t_expect_eq "setup with TESTENV_FAIL_AT=$step: exit code" 1 "$rc"
		[[ "$err" == *"rolled back"* ]] || t_fail "TESTENV_FAIL_AT=$step: expected 'rolled back' on stderr, got '$err'"
		tl_assert_gone "$name"
	done
	# The name is free again.
	"$TESTENV" setup --name "$name" >/dev/null || t_fail "setup after rollbacks failed"
}

test_lab_teardown_leaves_nothing() {
	local pid
	lab_setup --queues 2 --qdisc pfifo:100 --threaded-napi --gro on --tso off
	lab_exec gen bpftool map create /sys/fs/bpf/tl_x type array key 4 value 4 entries 1 name tl_x ||
		t_fail "pin in gen failed"
	lab_exec sink bpftool map create /sys/fs/bpf/tl_y type array key 4 value 4 entries 1 name tl_y ||
		t_fail "pin in sink failed"
	# A process still running in the lab must not keep it alive.
	lab_bg /dev/null sink sleep 60
	pid=$LAST_PID
	sleep 0.3
	grep -q "$LAB_NAME" /proc/mounts || t_fail "expected the lab's mounts in /proc/mounts before teardown"
	"$TESTENV" teardown --name "$LAB_NAME" >/dev/null || t_fail "teardown --name $LAB_NAME failed"
	tl_assert_gone "$LAB_NAME"
	sleep 0.3
	kill -0 "$pid" 2>/dev/null && t_fail "expected teardown to stop the process running in the lab (pid $pid)"
	return 0
}

test_lab_existing_name() {
	lab_setup
	tl_expect_usage "setup of an existing lab" setup --name "$LAB_NAME"
	lab_exec gen ip link show dev "$GEN_IF" >/dev/null ||
		t_fail "the first lab must survive a refused second setup; $GEN_IF is gone"
}

test_lab_bad_input() {
	local name
	name=$(tl_name z)
	tl_expect_usage "unknown option" setup --name "$name" --frobnicate
	tl_expect_usage "unknown command" frobnicate
	tl_expect_usage "no command"
	tl_expect_usage "--name too long" setup --name abcdefghijklmn
	tl_expect_usage "--name with a slash" setup --name a/b
	tl_expect_usage "--queues 0" setup --name "$name" --queues 0
	tl_expect_usage "--queues not a number" setup --name "$name" --queues two
	tl_expect_usage "--gro maybe" setup --name "$name" --gro maybe
	tl_expect_usage "--tso 1" setup --name "$name" --tso 1
	tl_expect_usage "--mtu 10" setup --name "$name" --mtu 10 --no-ipv6
	tl_expect_usage "--mtu 1000 with IPv6" setup --name "$name" --mtu 1000
	tl_expect_usage "missing value" setup --name "$name" --queues
	tl_expect_usage "setup option for status" status --name "$name" --queues 2
	tl_expect_usage "--all outside teardown" status --all
	tl_expect_usage "exec bad side" exec --name "$name" middle -- true
	tl_expect_usage "exec without command" exec --name "$name" gen
	tl_expect_usage "exec in a missing lab" exec --name "$name" gen -- true
	tl_expect_usage "env of a missing lab" env --name "$name"
	TESTENV_FAIL_AT=nowhere tl_expect_usage "bad TESTENV_FAIL_AT" setup --name "$name"
	tl_assert_gone "$name"
	if command -v setpriv >/dev/null; then
		tl_expect_usage_nonroot "not root" list
	fi
	grep -q '^Usage:' <<<"$("$TESTENV" --help)" || t_fail "--help: expected a Usage: line"
}

# As tl_expect_usage, as user nobody.
tl_expect_usage_nonroot() {
	local what=$1 err rc
	shift
	err=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$TESTENV" "$@" 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "$what: exit code" 2 "$rc"
	[[ "$err" == *root* ]] || t_fail "$what: expected stderr to say root is needed, got '$err'"
}

test_lab_env() {
	local out names expected
	lab_setup --queues 2
	out=$("$TESTENV" env --name "$LAB_NAME") || t_fail "env failed"
	names=$(echo "$out" | sed -n 's/^\([A-Z_0-9]*\)=.*/\1/p' | tr '\n' ' ')
	expected="LAB_NAME GEN_NS SINK_NS GEN_IF SINK_IF GEN_MAC SINK_MAC GEN_IP4 SINK_IP4 GEN_IP6 SINK_IP6 QUEUES "
	expected+="CLOCKS GEN_CLOCK_OFFSET_S SINK_CLOCK_OFFSET_S STAMP_KEY "
	# exec's plan (testenv/xdpsg/labexec.py), for lib.sh's lab_exec.
	expected+="LAB_EXEC_SH LAB_TOOLS_DIR GEN_BPFFS GEN_TIMENS GEN_READY GEN_STARTING "
	expected+="SINK_BPFFS SINK_TIMENS SINK_READY SINK_STARTING "
	t_expect_eq "names printed by env" "$expected" "$names"
	# A line each, but LAB_EXEC_SH's script, which takes 5.
	t_expect_eq "env lines" 30 "$(echo "$out" | wc -l)"
	(
		unset GEN_NS SINK_NS GEN_IF SINK_IF GEN_MAC SINK_MAC GEN_IP4 SINK_IP4 GEN_IP6 SINK_IP6 QUEUES
		eval "$out"
		n=${LAB_NAME}
		t_expect_eq GEN_NS "$n-gen" "$GEN_NS"
		t_expect_eq SINK_NS "$n-sink" "$SINK_NS"
		t_expect_eq GEN_IF "$n-g" "$GEN_IF"
		t_expect_eq SINK_IF "$n-s" "$SINK_IF"
		t_expect_eq GEN_IP4 10.11.0.1 "$GEN_IP4"
		t_expect_eq SINK_IP4 10.11.0.2 "$SINK_IP4"
		t_expect_eq GEN_IP6 fd00:11::1 "$GEN_IP6"
		t_expect_eq SINK_IP6 fd00:11::2 "$SINK_IP6"
		t_expect_eq QUEUES 2 "$QUEUES"
		[[ "$GEN_MAC" =~ ^02(:[0-9a-f]{2}){5}$ ]] || t_fail "GEN_MAC: expected a locally administered MAC, got '$GEN_MAC'"
		t_expect_eq "GEN_MAC on $GEN_IF" "$GEN_MAC" \
			"$(ip -n "$GEN_NS" -br link show dev "$GEN_IF" | awk '{ print $3 }')"
		t_expect_eq "SINK_MAC on $SINK_IF" "$SINK_MAC" \
			"$(ip -n "$SINK_NS" -br link show dev "$SINK_IF" | awk '{ print $3 }')"
		# The static neighbour entries use them.
		grep -q "lladdr $SINK_MAC PERMANENT" <<<"$(ip -n "$GEN_NS" neigh show "$SINK_IP4" dev "$GEN_IF")" ||
			t_fail "gen: expected a permanent neighbour $SINK_IP4 -> $SINK_MAC, got '$(ip -n "$GEN_NS" neigh show dev "$GEN_IF")'"
		grep -q "lladdr $GEN_MAC PERMANENT" <<<"$(ip -n "$SINK_NS" neigh show "$GEN_IP6" dev "$SINK_IF")" ||
			t_fail "sink: expected a permanent neighbour $GEN_IP6 -> $GEN_MAC, got '$(ip -n "$SINK_NS" neigh show dev "$SINK_IF")'"
	) || exit 1
	# The same name always gives the same MACs.
	local mac=$GEN_MAC
	"$TESTENV" teardown --name "$LAB_NAME" >/dev/null
	"$TESTENV" setup --name "$LAB_NAME" >/dev/null || t_fail "second setup failed"
	eval "$("$TESTENV" env --name "$LAB_NAME")"
	t_expect_eq "GEN_MAC after a new setup of the same name" "$mac" "$GEN_MAC"
	# setup --env: stdout is env's, byte for byte; the ready line goes to stderr.
	"$TESTENV" teardown --name "$LAB_NAME" >/dev/null
	local err
	err=$(mktemp) && t_on_cleanup rm -f "$err"
	out=$("$TESTENV" setup --env --name "$LAB_NAME" --queues 2 2>"$err") ||
		t_fail "setup --env failed: $(cat "$err")"
	t_expect_eq "setup --env's stdout is env's" "$("$TESTENV" env --name "$LAB_NAME")" "$out"
	grep -q "^testenv.sh: lab '$LAB_NAME' ready: .*queues 2" "$err" ||
		t_fail "setup --env: no ready line on stderr: $(cat "$err")"
	tl_expect_usage "--env with another command" env --env --name "$LAB_NAME"
}

test_lab_options() {
	local out
	tl_setup "$(tl_name o)" --threaded-napi --gro on --tso off --mtu 9000
	t_expect_eq "threaded on $SINK_IF" 1 "$(lab_exec sink cat /sys/class/net/"$SINK_IF"/threaded)"
	out=$(lab_exec sink ethtool -k "$SINK_IF" | awk '/^generic-receive-offload:/ { print $2 }')
	t_expect_eq "GRO on $SINK_IF" on "$out"
	out=$(lab_exec gen ethtool -k "$GEN_IF" | awk '/^tcp-segmentation-offload:/ { print $2 }')
	t_expect_eq "TSO on $GEN_IF" off "$out"
	t_expect_eq "mtu of $GEN_IF" 9000 "$(json_text "$(ip -n "$GEN_NS" -j link show dev "$GEN_IF")" 'o[0]["mtu"]')"
	t_expect_eq "mtu of $SINK_IF" 9000 "$(lab_exec sink cat /sys/class/net/"$SINK_IF"/mtu)"
	t_expect_eq "disable_ipv6 on $SINK_IF" 0 "$(lab_exec sink cat /proc/sys/net/ipv6/conf/"$SINK_IF"/disable_ipv6)"
	t_expect_eq "accept_ra on $GEN_IF" 0 "$(lab_exec gen cat /proc/sys/net/ipv6/conf/"$GEN_IF"/accept_ra)"

	# Threaded NAPI without GRO: the flag must stick and GRO stay off.
	# (An MTU below 1280 removes IPv6 from a link entirely, conf/IF included:
	# use 1400 so disable_ipv6 can be read.)
	tl_setup "$(tl_name t)" --threaded-napi --gro off --mtu 1400 --no-ipv6
	t_expect_eq "threaded on $SINK_IF with GRO off" 1 "$(lab_exec sink cat /sys/class/net/"$SINK_IF"/threaded)"
	out=$(lab_exec sink ethtool -k "$SINK_IF" | awk '/^generic-receive-offload:/ { print $2 }')
	t_expect_eq "GRO on $SINK_IF" off "$out"
	t_expect_eq "mtu of $SINK_IF" 1400 "$(lab_exec sink cat /sys/class/net/"$SINK_IF"/mtu)"
	t_expect_eq "disable_ipv6 on $GEN_IF" 1 "$(lab_exec gen cat /proc/sys/net/ipv6/conf/"$GEN_IF"/disable_ipv6)"
	t_expect_eq "disable_ipv6 on $SINK_IF" 1 "$(lab_exec sink cat /proc/sys/net/ipv6/conf/"$SINK_IF"/disable_ipv6)"
	t_expect_eq "GEN_IP6 with --no-ipv6" "" "$GEN_IP6"
	out=$(ip -n "$SINK_NS" -6 addr show dev "$SINK_IF")
	t_expect_eq "IPv6 addresses on $SINK_IF with --no-ipv6" "" "$out"

	# Without IPv6 an MTU below its minimum is fine.
	tl_setup "$(tl_name m)" --mtu 1000 --no-ipv6
	t_expect_eq "mtu of $GEN_IF" 1000 "$(lab_exec gen cat /sys/class/net/"$GEN_IF"/mtu)"

	# Defaults: no threaded NAPI.
	tl_setup "$(tl_name d)"
	t_expect_eq "threaded on $SINK_IF by default" 0 "$(lab_exec sink cat /sys/class/net/"$SINK_IF"/threaded)"
}

test_lab_no_ipv6_is_silent() {
	local tx rx
	lab_setup --no-ipv6
	sleep 1.5
	tx=$(iface_stat "$GEN_NS" "$GEN_IF" tx packets)
	rx=$(iface_stat "$SINK_NS" "$SINK_IF" rx packets)
	t_expect_eq "frames sent by $GEN_IF on a --no-ipv6 lab left alone" 0 "$tx"
	t_expect_eq "frames received by $SINK_IF on a --no-ipv6 lab left alone" 0 "$rx"
}

test_lab_teardown_all_own_state_dir() {
	local dir a b other out
	dir=$(mktemp -d /tmp/xdpsg-testenv-state.XXXXXX)
	t_on_cleanup "TESTENV_STATE_DIR='$dir' '$TESTENV' teardown --all; rmdir '$dir'"
	a=$(tl_name a)
	b=$(tl_name b)
	# Labs no running process owns (tests/run.sh owns the others it makes).
	TESTENV_STATE_DIR=$dir env -u XDPSG_LAB_OWNER "$TESTENV" setup --name "$a" >/dev/null ||
		t_fail "setup $a in $dir failed"
	TESTENV_STATE_DIR=$dir env -u XDPSG_LAB_OWNER "$TESTENV" setup --name "$b" --queues 2 >/dev/null ||
		t_fail "setup $b in $dir failed"
	other=$(tl_name o)
	tl_setup "$other"
	out=$(TESTENV_STATE_DIR=$dir "$TESTENV" list)
	t_expect_eq "list with the private state dir" \
		"$(printf '%s\n' "$a queues=1 qdisc=none" "$b queues=2 qdisc=none" | sort | paste -sd'|')" \
		"$(echo "$out" | sort | paste -sd'|')"
	TESTENV_STATE_DIR=$dir "$TESTENV" teardown --all >/dev/null || t_fail "teardown --all failed"
	tl_assert_gone "$a" "$dir"
	tl_assert_gone "$b" "$dir"
	lab_exec gen ip link show dev "$GEN_IF" >/dev/null ||
		t_fail "teardown --all with another state dir must not touch lab $other; its $GEN_IF is gone"
	[ -f "$TL_STATE_DIR/$other.state" ] || t_fail "lab $other lost its state file"
	TESTENV_STATE_DIR=$dir "$TESTENV" teardown --all >/dev/null || t_fail "a second teardown --all failed"
}

# teardown --all removes only this front end's labs that nothing uses: a lab
# whose owner runs (XDPSG_LAB_OWNER at setup), one with a process in its
# namespace and one another front end made are named and left; list shows all
# of them with what made and uses them. Before, --all removed every lab.
test_lab_teardown_all_leaves_labs_in_use() {
	local dir a b c o n out owner inside
	dir=$(mktemp -d /tmp/xdpsg-testenv-state.XXXXXX)
	a=$(tl_name a) b=$(tl_name b) c=$(tl_name c) o=$(tl_name o)
	t_on_cleanup "for n in $a $b $c $o; do TESTENV_STATE_DIR='$dir' '$TESTENV' teardown --name \$n; done; rmdir '$dir'"
	sleep 600 &
	owner=$!
	T_PIDS+=("$owner")
	for n in "$a" "$c" "$o"; do
		TESTENV_STATE_DIR=$dir env -u XDPSG_LAB_OWNER "$TESTENV" setup --name "$n" >/dev/null ||
			t_fail "setup $n failed"
	done
	TESTENV_STATE_DIR=$dir XDPSG_LAB_OWNER=$owner "$TESTENV" setup --name "$b" >/dev/null ||
		t_fail "setup $b failed"
	grep -qx "OWNER=$owner:.*" "$dir/$b.state" || t_fail "$b.state names no owner: $(cat "$dir/$b.state")"
	grep -qx "MADE_BY=$(realpath "$TESTENV")" "$dir/$a.state" ||
		t_fail "$a.state does not name its maker: $(cat "$dir/$a.state")"
	sed -i 's|^MADE_BY=.*|MADE_BY=/usr/sbin/xdpsg-lab|' "$dir/$o.state"
	TESTENV_STATE_DIR=$dir "$TESTENV" exec --name "$c" sink -- sleep 600 &
	inside=$!
	T_PIDS+=("$inside")
	t_wait_until 10 tl_ns_busy "$c-sink" || t_fail "nothing runs in $c-sink"
	out=$(TESTENV_STATE_DIR=$dir "$TESTENV" list)
	grep -qx "$a queues=1 qdisc=none" <<<"$out" || t_fail "list, $a: $out"
	[[ "$out" == *"$b queues=1 qdisc=none in-use: its owner pid $owner (sleep) runs"* ]] || t_fail "list, $b: $out"
	[[ "$out" == *"$c queues=1 qdisc=none in-use: pid "*" (sleep) in $c-sink"* ]] || t_fail "list, $c: $out"
	[[ "$out" == *"$o queues=1 qdisc=none made-by=/usr/sbin/xdpsg-lab"* ]] || t_fail "list, $o: $out"
	out=$(TESTENV_STATE_DIR=$dir "$TESTENV" teardown --all) || t_fail "teardown --all failed: $out"
	tl_assert_gone "$a" "$dir"
	[[ "$out" == *"lab '$b' left alone: in use, its owner pid $owner (sleep) runs (teardown --name $b removes it anyway)"* ]] ||
		t_fail "teardown --all, $b: $out"
	[[ "$out" == *"lab '$c' left alone: in use, pid "*"(sleep) in $c-sink"* ]] || t_fail "teardown --all, $c: $out"
	[[ "$out" == *"lab '$o' left alone: /usr/sbin/xdpsg-lab made it (teardown --name $o removes it)"* ]] ||
		t_fail "teardown --all, $o: $out"
	for n in "$b" "$c" "$o"; do
		[ -f "$dir/$n.state" ] && tl_ns_exists "$n-sink" || t_fail "teardown --all removed $n"
	done
	# The owner gone and nothing in the lab, both go; another front end's lab stays.
	kill "$owner" "$inside"
	wait "$owner" "$inside" 2>/dev/null
	t_wait_until 10 eval '! tl_ns_busy "$c-sink"' || t_fail "sleep still runs in $c-sink"
	out=$(TESTENV_STATE_DIR=$dir "$TESTENV" teardown --all) || t_fail "second teardown --all failed: $out"
	tl_assert_gone "$b" "$dir"
	tl_assert_gone "$c" "$dir"
	[ -f "$dir/$o.state" ] || t_fail "the second teardown --all removed $o"
	TESTENV_STATE_DIR=$dir "$TESTENV" teardown --name "$o" >/dev/null || t_fail "teardown --name $o failed"
	tl_assert_gone "$o" "$dir"
}

# --dut: three namespaces, the DUT's variables in env, and xdp-gen's defaults
# (the generator interface's first neighbour entry) go through the DUT: a
# burst with nothing given arrives at the sink, stamped, all of it.
tl_dut_defaults_reach_sink() { # mode
	local mode=$1 out sink_out n=2000 name
	name=$(tl_name "$mode" | cut -c1-12)
	tl_setup "$name" --dut "$mode" --no-ipv6
	for ns in "$name-gen" "$name-dut" "$name-sink"; do
		tl_ns_exists "$ns" || t_fail "--dut $mode: expected namespace $ns"
	done
	out=$("$TESTENV" env --name "$name")
	eval "$out"
	t_expect_eq "DUT_MODE" "$mode" "$DUT_MODE"
	t_expect_eq "DUT_NS" "$name-dut" "$DUT_NS"
	t_expect_eq "DUT_GEN_IF" "$name-dg" "$DUT_GEN_IF"
	t_expect_eq "DUT_SINK_IF" "$name-ds" "$DUT_SINK_IF"
	lab_exec dut ip link show dev "$DUT_GEN_IF" >/dev/null || t_fail "exec dut: $DUT_GEN_IF not there"
	[[ "$("$TESTENV" status --name "$name")" == *"dut: $mode in $name-dut"* ]] ||
		t_fail "status: expected a 'dut: $mode' line"
	[[ "$("$TESTENV" list)" == *"$name queues=1 qdisc=none dut=$mode"* ]] || t_fail "list: expected dut=$mode"
	if [ ! -x "$BUILD/xdp-sink" ] || [ ! -x "$BUILD/xdp-gen" ]; then t_skip "tools not built"; fi
	sink_out=$(mktemp)
	t_on_cleanup rm -f "$sink_out"
	"$TESTENV" exec --name "$name" sink -- "$BUILD/xdp-sink" xsk -j -d 20s "$SINK_IF" >"$sink_out" 2>&1 &
	T_PIDS+=("$!")
	t_wait_for "$sink_out" '"type":"ready"' 15 || t_fail "xdp-sink xsk did not start: $(cat "$sink_out")"
	lab_exec gen "$BUILD/xdp-gen" xsk -q -n "$n" -r 20000 "$GEN_IF" >/dev/null ||
		t_fail "xdp-gen xsk with no addresses given failed in a --dut $mode lab"
	sleep 0.5
	kill -INT "${T_PIDS[-1]}"
	wait "${T_PIDS[-1]}"
	t_expect_eq "stamped frames at the sink through --dut $mode" "$n" "$(json_get "$sink_out" summary 'o["stamped"]')"
	check_verdicts_balance "$sink_out"
	"$TESTENV" teardown --name "$name" >/dev/null || t_fail "teardown failed"
	tl_assert_gone "$name"
	tl_ns_exists "$name-dut" && t_fail "teardown left $name-dut"
	return 0
}

test_lab_dut_forward() {
	tl_dut_defaults_reach_sink forward
	# The addressing: the sink is on the far subnet, the generator's neighbour
	# for it has the DUT's MAC, the gateway entry is NOARP (skipped by xdp-gen).
	local name
	name=$(tl_name F | cut -c1-12)
	tl_setup "$name" --dut forward --dut-qdisc tbf:100mbit:16kb:50ms
	t_expect_eq "SINK_IP4 with --dut forward" 10.12.0.2 "$SINK_IP4"
	ip -n "$GEN_NS" neigh show 10.12.0.2 dev "$GEN_IF" | grep -q "lladdr $DUT_GEN_MAC PERMANENT" ||
		t_fail "gen: expected 10.12.0.2 -> $DUT_GEN_MAC permanent, got '$(ip -n "$GEN_NS" neigh show dev "$GEN_IF")'"
	ip -n "$GEN_NS" neigh show 10.11.0.254 dev "$GEN_IF" nud all | grep -q NOARP ||
		t_fail "gen: expected a NOARP entry for the DUT 10.11.0.254"
	[[ "$(tc -n "$DUT_NS" qdisc show dev "$DUT_SINK_IF" root)" == "qdisc tbf "*"rate 100Mbit"* ]] ||
		t_fail "--dut-qdisc: expected tbf on $DUT_SINK_IF"
	t_expect_eq "ip_forward in the DUT" 1 "$(ip netns exec "$DUT_NS" cat /proc/sys/net/ipv4/ip_forward)"
	command -v ping >/dev/null && { ip netns exec "$GEN_NS" ping -c 1 -W 2 10.12.0.2 >/dev/null ||
		t_fail "ping from gen to the sink through the DUT failed"; }
	return 0
}

test_lab_dut_bridge() {
	tl_dut_defaults_reach_sink bridge
}

test_lab_dut_xdp() {
	[ -x "$BUILD/xdp-sink" ] || t_skip "xdp-sink not built"
	tl_dut_defaults_reach_sink xdp
}

test_lab_dut_bad_input() {
	local name
	name=$(tl_name q | cut -c1-12)
	tl_expect_usage "unknown --dut" setup --name "$name" --dut router
	tl_expect_usage "--dut-qdisc without --dut" setup --name "$name" --dut-qdisc pfifo:10
	tl_expect_usage "--dut xdp with a qdisc" setup --name "$name" --dut xdp --dut-qdisc pfifo:10
	tl_expect_usage "bad --dut-qdisc" setup --name "$name" --dut forward --dut-qdisc sfq
	tl_expect_usage "13-character name with --dut" setup --name abcdefghijklm --dut bridge
	tl_expect_usage "--dut with the backpressure scenario" setup --name "$name" --dut forward --scenario backpressure
	tl_expect_usage "--dut-cost without --dut xdp" setup --name "$name" --dut bridge --dut-cost 1000
	tl_expect_usage "--dut-cost above xdp-sink's 1 ms" setup --name "$name" --dut xdp --dut-cost 2000000
	tl_assert_gone "$name"
	tl_ns_exists "$name-dut" && t_fail "a refused setup left $name-dut"
	lab_setup
	tl_expect_usage "exec dut in a lab without a DUT" exec --name "$LAB_NAME" dut -- true
}

# --dut-cost: the XDP DUT runs with the known per-frame cost, and says so.
test_lab_dut_cost() {
	local name
	[ -x "$BUILD/xdp-sink" ] || t_skip "xdp-sink not built"
	name=$(tl_name c | cut -c1-12)
	tl_setup "$name" --dut xdp --dut-cost 50000 --no-ipv6
	eval "$("$TESTENV" env --name "$name")"
	t_expect_eq "DUT_COST" 50000 "$DUT_COST"
	pgrep -af -- "xdp-sink redirect --to $DUT_SINK_IF --cost 50000 --pin -q $DUT_GEN_IF" >/dev/null ||
		t_fail "the DUT does not run with --cost 50000: $(pgrep -af "xdp-sink redirect --to $DUT_SINK_IF")"
	[[ "$("$TESTENV" list)" == *"$name queues=1 qdisc=none dut=xdp dut-qdisc=none dut-cost=50000"* ]] ||
		t_fail "list: expected dut-cost=50000: $("$TESTENV" list)"
}

test_lab_dut_rollback() {
	local name step rc err
	name=$(tl_name R | cut -c1-12)
	T_LABS+=("$name")
	for step in veth neigh dut 'done'; do
		err=$(TESTENV_FAIL_AT=$step "$TESTENV" setup --name "$name" --dut bridge 2>&1 >/dev/null)
		rc=$?
		t_expect_eq "setup --dut bridge with TESTENV_FAIL_AT=$step: exit code" 1 "$rc"
		tl_assert_gone "$name"
		tl_ns_exists "$name-dut" && t_fail "TESTENV_FAIL_AT=$step: $name-dut left behind"
	done
	return 0
}

# --- separate clocks and the stamp key ------------------------------------------

# tl_judge_ticks PCAP KEY: the xdpsg stamps in PCAP (a capture at the sink,
# tcpdump's kernel receive times in ns), decoded with stamp.py under KEY
# (a key file, or "public"), against the generator side's clock: each frame's
# send ticks must be its receive time on that clock (the host's moved by
# GEN_CLOCK_OFFSET_S) less a delay of 0 to 1 s. The ticks wrap every 2.15 s
# and a day moves them 0.29 s: on a clock a day away, every frame would be off
# by 0.29 s or 1.86 s, so in the separate row the host's clock must not fit.
# A mark (a generator that sends them) is judged the same way, and its full
# send time (clock_ns) too, which does not wrap.
tl_judge_ticks() {
	/usr/bin/python3 - "$1" "$2" "$GEN_CLOCK_OFFSET_S" "$ROOT/testenv" "${TL_REAL_LESS_MONO:-}" <<-'EOF'
	import sys, time
	from decimal import Decimal
	sys.path.insert(0, sys.argv[4])
	from scapy.layers.inet import UDP
	from scapy.utils import rdpcap
	from xdpsg import stamp
	pcap, keyfile, off = sys.argv[1], sys.argv[2], int(sys.argv[3])
	key = stamp.Key.public_key() if keyfile == "public" else stamp.Key.from_file(keyfile)
	W, TICK = 1 << 24, 1 << stamp.TICK_SHIFT
	# The capture's times are CLOCK_REALTIME; the host's CLOCK_MONOTONIC is that less
	# their difference, read before the frames were sent and now. The VM's clock is set
	# from its host now and then (a step of 7 ms was seen during a run): a frame's time
	# fits under one of the two.
	now = time.clock_gettime_ns(time.CLOCK_REALTIME) - time.monotonic_ns()
	real_less_mono = sorted({now, int(sys.argv[5] or now)})

	def delay_ms(recv_real, clock_off, ticks):
	    def one(rlm):
	        d = (stamp.ticks(recv_real - rlm + clock_off * 10**9) - ticks) % W
	        return (d - W if d >= W // 2 else d) * TICK / 1e6
	    return min((one(rlm) for rlm in real_less_mono), key=lambda d: abs(d - 1))

	ours, host, bad, marks = [], [], [], 0
	for p in rdpcap(pcap):
	    if UDP not in p:
	        continue
	    kind, f = stamp.unpack(bytes(p[UDP].payload), key)
	    if kind not in ("data", "mark"):
	        bad.append("a frame that is not %s's stamp: %s %s" % (keyfile, kind, f))
	        continue
	    recv = int(Decimal(p.time) * 10**9)
	    ours.append(delay_ms(recv, off, f["ticks"]))
	    host.append(delay_ms(recv, 0, f["ticks"]))
	    if kind == "mark":
	        marks += 1
	        full_ms = min(((recv - rlm + off * 10**9 - f["clock_ns"]) / 1e6
	                       for rlm in real_less_mono), key=lambda d: abs(d - 1))
	        if not -5 <= full_ms <= 1000:
	            bad.append("a mark's clock_ns %d is %.0f ms from the gen side's clock"
	                       % (f["clock_ns"], full_ms))
	if not ours:
	    bad.append("no stamped frame in the capture")
	if ours and not all(-5 <= d <= 1000 for d in ours):
	    bad.append("send ticks do not fit the gen side's clock (+%d s): delays %.1f..%.1f ms"
	               % (off, min(ours), max(ours)))
	if off and any(-5 <= d <= 1000 for d in host):
	    bad.append("send ticks fit the host's clock too, though gen's is %d s ahead" % off)
	print("%d frames (%d marks): send ticks on the gen side's clock (+%d s), %.2f..%.2f ms "
	      "before capture%s; CLOCK_REALTIME moved %.3f ms against CLOCK_MONOTONIC meanwhile"
	      % (len(ours), marks, off, min(ours or [0]), max(ours or [0]),
	         "; on the host's clock they would be %.0f ms" % host[0] if off and host else "",
	         (real_less_mono[-1] - real_less_mono[0]) / 1e6))
	for b in bad[:5]:
	    print("FAIL: " + b)
	sys.exit(1 if bad else 0)
	EOF
}

# The clocks matrix, one body in both rows: the lab's env and the kernel
# (/proc/self/timens_offsets of what exec runs) agree on each side's clock,
# and xdp-gen xsk run by exec in the gen side stamps that side's clock: a
# capture at the sink, decoded by stamp.py, carries send ticks that fit it
# (and, in the separate row, not the host's). The key the frames are signed
# with is the lab's where xdp-gen takes --stamp-key (it reads XDPSG_STAMP_KEY,
# which exec sets), else the public key.
tl_clocks_body() {
	local pcap n=40 want
	clocks_lab_setup --no-ipv6
	want=0
	[ "$T_CLOCKS" = same ] || want=86400
	t_expect_eq "CLOCKS in env" "$T_CLOCKS" "$CLOCKS"
	t_expect_eq "GEN_CLOCK_OFFSET_S in env" "$want" "$(lab_clock_offset gen)"
	t_expect_eq "SINK_CLOCK_OFFSET_S in env" 0 "$(lab_clock_offset sink)"
	t_expect_eq "monotonic offset in exec gen's /proc/self/timens_offsets" "$want" \
		"$(lab_timens_offset gen)"
	t_expect_eq "monotonic offset in exec sink's /proc/self/timens_offsets" 0 \
		"$(lab_timens_offset sink)"
	[ -x "$BUILD/xdp-gen" ] || t_skip "xdp-gen not built"
	command -v tcpdump >/dev/null || t_skip "tcpdump not installed"
	/usr/bin/python3 -c 'import scapy' 2>/dev/null || t_skip "python3-scapy not installed"
	pcap=$(mktemp /tmp/xdpsg-clocks.XXXXXX)
	t_on_cleanup rm -f "$pcap" "$pcap.log"
	lab_bg "$pcap.log" sink tcpdump -i "$SINK_IF" -n -U -w "$pcap" \
		--time-stamp-precision=nano udp
	t_wait_for "$pcap.log" "listening on" 10 || t_fail "tcpdump did not start: $(cat "$pcap.log")"
	TL_REAL_LESS_MONO=$(/usr/bin/python3 -c 'import time
print(time.clock_gettime_ns(time.CLOCK_REALTIME) - time.monotonic_ns())')
	lab_exec gen "$BUILD/xdp-gen" xsk -q -n "$n" -r 1000 "$GEN_IF" >/dev/null ||
		t_fail "xdp-gen xsk -n $n in the gen side failed"
	t_wait_until 10 tl_pcap_has "$pcap" "$n" ||
		t_fail "the capture at the sink holds $(tl_pcap_count "$pcap") frames, expected $n"
	kill -INT "$LAST_PID"
	t_wait_gone "$LAST_PID"
	if mode_has xsk stamp-key; then
		tl_judge_ticks "$pcap" "$STAMP_KEY" || t_fail "the captured stamps, judged above"
	else
		echo "note: this xdp-gen takes no --stamp-key (it signs with the public key)"
		tl_judge_ticks "$pcap" public || t_fail "the captured stamps, judged above"
	fi
}

tl_pcap_count() { # PCAP
	tcpdump -r "$1" -n udp 2>/dev/null | wc -l
}

tl_pcap_has() { # PCAP N
	[ "$(tl_pcap_count "$1")" -ge "$2" ]
}

test_lab_clocks_matrix() {
	t_each_clocks tl_clocks_body
}

# --separate-clocks with a DUT: the clocks of the three sides as exec and
# enter see them (gen a day ahead, the DUT two, the sink the host's), in env,
# status and list; the time namespaces are nsfs mounts in the lab's state
# directory. Teardown stops what runs in the lab and leaves nothing: no
# mount, file or namespace.
test_lab_separate_clocks() {
	local name out side want
	t_clocks_separable || t_skip "$T_CLOCKS_WHY"
	name=$(tl_name c | cut -c1-12)
	tl_setup "$name" --separate-clocks --dut bridge --no-ipv6
	t_expect_eq "CLOCKS" separate "$CLOCKS"
	for side in gen:86400 dut:172800 sink:0; do
		want=${side#*:}
		side=${side%:*}
		t_expect_eq "${side^^}_CLOCK_OFFSET_S in env" "$want" "$(lab_clock_offset "$side")"
		t_expect_eq "monotonic offset of exec $side" "$want" "$(lab_timens_offset "$side")"
	done
	# The sink's clock is the host's even for an exec run from a side with its own.
	t_expect_eq "monotonic offset of exec sink run from exec gen" 0 \
		"$(lab_exec gen "$TESTENV" exec --name "$name" sink -- cat /proc/self/timens_offsets |
			awk '$1 == "monotonic" { print $2 }')"
	out=$(echo 'cat /proc/self/timens_offsets' | SHELL=/bin/sh "$TESTENV" enter --name "$name" dut 2>&1) ||
		t_fail "enter dut with a command on stdin failed: $out"
	[[ "$out" == *"CLOCK_MONOTONIC +172800 s"*"monotonic"*" 172800 "* ]] ||
		t_fail "enter dut: expected the shell on the DUT's clock (+172800 s), got: $out"
	out=$("$TESTENV" status --name "$name") || t_fail "status failed: $out"
	[[ "$out" == *"clock: CLOCK_MONOTONIC +86400 s, time namespace $TL_STATE_DIR/$name.d/time-gen (offsets: monotonic 86400 0"* ]] ||
		t_fail "status: expected gen's clock with the kernel's offsets, got: $out"
	[[ "$out" == *"== sink: "*$'\n'"clock: CLOCK_MONOTONIC +0 s (the host's), time namespace $TL_STATE_DIR/$name.d/time-sink (offsets: monotonic 0 0"* ]] ||
		t_fail "status: expected the sink on the host's clock, got: $out"
	[[ "$("$TESTENV" list)" == *"$name queues=1 qdisc=none dut=bridge dut-qdisc=none clocks=separate"* ]] ||
		t_fail "list: expected clocks=separate: $("$TESTENV" list)"
	out=$(awk '$9 == "nsfs" { print $5 }' /proc/self/mountinfo | grep -F "/$name.d/" | sort | paste -sd' ')
	t_expect_eq "nsfs mounts of the lab" \
		"$TL_STATE_DIR/$name.d/time-dut $TL_STATE_DIR/$name.d/time-gen $TL_STATE_DIR/$name.d/time-sink" "$out"
	# The scenarios' way in (xdpsg.lab.Lab.start) runs a tool on the side's clock,
	# with the lab's key, as exec does.
	out=$(PYTHONPATH=$ROOT/testenv /usr/bin/python3 - "$name" "$TESTENV" <<-'EOF'
	import sys
	from xdpsg import lab
	l = lab.Lab(sys.argv[1], testenv=sys.argv[2])
	t = l.start("dut", ["sh", "-c", 'echo "$XDPSG_STAMP_KEY"; cat /proc/self/timens_offsets'])
	t.wait(20)
	print(" ".join(" ".join(t.out_lines).split()))
	EOF
	)
	t_expect_eq "what Lab.start ran in the DUT saw" \
		"$STAMP_KEY monotonic 172800 0 boottime 0 0" "$out"
	lab_bg /dev/null gen sleep 60
	# A side whose time namespace went missing is refused, not run on the host's clock.
	umount "$TL_STATE_DIR/$name.d/time-dut" || t_fail "umount time-dut failed"
	out=$("$TESTENV" exec --name "$name" dut -- true 2>&1)
	t_expect_eq "exit code of exec in a side whose clock is gone" 1 "$?"
	[[ "$out" == *"the time namespace of lab '$name' ($TL_STATE_DIR/$name.d/time-dut) is not mounted"* ]] ||
		t_fail "exec dut without its time namespace: $out"
	"$TESTENV" teardown --name "$name" >/dev/null || t_fail "teardown --name $name failed"
	tl_assert_gone "$name"
	tl_ns_exists "$name-dut" && t_fail "teardown left $name-dut"
	t_wait_gone "$LAST_PID" 5 || t_fail "teardown left the process exec started in gen running"
}

# A setup with --separate-clocks that fails half-way leaves nothing: at each
# step (the test hook), and when unshare itself fails for the DUT's clock
# after the generator's was made and mounted.
test_lab_separate_clocks_rollback() {
	local name step rc err fake
	t_clocks_separable || t_skip "$T_CLOCKS_WHY"
	name=$(tl_name k | cut -c1-12)
	T_LABS+=("$name")
	for step in bpffs key clocks dut 'done'; do
		err=$(TESTENV_FAIL_AT=$step "$TESTENV" setup --name "$name" --separate-clocks \
			--dut bridge 2>&1 >/dev/null)
		rc=$?
		t_expect_eq "setup --separate-clocks with TESTENV_FAIL_AT=$step: exit code" 1 "$rc"
		[[ "$err" == *"rolled back"* ]] || t_fail "TESTENV_FAIL_AT=$step: expected 'rolled back', got '$err'"
		tl_assert_gone "$name"
		tl_ns_exists "$name-dut" && t_fail "TESTENV_FAIL_AT=$step: $name-dut left behind"
	done
	fake=$(mktemp -d)
	t_on_cleanup rm -rf "$fake"
	printf '#!/bin/sh\ncase "$*" in *time-dut*) echo "unshare: no time for the DUT" >&2; exit 1 ;; esac\nexec %s "$@"\n' \
		"$(command -v unshare)" >"$fake/unshare"
	chmod +x "$fake/unshare"
	err=$(PATH=$fake:$PATH "$TESTENV" setup --name "$name" --separate-clocks --dut bridge 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "setup whose unshare fails for the DUT: exit code" 1 "$rc"
	[[ "$err" == *"'unshare --time=$TL_STATE_DIR/$name.d/time-dut --monotonic=172800 true' exited 1: unshare: no time for the DUT"*"rolled back"* ]] ||
		t_fail "a failed unshare: expected its command and words, then 'rolled back', got: $err"
	tl_assert_gone "$name"
}

# The lab's stamp key: a file per lab in its state (mode 0600, at least 16
# bytes), named by env (STAMP_KEY) and given by exec to what it runs as
# XDPSG_STAMP_KEY unless the caller's environment names one already.
# xdp-sink in the sink side checks with it: of frames stamped with
# stamp.py, those signed with the lab's key count as stamped, those signed
# with the public key do not; and a key the caller names reaches the tool
# unchanged (a missing file is refused, naming $XDPSG_STAMP_KEY). Another
# lab has another key; teardown removes it.
test_lab_stamp_key() {
	local out first sink_out
	lab_setup --no-ipv6
	t_expect_eq "STAMP_KEY in env" "$TL_STATE_DIR/$LAB_NAME.d/stamp.key" "$STAMP_KEY"
	[ -f "$STAMP_KEY" ] || t_fail "expected the key file $STAMP_KEY"
	t_expect_eq "mode of $STAMP_KEY" 600 "$(stat -c %a "$STAMP_KEY")"
	t_expect_ge "key bytes before trailing whitespace (the tools take 16 or more)" 16 \
		"$(python3 -c 'import sys; print(len(open(sys.argv[1], "rb").read().rstrip()))' "$STAMP_KEY")"
	t_expect_eq "XDPSG_STAMP_KEY in exec gen" "$STAMP_KEY" "$(lab_exec gen printenv XDPSG_STAMP_KEY)"
	t_expect_eq "XDPSG_STAMP_KEY in exec sink" "$STAMP_KEY" "$(lab_exec sink printenv XDPSG_STAMP_KEY)"
	t_expect_eq "the caller's XDPSG_STAMP_KEY in exec" /etc/xdpsg/other.key \
		"$(XDPSG_STAMP_KEY=/etc/xdpsg/other.key lab_exec sink printenv XDPSG_STAMP_KEY)"
	[ -x "$BUILD/xdp-sink" ] || t_skip "xdp-sink not built"
	/usr/bin/python3 -c 'import scapy' 2>/dev/null || t_skip "python3-scapy not installed"
	sink_out=$(mktemp)
	t_on_cleanup rm -f "$sink_out"
	xsk_sink_bg "$sink_out"
	lab_exec gen /usr/bin/python3 - "$ROOT/testenv" "$GEN_IF" "$SINK_MAC" "$GEN_IP4" \
		"$SINK_IP4" "$STAMP_KEY" 5 public 3 <<-'EOF' || t_fail "sending stamped frames from gen failed"
	import os, sys, time
	sys.path.insert(0, sys.argv[1])
	from scapy.layers.inet import IP, UDP
	from scapy.layers.l2 import Ether
	from scapy.sendrecv import sendp
	from xdpsg import stamp
	ifname, dmac, sip, dip = sys.argv[2:6]
	for i, (keyfile, n) in enumerate(zip(sys.argv[6::2], sys.argv[7::2])):
	    key = stamp.Key.public_key() if keyfile == "public" else stamp.Key.from_file(keyfile)
	    run = int.from_bytes(os.urandom(4), "little") | 1
	    sendp([Ether(dst=dmac) / IP(src=sip, dst=dip) / UDP(sport=1024 + i, dport=9) /
	           stamp.pack(key, run, 0, seq, time.monotonic_ns()) for seq in range(int(n))],
	          iface=ifname, verbose=False)
	EOF
	wait_total "$sink_out" interval rx_packets 8 || t_fail "xdp-sink did not see the 8 frames: $(tail -n 3 "$sink_out")"
	kill -INT "$LAST_PID"
	t_wait_gone "$LAST_PID" || t_fail "xdp-sink did not stop"
	t_expect_eq "frames the sink took as stamped (5 under the lab's key, 3 under the public key)" 5 \
		"$(json_get "$sink_out" summary 'o["stamped"]')"
	out=$(XDPSG_STAMP_KEY=/nonexistent/stamp.key lab_exec sink "$BUILD/xdp-sink" xsk -d 1 "$SINK_IF" 2>&1)
	t_expect_eq "exit code of xdp-sink given a missing key by the caller" 2 "$?"
	# shellcheck disable=SC2016 # the tool's own words, a '$' in them
	[[ "$out" == *'$XDPSG_STAMP_KEY /nonexistent/stamp.key'* ]] ||
		t_fail "xdp-sink: expected it to name the caller's key file, got: $out"
	first=$STAMP_KEY
	lab_setup --no-ipv6
	cmp -s "$first" "$STAMP_KEY" && t_fail "two labs, one key: $first and $STAMP_KEY are the same"
	"$TESTENV" teardown --name "$LAB_NAME" >/dev/null || t_fail "teardown failed"
	[ ! -e "$STAMP_KEY" ] || t_fail "teardown left the key $STAMP_KEY"
}

# An interface not found: inside a lab the hint names the lab, its side and
# that side's interfaces; outside, the user's own lab by name (or every lab,
# or that there is none), never a lab the user did not make.
test_lab_not_found_hint_names_the_lab() {
	local name out dir
	name=$(tl_name h)
	tl_setup "$name" --no-ipv6
	out=$("$TESTENV" exec --name "$name" gen -- "$BUILD/xdp-gen" xsk nosuch0 2>&1)
	[[ "$out" == *"not found on the gen side of lab '$name'; its interfaces: lo, $name-g"* ]] ||
		t_fail "in the lab: $out"
	dir=$(mktemp -d)
	t_on_cleanup rm -rf "$dir"
	out=$(TESTENV_STATE_DIR=$dir "$BUILD/xdp-sink" drop nosuch0 2>&1)
	[[ "$out" == *"no lab is set up: testenv/testenv.sh setup makes one"* ]] || t_fail "no lab: $out"
	: >"$dir/mylab.state"
	out=$(TESTENV_STATE_DIR=$dir "$BUILD/xdp-sink" drop nosuch0 2>&1)
	[[ "$out" == *"run in lab 'mylab': testenv/testenv.sh exec --name mylab sink -- ..."* ]] ||
		t_fail "one lab: $out"
	: >"$dir/other.state"
	out=$(TESTENV_STATE_DIR=$dir "$BUILD/xdp-sink" drop nosuch0 2>&1)
	[[ "$out" == *"one of the labs ("*mylab*other*"): testenv/testenv.sh exec --name NAME sink"* ||
		"$out" == *"one of the labs ("*other*mylab*"): testenv/testenv.sh exec --name NAME sink"* ]] ||
		t_fail "two labs: $out"
	# 'status | head': the reader leaves early; no traceback.
	"$TESTENV" status --name "$name" 2>"$dir/err" | head -n 1 >/dev/null
	[ ! -s "$dir/err" ] || t_fail "status | head wrote: $(cat "$dir/err")"
}

# 'ready': a sink started with & is attached and counting when it returns, so
# a generator started right after loses nothing at the start (three times:
# every frame received, none missing before the first); a sink that fails
# makes it fail at once; with no sink it times out; bad input is refused.
test_lab_ready() {
	local name out i rc t0 why
	name=$(tl_name r)
	tl_setup "$name" --no-ipv6
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	for i in 1 2 3; do
		# Ring room for 300 ms at 100 kpps: what this checks is the start, not a sink
		# thread that a busy machine stalls past the default ring's 40 ms.
		"$TESTENV" exec --name "$name" sink -- "$BUILD/xdp-sink" xsk -j -d 300 --ring-size 32768 \
			"$name-s" >"$out" 2>&1 &
		local pid=$!
		"$TESTENV" ready --name "$name" sink || t_fail "ready failed: $(cat "$out")"
		xdp_attached "$name-sink" "$name-s" || t_fail "ready returned before the sink attached"
		"$TESTENV" exec --name "$name" gen -- "$BUILD/xdp-gen" xsk -q -n 20000 -r 100k "$name-g" \
			>/dev/null || t_fail "xdp-gen failed"
		wait_total "$out" interval rx_packets 20000 5 || true
		kill -INT "$pid"
		wait "$pid"
		why=$(json_get "$out" summary '"missing at the start %d, dropped at the socket %d" % (o["runs"][0]["missing_head"], o["drops"]["xsk_fill_ring_empty"] + o["drops"]["xsk_rx_ring_full"])')
		t_expect_eq "run $i: received ($why)" 20000 \
			"$(json_get "$out" summary 'o["runs"][0]["received"]')"
		t_expect_eq "run $i: missing before the first frame" 0 \
			"$(json_get "$out" summary 'o["runs"][0]["missing_head"]')"
		t_expect_eq "run $i: lost" 0 "$(json_get "$out" summary 'o["runs"][0]["lost"]')"
	done
	"$TESTENV" exec --name "$name" sink -- "$BUILD/xdp-sink" drop -d 300 nosuch0 >"$out" 2>&1 &
	t0=$EPOCHREALTIME
	out=$("$TESTENV" ready --name "$name" sink 2>&1)
	rc=$?
	wait
	t_expect_eq "exit code of ready when the sink fails" 1 "$rc"
	[[ "$out" == *"ended before it was ready"* ]] || t_fail "ready on a failed sink: $out"
	out=$("$TESTENV" ready --name "$name" gen --timeout 0.5 2>&1)
	t_expect_eq "exit code of ready with no sink" 1 $?
	[[ "$out" == *"nothing became ready on the gen side"*"within 0.5 s"* ]] || t_fail "no sink: $out"
	out=$("$TESTENV" ready --name "$name" sink --timeout x 2>&1)
	t_expect_eq "exit code of ready --timeout x" 2 $?
	[[ "$out" == *"bad --timeout 'x'"* ]] || t_fail "bad timeout: $out"
}

# lib.sh's lab_exec enters a side through tests/tools/lab-enter, one process for
# the plan's four (T_LAB_ENTER= turns it off): a command sees what the plan's shell would show it (the
# side's network and time namespaces, a /sys of that namespace, the lab's
# bpffs), the host's mounts stay as they were, a sink's start leaves the lab's
# ready and starting files as the shell did, and a command that cannot run,
# or a namespace that does not exist, is said with the shell's exit codes.
test_lab_enter_matches_the_plan() {
	local side p ns bpffs timens ifname clock probe plan ours host_bpf rc out
	local enter=$BUILD/tests/lab-enter
	[ -x "$enter" ] || t_fail "$enter is not built ('make all' builds it)"
	t_clocks_separable || t_skip "$T_CLOCKS_WHY"
	lab_setup --no-ipv6 --separate-clocks
	host_bpf=$(stat -c %d:%i /sys/fs/bpf)
	# shellcheck disable=SC2016 # expanded by the shell inside the side
	probe='echo "net=$(readlink /proc/self/ns/net) time=$(readlink /proc/self/ns/time)" \
		"offsets=$(tr -s " " </proc/self/timens_offsets | tr "\n" ,)" \
		"sys=$(ls /sys/class/net | tr "\n" ,) bpf=$(stat -c %d:%i /sys/fs/bpf)" \
		"bpffs=$(stat -f -c %T /sys/fs/bpf) lab=$XDPSG_LAB"'
	for side in gen sink; do
		p=${side^^}
		ns=${p}_NS bpffs=${p}_BPFFS timens=${p}_TIMENS
		[ -n "${!timens:-}" ] || t_fail "the $side side of a --separate-clocks lab has no time namespace"
		clock=(nsenter "--time=${!timens}")
		plan=$(XDPSG_LAB=$LAB_NAME "${clock[@]}" ip netns exec "${!ns}" sh -c "$LAB_EXEC_SH" \
			"testenv-$side" "${!bpffs}" sh -c "$probe") || t_fail "the plan's way into $side failed"
		ours=$(XDPSG_LAB=$LAB_NAME "$enter" "${!ns}" "${!bpffs}" "${!timens}" sh -c "$probe") ||
			t_fail "lab-enter into $side failed"
		t_expect_eq "what a command on the $side side sees" "$plan" "$ours"
		[[ "$ours" == *"bpf=$(stat -c %d:%i "${!bpffs}") "* ]] ||
			t_fail "$side: /sys/fs/bpf is not the lab's bpffs ${!bpffs}: $ours"
		[[ "$ours" == *"bpffs=bpf_fs "* ]] || t_fail "$side: /sys/fs/bpf is no bpffs: $ours"
		ifname=${p}_IF
		[[ "$ours" == *"sys=${!ifname},"* || "$ours" == *",${!ifname},"* ]] ||
			t_fail "$side: /sys/class/net does not show ${!ifname}: $ours"
	done
	t_expect_eq "the host's /sys/fs/bpf" "$host_bpf" "$(stat -c %d:%i /sys/fs/bpf)"
	"$enter" "$SINK_NS" "$SINK_BPFFS" - no-such-command-xdpsg 2>/dev/null
	rc=$?
	t_expect_eq "exit code of a command that is not there" 127 "$rc"
	# A sink's start: the lab's ready file gone, the starting file naming the pid that
	# becomes the command (sh's $$ once lab-enter has become it).
	[ -n "$SINK_READY" ] && [ -n "$SINK_STARTING" ] ||
		t_fail "testenv env names no SINK_READY or SINK_STARTING"
	: >"$SINK_READY"
	out=$("$enter" --unready "$SINK_READY" --starting "$SINK_STARTING" "$SINK_NS" "$SINK_BPFFS" - \
		sh -c 'echo $$') || t_fail "lab-enter --unready --starting failed: $out"
	[ ! -e "$SINK_READY" ] || t_fail "lab-enter --unready left $SINK_READY"
	t_expect_eq "the pid in the starting file" "$out" "$(<"$SINK_STARTING")"
	[ ! -e "$SINK_STARTING.tmp" ] || t_fail "lab-enter --starting left $SINK_STARTING.tmp"
	out=$("$enter" "$LAB_NAME-no-such-ns" "$SINK_BPFFS" - true 2>&1)
	rc=$?
	t_expect_eq "exit code for a namespace that is not there" 1 "$rc"
	[[ "$out" == *"network namespace"* ]] || t_fail "no line naming the missing namespace: $out"
	return 0
}
