#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# testenv.sh: a two-host lab on one machine for xdp-sink and xdp-gen.
#
# Two network namespaces, NAME-gen and NAME-sink, joined by one veth pair
# (NAME-g in gen, NAME-s in sink) with fixed MACs, IPv4/IPv6 addresses and
# permanent neighbour entries, so traffic needs no ARP or ND. Each side has
# its own bpffs instance that survives between 'exec' calls, so a map pinned
# by one command can be read by the next. Run 'testenv.sh --help' for usage.
#
# State lives in $TESTENV_STATE_DIR (default /run/xdpsg-testenv): NAME.state
# describes the lab, NAME.d/bpf-gen and NAME.d/bpf-sink are its bpffs mounts.
# Only labs with a state file there are ever listed or removed.
#
# Test hooks (environment):
#   TESTENV_STATE_DIR=DIR  keep state in DIR instead (tests of 'teardown --all')
#   TESTENV_FAIL_AT=STEP   make setup fail right after STEP has done its work,
#                          to exercise the rollback. STEP is one of:
#                          netns veth sysctl offload qdisc up addr neigh
#                          threaded bpffs dut done
#
# 'testenv.sh backpressure [OPTIONS]' runs testenv/backpressure.py (the
# backpressure lab: a lab tuned to overflow, sink and generator, and one table
# of where every packet went); 'backpressure --help' describes it.
#
# 'testenv.sh setup --dut forward|bridge|xdp' puts a device under test between
# them: a third namespace NAME-dut joined to gen by NAME-g/NAME-dg and to sink
# by NAME-ds/NAME-s, forwarding by IP routing, a Linux bridge or an XDP
# redirect program ('xdp-sink redirect', left running in NAME-dut). Addresses,
# routes and neighbours are set so that xdp-gen's defaults (the generator
# interface's first neighbour entry) go through the DUT to the sink.
# 'testenv.sh rfc2544 [OPTIONS]' runs testenv/rfc2544.py on such a lab.
#
# 'testenv.sh --version --json' prints one JSON line for scripts that need to
# know what this tree offers: its commands and the backpressure scenario's long
# options, and the rfc2544 runner's (bench/run.py runs the scenario only if it
# is listed).
#
# Exit codes: 0 success, 1 runtime failure, 2 bad usage or environment.

# The *_SH scripts are run by 'sh -c' and expand their variables there.
# shellcheck disable=SC2016
set -u

