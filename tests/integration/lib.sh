# SPDX-License-Identifier: GPL-2.0
#
# Helpers for integration tests. tests/run.sh sources this and one test file,
# then calls t_run test_NAME in a fresh bash process. A test passes by
# returning 0, fails with t_fail (exit 1), skips with t_skip (exit 77).
# Everything a test creates through these helpers is removed on every exit
# path: labs, background processes, pins.
#
# A test written once for every mode of a tool runs its body through
# t_each_mode, which reports each mode on its own line (see there); one that
# must hold whatever the hosts' clocks runs through t_each_clocks, once with
# the sides on one clock and once on separate clocks. Waits are
# on conditions (t_wait_until and the helpers built on it: the tools' ready
# line, their JSON reports, the kernel's view), each bounded; a fixed sleep is
# left only where time itself is what a test checks.

TESTENV="$ROOT/testenv/testenv.sh"

# rm, mkdir and mkfifo as builtins of this shell (Debian's bash-builtins, which 'make deps'
# installs): the tests run them some thousands of times, and each fork and exec of a
# command costs 4 to 8 ms of CPU on this VM. Without the package they run as commands. The
# builtin mktemp is loaded but left off (it has no --suffix): t_mktemp turns it on for its
# own call. Not sleep: a signal must end a test's wait at once.
T_LOADABLES=
for _b in rm mkdir mkfifo mktemp; do
	[ -r "/usr/lib/bash/$_b" ] && enable -f "/usr/lib/bash/$_b" "$_b" 2>/dev/null &&
		T_LOADABLES+=" $_b"
done
[[ "$T_LOADABLES" != *" mktemp"* ]] || enable -n mktemp
unset _b

# t_mktemp VAR [-d] TEMPLATE: a new file (or, with -d, directory) made by mktemp, its name in
# VAR; with the builtin, no process at all (it prints the name even with -v). 1 if none was
# made.
t_mktemp() {
	local _t _rc=0
	if [[ "$T_LOADABLES" == *" mktemp"* ]]; then
		enable mktemp
		mktemp -q -v "$@" >/dev/null || _rc=1
		enable -n mktemp
		return $_rc
	fi
	_t=$(mktemp "${@:2}") || return 1
	printf -v "$1" '%s' "$_t"
}

# t_env_file FILE: this shell's exported environment, NUL-separated, as env -0 prints it,
# without a process.
t_env_file() {
	local _names _n
	compgen -e >"$1" || return 1
	mapfile -t _names <"$1"
	for _n in "${_names[@]}"; do
		printf '%s=%s\0' "$_n" "${!_n}"
	done >"$1"
}
# Where testenv.sh keeps its labs' state files (NAME.state).
T_STATE_DIR=${TESTENV_STATE_DIR:-/run/xdpsg-testenv}
T_LABS=()
T_PIDS=()
T_CLEANUPS=()
T_TEST=
T_SCHEMA_LIST=
T_SCHEMA_OWNER=
T_SCHEMA_DIR=
T_SCHEMA_OUT=
T_SCHEMA_PID=

t_cleanup() {
	local rc=$? pid c lab
	trap - EXIT TERM INT
	# Only in the shell that set the trap (t_traps): a child forked a moment before a
	# signal (lab_bg's subshell, killed at once) can still run its parent's trap, and
	# would tear down the labs its parent goes on using.
	[ "$BASHPID" = "$T_TRAP_PID" ] || exit "$rc"
	for pid in "${T_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${T_PIDS[@]}"; do
		# Give tools time to detach and print their summary, then insist.
		t_wait_until 5 t_gone "$pid"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	# The tools have stopped and their files are complete, not yet removed.
	if ! t_schema_check && { [ "$rc" = 0 ] || [ "$rc" = 77 ]; }; then
		rc=1
	fi
	for c in "${T_CLEANUPS[@]}"; do
		eval "$c" >/dev/null 2>&1
	done
	for lab in "${T_LABS[@]}"; do
		t_lab teardown --name "$lab" >/dev/null 2>&1
	done
	t_json_server_stop
	exit $rc
}

t_run() {
	T_TEST=$1
	t_schema_begin
	t_traps
	set -o pipefail
	"$1"
}

# t_traps: this shell cleans up (t_cleanup) when it exits or is stopped.
t_traps() {
	T_TRAP_PID=$BASHPID
	trap t_cleanup EXIT
	trap 'exit 143' TERM INT
}

t_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

t_skip() {
	echo "$*"
	exit 77
}

# t_expect_eq WHAT EXPECTED ACTUAL
t_expect_eq() {
	[ "$2" = "$3" ] || t_fail "$1: expected '$2', got '$3'"
}

# t_expect_ge WHAT MIN ACTUAL
t_expect_ge() {
	[ "$3" -ge "$2" ] 2>/dev/null || t_fail "$1: expected >= $2, got '$3'"
}

# t_expect_le WHAT MAX ACTUAL
t_expect_le() {
	[ "$3" -le "$2" ] 2>/dev/null || t_fail "$1: expected <= $2, got '$3'"
}

# A run after the test: eval'd by t_cleanup (for pins, extra links, files).
t_on_cleanup() {
	T_CLEANUPS+=("$*")
}

# --- every record the tests read validates against docs/schema --------------
#
# The helpers that read the tools' output (lab_bg, wait_ready, json_total,
# json_lines, json_get, py_call) note its file; at cleanup, once the tools
# have stopped, schemacheck.py validates each noted file once. A test (or a
# mode of t_each_mode) fails on a record that does not validate. Noting is an
# append, as the waits call the readers in subshells, many times. A test that
# reads the tools' JSON with python of its own notes the files it reads
# (t_schema_note FILE...), or, for a stream, reads it through t_json_tee.

t_schema_begin() {
	T_SCHEMA_LIST=
	T_SCHEMA_OWNER=$BASHPID
	T_SCHEMA_PID=
	t_mktemp T_SCHEMA_DIR -d /tmp/xdpsg-schema.XXXXXX || return 0
	T_SCHEMA_LIST=$T_SCHEMA_DIR/list
	: >"$T_SCHEMA_LIST"
	# Under tests/run.sh one checker serves the whole run (T_SCHEMA_SERVER).
	t_schema_served && return 0
	mkfifo "$T_SCHEMA_DIR/in" || return 0
	/usr/bin/python3 "$ROOT/tests/integration/schemacheck.py" --serve "$T_SCHEMA_DIR/in" \
		>"$T_SCHEMA_DIR/out" 2>&1 </dev/null &
	T_SCHEMA_PID=$!
}

t_schema_note() { # FILE...
	[ -z "$T_SCHEMA_LIST" ] || printf '%s\n' "$@" >>"$T_SCHEMA_LIST"
}

