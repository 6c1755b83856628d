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
#                          threaded bpffs done
#
# 'testenv.sh backpressure [OPTIONS]' runs testenv/backpressure.py (the
# backpressure lab: a lab tuned to overflow, sink and generator, and one table
# of where every packet went); 'backpressure --help' describes it.
#
# 'testenv.sh --version --json' prints one JSON line for scripts that need to
# know what this tree offers: its commands and the backpressure scenario's long
# options (bench/run.py runs the scenario only if it is listed).
#
# Exit codes: 0 success, 1 runtime failure, 2 bad usage or environment.

# The *_SH scripts are run by 'sh -c' and expand their variables there.
# shellcheck disable=SC2016
set -u

PROG=${0##*/}
STATE_DIR=${TESTENV_STATE_DIR:-/run/xdpsg-testenv}
[[ "$STATE_DIR" == /* ]] || STATE_DIR=$PWD/$STATE_DIR
FAIL_STEPS="netns veth sysctl offload qdisc up addr neigh threaded bpffs done"
NAME_MAX=13 # interface names are NAME-g / NAME-s and must fit in 15 bytes
QUEUES_MAX=256
MTU_MIN=68
MTU_MAX=65535
# The commands parse_args takes, then the ones dispatched before it; the usage
# errors and 'testenv.sh --version --json' list them from here.
LAB_COMMANDS="setup teardown status exec enter list env pin-napi"
RUNNER_COMMANDS="backpressure"

GEN_IP4=10.11.0.1
SINK_IP4=10.11.0.2
PREFIX4=24
GEN_IP6=fd00:11::1
SINK_IP6=fd00:11::2
PREFIX6=64

usage() {
	cat <<EOF
Usage: $PROG COMMAND [OPTIONS]

Commands:
  setup                 create the lab (two namespaces joined by a veth pair)
  teardown [--all]      remove the lab, or every lab this script made (--all);
                        removing a lab that does not exist is not an error
  status                namespaces, links, attached XDP programs, qdisc counters
  exec gen|sink -- CMD  run CMD in that namespace with the lab's bpffs on
                        /sys/fs/bpf; CMD's exit code is returned
  enter gen|sink        interactive shell in that namespace (bpffs mounted)
  env                   shell assignments to eval: LAB_NAME GEN_NS SINK_NS GEN_IF
                        SINK_IF GEN_MAC SINK_MAC GEN_IP4 SINK_IP4 GEN_IP6 SINK_IP6
                        QUEUES
  list                  one line per lab: name, queues, qdisc
  pin-napi --cpu CPU    pin the sink veth's NAPI kthreads (napi/NAME-s-ID, made
                        by threaded NAPI once an XDP program is attached) to
                        CPU with taskset -p; prints "PID NAME" per thread
  backpressure [OPTIONS]
                        (must be the first argument) make a lab tuned to
                        overflow, run xdp-sink and xdp-gen in it and print
                        where every packet went; see $PROG backpressure --help

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
pin-napi only:
  --cpu CPU             the CPU for the NAPI threads

Addresses: gen $GEN_IP4/$PREFIX4 $GEN_IP6/$PREFIX6, sink $SINK_IP4/$PREFIX4 $SINK_IP6/$PREFIX6.

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
				[ "$1" = backpressure ] &&
					usage_error "'backpressure' must be the first argument: $PROG backpressure [OPTIONS] (see $PROG backpressure --help)"
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

validate_qdisc() {
	local kind a b c extra
	IFS=: read -r kind a b c extra <<<"$opt_qdisc"
	case "$kind" in
	none)
		[ "$opt_qdisc" = none ] && return
		;;
	pfifo | bfifo)
		if [ -z "$b" ] && is_uint "$a" && [ "$a" -ge 1 ]; then
			return
		fi
		usage_error "bad --qdisc '$opt_qdisc': $kind needs a positive limit" \
			"($([ "$kind" = pfifo ] && echo packets || echo bytes)), e.g. --qdisc $kind:1000"
		;;
	tbf)
		if [ -z "$extra" ] &&
			[[ "$a" =~ ^[0-9]+(\.[0-9]+)?([KkMmGgTt]i?)?([Bb]it|[Bb]ps)?$ ]] &&
			[[ "$b" =~ ^[0-9]+([KkMmGg]?[Bb]|[KkMmGg]|[KkMmGg]?bit)?$ ]] &&
			[[ "$c" =~ ^[0-9]+(\.[0-9]+)?(s|sec|secs|ms|msec|msecs|us|usec|usecs)?$ ]]; then
			return
		fi
		usage_error "bad --qdisc '$opt_qdisc': tbf needs RATE:BURST:LATENCY," \
			"e.g. --qdisc tbf:100mbit:32kb:50ms"
		;;
	esac
	usage_error "bad --qdisc '$opt_qdisc': use none, pfifo:LIMIT, bfifo:BYTES or" \
		"tbf:RATE:BURST:LATENCY, e.g. --qdisc pfifo:1000"
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
		gen | sink) ;;
		"") usage_error "'$cmd' needs a side: gen or sink, e.g. $PROG $cmd --name $opt_name gen" ;;
		*) usage_error "bad side '$side' for '$cmd': use gen or sink" ;;
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
	validate_qdisc
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
# byte 01 for gen and 02 for sink.
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
		esac
	done <"$STATE_FILE"
}

# For commands that use a finished lab: load it or exit 2 saying how to make it.
require_lab() {
	state_read || usage_error "no lab '$LAB_NAME': create it with $PROG setup --name $LAB_NAME"
	[ "$LAB_STATUS" = ready ] ||
		usage_error "lab '$LAB_NAME' is incomplete (status '$LAB_STATUS'): run $PROG teardown --name $LAB_NAME, then setup again"
}

side_ns() { # gen|sink
	[ "$1" = gen ] && echo "$GEN_NS" || echo "$SINK_NS"
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
	run ip link add "$GEN_IF" address "$GEN_MAC" "${mtu[@]}" "${q[@]}" netns "$GEN_NS" \
		type veth peer name "$SINK_IF" address "$SINK_MAC" "${mtu[@]}" "${q[@]}" netns "$SINK_NS"
	fail_point veth

	run ip netns exec "$GEN_NS" sh -c "$SYSCTL_SH" sysctl "$opt_ipv6"
	run ip netns exec "$SINK_NS" sh -c "$SYSCTL_SH" sysctl "$opt_ipv6"
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
	fail_point qdisc
}

setup_addresses() {
	run ip -n "$GEN_NS" link set dev "$GEN_IF" up
	run ip -n "$SINK_NS" link set dev "$SINK_IF" up
	fail_point up

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

# One bpffs instance per side, mounted in the host's mount namespace under the
# state directory. 'ip netns exec' gives every command a fresh /sys; exec
# bind-mounts this instance onto its /sys/fs/bpf, so pins outlive the command.
setup_bpffs() {
	local s
	run mkdir -p -m 0700 "$LAB_DIR"
	for s in gen sink; do
		run mkdir -p -m 0700 "$LAB_DIR/bpf-$s"
		run mount -t bpf -o mode=0700 "xdpsg-$LAB_NAME-$s" "$LAB_DIR/bpf-$s"
	done
	fail_point bpffs
}

do_setup() {
	local ns

	state_lock
	if [ -f "$STATE_FILE" ]; then
		usage_error "lab '$LAB_NAME' already exists: remove it first with $PROG teardown --name $LAB_NAME"
	fi
	for ns in "$GEN_NS" "$SINK_NS"; do
		ns_exists "$ns" &&
			usage_error "network namespace '$ns' exists but is not a lab of this script: choose another --name"
	done

	trap setup_rollback EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	state_write setting-up

	run ip netns add "$GEN_NS"
	run ip netns add "$SINK_NS"
	fail_point netns
	setup_links
	setup_qdisc
	setup_addresses
	if [ $opt_threaded -eq 1 ]; then
		run ip netns exec "$SINK_NS" sh -c "$THREADED_SH" threaded "$SINK_IF" "$opt_gro"
	fi
	fail_point threaded
	setup_bpffs
	fail_point 'done'

	state_write ready
	SETUP_DONE=1
	trap - EXIT INT TERM
	info "lab '$LAB_NAME' ready: $GEN_NS/$GEN_IF $GEN_IP4 <-> $SINK_NS/$SINK_IF $SINK_IP4, queues $opt_queues, qdisc $opt_qdisc"
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

	for ns in "$GEN_NS" "$SINK_NS"; do
		ns_exists "$ns" || continue
		ns_kill "$ns"
		ip -n "$ns" link del dev "$GEN_IF" 2>/dev/null
		ip -n "$ns" link del dev "$SINK_IF" 2>/dev/null
		ip netns del "$ns" || ok=1
	done
	for s in gen sink; do
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
	local s ns ifn link xdp

	require_lab
	echo "lab $LAB_NAME: queues $opt_queues, qdisc $opt_qdisc, gro ${opt_gro:-default}," \
		"tso ${opt_tso:-default}, mtu ${opt_mtu:-default}, ipv6 $([ "$opt_ipv6" -eq 1 ] && echo on || echo off)," \
		"threaded napi $([ "$opt_threaded" -eq 1 ] && echo on || echo off)${opt_scenario:+, scenario $opt_scenario}"
	echo "state: $STATE_FILE"
	napi_threads | while read -r pid name; do
		echo "napi thread: $name pid $pid cpus $(taskset -pc "$pid" 2>/dev/null | sed 's/.*: //')"
	done
	for s in gen sink; do
		ns=$(side_ns $s)
		[ $s = gen ] && ifn=$GEN_IF || ifn=$SINK_IF
		echo
		echo "== $s: namespace $ns, bpffs $LAB_DIR/bpf-$s" \
			"($(mountpoint -q "$LAB_DIR/bpf-$s" && echo mounted || echo NOT mounted))"
		if ! ns_exists "$ns"; then
			echo "namespace $ns is missing"
			continue
		fi
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
		opt_queues=1 opt_qdisc=none
		state_read || continue
		printf '%s queues=%s qdisc=%s%s\n' "$LAB_NAME" "$opt_queues" "$opt_qdisc" \
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
	for v in LAB_NAME GEN_NS SINK_NS GEN_IF SINK_IF GEN_MAC SINK_MAC \
		GEN_IP4 SINK_IP4 GEN_IP6 SINK_IP6 QUEUES; do
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
napi_threads() {
	local d name
	for d in /proc/[0-9]*; do
		[ -r "$d/comm" ] || continue
		read -r name <"$d/comm" 2>/dev/null || continue
		# /proc shows a kthread's full name; a 15-byte comm may be cut short.
		[[ "$name" =~ ^napi/$SINK_IF-[0-9]+$ ]] || [[ "napi/$SINK_IF-" == "$name"* && ${#name} -eq 15 ]] || continue
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
	local here=$1 c cmds="" opts
	shift
	[ "$*" = --json ] || usage_error "use: $PROG --version --json"
	for c in $LAB_COMMANDS $RUNNER_COMMANDS; do
		cmds+="${cmds:+,}\"$c\""
	done
	opts=$(python3 "$here/backpressure.py" --list-options) ||
		die "python3 $here/backpressure.py --list-options failed"
	printf '{"type":"version","tool":"%s","commands":[%s],"backpressure_options":%s}\n' \
		"$PROG" "$cmds" "$opts"
}

# --- main --------------------------------------------------------------------

if [ "${1:-}" = backpressure ]; then
	shift
	here=$(cd "$(dirname "$0")" && pwd) || exit 2
	exec python3 "$here/backpressure.py" --testenv "$here/$PROG" "$@"
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