PROG=${0##*/}
STATE_DIR=${TESTENV_STATE_DIR:-/run/xdpsg-testenv}
HERE=$(cd "$(dirname "$0")" && pwd)
_build=${BUILD:-build}
[[ "$_build" == /* ]] || _build=$(dirname "$HERE")/$_build
# The XDP DUT's forwarding program: xdp-sink redirect.
DUT_SINK_BIN=${XDPSG_SINK:-$_build/xdp-sink}
[[ "$STATE_DIR" == /* ]] || STATE_DIR=$PWD/$STATE_DIR
FAIL_STEPS="netns veth sysctl offload qdisc up addr neigh threaded bpffs dut done"
NAME_MAX=13 # interface names are NAME-g / NAME-s and must fit in 15 bytes
DUT_NAME_MAX=12 # with a DUT also NAME-dg / NAME-ds / NAME-br
QUEUES_MAX=256
MTU_MIN=68
MTU_MAX=65535
# The commands parse_args takes, then the ones dispatched before it; the usage
# errors and 'testenv.sh --version --json' list them from here.
LAB_COMMANDS="setup teardown status exec enter list env pin-napi"
RUNNER_COMMANDS="backpressure rfc2544"
DUT_MODES="forward bridge xdp"

GEN_IP4=10.11.0.1
SINK_IP4=10.11.0.2
PREFIX4=24
GEN_IP6=fd00:11::1
SINK_IP6=fd00:11::2
PREFIX6=64
# With --dut forward the sink side is another subnet and the DUT routes; the
# DUT's own addresses end in .254 / ::fe on both sides.
FWD_SINK_IP4=10.12.0.2
FWD_SINK_IP6=fd00:12::2
DUT_GEN_IP4=10.11.0.254
DUT_SINK_IP4=10.12.0.254
DUT_GEN_IP6=fd00:11::fe
DUT_SINK_IP6=fd00:12::fe

usage() {
	cat <<EOF
Usage: $PROG COMMAND [OPTIONS]

Commands:
  setup                 create the lab (two namespaces joined by a veth pair;
                        with --dut, three: gen - dut - sink)
  teardown [--all]      remove the lab, or every lab this script made (--all);
                        removing a lab that does not exist is not an error
  status                namespaces, links, attached XDP programs, qdisc counters
  exec gen|sink|dut -- CMD
                        run CMD in that namespace with the lab's bpffs on
                        /sys/fs/bpf; CMD's exit code is returned (dut: only in
                        a lab made with --dut)
  enter gen|sink|dut    interactive shell in that namespace (bpffs mounted)
  env                   shell assignments to eval: LAB_NAME GEN_NS SINK_NS GEN_IF
                        SINK_IF GEN_MAC SINK_MAC GEN_IP4 SINK_IP4 GEN_IP6 SINK_IP6
                        QUEUES; with a DUT also DUT_MODE DUT_NS DUT_GEN_IF
                        DUT_SINK_IF DUT_GEN_MAC DUT_SINK_MAC DUT_QDISC DUT_CPU
  list                  one line per lab: name, queues, qdisc
  pin-napi --cpu CPU    pin the sink veth's NAPI kthreads (napi/NAME-s-ID, made
                        by threaded NAPI once an XDP program is attached) to
                        CPU with taskset -p; prints "PID NAME" per thread
  backpressure [OPTIONS]
                        (must be the first argument) make a lab tuned to
                        overflow, run xdp-sink and xdp-gen in it and print
                        where every packet went; see $PROG backpressure --help
  rfc2544 --name NAME [OPTIONS]
                        (must be the first argument) RFC 2544 throughput,
                        latency, frame loss and back-to-back through the DUT
                        of a lab made with --dut; see $PROG rfc2544 --help

Options (before or after the command; --opt=value also works):
  --name NAME           lab name, at most $NAME_MAX of [A-Za-z0-9_-] (default xsg);
                        labs with different names coexist
  -h, --help            this text
  --version --json      (first argument) one JSON line: the commands and the
                        backpressure scenario's long options, for scripts
Setup only:
  --queues N            veth rx/tx queue count, 1..$QUEUES_MAX (default 1)
  --qdisc SPEC          root qdisc on the generator veth: none (default, veth's
                        noqueue), pfifo:LIMIT, bfifo:BYTES, tbf:RATE:BURST:LATENCY
                        (e.g. pfifo:1000, tbf:100mbit:32kb:50ms)
  --threaded-napi       threaded NAPI on the sink veth
  --gro on|off          GRO on the sink veth (default: kernel default, off)
  --tso on|off          TSO on the generator veth (default: kernel default, on)
  --mtu N               MTU of both veth ends, $MTU_MIN..$MTU_MAX (IPv6 needs >= 1280)
  --no-ipv6             disable IPv6 in both namespaces (no ND/MLD frames at all)
  --scenario backpressure
                        the lab tuned to overflow: --qdisc pfifo:1000 (unless
                        --qdisc is given), --tso off, --threaded-napi, --no-ipv6
                        (other options given explicitly still apply)
  --dut MODE            a device under test between gen and sink, in namespace
                        NAME-dut (NAME at most $DUT_NAME_MAX characters): gen NAME-g <->
                        NAME-dg [DUT] NAME-ds <-> NAME-s sink. MODE is
                          forward  IPv4/IPv6 routing: gen $GEN_IP4/$PREFIX4, DUT $DUT_GEN_IP4
                                   and $DUT_SINK_IP4, sink $FWD_SINK_IP4/$PREFIX4 (fd00:11::/64,
                                   fd00:12::/64 likewise)
                          bridge   a Linux bridge NAME-br of NAME-dg and NAME-ds (no
                                   STP, static FDB entries); sink $SINK_IP4
                          xdp      'xdp-sink redirect --to NAME-ds NAME-dg' left
                                   running in NAME-dut (needs build/xdp-sink, or
                                   XDPSG_SINK=PATH); sink $SINK_IP4
                        The generator's first neighbour entry is the sink's
                        address (with the DUT's MAC for forward), so xdp-gen's
                        defaults go through the DUT; the DUT's own addresses
                        have NOARP entries, which xdp-gen's default skips.
                        --qdisc, --tso apply to NAME-g, --gro, --threaded-napi
                        to NAME-s, --queues and --mtu to all four ends.
  --dut-qdisc SPEC      root qdisc on the DUT's egress NAME-ds, as --qdisc
                        (e.g. tbf:100mbit:16kb:50ms); forward and bridge only
                        (XDP redirect bypasses the qdisc layer)
  --dut-cpu CPU|none    the CPU the DUT works on: RPS on NAME-dg for forward
                        and bridge, threaded NAPI pinned there for xdp
                        (default 1 with 3 or more CPUs: xdp-gen's thread is on
                        0, xdp-sink's on the last; else none). none: the DUT
                        works in the sender's softirq, and a DUT slower than
                        the generator slows it down instead of dropping
pin-napi only:
  --cpu CPU             the CPU for the NAPI threads

Addresses: gen $GEN_IP4/$PREFIX4 $GEN_IP6/$PREFIX6, sink $SINK_IP4/$PREFIX4 $SINK_IP6/$PREFIX6
(with --dut forward: sink $FWD_SINK_IP4/$PREFIX4 $FWD_SINK_IP6/$PREFIX6).

Kernel facts the lab is built around:
  - Frames redirected into a veth (XDP_REDIRECT, live frames, AF_XDP copy mode)
    need NAPI on its peer: an XDP program attached there, or GRO on. Without it
    they are dropped and counted as TX drops on the sender.
  - Since Linux 6.16 a full veth ring stops the TX queue instead of dropping,
    but only a real qdisc on the transmitting veth (--qdisc) turns that into
    backpressure and visible qdisc drops; with noqueue the veth still drops.
  - A veth has no NAPI until XDP or GRO needs one, and the 'threaded' knob
    refuses to change then: --threaded-napi enables GRO for a moment so the
    setting sticks for the NAPI instances created later.
EOF
}

info() {
	echo "$PROG: $*"
}

err() {
	echo "$PROG: $*" >&2
}

# Bad usage or environment: one line, exit 2.
usage_error() {
	err "$*"
	exit 2
}

die() {
	err "$*"
	exit 1
}

# --- option parsing and validation -------------------------------------------

cmd=""
side=""
cmd_args=()
opt_name=xsg
opt_name_set=0
opt_all=0
opt_queues=1
opt_qdisc=none
opt_threaded=0
opt_gro=""
opt_tso=""
opt_mtu=""
opt_ipv6=1
opt_scenario=""
opt_qdisc_set=0
opt_tso_set=0
opt_cpu=""
opt_dut=""
opt_dut_qdisc=none
opt_dut_qdisc_set=0
opt_dut_cpu=""
setup_only=() # setup options given, to reject them for other commands

need_value() { # option argc
	[ "$2" -ge 2 ] || usage_error "option $1 needs a value; see $PROG --help"
}

parse_args() {
	while [ $# -gt 0 ]; do
		case "$1" in
		--*=*)
			set -- "${1%%=*}" "${1#*=}" "${@:2}"
			continue
			;;
		-h | --help)
			usage
			exit 0
			;;
		--name)
			need_value "$1" $#
			opt_name=$2 opt_name_set=1
			shift
			;;
		--all) opt_all=1 ;;
		--queues | --qdisc | --gro | --tso | --mtu)
			need_value "$1" $#
			setup_only+=("$1")
			case "$1" in
			--queues) opt_queues=$2 ;;
			--qdisc) opt_qdisc=$2 opt_qdisc_set=1 ;;
			--gro) opt_gro=$2 ;;
			--tso) opt_tso=$2 opt_tso_set=1 ;;
			--mtu) opt_mtu=$2 ;;
			esac
			shift
			;;
		--scenario)
			need_value "$1" $#
			setup_only+=("$1")
			opt_scenario=$2
			shift
			;;
		--dut | --dut-qdisc | --dut-cpu)
			need_value "$1" $#
			setup_only+=("$1")
			case "$1" in
			--dut) opt_dut=$2 ;;
			--dut-qdisc) opt_dut_qdisc=$2 opt_dut_qdisc_set=1 ;;
			--dut-cpu) opt_dut_cpu=$2 ;;
			esac
			shift
			;;
		--cpu)
			need_value "$1" $#
			opt_cpu=$2
			shift
			;;
		--threaded-napi) setup_only+=("$1") opt_threaded=1 ;;
		--no-ipv6) setup_only+=("$1") opt_ipv6=0 ;;
		--)
			shift
			cmd_args=("$@")
			[ "$cmd" = exec ] || usage_error "'--' is only used as in: $PROG exec gen|sink -- CMD..."
			break
			;;
		-*) usage_error "unknown option '$1'; see $PROG --help" ;;
		*)
			if [ -z "$cmd" ]; then
				case "$1" in backpressure | rfc2544)
					usage_error "'$1' must be the first argument: $PROG $1 [OPTIONS] (see $PROG $1 --help)"
					;;
				esac
				cmd=$1
			elif { [ "$cmd" = exec ] || [ "$cmd" = enter ]; } && [ -z "$side" ]; then
				side=$1
			elif [ "$cmd" = exec ]; then
				# A command without '--': everything from here on is its.
				cmd_args=("$@")
				break
			else
				usage_error "unexpected argument '$1' for '$cmd'; see $PROG --help"
			fi
			;;
		esac
		shift
	done
}

is_uint() { # value: a whole number without leading zeros, at most 9 digits
	[[ "$1" =~ ^(0|[1-9][0-9]{0,8})$ ]]
}

validate_qdisc() { # spec option
	local spec=$1 o=$2 kind a b c extra
	IFS=: read -r kind a b c extra <<<"$spec"
	case "$kind" in
	none)
		[ "$spec" = none ] && return
		;;
	pfifo | bfifo)
		if [ -z "$b" ] && is_uint "$a" && [ "$a" -ge 1 ]; then
			return
		fi
		usage_error "bad $o '$spec': $kind needs a positive limit" \
			"($([ "$kind" = pfifo ] && echo packets || echo bytes)), e.g. $o $kind:1000"
		;;
	tbf)
		if [ -z "$extra" ] &&
			[[ "$a" =~ ^[0-9]+(\.[0-9]+)?([KkMmGgTt]i?)?([Bb]it|[Bb]ps)?$ ]] &&
			[[ "$b" =~ ^[0-9]+([KkMmGg]?[Bb]|[KkMmGg]|[KkMmGg]?bit)?$ ]] &&
			[[ "$c" =~ ^[0-9]+(\.[0-9]+)?(s|sec|secs|ms|msec|msecs|us|usec|usecs)?$ ]]; then
			return
		fi
		usage_error "bad $o '$spec': tbf needs RATE:BURST:LATENCY," \
			"e.g. $o tbf:100mbit:32kb:50ms"
		;;
	esac
	usage_error "bad $o '$spec': use none, pfifo:LIMIT, bfifo:BYTES or" \
		"tbf:RATE:BURST:LATENCY, e.g. $o pfifo:1000"
}

# "setup, teardown, ..." for messages.
command_list() {
	local c out=""
	for c in $LAB_COMMANDS $RUNNER_COMMANDS; do
		out+="${out:+, }$c"
	done
	echo "$out"
}

validate_args() {
	[ -n "$cmd" ] || usage_error "no command given; use one of $(command_list) (see $PROG --help)"
	case " $LAB_COMMANDS " in
	*" $cmd "*) ;;
	*) usage_error "unknown command '$cmd'; use one of $(command_list)" ;;
	esac
	if [ -n "$opt_cpu" ]; then
		[ "$cmd" = pin-napi ] || usage_error "option --cpu only applies to 'pin-napi', not '$cmd'"
	fi
	if [ "$cmd" = pin-napi ]; then
		[ -n "$opt_cpu" ] || usage_error "'pin-napi' needs --cpu CPU, e.g. $PROG pin-napi --name $opt_name --cpu 1"
		if ! is_uint "$opt_cpu" || [ ! -d "/sys/devices/system/cpu/cpu$opt_cpu" ]; then
			usage_error "bad --cpu '$opt_cpu': use an online CPU number from 0 to $(($(nproc) - 1))"
		fi
	fi

	if [ ${#opt_name} -gt $NAME_MAX ]; then
		usage_error "--name '$opt_name' is too long (${#opt_name} characters): at most $NAME_MAX, as interface names are NAME-g/NAME-s and must fit in 15"
	fi
	if ! [[ "$opt_name" =~ ^[A-Za-z0-9][A-Za-z0-9_-]*$ ]]; then
		usage_error "bad --name '$opt_name': use letters, digits, '_' and '-', starting with a letter or digit"
	fi

	if [ "$cmd" != setup ] && [ ${#setup_only[@]} -gt 0 ]; then
		usage_error "option ${setup_only[0]} only applies to 'setup', not '$cmd'"
	fi
	if [ $opt_all -eq 1 ]; then
		[ "$cmd" = teardown ] || usage_error "--all only applies to 'teardown'"
		[ $opt_name_set -eq 0 ] || usage_error "use either --name or --all with teardown, not both"
	fi

	case "$cmd" in
	exec | enter)
		case "$side" in
		gen | sink | dut) ;;
		"") usage_error "'$cmd' needs a side: gen or sink (or dut), e.g. $PROG $cmd --name $opt_name gen" ;;
		*) usage_error "bad side '$side' for '$cmd': use gen or sink (or dut in a lab with a DUT)" ;;
		esac
		if [ "$cmd" = exec ] && [ ${#cmd_args[@]} -eq 0 ]; then
			usage_error "'exec' needs a command: $PROG exec [--name NAME] $side -- CMD..."
		fi
		;;
	esac

	[ "$cmd" = setup ] || return 0

	case "$opt_scenario" in
	"") ;;
	backpressure)
		[ $opt_qdisc_set -eq 1 ] || opt_qdisc=pfifo:1000
		[ $opt_tso_set -eq 1 ] || opt_tso=off
		opt_threaded=1 opt_ipv6=0
		;;
	*) usage_error "bad --scenario '$opt_scenario': the only scenario is backpressure" ;;
	esac
	if ! is_uint "$opt_queues" || [ "$opt_queues" -lt 1 ] || [ "$opt_queues" -gt $QUEUES_MAX ]; then
		usage_error "bad --queues '$opt_queues': use a whole number from 1 to $QUEUES_MAX, e.g. --queues 2"
	fi
	validate_qdisc "$opt_qdisc" --qdisc
	case "$opt_gro" in "" | on | off) ;; *) usage_error "bad --gro '$opt_gro': use --gro on or --gro off" ;; esac
	case "$opt_tso" in "" | on | off) ;; *) usage_error "bad --tso '$opt_tso': use --tso on or --tso off" ;; esac
	if [ -n "$opt_mtu" ]; then
		if ! is_uint "$opt_mtu" || [ "$opt_mtu" -lt $MTU_MIN ] || [ "$opt_mtu" -gt $MTU_MAX ]; then
			usage_error "bad --mtu '$opt_mtu': use a whole number from $MTU_MIN to $MTU_MAX, e.g. --mtu 1500"
		fi
		if [ $opt_ipv6 -eq 1 ] && [ "$opt_mtu" -lt 1280 ]; then
			usage_error "--mtu $opt_mtu is below IPv6's minimum of 1280: add --no-ipv6 or use --mtu 1280 or more"
		fi
	fi
	if [ $opt_ipv6 -eq 1 ] && [ ! -d /proc/sys/net/ipv6 ]; then
		usage_error "this kernel has no IPv6; add --no-ipv6"
	fi
	if [ -n "${TESTENV_FAIL_AT:-}" ] && [[ " $FAIL_STEPS " != *" $TESTENV_FAIL_AT "* ]]; then
		usage_error "bad TESTENV_FAIL_AT '$TESTENV_FAIL_AT': use one of: $FAIL_STEPS"
	fi
	validate_dut
}

validate_dut() {
	if [ -z "$opt_dut" ]; then
		[ $opt_dut_qdisc_set -eq 0 ] ||
			usage_error "--dut-qdisc needs a device under test: add --dut forward or --dut bridge"
		[ -z "$opt_dut_cpu" ] || usage_error "--dut-cpu needs a device under test: add --dut MODE"
		return 0
	fi
	local ncpu
	ncpu=$(nproc)
	if [ -z "$opt_dut_cpu" ]; then
		# xdp-gen's first thread runs on CPU 0 and xdp-sink's on the last CPU:
		# the DUT gets CPU 1 if that is neither. With two CPUs it works in
		# the sender's softirq (on one with the sink's thread it starves it).
		if [ "$ncpu" -gt 2 ]; then opt_dut_cpu=1; else opt_dut_cpu=none; fi
	elif [ "$opt_dut_cpu" != none ]; then
		if ! is_uint "$opt_dut_cpu" || [ ! -d "/sys/devices/system/cpu/cpu$opt_dut_cpu" ]; then
			usage_error "bad --dut-cpu '$opt_dut_cpu': use none or an online CPU from 0 to $((ncpu - 1))"
		fi
	fi
	case " $DUT_MODES " in
	*" $opt_dut "*) ;;
	*) usage_error "unknown --dut mode '$opt_dut': use --dut forward, --dut bridge or --dut xdp" ;;
	esac
	if [ ${#opt_name} -gt $DUT_NAME_MAX ]; then
		usage_error "--name '$opt_name' is too long for a lab with --dut (${#opt_name} characters): at most $DUT_NAME_MAX, as NAME-dg/NAME-ds must fit in 15"
	fi
	[ "$opt_scenario" = "" ] ||
		usage_error "--scenario $opt_scenario and --dut do not go together: the scenario is a two-namespace lab"
	validate_qdisc "$opt_dut_qdisc" --dut-qdisc
	if [ "$opt_dut" = xdp ]; then
		[ "$opt_dut_qdisc" = none ] ||
			usage_error "--dut-qdisc with --dut xdp: XDP redirect bypasses the qdisc layer; use --dut forward or --dut bridge for a qdisc"
		[ -x "$DUT_SINK_BIN" ] ||
			usage_error "--dut xdp needs xdp-sink at $DUT_SINK_BIN: run 'make' first (or set XDPSG_SINK=PATH)"
		if [ -n "$opt_mtu" ] && [ "$opt_mtu" -gt 3498 ]; then
			usage_error "--mtu $opt_mtu with --dut xdp: native XDP on veth needs an MTU of 3498 or less"
		fi
	fi
}

check_env() {
	[ "$(id -u)" -eq 0 ] || usage_error "must run as root (namespaces, links and bpffs need it): try sudo $0 $cmd ..."
	local t
	for t in ip tc ethtool mount umount mountpoint flock md5sum taskset; do
		command -v "$t" >/dev/null 2>&1 ||
			usage_error "missing tool '$t': install iproute2, ethtool and util-linux (make deps)"
	done
}

# --- lab names and state -----------------------------------------------------

# Set every per-lab name from the lab's name. MACs are derived from it so they
# stay the same across setups: locally administered unicast (02:...), last
# byte 01 for gen and 02 for sink, 03 and 04 for the DUT's gen and sink sides.
lab_names() { # name
	local h
	LAB_NAME=$1
	GEN_NS=$1-gen
	SINK_NS=$1-sink
	GEN_IF=$1-g
	SINK_IF=$1-s
	STATE_FILE=$STATE_DIR/$1.state
	LAB_DIR=$STATE_DIR/$1.d
	h=$(printf '%s' "$1" | md5sum)
	GEN_MAC=02:${h:0:2}:${h:2:2}:${h:4:2}:${h:6:2}:01
	SINK_MAC=02:${h:0:2}:${h:2:2}:${h:4:2}:${h:6:2}:02
	DUT_NS=$1-dut
	DUT_GEN_IF=$1-dg
	DUT_SINK_IF=$1-ds
	DUT_BR=$1-br
	DUT_GEN_MAC=02:${h:0:2}:${h:2:2}:${h:4:2}:${h:6:2}:03
	DUT_SINK_MAC=02:${h:0:2}:${h:2:2}:${h:4:2}:${h:6:2}:04
}

ns_exists() { # ns
	ip netns list 2>/dev/null | awk '{ print $1 }' | grep -qxF -- "$1"
}

# Serialise setup and teardown: one lab's setup must not race another's
# teardown --all. The lock is the state directory itself, so no lock file is
# left behind.
state_lock() {
	mkdir -p "$STATE_DIR" || die "cannot create state directory $STATE_DIR"
	exec 9<"$STATE_DIR" || die "cannot open state directory $STATE_DIR"
	flock -w 120 9 || die "timed out waiting for the lock on $STATE_DIR (another setup or teardown hangs?)"
}

state_write() { # status
	local tmp
	# A new file beside the state (mktemp: O_EXCL, no symlink followed), then renamed.
	tmp=$(mktemp "$STATE_DIR/.$LAB_NAME.state.XXXXXX") || die "cannot write in $STATE_DIR"
	{
		echo "# xdpsg testenv lab; made by $PROG setup, removed by $PROG teardown"
		echo "NAME=$LAB_NAME"
		echo "STATUS=$1"
		echo "QUEUES=$opt_queues"
		echo "QDISC=$opt_qdisc"
		echo "GRO=$opt_gro"
		echo "TSO=$opt_tso"
		echo "MTU=$opt_mtu"
		echo "IPV6=$opt_ipv6"
		echo "THREADED=$opt_threaded"
		echo "SCENARIO=$opt_scenario"
		echo "DUT=$opt_dut"
		echo "DUT_QDISC=$opt_dut_qdisc"
		echo "DUT_CPU=$opt_dut_cpu"
	} >"$tmp" || { rm -f "$tmp"; die "cannot write $tmp"; }
	chmod 0644 "$tmp"
	mv -fT "$tmp" "$STATE_FILE" || { rm -f "$tmp"; die "cannot write $STATE_FILE"; }
}

# Load a lab's state into the opt_* variables; fails if there is no lab.
state_read() {
	local k v
	LAB_STATUS=""
	[ -f "$STATE_FILE" ] || return 1
	while IFS='=' read -r k v; do
		case "$k" in
		STATUS) LAB_STATUS=$v ;;
		QUEUES) opt_queues=$v ;;
		QDISC) opt_qdisc=$v ;;
		GRO) opt_gro=$v ;;
		TSO) opt_tso=$v ;;
		MTU) opt_mtu=$v ;;
		IPV6) opt_ipv6=$v ;;
		THREADED) opt_threaded=$v ;;
		SCENARIO) opt_scenario=$v ;;
		DUT) opt_dut=$v ;;
		DUT_QDISC) opt_dut_qdisc=$v ;;
		DUT_CPU) opt_dut_cpu=$v ;;
		esac
	done <"$STATE_FILE"
	dut_addresses
}

# With --dut forward the sink is on the far subnet.
dut_addresses() {
	if [ "$opt_dut" = forward ]; then
		SINK_IP4=$FWD_SINK_IP4 SINK_IP6=$FWD_SINK_IP6
	fi
}

# For commands that use a finished lab: load it or exit 2 saying how to make it.
require_lab() {
	state_read || usage_error "no lab '$LAB_NAME': create it with $PROG setup --name $LAB_NAME"
	[ "$LAB_STATUS" = ready ] ||
		usage_error "lab '$LAB_NAME' is incomplete (status '$LAB_STATUS'): run $PROG teardown --name $LAB_NAME, then setup again"
}

side_ns() { # gen|sink|dut
	case "$1" in
	gen) echo "$GEN_NS" ;;
	dut) echo "$DUT_NS" ;;
	*) echo "$SINK_NS" ;;
	esac
}

# The sides of this lab: gen sink, and dut if it has one.
lab_sides() {
	echo gen sink${opt_dut:+ dut}
}

# --- setup -------------------------------------------------------------------

SETUP_DONE=0

# run CMD...: one setup action. On failure print the command and its output
# on one line and exit; the EXIT trap then rolls back.
run() {
	local out rc a shown=()
	out=$("$@" 2>&1)
	rc=$?
	[ $rc -eq 0 ] && return 0
	for a in "$@"; do
		[[ "$a" == *$'\n'* ]] && a="<script>"
		shown+=("$a")
	done
	out=${out//$'\n'/ }
	die "setup failed: '${shown[*]}' exited $rc${out:+: $out}"
}

fail_point() { # step
	[ "${TESTENV_FAIL_AT:-}" = "$1" ] && die "setup failed after step '$1' (TESTENV_FAIL_AT)"
	return 0
}

setup_rollback() {
	local rc=$?
	[ $SETUP_DONE -eq 1 ] && return
	[ $rc -eq 0 ] && rc=1
	lab_remove >/dev/null 2>&1
	err "setup of lab '$LAB_NAME' rolled back; nothing of it is left"
	exit $rc
}

# Runs as 'sh -c' inside a namespace: $1 is 1 to keep IPv6, 0 to disable it.
# accept_ra=0 everywhere keeps router solicitations and SLAAC out of the lab.
SYSCTL_SH='
set -e
ip link set lo up
[ -d /proc/sys/net/ipv6 ] || exit 0
for f in /proc/sys/net/ipv6/conf/*/accept_ra; do echo 0 >"$f"; done
if [ "$1" = 0 ]; then
	for f in /proc/sys/net/ipv6/conf/*/disable_ipv6; do echo 1 >"$f"; done
fi
'

# Runs as 'sh -c' in the sink namespace: $1 device, $2 the GRO setting to keep.
# Writing 'threaded' fails while the veth has no NAPI (no XDP, GRO off); GRO on
# creates the NAPI instances, and the device keeps the flag for later ones.
THREADED_SH='
f=/sys/class/net/$1/threaded
if ! echo 1 >"$f" 2>/dev/null; then
	ethtool -K "$1" gro on || exit 1
	echo 1 >"$f"
	rc=$?
	[ "$2" = on ] || ethtool -K "$1" gro off || exit 1
	[ $rc -eq 0 ] || exit $rc
fi
[ "$(cat "$f")" = 1 ] || { echo "$f reads $(cat "$f"), not 1" >&2; exit 1; }
'

setup_links() {
	local q=(numtxqueues "$opt_queues" numrxqueues "$opt_queues")
	local mtu=()

	[ -n "$opt_mtu" ] && mtu=(mtu "$opt_mtu")
	# Created directly in the namespaces: the names never touch the host's.
	if [ -z "$opt_dut" ]; then
		run ip link add "$GEN_IF" address "$GEN_MAC" "${mtu[@]}" "${q[@]}" netns "$GEN_NS" \
			type veth peer name "$SINK_IF" address "$SINK_MAC" "${mtu[@]}" "${q[@]}" netns "$SINK_NS"
	else
		run ip link add "$GEN_IF" address "$GEN_MAC" "${mtu[@]}" "${q[@]}" netns "$GEN_NS" \
			type veth peer name "$DUT_GEN_IF" address "$DUT_GEN_MAC" "${mtu[@]}" "${q[@]}" netns "$DUT_NS"
		run ip link add "$DUT_SINK_IF" address "$DUT_SINK_MAC" "${mtu[@]}" "${q[@]}" netns "$DUT_NS" \
			type veth peer name "$SINK_IF" address "$SINK_MAC" "${mtu[@]}" "${q[@]}" netns "$SINK_NS"
	fi
	fail_point veth

	run ip netns exec "$GEN_NS" sh -c "$SYSCTL_SH" sysctl "$opt_ipv6"
	run ip netns exec "$SINK_NS" sh -c "$SYSCTL_SH" sysctl "$opt_ipv6"
	if [ -n "$opt_dut" ]; then
		# Only a routing DUT needs IPv6; a bridge or XDP DUT then makes no
		# frames of its own (no MLD from the bridge).
		run ip netns exec "$DUT_NS" sh -c "$SYSCTL_SH" sysctl \
			"$([ "$opt_dut" = forward ] && echo "$opt_ipv6" || echo 0)"
	fi
	fail_point sysctl

	[ -n "$opt_gro" ] && run ip netns exec "$SINK_NS" ethtool -K "$SINK_IF" gro "$opt_gro"
	[ -n "$opt_tso" ] && run ip netns exec "$GEN_NS" ethtool -K "$GEN_IF" tso "$opt_tso"
	fail_point offload
}

setup_qdisc() {
	local kind a b c

	IFS=: read -r kind a b c <<<"$opt_qdisc"
	case "$kind" in
	pfifo | bfifo) run tc -n "$GEN_NS" qdisc replace dev "$GEN_IF" root "$kind" limit "$a" ;;
	tbf) run tc -n "$GEN_NS" qdisc replace dev "$GEN_IF" root tbf rate "$a" burst "$b" latency "$c" ;;
	esac
	IFS=: read -r kind a b c <<<"$opt_dut_qdisc"
	case "$kind" in
	pfifo | bfifo) run tc -n "$DUT_NS" qdisc replace dev "$DUT_SINK_IF" root "$kind" limit "$a" ;;
	tbf) run tc -n "$DUT_NS" qdisc replace dev "$DUT_SINK_IF" root tbf rate "$a" burst "$b" latency "$c" ;;
	esac
	fail_point qdisc
}

setup_addresses() {
	run ip -n "$GEN_NS" link set dev "$GEN_IF" up
	run ip -n "$SINK_NS" link set dev "$SINK_IF" up
	if [ -n "$opt_dut" ]; then
		run ip -n "$DUT_NS" link set dev "$DUT_GEN_IF" up
		run ip -n "$DUT_NS" link set dev "$DUT_SINK_IF" up
	fi
	fail_point up
	if [ "$opt_dut" = forward ]; then
		setup_forward_addresses
		return
	fi

	run ip -n "$GEN_NS" addr add "$GEN_IP4/$PREFIX4" dev "$GEN_IF"
	run ip -n "$SINK_NS" addr add "$SINK_IP4/$PREFIX4" dev "$SINK_IF"
	if [ "$opt_ipv6" -eq 1 ]; then
		run ip -n "$GEN_NS" addr add "$GEN_IP6/$PREFIX6" dev "$GEN_IF" nodad
		run ip -n "$SINK_NS" addr add "$SINK_IP6/$PREFIX6" dev "$SINK_IF" nodad
	fi
	fail_point addr

	run ip -n "$GEN_NS" neigh replace "$SINK_IP4" lladdr "$SINK_MAC" dev "$GEN_IF" nud permanent
	run ip -n "$SINK_NS" neigh replace "$GEN_IP4" lladdr "$GEN_MAC" dev "$SINK_IF" nud permanent
	if [ "$opt_ipv6" -eq 1 ]; then
		run ip -n "$GEN_NS" neigh replace "$SINK_IP6" lladdr "$SINK_MAC" dev "$GEN_IF" nud permanent
		run ip -n "$SINK_NS" neigh replace "$GEN_IP6" lladdr "$GEN_MAC" dev "$SINK_IF" nud permanent
	fi
	fail_point neigh
}

# --dut forward: two subnets and the DUT routes between them. Each end host
# has a route to the far subnet via the DUT and two static neighbour entries:
# the far host's address with the DUT's MAC (permanent: the first neighbour
# entry xdp-gen takes by default, so its frames go to the DUT and are routed),
# and the DUT's own address (noarp: usable as the gateway, skipped by
# xdp-gen's default). The DUT has permanent entries for both hosts. No ARP or
# ND is needed anywhere.
setup_forward_addresses() {
	local v
	run ip -n "$GEN_NS" addr add "$GEN_IP4/$PREFIX4" dev "$GEN_IF"
	run ip -n "$DUT_NS" addr add "$DUT_GEN_IP4/$PREFIX4" dev "$DUT_GEN_IF"
	run ip -n "$DUT_NS" addr add "$DUT_SINK_IP4/$PREFIX4" dev "$DUT_SINK_IF"
	run ip -n "$SINK_NS" addr add "$FWD_SINK_IP4/$PREFIX4" dev "$SINK_IF"
	if [ "$opt_ipv6" -eq 1 ]; then
		run ip -n "$GEN_NS" addr add "$GEN_IP6/$PREFIX6" dev "$GEN_IF" nodad
		run ip -n "$DUT_NS" addr add "$DUT_GEN_IP6/$PREFIX6" dev "$DUT_GEN_IF" nodad
		run ip -n "$DUT_NS" addr add "$DUT_SINK_IP6/$PREFIX6" dev "$DUT_SINK_IF" nodad
		run ip -n "$SINK_NS" addr add "$FWD_SINK_IP6/$PREFIX6" dev "$SINK_IF" nodad
	fi
	fail_point addr

	for v in 4 6; do
		[ $v = 6 ] && [ "$opt_ipv6" -ne 1 ] && continue
		local gip sip dgip dsip sub_g sub_s
		if [ $v = 4 ]; then
			gip=$GEN_IP4 sip=$FWD_SINK_IP4 dgip=$DUT_GEN_IP4 dsip=$DUT_SINK_IP4
			sub_g=10.11.0.0/$PREFIX4 sub_s=10.12.0.0/$PREFIX4
		else
			gip=$GEN_IP6 sip=$FWD_SINK_IP6 dgip=$DUT_GEN_IP6 dsip=$DUT_SINK_IP6
			sub_g=fd00:11::/$PREFIX6 sub_s=fd00:12::/$PREFIX6
		fi
		run ip -n "$GEN_NS" neigh replace "$dgip" lladdr "$DUT_GEN_MAC" dev "$GEN_IF" nud noarp
		run ip -n "$GEN_NS" neigh replace "$sip" lladdr "$DUT_GEN_MAC" dev "$GEN_IF" nud permanent
		run ip -n "$GEN_NS" route replace "$sub_s" via "$dgip" dev "$GEN_IF"
		run ip -n "$SINK_NS" neigh replace "$dsip" lladdr "$DUT_SINK_MAC" dev "$SINK_IF" nud noarp
		run ip -n "$SINK_NS" neigh replace "$gip" lladdr "$DUT_SINK_MAC" dev "$SINK_IF" nud permanent
		run ip -n "$SINK_NS" route replace "$sub_g" via "$dsip" dev "$SINK_IF"
		run ip -n "$DUT_NS" neigh replace "$gip" lladdr "$GEN_MAC" dev "$DUT_GEN_IF" nud permanent
		run ip -n "$DUT_NS" neigh replace "$sip" lladdr "$SINK_MAC" dev "$DUT_SINK_IF" nud permanent
	done
	fail_point neigh
}

# Runs as 'sh -c' in the DUT namespace: routing on, no reverse-path filter
# (the lab has no asymmetric paths; a strict filter would only hide mistakes).
FORWARD_SH='
set -e
echo 1 >/proc/sys/net/ipv4/ip_forward
for f in /proc/sys/net/ipv4/conf/*/rp_filter; do echo 0 >"$f"; done
if [ -d /proc/sys/net/ipv6 ] && [ "$(cat /proc/sys/net/ipv6/conf/all/disable_ipv6)" = 0 ]; then
	echo 1 >/proc/sys/net/ipv6/conf/all/forwarding
fi
'

# The device under test's own part: routing, the bridge, or the XDP program.
setup_dut() {
	case "$opt_dut" in
	forward)
		run ip netns exec "$DUT_NS" sh -c "$FORWARD_SH" forward
		;;
	bridge)
		run ip -n "$DUT_NS" link add "$DUT_BR" type bridge stp_state 0 forward_delay 0 \
			mcast_snooping 0
		run ip -n "$DUT_NS" link set dev "$DUT_GEN_IF" master "$DUT_BR"
		run ip -n "$DUT_NS" link set dev "$DUT_SINK_IF" master "$DUT_BR"
		# Static entries: the sink never sends, so the bridge would never
		# learn its MAC and would flood (to the one other port) forever.
		run bridge -n "$DUT_NS" fdb replace "$GEN_MAC" dev "$DUT_GEN_IF" master static
		run bridge -n "$DUT_NS" fdb replace "$SINK_MAC" dev "$DUT_SINK_IF" master static
		run ip -n "$DUT_NS" link set dev "$DUT_BR" up
		;;
	xdp)
		dut_start_xdp
		;;
	esac
	dut_cpu
	fail_point dut
}

