# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The bench as it runs: its front ends, the drop-cost row and the ledger in labs of
# their own, bench-verify. Its rules without a bench run (the cells table, pairing,
# the error rule, the paced rows, the plot's reading of the table, the regression
# guard, the ledger's arithmetic) are tests/py/test_bench.py, which tests/run.sh runs
# in its unit phase without root.

# The front ends run the package: bench/plot and bench/compare answer --help, and
# the runner's --help lists its environment.
test_bench_front_ends() {
	local out
	out=$("$ROOT/bench/plot" --help 2>&1) || t_fail "bench/plot --help: expected exit 0, got $?: $out"
	[[ "$out" == *-peers.png* ]] || t_fail "bench/plot --help: expected the charts it writes, got: $out"
	out=$("$ROOT/bench/compare" --help 2>&1) || t_fail "bench/compare --help: expected exit 0, got $?: $out"
	out=$("$ROOT/bench/compare" only-one.json 2>&1)
	t_expect_eq "bench/compare with one file: exit code" 2 $?
	out=$(cd "$ROOT" && python3 -B -m xdpsg.bench --help 2>&1) ||
		t_fail "python3 -m xdpsg.bench --help: expected exit 0, got $?: $out"
	[[ "$out" == *BENCH_STATE* ]] || t_fail "python3 -m xdpsg.bench --help: expected its environment list, got: $out"
	out=$(cd "$ROOT" && python3 -B -m xdpsg.bench --no-such-option 2>&1)
	t_expect_eq "python3 -m xdpsg.bench --no-such-option: exit code" 2 $?
	[[ "$out" == *"unrecognized arguments"* ]] || t_fail "expected one usage line, got: $out"
}

# The drop-cost row run in a lab of its own (one rotation): its three cells, the traced
# rate paired with the untraced one, a positive ns per drop from the kernel's run-time
# statistics, the qdisc dropping frames and the tracer counting exactly the qdisc's own
# drops. No rate or time is judged: the figures depend on the machine's load.
test_bench_drop_cost_row() {
	local dir out rc
	dir=$(mktemp -d)
	t_on_cleanup "while read -r l; do '$TESTENV' teardown --name \"\$l\"; done < '$dir/labs'; rm -rf '$dir'"
	# A half-second window: the generator runs unpaced through it, three times, and no
	# figure is judged; the qdisc drops tens of thousands of frames in it all the same.
	out=$(cd "$ROOT" && BENCH_STATE="$dir/labs" BENCH_REPEAT=1 BENCH_WINDOW=0.5 BENCH_WARM=0.3 \
		python3 -B -m xdpsg.bench.dropcost 2>"$dir/err")
	rc=$?
	t_expect_eq "python3 -m xdpsg.bench.dropcost: exit code ($(tail -n 5 "$dir/err"))" 0 $rc
	python3 -c '
import json, sys
cells = {c["id"]: c for c in map(json.loads, sys.stdin.read().splitlines())}
want = ["dropcost/tbf/plain", "dropcost/tbf/traced", "dropcost/tbf/ns-per-drop"]
if sorted(cells) != sorted(want):
    sys.exit("expected cells %s, got %s" % (want, sorted(cells)))
ns, tr = cells["dropcost/tbf/ns-per-drop"], cells["dropcost/tbf/traced"]
if ns["unit"] != "ns/drop" or not ns["median"] or ns["median"] <= 0:
    sys.exit("expected a positive ns per drop, got %s %s" % (ns["median"], ns["unit"]))
if tr["pairs"]["dropcost/tbf/plain"]["pairs"] != 1 or not tr["ratio"] or tr["ratio"] <= 0:
    sys.exit("expected the traced rate paired with the plain one, got %s" % tr["pairs"])
for c in cells.values():
    for r in c["runs"]:
        if not r.get("rate") or not r.get("qdisc_drops"):
            sys.exit("expected a rate and qdisc drops in every run, got %s" % r)
run = ns["runs"][0]
if run["traced_qdisc_drops"] != run["qdisc_drops"] or not run.get("kfree_runs"):
    sys.exit("expected the tracer to count the qdisc drops (%s), got %s (kfree_skb runs %s)"
             % (run["qdisc_drops"], run["traced_qdisc_drops"], run.get("kfree_runs")))
print("ns per drop %.1f, traced/plain %.3f, qdisc drops %d (%.1f%% of offered)"
      % (ns["median"], tr["ratio"], run["qdisc_drops"], 100 * ns["drop_share"]))
' <<<"$out" || t_fail "drop-cost row: $(tail -n 3 "$dir/err")"
	[ -s "$dir/labs" ] || t_fail "expected the row's lab listed in BENCH_STATE, got none"
	while read -r l; do
		! ip netns list | grep -q "^$l-" || t_fail "expected lab $l removed, got: $(ip netns list | grep "^$l-")"
	done <"$dir/labs"
}