# CMD | t_json_tee | READER: the records of a stream (a tool's --version --json,
# --counters) pass through unchanged, and a copy is validated at cleanup.
t_json_tee() {
	local f
	if [ -z "$T_SCHEMA_LIST" ] || ! t_mktemp f "$T_SCHEMA_DIR/stream.XXXXXX"; then
		cat
		return
	fi
	t_schema_note "$f"
	tee "$f"
}

t_schema_served() {
	[ -p "${T_SCHEMA_SERVER:-}" ] && kill -0 "${T_SCHEMA_SERVER_PID:-}" 2>/dev/null
}

# t_schema_run FILE...: the check of FILEs, by the run's checker, else by one
# of this test's own (started by t_schema_begin, or now); its output in
# $T_SCHEMA_DIR/out, its exit status returned.
t_schema_run() {
	local fd w rc=
	if [ -z "$T_SCHEMA_PID" ] && t_schema_served && mkfifo "$T_SCHEMA_DIR/resp"; then
		printf '%s\n' "$@" >"$T_SCHEMA_DIR/names"
		# Read-write opens, which do not block. One short line: the requests
		# of several tests at once do not mix.
		exec {fd}<>"$T_SCHEMA_DIR/resp" {w}<>"$T_SCHEMA_SERVER"
		printf '%s %s\n' "$T_SCHEMA_DIR/names" "$T_SCHEMA_DIR/resp" >&"$w"
		read -r -t 60 -u "$fd" rc
		exec {fd}<&- {w}>&-
		case $rc in
		0 | 1) T_SCHEMA_OUT=$T_SCHEMA_DIR/resp.out; return "$rc" ;;
		esac
	fi
	if [ -z "$T_SCHEMA_PID" ]; then
		/usr/bin/python3 "$ROOT/tests/integration/schemacheck.py" "$@" >"$T_SCHEMA_DIR/out" 2>&1 \
			</dev/null
		return
	fi
	# Read-write: the open does not block even if the checker has already ended;
	# held until it ends, as a FIFO no one holds open loses what was written.
	exec {fd}<>"$T_SCHEMA_DIR/in"
	printf '%s\n' "$@" "" "" >&"$fd"
	wait "$T_SCHEMA_PID" || rc=$?
	exec {fd}>&-
	return "${rc:-0}"
}

# 0 unless a noted file holds a record that fails validation (it prints them).
t_schema_check() {
	local files out rc=0 f
	local -A noted=()
	[ -n "$T_SCHEMA_LIST" ] && [ "$T_SCHEMA_OWNER" = "$BASHPID" ] || return 0
	# Each file once, in the shell: a sort is one more process for every test.
	while IFS= read -r f; do
		noted[$f]=1
	done <"$T_SCHEMA_LIST"
	files=("${!noted[@]}")
	T_SCHEMA_LIST=
	T_SCHEMA_OUT=$T_SCHEMA_DIR/out
	# Only files with the tools' or the scenarios' records in them are worth a look: the
	# run's checker passes over the others itself; a python of the test's own is not
	# started for none.
	[ ${#files[@]} -eq 0 ] || [ -n "$T_SCHEMA_PID" ] || t_schema_served ||
		mapfile -t files < <(grep -lE '"tool": ?"(xdp-|rfc2544"|backpressure")' "${files[@]}" \
			/dev/null 2>/dev/null)
	if [ ${#files[@]} -gt 0 ] || [ -n "$T_SCHEMA_PID" ]; then
		t_schema_run "${files[@]}" || rc=$?
	fi
	{ out=$(<"$T_SCHEMA_OUT"); } 2>/dev/null
	rm -rf "$T_SCHEMA_DIR"
	case $rc in
	0) ;;
	77) [ ${#files[@]} -eq 0 ] || echo "note: records not validated: $out" >&2 ;;
	*)
		echo "FAIL: records that do not validate against docs/schema:" >&2
		echo "$out" >&2
		return 1
		;;
	esac
	return 0
}

# A lab name unique to this test process, short enough for interface names.
t_labname() {
	printf 't%x%03x' $(( $$ % 4096 )) $(( RANDOM % 4096 ))
}

# xdp-gen's marks (docs/stamp.md): 2 start and 4 end marks a flow, beside the run's frames.
GEN_MARKS_PER_FLOW=6

# with_marks N [FLOWS]: the frames a run of N frames puts on the wire with its marks.
with_marks() {
	echo $(($1 + GEN_MARKS_PER_FLOW * ${2:-1}))
}

# lab_setup [testenv setup options]: make a lab, remember it for cleanup, and
# import its variables (LAB_NAME, GEN_NS, SINK_NS, GEN_IF, SINK_IF, GEN_MAC,
# SINK_MAC, GEN_IP4, SINK_IP4, GEN_IP6, SINK_IP6, QUEUES).
lab_setup() {
	local name env rc
	json_server_start
	name=$(t_labname)
	# Ours before it exists: a test stopped during setup still removes it.
	T_LABS+=("$name")
	# One Python start for the lab and its variables (setup --env), not two.
	env=$(t_lab setup --env --name "$name" "$@")
	rc=$?
	case $rc in
	0) ;;
	2)
		# Refused (the name is another test's lab, an option is bad): nothing was made,
		# and the lab of that name is not ours to remove.
		unset 'T_LABS[-1]'
		t_fail "testenv setup --name $name $* refused"
		;;
	*) t_fail "testenv setup --name $name $* failed" ;;
	esac
	eval "$env" || t_fail "testenv setup --env --name $name gave no variables"
	[ "$LAB_NAME" = "$name" ] || t_fail "testenv env gave LAB_NAME='$LAB_NAME', expected '$name'"
	# Tools this test runs outside the lab's sides (a drop tracer, a judge) check the
	# stamps with the lab's key, as the sides do.
	export XDPSG_STAMP_KEY="$STAMP_KEY"
}