# The DUT's work on a CPU of its own (--dut-cpu), away from the generator's
# thread: otherwise a veth DUT forwards in the sender's own softirq, and a slow
# DUT slows the generator down instead of dropping. forward and bridge: RPS on
# the DUT's ingress, so netif_rx queues each frame to that CPU's backlog (an
# overloaded DUT drops there, as a real one drops at its receive ring). xdp:
# threaded NAPI on the ingress, its kthreads pinned to that CPU.
dut_cpu() {
	local f mask pid name
	[ "$opt_dut_cpu" = none ] && return 0
	if [ "$opt_dut" = xdp ]; then
		run ip netns exec "$DUT_NS" sh -c 'echo 1 >"/sys/class/net/$1/threaded"' threaded "$DUT_GEN_IF"
		while read -r pid name; do
			[ -n "$pid" ] || continue
			run taskset -p -c "$opt_dut_cpu" "$pid"
		done <<<"$(napi_threads "$DUT_GEN_IF")"
		return 0
	fi
	mask=$(printf '%x' $((1 << opt_dut_cpu)))
	run ip netns exec "$DUT_NS" sh -c 'for f in /sys/class/net/$1/queues/rx-*/rps_cpus; do echo "$2" >"$f"; done' \
		rps "$DUT_GEN_IF" "$mask"
}