# bench-verify's JSON: a figure for every kind of frame and every feature of the cost
# ledger (the capture ones through the sink's own capture code); bad input is exit 2.
test_bench_verify_features() {
	local dir
	dir=$(mktemp -d)
	t_on_cleanup rm -rf "$dir"
	touch "$dir/t0"
	TMPDIR=/tmp "$BUILD/bench-verify" --frames 20000 --json "$dir/v.json" >"$dir/out" 2>&1 ||
		t_fail "bench-verify failed: $(tail -n 5 "$dir/out")"
	python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
kinds = ["genuine", "unkeyed", "forged", "claims", "foreign"]
feats = ["verified", "keyed_check", "latency_hist", "jitter", "live_hist", "capture_anomalies",
         "capture_all", "stamp_write"]
bad = [k for k in kinds if not o["ns"].get(k, 0) > 0] + \
      [k for k in feats if not isinstance(o["features"].get(k), (int, float))]
sys.exit("bench-verify: no figure for %s in %s" % (bad, o) if bad else 0)' "$dir/v.json" ||
		t_fail "$(cat "$dir/out")"
	t_expect_eq "temporary capture files left" 0 "$(find /tmp -maxdepth 1 -name 'bench-verify.*' -newer "$dir/t0" | wc -l)"
	"$BUILD/bench-verify" --frames 0 >/dev/null 2>&1
	t_expect_eq "bench-verify --frames 0: exit code" 2 $?
}

# The ledger's BPF rows in a lab of their own (one rotation, short windows): every
# variant's program found and run, each row a figure, nothing left behind. No figure is
# judged: they depend on the machine's load.
test_bench_ledger_rows() {
	local dir out rc
	dir=$(mktemp -d)
	t_on_cleanup "while read -r l; do '$TESTENV' teardown --name \"\$l\"; done < '$dir/labs'; rm -rf '$dir'"
	# Windows of 0.2 s: each of the five runs has an unpaced generator through its warm-up
	# and window, and a program runs some tens of thousands of times in 0.2 s all the same.
	out=$(cd "$ROOT" && BENCH=quick BENCH_STATE="$dir/labs" BENCH_REPEAT=1 BENCH_LEDGER_ROTATIONS=1 \
		BENCH_WINDOW=0.2 BENCH_WARM=0.2 python3 -B -m xdpsg.bench.ledger 2>"$dir/err")
	rc=$?
	t_expect_eq "python3 -m xdpsg.bench.ledger: exit code ($(tail -n 5 "$dir/err"))" 0 $rc
	python3 -c '
import json, sys
cells = {c["id"]: c for c in map(json.loads, sys.stdin.read().splitlines())}
want = {"ledger/stamp-write", "ledger/rx-time-sample", "ledger/rx-time-all", "ledger/record", "ledger/verification"}
missing = want - set(cells)
if missing:
    sys.exit("no row %s in %s" % (sorted(missing), sorted(cells)))
for c in cells.values():
    if c["median"] is None or c.get("flags"):
        sys.exit("row %s: %s" % (c["id"], c))
    for v in c.get("with", []) + c.get("without", []):
        if not v > 0:
            sys.exit("row %s: a run without run time: %s" % (c["id"], c))' <<<"$out" ||
		t_fail "$(tail -n 20 "$dir/err")"
	t_expect_eq "its lab" "" "$(ip netns list | grep -E '^bl[0-9]+-' || true)"
}
