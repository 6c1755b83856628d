# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# testenv/xdpsg/lab.py, the lab and process handling that bench/run.py and
# testenv/backpressure.py share. Its unit tests are tests/py/test_xdpsg_lab.py
# (stdlib unittest, no lab: tiny python/sh children and a fake testenv.sh stand
# in); each function here runs one test class, so a failure names the rule
# that broke, and prints unittest's own report. The RFC 2544 runner's trial
# verdict is tested here the same way (tests/py/test_rfc2544_verdict.py).

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

# --version --json: stubs for the tools; the real testenv.sh answers too.
test_pylib_version_query() {
	pl_unittest VersionQuery
}

test_pylib_proc_readers() {
	pl_unittest ProcReaders
}

# The RFC 2544 runner's trial verdict (testenv/rfc2544.py trial_verdict), unit
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

# Both drivers still compile against the module, and answer --help.
test_pylib_drivers_load() {
	local tmp f out
	tmp=$(mktemp -d)
	t_on_cleanup rm -rf "$tmp"
	for f in testenv/xdpsg/bench/main.py testenv/backpressure.py testenv/rfc2544.py testenv/xdpsg/lab.py; do
		python3 -c 'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)' \
			"$ROOT/$f" "$tmp/x.pyc" 2>&1 || t_fail "$f does not compile"
	done
	out=$(python3 -m xdpsg.bench --help 2>&1) || t_fail "python3 -m xdpsg.bench --help: expected exit 0, got $?: $out"
	[[ "$out" == *BENCH_STATE* ]] || t_fail "python3 -m xdpsg.bench --help: expected its environment list, got: $out"
	out=$("$TESTENV" backpressure --help 2>&1) || t_fail "testenv.sh backpressure --help: expected exit 0, got $?: $out"
	[[ "$out" == *--duration* ]] || t_fail "testenv.sh backpressure --help: expected --duration in: $out"
	t_expect_eq "lines of 'testenv.sh --version --json'" 1 "$("$TESTENV" --version --json | grep -c .)"
}