# --dut xdp: 'xdp-sink redirect --to DUT_SINK_IF DUT_GEN_IF' runs detached in
# the DUT namespace until teardown stops it (teardown stops every process in
# the lab's namespaces). Its output goes to NAME.d/dut-xdp.log.
dut_start_xdp() {
	local log=$LAB_DIR/dut-xdp.log pid
	# fd 9 holds the state directory's lock: the program must not keep it.
	setsid ip netns exec "$DUT_NS" sh -c "$EXEC_SH" testenv-dut "$LAB_DIR/bpf-dut" \
		"$DUT_SINK_BIN" redirect --to "$DUT_SINK_IF" -q "$DUT_GEN_IF" </dev/null >"$log" 2>&1 9<&- &
	pid=$!
	for _ in $(seq 100); do
		ip -n "$DUT_NS" link show dev "$DUT_GEN_IF" 2>/dev/null | grep -q 'prog/xdp' && return 0
		kill -0 "$pid" 2>/dev/null ||
			die "setup failed: xdp-sink redirect in $DUT_NS exited: $(tr '\n' ' ' <"$log")"
		sleep 0.1
	done
	die "setup failed: xdp-sink redirect attached nothing to $DUT_GEN_IF within 10 s: $(tr '\n' ' ' <"$log")"
}

