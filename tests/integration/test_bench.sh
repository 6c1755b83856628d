# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The bench's rules, without a bench run: bench/lib_bench.py (pairing, median and
# spread of the per-pair ratios, the disagreement flag, "a tool that printed an error
# failed") and bench/run.py (what each cell is paired with, the peer tools' command
# lines, the paced rows). Unit tests in tests/py/test_bench.py, one class per function
# here, so a failure names the rule that broke.

# bt_unittest CLASS: run one class of tests/py/test_bench.py.
bt_unittest() {
	local out rc
	out=$(cd "$ROOT" && python3 -B "$ROOT/tests/py/test_bench.py" -v "$1" 2>&1)
	rc=$?
	[ $rc -eq 0 ] || t_fail "tests/py/test_bench.py $1: expected exit 0, got $rc:"$'\n'"$(tail -n 30 <<<"$out")"
	grep -qE '^Ran [1-9][0-9]* tests? in' <<<"$out" ||
		t_fail "tests/py/test_bench.py $1: expected tests to run, got: $(tail -n 3 <<<"$out")"
}

# Runs pair by position; the median of their ratios, its min-max, and a flag when
# the pairs are more than 15% apart (the machine changed speed level).
test_bench_pairing() {
	bt_unittest Pairing
}

# A tool that prints an error is a failed run, whatever its exit code.
test_bench_error_rule() {
	bt_unittest ErrorRule
}

# Cells, their references and peer tools, the rotations, the peer command lines.
test_bench_matrix() {
	bt_unittest Matrix
}

# The pacing and CPU rows' figures: the sink's runs array, CPU of a tool's group.
test_bench_paced_rows() {
	bt_unittest SinkRuns
}
