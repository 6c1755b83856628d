# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The Python package testenv/xdpsg: the lab and process handling that bench/run.py
# and the scenarios share (tests/py/test_xdpsg_lab.py: stdlib unittest, no lab;
# tiny python/sh children and a fake testenv.sh stand in), the scenario skeleton
# (tests/py/test_scenario.py), the backpressure books and the RFC 2544 trial
# verdict (tests/py/test_backpressure_books.py, test_rfc2544_verdict.py). Each
# function here runs one test class, so a failure names the rule that broke, and
# prints unittest's own report. tests/run.sh puts testenv/ on PYTHONPATH.

# pl_unittest CLASS [FILE]: run one class of tests/py/FILE (default test_xdpsg_lab.py).
pl_unittest() {
	local out rc f=tests/py/${2:-test_xdpsg_lab.py}
	out=$(cd "$ROOT" && python3 -B "$ROOT/$f" -v "$1" 2>&1)
	rc=$?
	[ $rc -eq 0 ] || t_fail "$f $1: expected exit 0, got $rc:"$'\n'"$(tail -n 30 <<<"$out")"
	grep -qE '^Ran [1-9][0-9]* tests? in' <<<"$out" ||
		t_fail "$f $1: expected tests to run, got: $(tail -n 3 <<<"$out")"
}

# JSON lines of a tool's stdout: objects parsed, text and broken lines kept apart.
test_pylib_json_lines() {
	pl_unittest JsonLines
}

# Waiting for a line or a JSON type ends when it comes, when the tool exits, or
# at the bound, whichever is first.
test_pylib_wait_line() {
	pl_unittest WaitLine
}

# stop(): SIGINT to the process group, SIGKILL to all of it after the bound.
test_pylib_stop_escalation() {
	pl_unittest StopEscalation
}

# A lab is recorded (and ever torn down) only after testenv.sh setup succeeded.
test_pylib_lab_recorded_after_setup() {
	pl_unittest LabRecord
}

# The lab's clocks and stamp key as a driver sees them: the sides' offsets, the
# key the sides get (the caller's own wins), host_env() for the drop tracer, and
# scenario.tool_env() keeping XDPSG_STAMP_KEY while it drops the other XDPSG_*.
test_pylib_lab_clocks_and_key() {
	pl_unittest LabClocksAndKey
}

# --version --json: stubs for the tools; the real testenv.sh answers too.
test_pylib_version_query() {
	pl_unittest VersionQuery
}

test_pylib_proc_readers() {
	pl_unittest ProcReaders
}

# The RFC 2544 runner's trial verdict (xdpsg.rfc2544.verdict.trial_verdict), unit
# tests in tests/py/test_rfc2544_verdict.py: the loss ratio compared exactly (1 lost
# of 1,000,000 fails at 0, passes at 1e-6).
test_pylib_rfc2544_verdict_ratio() {
	pl_unittest LossRatio test_rfc2544_verdict.py
}

# Duplicates are never delivered frames.
test_pylib_rfc2544_verdict_duplicates() {
	pl_unittest Duplicates test_rfc2544_verdict.py
}

# Late frames (duplicates or late originals, the sink cannot tell) never make a
# trial with loss pass: 'uncertain: N late frames', or a loss.
test_pylib_rfc2544_verdict_late() {
	pl_unittest Late test_rfc2544_verdict.py
}

# The run's own books; more frames than sent, or rejected ones, prove nothing.
test_pylib_rfc2544_verdict_books() {
	pl_unittest Books test_rfc2544_verdict.py
}

# A generator shortfall is not DUT loss; the sink's own drops are the sink's.
test_pylib_rfc2544_verdict_shortfall() {
	pl_unittest Shortfall test_rfc2544_verdict.py
}

# The throughput search over stub trials: generator shortfalls alone never make
# the DUT the limit.
test_pylib_rfc2544_search() {
	pl_unittest Search test_rfc2544_verdict.py
}

# A generator held at the DUT's rate limiter (tbf on a 2-CPU lab, where the DUT works
# in the generator's softirq) is the DUT's limit: said in the trial and the result.
test_pylib_rfc2544_dut_limit() {
	pl_unittest DutLimit test_rfc2544_verdict.py
}

# The scenario skeleton (xdpsg.scenario.main): exit codes 0 and 1 (Failure,
# LabError; the report's own code), cleanup() once on every way out.
test_pylib_scenario_exit_codes() {
	pl_unittest ExitCodes test_scenario.py
}

# Bad usage: one line on stderr, exit 2, nothing run; --list-options.
test_pylib_scenario_usage() {
	pl_unittest Usage test_scenario.py
}