# One bpffs instance per side, mounted in the host's mount namespace under the
# state directory. 'ip netns exec' gives every command a fresh /sys; exec
# bind-mounts this instance onto its /sys/fs/bpf, so pins outlive the command.
setup_bpffs() {
	local s
	run mkdir -p -m 0700 "$LAB_DIR"
	for s in $(lab_sides); do
		run mkdir -p -m 0700 "$LAB_DIR/bpf-$s"
		run mount -t bpf -o mode=0700 "xdpsg-$LAB_NAME-$s" "$LAB_DIR/bpf-$s"
	done
	fail_point bpffs
}

do_setup() {
	local ns

	dut_addresses
	state_lock
	if [ -f "$STATE_FILE" ]; then
		usage_error "lab '$LAB_NAME' already exists: remove it first with $PROG teardown --name $LAB_NAME"
	fi
	for ns in "$GEN_NS" "$SINK_NS" ${opt_dut:+"$DUT_NS"}; do
		ns_exists "$ns" &&
			usage_error "network namespace '$ns' exists but is not a lab of this script: choose another --name"
	done

	trap setup_rollback EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	state_write setting-up

	run ip netns add "$GEN_NS"
	run ip netns add "$SINK_NS"
	[ -n "$opt_dut" ] && run ip netns add "$DUT_NS"
	fail_point netns
	setup_links
	setup_qdisc
	setup_addresses
	if [ $opt_threaded -eq 1 ]; then
		run ip netns exec "$SINK_NS" sh -c "$THREADED_SH" threaded "$SINK_IF" "$opt_gro"
	fi
	fail_point threaded
	setup_bpffs
	[ -n "$opt_dut" ] && setup_dut
	fail_point 'done'

	state_write ready
	SETUP_DONE=1
	trap - EXIT INT TERM
	if [ -n "$opt_dut" ]; then
		info "lab '$LAB_NAME' ready: $GEN_NS/$GEN_IF $GEN_IP4 <-> $DUT_NS ($opt_dut, $DUT_GEN_IF -> $DUT_SINK_IF, qdisc $opt_dut_qdisc) <-> $SINK_NS/$SINK_IF $SINK_IP4, queues $opt_queues, qdisc $opt_qdisc"
	else
		info "lab '$LAB_NAME' ready: $GEN_NS/$GEN_IF $GEN_IP4 <-> $SINK_NS/$SINK_IF $SINK_IP4, queues $opt_queues, qdisc $opt_qdisc"
	fi
}

