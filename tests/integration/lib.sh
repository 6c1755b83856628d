# SPDX-License-Identifier: GPL-2.0
#
# Helpers for integration tests. tests/run.sh sources this and one test file,
# then calls t_run test_NAME in a fresh bash process. A test passes by
# returning 0, fails with t_fail (exit 1), skips with t_skip (exit 77).
# Everything a test creates through these helpers is removed on every exit
# path: labs, background processes, pins.

TESTENV="$ROOT/testenv/testenv.sh"
T_LABS=()
T_PIDS=()
T_CLEANUPS=()

t_cleanup() {
	local rc=$? pid c lab
	trap - EXIT TERM INT
	for pid in "${T_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${T_PIDS[@]}"; do
		# Give tools time to detach and print their summary, then insist.
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	for c in "${T_CLEANUPS[@]}"; do
		eval "$c" >/dev/null 2>&1
	done
	for lab in "${T_LABS[@]}"; do
		"$TESTENV" teardown --name "$lab" >/dev/null 2>&1
	done
	exit $rc
}

t_run() {
	trap t_cleanup EXIT
	trap 'exit 143' TERM INT
	set -o pipefail
	"$1"
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

# A lab name unique to this test process, short enough for interface names.
t_labname() {
	printf 't%x%03x' $(( $$ % 4096 )) $(( RANDOM % 4096 ))
}

# lab_setup [testenv setup options]: make a lab, remember it for cleanup, and
# import its variables (LAB_NAME, GEN_NS, SINK_NS, GEN_IF, SINK_IF, GEN_MAC,
# SINK_MAC, GEN_IP4, SINK_IP4, GEN_IP6, SINK_IP6, QUEUES).
lab_setup() {
	local name
	name=$(t_labname)
	T_LABS+=("$name")
	"$TESTENV" setup --name "$name" "$@" || t_fail "testenv setup --name $name $* failed"
	eval "$("$TESTENV" env --name "$name")" || t_fail "testenv env --name $name failed"
	[ "$LAB_NAME" = "$name" ] || t_fail "testenv env gave LAB_NAME='$LAB_NAME', expected '$name'"
}

# lab_exec gen|sink CMD...: run in the lab's namespace with bpffs mounted.
lab_exec() {
	local side=$1
	shift
	"$TESTENV" exec --name "$LAB_NAME" "$side" -- "$@"
}

# wait_xdp NS IF [none]: wait up to 10 s until an XDP program is attached to
# IF in namespace NS (with "none": until none is); 1 if it never happens.
wait_xdp() {
	local i out
	for i in $(seq 100); do
		out=$(ip -n "$1" -d link show dev "$2")
		if [[ "$out" == *prog/xdp* ]]; then
			[ "${3:-}" != none ] && return 0
		else
			[ "${3:-}" = none ] && return 0
		fi
		sleep 0.1
	done
	return 1
}

# lab_bg OUTFILE gen|sink CMD...: like lab_exec, in the background; the pid is
# in LAST_PID and is stopped at cleanup.
lab_bg() {
	local out=$1 side=$2
	shift 2
	"$TESTENV" exec --name "$LAB_NAME" "$side" -- "$@" >"$out" 2>&1 &
	LAST_PID=$!
	T_PIDS+=("$LAST_PID")
}

# Wait up to SECONDS for a file to contain a pattern.
t_wait_for() { # file pattern seconds
	local i
	for i in $(seq $(( $3 * 10 ))); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# A JSON field of the last line that has it: json_field FILE TYPE FIELD
# (numbers and strings at the top level only; python3 for nested paths).
json_get() { # file type python-expression-on-obj
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
path, typ, expr = sys.argv[1:4]
obj = None
for line in open(path):
    line = line.strip()
    if not line.startswith("{"):
        continue
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if o.get("type") == typ:
        obj = o
if obj is None:
    sys.exit(1)
print(eval(expr, {"o": obj}))
PY
}

# Kernel counter from "ip -s -j link": iface_stat NS IFNAME rx|tx FIELD
iface_stat() {
	ip -n "$1" -s -j link show dev "$2" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"][sys.argv[1]][sys.argv[2]])' "$3" "$4"
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
check_verdicts_balance() {
	local res
	res=$(python3 - "$1" "${2:-0}" <<'PY'
import json, sys
path, every = sys.argv[1], int(sys.argv[2])
# The verdicts each mode's program gives, and where it counts a redirect with no target.
own = {"drop": {"drop"}, "pass": {"pass"}, "tx": {"tx", "aborted"},
       "redirect": {"redirect"}, "xsk": {"redirect"}}
miss = {"redirect": "redirect_no_target", "xsk": "no_socket"}
bad, n = [], 0
for line in open(path):
    line = line.strip()
    try:
        o = json.loads(line) if line.startswith("{") else {}
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
    if mode == "xsk":
        named = sum(d[k] for k in ("no_socket", "xsk_fill_ring_empty", "xsk_rx_ring_full",
                                   "xsk_rx_invalid"))
        expect("xdp_packets = delivered %d + named drops %s" % (o["rx_packets"], d),
               seen, o["rx_packets"] + named)
        expect("unexplained", 0, o["unexplained"])
        expect("delivered, by socket", o["rx_packets"],
               sum(s["rx_packets"] for s in o["sockets"]))
    if every and "samples_taken" in o:
        sampled, slots = o["samples_taken"] + o["samples_lost"], len(o["queues"]) * len(o["cpus"])
        if not max(0, a["drop"] - slots * (every - 1)) // every <= sampled <= a["drop"] // every:
            bad.append("%s: samples taken + lost %d is not 1 in %d of %d drops" %
                       (what, sampled, every, a["drop"]))
    elif every:
        bad.append("%s: no samples_taken with --sample %d" % (what, every))
if not n:
    bad.append("no xdp-sink JSON summary")
print("\n".join(bad) if bad else "%d summaries balance" % n)
sys.exit(1 if bad else 0)
PY
) || t_fail "verdicts do not balance in $1: $res"
	echo "$1: $res"
}