# SIGINT/SIGTERM during run(): Interrupted (no 'except Exception' swallows it),
# cleanup() once and whole, exit 130; a second signal does not cut the unwinding
# short; signals during cleanup() are ignored (SIG_IGN, inherited by its commands).
test_pylib_scenario_signals() {
	pl_unittest Signals test_scenario.py
}

# Messages name the scenario as it was run: 'testenv.sh rfc2544' or 'rfc2544.py'.
test_pylib_scenario_names() {
	pl_unittest Names test_scenario.py
}

test_pylib_scenario_write_atomic() {
	pl_unittest WriteAtomic test_scenario.py
}

# Under --json: schema and tool first in every record; a failure (exit 1 or 2,
# wherever --json is) ends stdout with one error record carrying the stderr line.
test_pylib_scenario_json_records() {
	pl_unittest JsonRecords test_scenario.py
}

# The backpressure books (xdpsg.backpressure.books): every packet in one place, and
# one packet nowhere fails the run.
test_pylib_backpressure_books() {
	pl_unittest Balanced test_backpressure_books.py
	pl_unittest Unexplained test_backpressure_books.py
}

# The front ends are executable as committed (README and --help run them
# directly), and run directly they speak under their own name, through testenv.sh
# under its: one line, exit 2, for bad usage.
test_pylib_front_ends() {
	local f name err rc mode
	for name in backpressure rfc2544; do
		f=$ROOT/testenv/$name.py
		[ -x "$f" ] || t_fail "testenv/$name.py is not executable"
		if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
			mode=$(git -C "$ROOT" ls-files -s "testenv/$name.py" | cut -d' ' -f1)
			t_expect_eq "git mode of testenv/$name.py" 100755 "$mode"
		fi
		err=$("$f" --frob 2>&1 >/dev/null)
		rc=$?
		t_expect_eq "exit code of '$name.py --frob'" 2 "$rc"
		t_expect_eq "stderr lines of '$name.py --frob' (got: $err)" 1 "$(grep -c . <<<"$err")"
		[[ "$err" == "$name.py: "*"see $name.py --help" ]] ||
			t_fail "$name.py run directly: expected '$name.py: ... see $name.py --help', got: $err"
		err=$("$TESTENV" "$name" --frob 2>&1 >/dev/null)
		[[ "$err" == "testenv.sh $name: "*"see testenv.sh $name --help" ]] ||
			t_fail "testenv.sh $name: expected 'testenv.sh $name: ... see testenv.sh $name --help', got: $err"
	done
}

# The drivers and the package compile, and answer --help.
test_pylib_drivers_load() {
	local tmp out
	tmp=$(mktemp -d)
	t_on_cleanup rm -rf "$tmp"
	# One interpreter for every file: each says its own error.
	out=$(python3 - "$tmp/x.pyc" "$ROOT"/testenv/*.py "$ROOT"/testenv/xdpsg/*.py \
		"$ROOT"/testenv/xdpsg/*/*.py 2>&1 <<-'EOF'
		import py_compile, sys
		bad = 0
		for f in sys.argv[2:]:
		    try:
		        py_compile.compile(f, cfile=sys.argv[1], doraise=True)
		    except py_compile.PyCompileError as e:
		        print(f"{f} does not compile: {e.msg}")
		        bad += 1
		sys.exit(bad)
		EOF
	) || t_fail "$out"
	out=$(python3 -m xdpsg.bench --help 2>&1) || t_fail "python3 -m xdpsg.bench --help: expected exit 0, got $?: $out"
	[[ "$out" == *BENCH_STATE* ]] || t_fail "python3 -m xdpsg.bench --help: expected its environment list, got: $out"
	out=$("$TESTENV" backpressure --help 2>&1) || t_fail "testenv.sh backpressure --help: expected exit 0, got $?: $out"
	[[ "$out" == *--duration* ]] || t_fail "testenv.sh backpressure --help: expected --duration in: $out"
	out=$("$ROOT/testenv/rfc2544.py" --help 2>&1) || t_fail "rfc2544.py --help: expected exit 0, got $?: $out"
	[[ "$out" == "usage: rfc2544.py"*--loss-ratio* ]] || t_fail "rfc2544.py --help: expected its usage, got: $out"
	t_expect_eq "lines of 'testenv.sh --version --json'" 1 "$("$TESTENV" --version --json | grep -c .)"
}

# scripts/check-layout.py (make check-layout): file and function limits in C,
# Python and shell outside tests/, and the mode branches under user/.
test_pylib_check_layout() {
	pl_unittest Limits test_check_layout.py
}