# --- teardown ----------------------------------------------------------------

# Stop what still runs in a lab namespace: it would keep the namespace (and
# the veth) alive after 'ip netns del'.
ns_kill() { # ns
	local pids pid alive

	read -r -d '' -a pids < <(ip netns pids "$1" 2>/dev/null)
	[ ${#pids[@]} -gt 0 ] || return 0
	info "stopping ${#pids[@]} process(es) still running in $1"
	kill -TERM "${pids[@]}" 2>/dev/null
	for _ in $(seq 20); do
		alive=0
		for pid in "${pids[@]}"; do
			kill -0 "$pid" 2>/dev/null && alive=1
		done
		[ $alive -eq 0 ] && return 0
		sleep 0.1
	done
	kill -KILL "${pids[@]}" 2>/dev/null
}

# Remove every part of the lab in LAB_NAME that exists; quiet and idempotent.
# Only called for labs that have a state file, i.e. that this script made.
lab_remove() {
	local ns s dir ok=0

	# NAME-dut exists only in a lab made with --dut (by this script: the
	# caller checked the state file), so it is looked for in every lab.
	for ns in "$GEN_NS" "$SINK_NS" "$DUT_NS"; do
		ns_exists "$ns" || continue
		ns_kill "$ns"
		ip -n "$ns" link del dev "$GEN_IF" 2>/dev/null
		ip -n "$ns" link del dev "$SINK_IF" 2>/dev/null
		ip -n "$ns" link del dev "$DUT_BR" 2>/dev/null
		ip netns del "$ns" || ok=1
	done
	rm -f "$LAB_DIR/dut-xdp.log"
	for s in gen sink dut; do
		dir=$LAB_DIR/bpf-$s
		if mountpoint -q "$dir" 2>/dev/null; then
			umount "$dir" 2>/dev/null || umount -l "$dir" || ok=1
		fi
		[ -d "$dir" ] && { rmdir "$dir" || ok=1; }
	done
	[ -d "$LAB_DIR" ] && { rmdir "$LAB_DIR" || ok=1; }
	[ $ok -eq 0 ] && rm -f "$STATE_FILE"
	return $ok
}

do_teardown() {
	local f n=0 rc=0

	state_lock
	if [ $opt_all -eq 0 ]; then
		if [ ! -f "$STATE_FILE" ]; then
			info "no lab '$LAB_NAME'; nothing to remove"
			return 0
		fi
		lab_remove || die "could not remove all of lab '$LAB_NAME'; see the messages above"
		info "lab '$LAB_NAME' removed"
		return 0
	fi
	for f in "$STATE_DIR"/*.state; do
		[ -f "$f" ] || continue
		n=${f##*/}
		lab_names "${n%.state}"
		lab_remove || { err "could not remove all of lab '$LAB_NAME'"; rc=1; }
		info "lab '$LAB_NAME' removed"
	done
	return $rc
}

# --- status, list, env, exec, enter ------------------------------------------

do_status() {
	local s ns ifn=()

	require_lab
	echo "lab $LAB_NAME: queues $opt_queues, qdisc $opt_qdisc, gro ${opt_gro:-default}," \
		"tso ${opt_tso:-default}, mtu ${opt_mtu:-default}, ipv6 $([ "$opt_ipv6" -eq 1 ] && echo on || echo off)," \
		"threaded napi $([ "$opt_threaded" -eq 1 ] && echo on || echo off)${opt_scenario:+, scenario $opt_scenario}"
	[ -n "$opt_dut" ] &&
		echo "dut: $opt_dut in $DUT_NS ($DUT_GEN_IF -> $DUT_SINK_IF), qdisc on $DUT_SINK_IF: $opt_dut_qdisc, cpu $opt_dut_cpu"
	echo "state: $STATE_FILE"
	napi_threads | while read -r pid name; do
		echo "napi thread: $name pid $pid cpus $(taskset -pc "$pid" 2>/dev/null | sed 's/.*: //')"
	done
	for s in $(lab_sides); do
		ns=$(side_ns "$s")
		case $s in
		gen) ifn=("$GEN_IF") ;;
		sink) ifn=("$SINK_IF") ;;
		dut) ifn=("$DUT_GEN_IF" "$DUT_SINK_IF") ;;
		esac
		echo
		echo "== $s: namespace $ns, bpffs $LAB_DIR/bpf-$s" \
			"($(mountpoint -q "$LAB_DIR/bpf-$s" && echo mounted || echo NOT mounted))"
		if ! ns_exists "$ns"; then
			echo "namespace $ns is missing"
			continue
		fi
		status_links "$ns" "${ifn[@]}"
		if [ "$s" = dut ]; then
			echo "-- neighbours:"
			ip -n "$ns" neigh show
			[ "$opt_dut" = bridge ] && { echo "-- bridge fdb (static):"; bridge -n "$ns" fdb show br "$DUT_BR" | grep static; }
			if [ "$opt_dut" = xdp ]; then
				echo "-- xdp-sink redirect: $(ip netns pids "$ns" | wc -w) process(es) in $ns; log $LAB_DIR/dut-xdp.log"
			fi
		fi
	done
}

