# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The bench's rules, without a bench run: the cells table (xdpsg.bench.cells), pairing
# (median and spread of the per-pair ratios, the disagreement flag), "a tool that
# printed an error failed", what each cell is paired with and the tools' command
# lines, the paced rows, and bench/plot's reading of the table. Unit tests in
# tests/py/test_bench.py, one class per function here, so a failure names the rule
# that broke.

# bt_unittest CLASS: run one class of tests/py/test_bench.py (testenv/ is on
# PYTHONPATH: tests/run.sh exports it).
bt_unittest() {
	local out rc
	out=$(cd "$ROOT" && python3 -B "$ROOT/tests/py/test_bench.py" -v "$1" 2>&1)
	rc=$?
	[ $rc -eq 0 ] || t_fail "tests/py/test_bench.py $1: expected exit 0, got $rc:"$'\n'"$(tail -n 30 <<<"$out")"
	grep -qE '^Ran [1-9][0-9]* tests? in' <<<"$out" ||
		t_fail "tests/py/test_bench.py $1: expected tests to run, got: $(tail -n 3 <<<"$out")"
}

# The cells table is consistent: ids unique and made of the rows' fields, every
# reference and peer a row, every paired cell in a chart family, ten targets, rows
# that follow xdp-gen's features, and behaviour from fields, never from names.
test_bench_cells_table() {
	bt_unittest CellsTable
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

# bench/plot draws the peer pairs as the headline and one chart per family of the
# table, and follows the table when a cell moves.
test_bench_plot_reads_table() {
	bt_unittest PlotReadsTable
}

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