# t_lab ARGS...: "$TESTENV" ARGS, run by the test's python server (lab, in PY_FUNCS):
# the lab's setup and teardown, once a test, were two python starts of their own. Its
# stdout and stderr are the command's, as its exit status is. The server answers when
# the command has ended (a setup can take long on a busy machine), and is never asked
# twice: without the server, or with no answer, testenv.sh runs it.
T_FRONT=$(cd "$ROOT/testenv" && pwd)/testenv.sh
t_lab() {
	local f sink=${BUILD:-build}
	[[ "$sink" == /* ]] || sink=$ROOT/$sink
	if [ -n "$T_JSON_DIR" ] && kill -0 "$T_JSON_PID" 2>/dev/null &&
		f=$T_JSON_DIR/env.$BASHPID && t_env_file "$f"; then
		T_PY_WAIT=120 T_PY_ONCE=1 py_ask lab "$f" "--front-end=$T_FRONT" \
			"--front-sink=$sink/xdp-sink" -- "$@"
		return
	fi
	"$TESTENV" "$@"
}

# lab_exec gen|sink|dut CMD...: run in the lab's namespace with bpffs mounted.
lab_exec() {
	(lab_exec_here "$@")
}

# lab_exec_here SIDE CMD...: this shell becomes CMD on SIDE, as 'testenv.sh exec' would
# run it, by the plan 'testenv.sh env' printed (testenv/xdpsg/labexec.py): a test runs
# hundreds of commands in its labs, and a Python start for each was most of its CPU time.
# A side with a clock of its own is entered with nsenter --time, as exec's setns does. A
# side the plan does not name goes through testenv.sh.
# T_LAB_ENTER set and empty: lab_exec goes through the plan itself (to compare the two).
T_LAB_ENTER=${T_LAB_ENTER-${BUILD:-$ROOT/build}/tests/lab-enter}
lab_exec_here() {
	local side=$1 p ns bpffs timens ready starting clock=()
	shift
	p=${side^^}
	ns=${p}_NS bpffs=${p}_BPFFS timens=${p}_TIMENS ready=${p}_READY starting=${p}_STARTING
	[ -z "${!timens:-}" ] || clock=(nsenter "--time=${!timens}")
	if [ -z "${!bpffs:-}" ] || [ -z "${!ns:-}" ] ||
		{ [ -n "${!timens:-}" ] && ! command -v nsenter >/dev/null; }; then
		exec "$TESTENV" exec --name "$LAB_NAME" "$side" -- "$@"
	fi
	[ -n "${XDPSG_STAMP_KEY+set}" ] || export XDPSG_STAMP_KEY=$STAMP_KEY
	export XDPSG_LAB=$LAB_NAME
	[ -z "$LAB_TOOLS_DIR" ] || [[ ":$PATH:" == *":$LAB_TOOLS_DIR:"* ]] || export PATH="$LAB_TOOLS_DIR:$PATH"
	# The plan's steps in one process (tests/tools/lab-enter.c), where it is built; for a
	# sink, with the shell's rm and mv below.
	if [ -n "$T_LAB_ENTER" ] && [ -x "$T_LAB_ENTER" ]; then
		local marks=()
		if [ "${1##*/}" = xdp-sink ] && [ -n "${!ready:-}" ] && [ -n "${!starting:-}" ]; then
			marks=(--unready "${!ready}" --starting "${!starting}")
			export XDPSG_READY_FILE=${!ready}
		fi
		exec "$T_LAB_ENTER" "${marks[@]}" "${!ns}" "${!bpffs}" "${!timens:--}" "$@"
	fi
	if [ "${1##*/}" = xdp-sink ]; then
		rm -f "${!ready}"
		echo "$BASHPID" >"${!starting}.tmp" && mv -f "${!starting}.tmp" "${!starting}" &&
			export XDPSG_READY_FILE=${!ready}
	fi
	exec "${clock[@]}" ip netns exec "${!ns}" sh -c "$LAB_EXEC_SH" "testenv-$side" "${!bpffs}" "$@"
}

# t_key_file VAR: a fresh stamp key's file (24 random bytes, in hex) in VAR, removed at
# cleanup. Not $(t_key_file): the cleanup it registers would be the subshell's, and the
# file would stay behind.
t_key_file() {
	local -n _key_file=$1
	_key_file=$(mktemp)
	t_on_cleanup rm -f "$_key_file"
	head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$_key_file"
}

dut_gen_ip4() { # the DUT's address on the generator's side, as the kernel has it
	json_text "$(ip -n "$DUT_NS" -j -4 addr show dev "$DUT_GEN_IF")" 'o[0]["addr_info"][0]["local"]'
}

# t_env_procs NAME=VALUE: the pids of the processes whose environment holds
# NAME=VALUE, one a line: a test marks a run with a variable of its own, which
# every process the run starts inherits, and finds what it left behind.
t_env_procs() {
	local p
	# One grep over every environ (NUL-separated lines), not two processes per pid.
	grep -lxzF -- "$1" /proc/[0-9]*/environ 2>/dev/null | while IFS= read -r p; do
		p=${p#/proc/}
		echo "${p%/environ}"
	done
}

t_none_marked() { [ -z "$(t_env_procs "T_RUN_MARK=$1")" ]; }

# t_interrupt SIG AT MARK CMD...: run CMD in the background, marked with
# T_RUN_MARK=MARK, send it SIG after AT seconds, and expect exit code 130 and,
# within 5 s, no process left that carries the mark. With T_INTERRUPT_FROM=PATH
# the AT seconds count from when PATH appears (a scenario's lab state file: it
# has its handlers by then), not from the start: a busy machine can take half a
# second to start Python, and a signal before the handlers is no test of them.
t_interrupt() {
	local sig=$1 at=$2 mark=$3 pid rc err
	shift 3
	err=$(mktemp)
	T_RUN_MARK=$mark "$@" >/dev/null 2>"$err" &
	pid=$!
	if [ -n "${T_INTERRUPT_FROM:-}" ] && ! t_wait_until 30 test -e "$T_INTERRUPT_FROM"; then
		kill -KILL "$pid" 2>/dev/null
		t_fail "$T_INTERRUPT_FROM never appeared ($(tail -n 1 "$err"))"
	fi
	t_nap "$at"
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	t_expect_eq "exit code after SIG$sig at $at s ($(tail -n 1 "$err"))" 130 "$rc"
	rm -f "$err"
	t_wait_until 5 t_none_marked "$mark" ||
		t_fail "SIG$sig at $at s left: $(ps -o pid,args -p "$(t_env_procs "T_RUN_MARK=$mark" | paste -sd,)")"
}

# t_wait_until SECONDS CMD...: run CMD until it succeeds, for at most SECONDS
# (a decimal number); 0 once it does, 1 if it never did. Every wait of the
# tests is one of these: on a condition, bounded, never a fixed time.
t_wait_until() {
	local secs=$1 frac end now
	shift
	frac=000000
	[[ $secs == *.* ]] && frac=${secs#*.}000000
	end=$(( ${EPOCHREALTIME//[!0-9]/} + ${secs%.*} * 1000000 + 10#${frac:0:6} ))
	until "$@"; do
		now=${EPOCHREALTIME//[!0-9]/}
		[ "$now" -lt "$end" ] || return 1
		t_nap 0.05
	done
}

# t_nap SECONDS: sleep, in the shell: a read that times out on a pipe no one
# writes. A sleep(1) between two polls is a fork and an exec, 10 ms of CPU
# on this VM, and the waits poll 20 times a second.
T_NAP_FD=
t_nap() {
	if [ -z "$T_NAP_FD" ] && ! exec {T_NAP_FD}<> <(:); then
		T_NAP_FD=
		sleep "$1"
		return 0
	fi
	read -r -t "$1" -u "$T_NAP_FD" _
	return 0
}

t_gone() { # PID: has the process ended?
	! kill -0 "$1" 2>/dev/null
}

# t_wait_gone PID [SECONDS]: until PID has ended (at most 10 s); 1 if it has not.
t_wait_gone() {
	t_wait_until "${2:-10}" t_gone "$1"
}

xdp_attached() { # NS IF
	[[ "$(ip -n "$1" -d link show dev "$2")" == *prog/xdp* ]]
}

xdp_detached() { # NS IF
	! xdp_attached "$@"
}

# wait_xdp NS IF [none]: wait up to 10 s until an XDP program is attached to
# IF in namespace NS (with "none": until none is); 1 if it never happens.
wait_xdp() {
	if [ "${3:-}" = none ]; then
		t_wait_until 10 xdp_detached "$1" "$2"
	else
		t_wait_until 10 xdp_attached "$1" "$2"
	fi
}

# lab_bg OUTFILE gen|sink CMD...: like lab_exec, in the background; the pid is
# in LAST_PID and is stopped at cleanup.
lab_bg() {
	local out=$1 side=$2
	shift 2
	t_schema_note "$out"
	# Emptied here, not by the background shell's '>': that one runs after the fork,
	# so a wait that starts at once could read a reused file's old lines (an earlier
	# run's ready line) and then find them gone.
	: >"$out"
	# The subshell becomes the command: LAST_PID is the command's pid.
	(lab_exec_here "$side" "$@") >>"$out" 2>&1 &
	LAST_PID=$!
	T_PIDS+=("$LAST_PID")
}

# xsk_sink_bg OUTFILE [OPTIONS...]: xdp-sink xsk on the sink side reporting
# JSON every 100 ms (-d 300: the test stops it), once it is ready; the pid is
# in LAST_PID. Fails the test if it does not start.
xsk_sink_bg() {
	local out=$1
	shift
	lab_bg "$out" sink "$BUILD/xdp-sink" xsk -j -i 100ms -d 300 "$@" "$SINK_IF"
	wait_ready "$out" "$LAST_PID" || t_fail "xsk sink did not start: $(cat "$out")"
}

t_has() { # FILE PATTERN
	grep -q -- "$2" "$1" 2>/dev/null
}

# Wait up to SECONDS for a file to contain a pattern.
t_wait_for() { # file pattern seconds
	t_wait_until "$3" t_has "$1" "$2"
}

# A wait_ready look: the ready line came, or the tool ended without it.
JW_PID=''
jw_ready_step() {
	[ -z "$JL_LINE" ] || { jw_count; return 1; }
	[ "$JW_LINES" != 0 ] || t_gone "$JW_PID"
}

# wait_ready FILE PID [SECONDS]: until the tool writing FILE (xdp-sink -j)
# prints its ready line: attached, sockets bound, counting. 1 if PID ends
# first or SECONDS (default 20) pass.
wait_ready() {
	local t0=$EPOCHREALTIME rc st
	jw_start ready ""
	JW_PID=$2
	jl_wait "${3:-20}" "$1" jw_ready_step
	# A tool that wrote the line and ended between two looks: read it again.
	{ [ "$JW_LINES" != 0 ] || t_has "$1" '^{"type":"ready"'; } && return 0
	# Not ready: say why, for the failure that follows (ended, and how; or still running).
	if t_gone "$2"; then
		wait "$2"
		rc=$?
		echo "wait_ready: pid $2 ended after $(t_since "$t0") s, exit status $rc" >&2
	else
		read -r st </proc/"$2"/wchan 2>/dev/null
		echo "wait_ready: pid $2 still running after $(t_since "$t0") s (wchan ${st:-?})" >&2
	fi
	return 1
}

t_since() { # EPOCHREALTIME at the start: seconds since, to 0.01
	local us=$((${EPOCHREALTIME//[!0-9]/} - ${1//[!0-9]/}))
	printf '%d.%02d' $((us / 1000000)) $((us % 1000000 / 10000))
}

# json_total FILE TYPE FIELD: the sum of FIELD over the JSON lines of TYPE in
# FILE, taking its first occurrence in each line: the top-level one, which
# the tools write before any nested object that repeats the name. awk, not
# python: the waits below run it many times. 0 without such lines.
json_total() {
	t_schema_note "$1"
	awk -v t="{\"type\":\"$2\"" -v f="\"$3\":" '
		index($0, t) == 1 { i = index($0, f); if (i) s += substr($0, i + length(f)) }
		END { printf "%.0f\n", s }' "$1" 2>/dev/null || echo 0
}

json_total_ge() { # FILE TYPE FIELD MIN
	[ "$(json_total "$1" "$2" "$3")" -ge "$4" ]
}

# The waits below read a tool's JSON lines in this shell, each line once: a
# poll of awk or grep was two processes, 20 times a second for each wait, and
# process starts were most of the suite's CPU time on this VM. One wait holds
# the file open (JL_FD) and takes the lines written since its last look.
JL_FD='' JL_PART='' JL_LINE='' JL_V=0
JL_NEW=()

# jl_feed: the complete lines JL_FD has gained since the last call, in JL_NEW;
# a line still being written waits in JL_PART for its end.
jl_feed() {
	local line
	JL_NEW=()
	while IFS= read -r -u "$JL_FD" line; do
		JL_NEW+=("$JL_PART$line")
		JL_PART=''
	done
	JL_PART+=$line
}

# jl_field LINE FIELD: FIELD's integer at its first occurrence in LINE (the
# top-level one, as json_total takes it), in JL_V; 0 without it.
jl_field() {
	local v=${1#*"\"$2\":"}
	if [ "$v" = "$1" ]; then
		JL_V=0
	else
		v=${v%%[!0-9]*}
		JL_V=${v:-0}
	fi
}

# jl_wait SECONDS FILE STEP: STEP runs on each complete line of FILE as it
# comes (in JL_LINE), then once with JL_LINE empty after each look, when its
# status 0 ends the wait. 1 if SECONDS pass first (FILE may appear late).
jl_wait() {
	local secs=$1 file=$2 step=$3 frac=000000 end rc=1
	[[ $secs == *.* ]] && frac=${secs#*.}000000
	end=$((${EPOCHREALTIME//[!0-9]/} + ${secs%.*} * 1000000 + 10#${frac:0:6}))
	t_schema_note "$file"
	JL_FD='' JL_PART=''
	while :; do
		[ -n "$JL_FD" ] || { [ -f "$file" ] && exec {JL_FD}<"$file"; } 2>/dev/null
		if [ -n "$JL_FD" ]; then
			jl_feed
			for JL_LINE in "${JL_NEW[@]}"; do
				"$step"
			done
		fi
		JL_LINE=''
		if "$step"; then
			rc=0
			break
		fi
		[ "${EPOCHREALTIME//[!0-9]/}" -lt "$end" ] || break
		t_nap 0.05
	done
	[ -z "$JL_FD" ] || exec {JL_FD}<&-
	JL_FD=''
	return $rc
}

# The state of the wait in progress: its report type and field, the lines of
# that type seen, the sum of the field over them, the last one's value.
JW_TYPE='' JW_FIELD='' JW_LINES=0 JW_SUM=0 JW_LAST=0 JW_MIN=0 JW_MORE=-1

jw_count() { # a line of JL_LINE: counted when of JW_TYPE
	[[ $JL_LINE == "{\"type\":\"$JW_TYPE\""* ]] || return 1
	JW_LINES=$((JW_LINES + 1))
	[ -z "$JW_FIELD" ] && return 0
	jl_field "$JL_LINE" "$JW_FIELD"
	JW_SUM=$((JW_SUM + JL_V)) JW_LAST=$JL_V
}

jw_start() { # TYPE FIELD
	JW_TYPE=$1 JW_FIELD=$2 JW_LINES=0 JW_SUM=0 JW_LAST=0 JW_MIN=0 JW_MORE=-1
}

jw_total_step() {
	[ -z "$JL_LINE" ] || { jw_count; return 1; }
	[ "$JW_SUM" -ge "$JW_MIN" ]
}

# wait_total FILE TYPE FIELD MIN [SECONDS]: until FIELD, summed over the
# reports of TYPE in FILE, reaches MIN (at most SECONDS, default 10): a tool
# run with -j -i has counted at least MIN. 1 if it never did.
wait_total() {
	jw_start "$2" "$3"
	JW_MIN=$4
	jl_wait "${5:-10}" "$1" jw_total_step
}

# The number of reports of TYPE in FILE.
json_lines() { # FILE TYPE
	t_schema_note "$1"
	grep -c "^{\"type\":\"$2\"" "$1" 2>/dev/null
}

json_lines_ge() { # FILE TYPE MIN
	[ "$(json_lines "$1" "$2")" -ge "$3" ]
}

# JW_MORE more lines than the first look found and, with JW_FIELD, the last
# one counting none: the first look's lines are those there "now".
jw_more_step() {
	[ -z "$JL_LINE" ] || { jw_count; return 1; }
	if [ "$JW_MORE" -ge 0 ]; then
		JW_MIN=$((JW_LINES + JW_MORE)) JW_MORE=-1
	fi
	[ "$JW_LINES" -ge "$JW_MIN" ] && { [ -z "$JW_FIELD" ] || [ "$JW_LAST" = 0 ]; }
}

# wait_reports FILE N [SECONDS]: until FILE has N more interval reports than
# now (at most SECONDS, default 10): the tool has read its counters N more
# times since the call.
wait_reports() {
	jw_start interval ""
	JW_MORE=$2
	jl_wait "${3:-10}" "$1" jw_more_step
}

t_last_interval_idle() { # FILE FIELD MIN-LINES
	json_lines_ge "$1" interval "$3" &&
		[ "$(json_total <(grep '^{"type":"interval"' "$1" | tail -n 1) interval "$2")" = 0 ]
}

# wait_idle FILE [FIELD] [SECONDS]: until an interval report that began after
# the call counts no FIELD (default rx_packets): the traffic has ended and
# the tool has read all of it. For runs whose count is not known; where it
# is, wait_total says more. 1 if it never happens (at most SECONDS, 10).
wait_idle() {
	jw_start interval "${2:-rx_packets}"
	JW_MORE=2
	jl_wait "${3:-10}" "$1" jw_more_step
}

# --- python calls: one python per test ------------------------------------------
#
# Tests read the tools' JSON with python some hundreds of times in the suite,
# and a python start costs 0.15 s here (seconds on a busy machine). So a test
# process has one python that answers them all: json_server_start (lab_setup
# calls it, so it loads while the lab is made) runs PY_FUNCS in the
# background behind a pair of FIFOs, for the test and its subshells, and
# py_call asks it; without it, py_call starts python itself. A test file adds
# its own functions to PY_FUNCS when sourced. A function takes strings and
# returns (exit status, stdout, stderr).

T_JSON_DIR=
T_JSON_PID=
T_JSON_OWNER=

PY_FUNCS='
import json, sys, traceback

def last_of(path, typ):
    obj = None
    for line in open(path):
        line = line.strip()
        # Parse only the lines that can be of the type: the reports before a
        # summary can be many.
        if not line.startswith("{") or ("\"%s\"" % typ) not in line:
            continue
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if o.get("type") == typ:
            obj = o
    return obj

# json_get: EXPR evaluated on the last object of TYPE in PATH (as o).
def get(path, typ, expr):
    obj = last_of(path, typ)
    if obj is None:
        return 1, "", ""
    return 0, "%s\n" % (eval(expr, {"o": obj}),), ""

# json_file, json_text: EXPR on the JSON in PATH, or in TEXT (the one line
# a command prints with -j), as o.
def jfile(path, expr):
    return 0, "%s\n" % (eval(expr, {"o": json.load(open(path))}),), ""

def jtext(text, expr):
    return 0, "%s\n" % (eval(expr, {"o": json.loads(text)}),), ""

# lab: the lab'"'"'s command line (testenv.sh'"'"'s, ARGV with its front-end arguments), run
# here in the environment and directory ENV_FILE holds (env -0), as testenv.sh would
# run it: its stdout is the answer'"'"'s, its exit status the answer'"'"'s status.
def lab(env_file, *argv):
    import contextlib, io, os, signal
    from xdpsg import labcli
    env = {}
    with open(env_file, "rb") as f:
        for item in f.read().split(b"\0"):
            k, sep, v = item.partition(b"=")
            if sep and k:
                env[os.fsdecode(k)] = os.fsdecode(v)
    saved, cwd, out = dict(os.environ), os.getcwd(), io.StringIO()
    # A setup that succeeded leaves SIGINT and SIGTERM blocked (labnet.make: its process
    # ends right after); this one goes on serving, and is stopped by SIGTERM.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(env.get("PWD") or cwd)
        with contextlib.redirect_stdout(out):
            rc = labcli.main(list(argv))
    finally:
        os.environ.clear()
        os.environ.update(saved)
        os.chdir(cwd)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return rc, out.getvalue(), ""

# What a function writes to stderr (a judge run in here) is its answer'"'"'s stderr too, and
# its exit (argparse refusing an option) is its status: the server goes on.
def call(name, args):
    import contextlib, io
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            rc, out, err = globals()[name](*args)
        return rc, out, said.getvalue() + err
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2, "", said.getvalue()
    except Exception:
        return 1, "", said.getvalue() + traceback.format_exc()
'

# The server: a request is "ID<US>FUNCTION<US>ARG..." on a line of DIR/req;
# the answer, on DIR/resp, "ID<US>STATUS<US>STDOUT<US>STDERR<NUL>". Both
# FIFOs are opened read-write, so that no open blocks and req never ends.
PY_SERVER='
import os
d = sys.argv[1]
req = os.fdopen(os.open(os.path.join(d, "req"), os.O_RDWR), "r")
resp = os.open(os.path.join(d, "resp"), os.O_RDWR)
for line in req:
    rid, name, *args = line.rstrip("\n").split("\x1f")
    rc, out, err = call(name, args)
    os.write(resp, ("%s\x1f%d\x1f%s\x1f%s\0" % (rid, rc, out, err)).encode())
'

# Under tests/run.sh the server is a fork of the run's Python (pyserve.py), which has
# started and imported once what every test's server needs; else a python3 of its own.
# It is stopped last at cleanup (t_json_server_stop), after the labs it tore down.
json_server_start() {
	local fd w pid=
	[ -n "$T_JSON_DIR" ] && return 0
	t_mktemp T_JSON_DIR -d /tmp/xdpsg-json.XXXXXX || return 0
	if ! mkfifo "$T_JSON_DIR/req" "$T_JSON_DIR/resp"; then
		rm -rf "$T_JSON_DIR"
		T_JSON_DIR=
		return 0
	fi
	if [ -p "${T_PYSERVE:-}" ] && kill -0 "${T_PYSERVE_PID:-}" 2>/dev/null &&
		printf '%s' "$PY_FUNCS" >"$T_JSON_DIR/code" && t_env_file "$T_JSON_DIR/env"; then
		# Read-write opens, which do not block; the request is one short line. The fork
		# answers a request 0 with its pid, the first thing it writes.
		exec {fd}<>"$T_JSON_DIR/resp" {w}<>"$T_PYSERVE"
		printf '%s\x1f%s\n' "$T_JSON_DIR" "$$" >&"$w"
		IFS= read -r -d '' -t 10 -u "$fd" pid
		exec {fd}<&- {w}>&-
		pid=${pid#0$'\x1f'0$'\x1f'}
		pid=${pid%$'\x1f'}
		[[ "$pid" =~ ^[1-9][0-9]*$ ]] || pid=
	fi
	if [ -z "$pid" ]; then
		python3 -c "$PY_FUNCS$PY_SERVER" "$T_JSON_DIR" </dev/null >/dev/null 2>&1 &
		pid=$!
	fi
	T_JSON_PID=$pid
	T_JSON_OWNER=$BASHPID
}

# t_json_server_stop: at cleanup, once nothing asks it any more.
t_json_server_stop() {
	local st
	[ -n "$T_JSON_PID" ] || return 0
	# A subshell (t_each_mode, t_row) inherits the server of the shell that started it
	# and leaves it to that shell.
	[ "$T_JSON_OWNER" = "$BASHPID" ] || return 0
	# A fork of pyserve.py is no child of this shell: its CPU time (utime + stime, in
	# ticks) goes where tests/run.sh adds it to the test's.
	if [ -n "${T_CPU_EXTRA:-}" ] && read -r -a st <"/proc/$T_JSON_PID/stat" 2>/dev/null &&
		[ "${st[3]}" != "$$" ]; then
		echo $((st[13] + st[14])) >"$T_CPU_EXTRA"
	fi
	kill -TERM "$T_JSON_PID" 2>/dev/null
	t_wait_until 5 t_gone "$T_JSON_PID" || kill -KILL "$T_JSON_PID" 2>/dev/null
	wait "$T_JSON_PID" 2>/dev/null
	[ -z "$T_JSON_DIR" ] || rm -rf "$T_JSON_DIR"
	T_JSON_PID= T_JSON_DIR=
}

# py_call FUNCTION ARG...: FUNCTION of PY_FUNCS on the ARGs (one line each):
# its stdout, its stderr, its exit status. The files among the ARGs are the
# tools' output: their records are checked against the schemas at cleanup.
py_call() {
	local a
	for a; do
		[ ! -f "$a" ] || t_schema_note "$a"
	done
	py_ask "$@"
}

# py_ask FUNCTION ARG...: py_call for ARGs that are no tool's output (a capture).
py_ask() {
	local id res w r args deadline part
	if [ -z "$T_JSON_DIR" ] || [[ "$*" == *[$'\n\x1f']* ]] ||
		! kill -0 "$T_JSON_PID" 2>/dev/null; then
		python3 -c "$PY_FUNCS"'
rc, out, err = call(sys.argv[1], sys.argv[2:])
sys.stdout.write(out)
sys.stderr.write(err)
sys.exit(rc)' "$@"
		return
	fi
	id=$BASHPID.$RANDOM
	printf -v args '\x1f%s' "$@"
	exec {w}<>"$T_JSON_DIR/req" {r}<>"$T_JSON_DIR/resp"
	printf '%s%s\n' "$id" "$args" >&"$w"
	# An answer to an earlier request that gave up is skipped.
	# Read a second at a time: a server that has ended is given up at once. A read that
	# times out keeps what it had read of an answer (part): the rest follows.
	res= part= deadline=$((SECONDS + ${T_PY_WAIT:-10}))
	while [ $SECONDS -lt $deadline ]; do
		if IFS= read -r -d '' -t 1 -u "$r" res; then
			res=$part$res part=
			[ "${res%%$'\x1f'*}" = "$id" ] && break
		else
			part+=$res
			[ -n "$part" ] || kill -0 "$T_JSON_PID" 2>/dev/null || { res= && break; }
		fi
		res=
	done
	exec {w}>&- {r}<&-
	if [ -z "$res" ]; then
		# No answer in time (T_PY_WAIT, 10 s): this call (and its shell) do without the
		# server; with T_PY_ONCE the call is not made again (it may have done its work).
		T_JSON_DIR=
		if [ -n "${T_PY_ONCE:-}" ]; then
			echo "no answer from the test's python in ${T_PY_WAIT:-10} s to: $*" >&2
			return 1
		fi
		py_ask "$@"
		return
	fi
	res=${res#*$'\x1f'}
	set -- "${res%%$'\x1f'*}"
	res=${res#*$'\x1f'}
	printf '%s' "${res%%$'\x1f'*}"
	res=${res#*$'\x1f'}
	[ -z "$res" ] || printf '%s' "$res" >&2
	return "$1"
}

# json_get FILE TYPE EXPR: EXPR (python, on the object as o) of the last JSON
# line of TYPE in FILE; 1 if there is none.
json_get() {
	t_schema_note "$1"
	py_call get "$1" "$2" "$3"
}

# json_file FILE EXPR: EXPR (python) on the JSON document in FILE, as o; for
# files that are no tool's record (a judge's report, a dump).
json_file() {
	py_ask jfile "$1" "$2"
}

# json_text TEXT EXPR: EXPR on the JSON in TEXT, as o: 'ip -j', 'tc -j' and
# 'bpftool -j' print one line, so the test's python answers, and waits that
# poll a counter start no python at all.
json_text() {
	py_ask jtext "$1" "$2"
}

# Kernel counter from "ip -s -j link": iface_stat NS IFNAME rx|tx FIELD
iface_stat() {
	json_text "$(ip -n "$1" -s -j link show dev "$2")" "o[0]['stats64']['$3']['$4']"
}

# check_verdicts_balance FILE [SAMPLE_N]: every xdp-sink JSON summary in FILE
# accounts for each packet its program saw exactly once. The verdicts
# (actions, plus the redirect that found no target or socket) add up to the
# packets seen, the mode's own verdicts only, and the per-queue and per-CPU
# counts add up to the same; xsk: seen = delivered + every named drop, and
# unexplained is 0. With SAMPLE_N (drop --sample N): the samples taken and
# lost are one in N of the drops, per queue and CPU (each counts down alone).
# Only summaries: they are read after the program is detached, while an
# interval's reading can catch a CPU between its packet and verdict counts.
PY_FUNCS+='
def balance(path, every):
    every = int(every)
    # The verdicts each mode gives, and where it counts a redirect with no target.
    own = {"drop": {"drop"}, "pass": {"pass"}, "tx": {"tx", "aborted"},
           "redirect": {"redirect"}, "xsk": {"redirect"}, "redirect-cpu": {"redirect", "aborted"}}
    miss = {"redirect": "redirect_no_target", "xsk": "no_socket",
            "redirect-cpu": "cpumap_no_target"}
    bad, n = [], 0
    for line in open(path):
        line = line.strip()
        try:
            o = json.loads(line) if line.startswith("{") and "\"summary\"" in line else {}
        except ValueError:
            continue
        if o.get("type") != "summary" or o.get("tool") != "xdp-sink":
            continue
        n += 1
        mode, a, d = o["mode"], o["actions"], o.get("drops", {})
        seen = o["xdp_packets"] if mode == "xsk" else o["rx_packets"]
        got = sum(a.values()) + d.get(miss.get(mode), 0)
        what = "summary %d (%s)" % (n, mode)
        def expect(name, want, have):
            if want != have:
                bad.append("%s: %s: expected %s, got %s" % (what, name, want, have))
        expect("packets seen = verdicts %s + %s %s" % (a, miss.get(mode, "redirect_err"),
               d.get(miss.get(mode), 0)), seen, got)
        expect("verdicts no %s program gives" % mode,
               0, sum(v for k, v in a.items() if k not in own[mode]))
        expect("per-queue packets", seen, sum(q["rx_packets"] for q in o["queues"]))
        expect("per-CPU packets", seen, sum(c["rx_packets"] for c in o["cpus"]))
        if mode == "redirect-cpu":
            expect("redirected = seen on the CPUs + cpumap_unseen", a["redirect"],
                   o["cpumap"]["packets"] + d["cpumap_unseen"])
        if mode == "xsk":
            named = sum(d.get(k, 0) for k in ("no_socket", "xsk_fill_ring_empty",
                                              "xsk_rx_ring_full", "xsk_rx_invalid",
                                              "veth_rx_drops"))
            expect("xdp_packets = delivered %d + named drops %s" % (o["rx_packets"], d),
                   seen, o["rx_packets"] + named)
            expect("unexplained", 0, o["unexplained"])
            expect("delivered, by socket", o["rx_packets"],
                   sum(s["rx_packets"] for s in o["sockets"]))
        if every and "samples_taken" in o:
            sampled = o["samples_taken"] + o["samples_lost"]
            slots = len(o["queues"]) * len(o["cpus"])
            if not max(0, a["drop"] - slots * (every - 1)) // every <= sampled <= a["drop"] // every:
                bad.append("%s: samples taken + lost %d is not 1 in %d of %d drops" %
                           (what, sampled, every, a["drop"]))
        elif every:
            bad.append("%s: no samples_taken with --sample %d" % (what, every))
    if not n:
        bad.append("no xdp-sink JSON summary")
    return (1 if bad else 0), ("\n".join(bad) if bad else "%d summaries balance" % n) + "\n", ""
'

check_verdicts_balance() {
	local res
	res=$(py_call balance "$1" "${2:-0}") || t_fail "verdicts do not balance in $1: $res"
	echo "$1: $res"
}

# --- one test body, every mode ------------------------------------------------
#
# As xskxceiver runs one table of tests across its modes: a test body written
# once runs for every mode a tool lists in --version --json (so a new mode is
# tested without a line here), and a mode the body cannot apply to is skipped
# by a rule about what the mode takes (--needs OPTION), never by its name.

# T_MODES: one line per mode of TOOL, "MODE OPTION...", from its --version
# --json; read once per test process.
t_modes_load() { # TOOL
	[ "${T_MODES_TOOL:-}" = "$1" ] && return 0
	T_MODES=$("$BUILD/$1" --version --json | t_json_tee | python3 -c '
import json, sys
for m in json.load(sys.stdin)["modes"]:
    print(m["name"], *m["options"])') || t_fail "$BUILD/$1 --version --json lists no modes"
	[ -n "$T_MODES" ] || t_fail "$BUILD/$1 --version --json lists no modes"
	T_MODES_TOOL=$1
}

# The modes of TOOL (default xdp-gen), one per line.
t_modes() { # [TOOL]
	t_modes_load "${1:-xdp-gen}"
	awk '{ print $1 }' <<<"$T_MODES"
}

# mode_has MODE OPTION[|OPTION...] [TOOL]: does TOOL (default xdp-gen) MODE
# take --OPTION (any of them), by its --version --json?
mode_has() {
	t_modes_load "${3:-xdp-gen}"
	awk -v m="$1" -v o="|$2|" '
		$1 == m { for (i = 2; i <= NF; i++) if (index(o, "|" $i "|")) f = 1 }
		END { exit !f }' <<<"$T_MODES"
}

# gen_workers MODE N: the xdp-gen MODE options for N sending workers: N
# threads, or N queues (queues 0..N-1: the lab needs that many). Return 1 for
# a mode with neither option (t_each_mode --needs 'threads|queues' skips it).
gen_workers() {
	if mode_has "$1" threads; then
		echo "-t $2"
	elif mode_has "$1" queues; then
		echo "--queues $(seq -s, 0 $(($2 - 1)))"
	else
		return 1
	fi
}

# One result line: on stdout (the test's log) and, under tests/run.sh, in
# T_RESULTS, where run.sh counts it like a test of its own.
t_mode_result() { # LABEL PASS|FAIL|SKIP DETAIL
	local line="[$T_TEST:$1] $2 ($3)"
	echo "$line"
	[ -z "${T_RESULTS:-}" ] || echo "$line" >>"$T_RESULTS"
}

# t_each_mode [--tool TOOL] [--needs OPTION[|OPTION...]]... BODY [ARGS...]:
# run "BODY MODE ARGS..." for every mode of TOOL (default xdp-gen), one after
# the other, each in a subshell with cleanups of its own: what it starts and
# makes goes when it ends, what the caller made (a lab, a sink) is shared and
# stays. Each mode is one line, "[TEST:MODE] PASS (Ns)", "FAIL (Ns)" or
# "SKIP (why)": skipped when the mode lacks a --needs option, or the body
# calls t_skip. A mode of another tool than xdp-gen is named TOOL-MODE
# without "xdp-" ("[TEST:sink-xsk]"). T_MODE_FILTER (run.sh --filter
# TEST:MODE) runs one mode. A mode's output goes to the test's log after it;
# under run.sh also to T_LOGDIR/TEST:MODE.log, which run.sh shows when the
# mode fails. Returns 1 if any mode failed.
t_each_mode() {
	local tool=xdp-gen needs=() mode label need rc failed=0 start log
	while :; do
		case $1 in
		--tool) tool=$2; shift 2 ;;
		--needs) needs+=("$2"); shift 2 ;;
		*) break ;;
		esac
	done
	[ $# -ge 1 ] || t_fail "t_each_mode: no test body given"
	t_modes_load "$tool"
	for mode in $(t_modes "$tool"); do
		label=$mode
		[ "$tool" = xdp-gen ] || label=${tool#xdp-}-$mode
		[ -n "${T_MODE_FILTER:-}" ] && [ "$label" != "$T_MODE_FILTER" ] && continue
		for need in "${needs[@]}"; do
			mode_has "$mode" "$need" "$tool" && continue
			t_mode_result "$label" SKIP "$tool $mode takes no --${need//|/ or --}"
			continue 2
		done
		if [ -n "${T_LOGDIR:-}" ]; then
			log="$T_LOGDIR/$T_TEST:$label.log"
		else
			t_mktemp log /tmp/xdpsg-mode.XXXXXX
			t_on_cleanup rm -f "$log"
		fi
		start=$SECONDS
		(
			T_LABS=() T_PIDS=() T_CLEANUPS=()
			t_schema_begin
			t_traps
			"$1" "$mode" "${@:2}"
		) >"$log" 2>&1 </dev/null
		rc=$?
		echo "--- $T_TEST:$label (exit $rc) ---"
		cat "$log"
		case $rc in
		0) t_mode_result "$label" PASS "$((SECONDS - start))s" ;;
		77) t_mode_result "$label" SKIP "$(tail -n 1 "$log")" ;;
		*)
			t_mode_result "$label" FAIL "$((SECONDS - start))s"
			failed=1
			;;
		esac
	done
	return $failed
}

# --- one test body, both clocks -------------------------------------------------
#
# Generator, DUT and sink are often three hosts whose CLOCK_MONOTONICs have
# nothing in common. A test written once runs as two rows of a "clocks"
# matrix: in an ordinary lab, where every side reads the host's clock
# ("same"), and in one made with --separate-clocks, where exec runs the
# generator's commands a day ahead and the DUT's two days ahead while the sink
# keeps the host's clock ("separate"). Each row is one result line,
# "[TEST:same]" and "[TEST:separate]", which tests/run.sh counts as it counts
# t_each_mode's rows; --filter TEST:separate runs one row.
#
# The body makes its lab with clocks_lab_setup (lab_setup with the row's
# option), or adds "$(t_clocks_opt)" to a setup of its own, and takes what it
# expects of each side's clock from the lab's env (GEN_CLOCK_OFFSET_S,
# SINK_CLOCK_OFFSET_S, DUT_CLOCK_OFFSET_S: 0 in the "same" row), never from
# the row's name. The row's name is in T_CLOCKS.

# t_row LABEL BODY [ARGS...]: "BODY ARGS..." as one row of the test, in a
# subshell with cleanups of its own (its labs and processes go when it ends;
# what the caller made stays), reported "[TEST:LABEL] PASS (Ns)", "FAIL (Ns)"
# or "SKIP (why)" as t_each_mode reports a mode, its output in the test's log
# and, under tests/run.sh, in T_LOGDIR/TEST:LABEL.log. Returns 1 if it failed.
t_row() {
	local label=$1 log start rc
	shift
	if [ -n "${T_LOGDIR:-}" ]; then
		log="$T_LOGDIR/$T_TEST:$label.log"
	else
		t_mktemp log /tmp/xdpsg-row.XXXXXX
		t_on_cleanup rm -f "$log"
	fi
	start=$SECONDS
	(
		T_LABS=() T_PIDS=() T_CLEANUPS=()
		t_schema_begin
		t_traps
		"$@"
	) >"$log" 2>&1 </dev/null
	rc=$?
	echo "--- $T_TEST:$label (exit $rc) ---"
	cat "$log"
	case $rc in
	0) t_mode_result "$label" PASS "$((SECONDS - start))s" ;;
	77) t_mode_result "$label" SKIP "$(tail -n 1 "$log")" ;;
	*)
		t_mode_result "$label" FAIL "$((SECONDS - start))s"
		return 1
		;;
	esac
}

# t_clocks_separable: can this machine make a --separate-clocks lab? If not,
# 1 with the reason in T_CLOCKS_WHY.
t_clocks_separable() {
	T_CLOCKS_WHY=
	if [ ! -e /proc/self/ns/time ]; then
		T_CLOCKS_WHY="this kernel has no time namespaces (CONFIG_TIME_NS)"
	elif ! unshare --help 2>/dev/null | grep -q -- '--time'; then
		T_CLOCKS_WHY="unshare has no --time (util-linux 2.36 or later)"
	fi
	[ -z "$T_CLOCKS_WHY" ]
}

# t_each_clocks BODY [ARGS...]: run "BODY ARGS..." once per row of the clocks
# matrix, "same" then "separate", with T_CLOCKS set to the row (see above).
# The "separate" row is skipped, with the reason, on a machine that cannot
# make it. T_MODE_FILTER (run.sh --filter TEST:ROW) runs one row. Returns 1
# if any row failed.
t_each_clocks() {
	local row failed=0
	[ $# -ge 1 ] || t_fail "t_each_clocks: no test body given"
	for row in same separate; do
		[ -n "${T_MODE_FILTER:-}" ] && [ "$row" != "$T_MODE_FILTER" ] && continue
		if [ "$row" = separate ] && ! t_clocks_separable; then
			t_mode_result "$row" SKIP "$T_CLOCKS_WHY"
			continue
		fi
		T_CLOCKS=$row t_row "$row" "$@" || failed=1
	done
	return $failed
}

# t_clocks_opt: the setup option of the row (--separate-clocks, or nothing).
t_clocks_opt() {
	[ "${T_CLOCKS:-same}" != separate ] || echo --separate-clocks
}

# clocks_lab_setup [testenv setup options]: lab_setup with the row's clocks.
clocks_lab_setup() {
	# shellcheck disable=SC2046 # the option is one word or none
	lab_setup $(t_clocks_opt) "$@"
}

# lab_clock_offset gen|sink|dut: the side's CLOCK_MONOTONIC offset from the
# host's in seconds, as the lab's env says (0 for a side on the host's clock).
lab_clock_offset() {
	local v="${1^^}_CLOCK_OFFSET_S"
	echo "${!v:-0}"
}

# lab_timens_offset gen|sink|dut: the same, as the kernel says it to a command
# exec runs in the side (/proc/self/timens_offsets: 0 in the host's clock).
lab_timens_offset() {
	lab_exec "$1" cat /proc/self/timens_offsets | awk '$1 == "monotonic" { print $2 }'
}