status_links() { # ns ifname...
	local ns=$1 ifn link xdp
	shift
	for ifn in "$@"; do
		if ! link=$(ip -n "$ns" -d link show dev "$ifn" 2>&1); then
			echo "link $ifn is missing"
			continue
		fi
		echo "$link"
		ip -n "$ns" -br addr show dev "$ifn"
		xdp=$(echo "$link" | grep -oE 'prog/xdp[a-z]* id [0-9]+' | tr '\n' ' ')
		echo "-- xdp: ${xdp:-no program attached}"
		echo "-- qdisc:"
		tc -n "$ns" -s qdisc show dev "$ifn" 2>/dev/null
	done
}

do_list() {
	local f n

	for f in "$STATE_DIR"/*.state; do
		[ -f "$f" ] || continue
		n=${f##*/}
		lab_names "${n%.state}"
		opt_queues=1 opt_qdisc=none opt_dut="" opt_dut_qdisc=none
		state_read || continue
		printf '%s queues=%s qdisc=%s%s%s\n' "$LAB_NAME" "$opt_queues" "$opt_qdisc" \
			"${opt_dut:+ dut=$opt_dut dut-qdisc=$opt_dut_qdisc}" \
			"$([ "$LAB_STATUS" = ready ] || echo " (incomplete: $LAB_STATUS)")"
	done
}

