# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The Python package testenv/xdpsg as it is installed and run: the front ends and the
# drivers. Its unit tests (the lab and process handling, the scenario skeleton, the
# backpressure books, the RFC 2544 verdict, the layout check) are tests/py/test_*.py,
# which tests/run.sh runs in its unit phase without root.

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