shquote() {
	printf "'%s'" "${1//\'/\'\\\'\'}"
}

do_env() {
	local v val

	require_lab
	if [ "$opt_ipv6" -ne 1 ]; then
		GEN_IP6="" SINK_IP6=""
	fi
	# shellcheck disable=SC2034 # read below through ${!v}
	QUEUES=$opt_queues
	# shellcheck disable=SC2034
	DUT_MODE=$opt_dut DUT_QDISC=$opt_dut_qdisc DUT_CPU=$opt_dut_cpu
	for v in LAB_NAME GEN_NS SINK_NS GEN_IF SINK_IF GEN_MAC SINK_MAC \
		GEN_IP4 SINK_IP4 GEN_IP6 SINK_IP6 QUEUES \
		${opt_dut:+DUT_MODE DUT_NS DUT_GEN_IF DUT_SINK_IF DUT_GEN_MAC DUT_SINK_MAC DUT_QDISC DUT_CPU}; do
		val=${!v}
		echo "$v=$(shquote "$val")"
	done
}

# Runs as 'sh -c' in the namespace: $1 the side's bpffs, then the command.
EXEC_SH='
mount --bind "$1" /sys/fs/bpf || { echo "testenv: cannot mount bpffs on /sys/fs/bpf" >&2; exit 1; }
shift
exec "$@"
'

do_exec() { # command...
	local ns dir

	require_lab
	[ "$side" != dut ] || [ -n "$opt_dut" ] ||
		usage_error "lab '$LAB_NAME' has no DUT: use gen or sink (a DUT comes with $PROG setup --dut MODE)"
	ns=$(side_ns "$side")
	dir=$LAB_DIR/bpf-$side
	ns_exists "$ns" || die "namespace $ns of lab '$LAB_NAME' is missing: tear the lab down and set it up again"
	mountpoint -q "$dir" || die "bpffs of lab '$LAB_NAME' ($dir) is not mounted: tear the lab down and set it up again"
	exec ip netns exec "$ns" sh -c "$EXEC_SH" "testenv-$side" "$dir" "$@"
}

# The sink veth's NAPI kthreads, "PID NAME" per line. Threaded NAPI makes one
# kthread per receive queue, named napi/DEV-NAPI_ID, once the NAPI instances
# exist (an XDP program is attached, or GRO is on); they go away with them.
# Kernel threads live in the initial PID namespace, so /proc here sees them.
napi_threads() { # [device, default the sink veth]
	local d name dev=${1:-$SINK_IF}
	for d in /proc/[0-9]*; do
		[ -r "$d/comm" ] || continue
		read -r name <"$d/comm" 2>/dev/null || continue
		# /proc shows a kthread's full name; a 15-byte comm may be cut short.
		[[ "$name" =~ ^napi/$dev-[0-9]+$ ]] || [[ "napi/$dev-" == "$name"* && ${#name} -eq 15 ]] || continue
		# Kernel threads have no parent but kthreadd (PID 2).
		[ "$(awk '{ print $4 }' "$d/stat" 2>/dev/null)" = 2 ] || continue
		echo "${d#/proc/} $name"
	done
}

do_pin_napi() {
	local pid name n=0 lines

	require_lab
	lines=$(napi_threads)
	[ -n "$lines" ] || die "no NAPI thread for $SINK_IF: threaded NAPI needs --threaded-napi at setup and an XDP program attached to $SINK_IF (start the sink first)"
	while read -r pid name; do
		taskset -p -c "$opt_cpu" "$pid" >/dev/null 2>&1 || die "taskset -p -c $opt_cpu $pid ($name) failed"
		echo "$pid $name"
		n=$((n + 1))
	done <<<"$lines"
	info "pinned $n NAPI thread(s) of $SINK_IF to CPU $opt_cpu" >&2
}

# --version --json: the commands from the tables above, the scenario's options
# from its own parser, so neither list is kept twice.
do_version() { # here args...
	local here=$1 c cmds="" opts ropts
	shift
	[ "$*" = --json ] || usage_error "use: $PROG --version --json"
	for c in $LAB_COMMANDS $RUNNER_COMMANDS; do
		cmds+="${cmds:+,}\"$c\""
	done
	opts=$(python3 "$here/backpressure.py" --list-options) ||
		die "python3 $here/backpressure.py --list-options failed"
	ropts=$(python3 "$here/rfc2544.py" --list-options) ||
		die "python3 $here/rfc2544.py --list-options failed"
	printf '{"type":"version","tool":"%s","commands":[%s],"backpressure_options":%s,"rfc2544_options":%s}\n' \
		"$PROG" "$cmds" "$opts" "$ropts"
}

# --- main --------------------------------------------------------------------

if [ "${1:-}" = backpressure ]; then
	shift
	here=$(cd "$(dirname "$0")" && pwd) || exit 2
	exec python3 "$here/backpressure.py" --testenv "$here/$PROG" "$@"
fi
if [ "${1:-}" = rfc2544 ]; then
	shift
	here=$(cd "$(dirname "$0")" && pwd) || exit 2
	exec python3 "$here/rfc2544.py" --testenv "$here/$PROG" "$@"
fi
if [ "${1:-}" = --version ]; then
	shift
	do_version "$(cd "$(dirname "$0")" && pwd)" "$@"
	exit
fi

parse_args "$@"
validate_args
check_env
lab_names "$opt_name"

case "$cmd" in
setup) do_setup ;;
teardown) do_teardown ;;
status) do_status ;;
list) do_list ;;
env) do_env ;;
pin-napi) do_pin_napi ;;
exec) do_exec "${cmd_args[@]}" ;;
enter)
	info "shell in $(side_ns "$side") (lab $LAB_NAME); exit it to leave" >&2
	do_exec "${SHELL:-/bin/bash}"
	;;
esac
