# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The lab as a Python model (testenv/xdpsg: topology.py, labnet.py, labstate.py,
# labcli.py) without making a lab: its unit tests are tests/py/test_xdpsg_topology.py
# (stdlib unittest, no root actions), one class per function here so a failure
# names the rule that broke. And 'make install' installs a working xdpsg-lab.

# tm_unittest CLASS: run one class of tests/py/test_xdpsg_topology.py.
tm_unittest() {
	local out rc f=tests/py/test_xdpsg_topology.py
	out=$(cd "$ROOT" && python3 -B "$ROOT/$f" -v "$1" 2>&1)
	rc=$?
	[ $rc -eq 0 ] || t_fail "$f $1: expected exit 0, got $rc:"$'\n'"$(tail -n 30 <<<"$out")"
	grep -qE '^Ran [1-9][0-9]* tests? in' <<<"$out" ||
		t_fail "$f $1: expected tests to run, got: $(tail -n 3 <<<"$out")"
}

# Names and MACs are a function of the lab's name.
test_lab_model_names() {
	tm_unittest Names
}

# Two namespaces: the default, every setting, --no-ipv6, --scenario backpressure.
test_lab_model_two_namespaces() {
	tm_unittest TwoNamespaces
}

# forward, bridge and xdp DUTs as data: addresses, neighbours, routes, the
# bridge, the program, the CPU the DUT works on, and what env prints.
test_lab_model_dut_kinds() {
	tm_unittest DutKinds
}

# Every bad option is refused with one line that names it.
test_lab_model_refused() {
	tm_unittest Refused
}

# The commands a topology turns into, step by step.
test_lab_model_plan() {
	tm_unittest Plan
}

# Commands batched per tool and namespace, a failure still names its command,
# TESTENV_FAIL_AT runs its step before failing.
test_lab_model_batching() {
	tm_unittest Batching
}

# The state file: a round trip, and the shell lab's files read as they were.
test_lab_model_state() {
	tm_unittest State
}

# The command line's parsing and its one-line refusals.
test_lab_model_command_line() {
	tm_unittest CommandLine
}

# --separate-clocks as data: gen and DUT in time namespaces of their own (a day,
# two days ahead), the sink on the host's; env, the plan, the state, the command
# line, and the time namespace made by unshare(1) on a file of its own.
test_lab_model_clocks() {
	tm_unittest Clocks
}

# The lab's stamp key: random, mode 0600 whatever the umask, never written through
# a link; exec gives it unless the caller set XDPSG_STAMP_KEY; env prints it;
# teardown removes it with the time namespaces' files.
test_lab_model_stamp_key() {
	tm_unittest StampKey
}

# 'make install DESTDIR=...' installs xdpsg-lab and the package it runs, and it
# works from there alone: no PYTHONPATH, another directory, another user.
test_lab_install_destdir() {
	local dir bin out err rc
	[ -x "$BUILD/xdp-sink" ] && [ -x "$BUILD/xdp-gen" ] || t_skip "tools not built"
	dir=$(mktemp -d /tmp/xdpsg-install.XXXXXX)
	t_on_cleanup rm -rf "$dir"
	chmod 0755 "$dir"
	out=$(make -C "$ROOT" --no-print-directory install DESTDIR="$dir" PREFIX=/usr 2>&1) ||
		t_fail "make install DESTDIR=$dir failed: $(tail -n 5 <<<"$out")"
	bin=$dir/usr/sbin/xdpsg-lab
	[ -x "$bin" ] || t_fail "expected an executable $bin, got: $(find "$dir" -type f | head)"
	[ -f "$dir/usr/share/xdpsg/xdpsg/topology.py" ] || t_fail "expected the package in $dir/usr/share/xdpsg"
	out=$(cd / && env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		setpriv --reuid 65534 --regid 65534 --clear-groups "$bin" --version --json) ||
		t_fail "installed xdpsg-lab --version --json failed (exit $?): $out"
	python3 -c '
import json, sys
v = json.loads(sys.argv[1])
assert v["type"] == "version" and v["tool"] == "xdpsg-lab", v
assert "setup" in v["commands"] and "rfc2544" in v["commands"], v["commands"]
assert "duration" in v["backpressure_options"] and v["rfc2544_options"], v
' "$out" || t_fail "installed xdpsg-lab --version --json: unexpected line: $out"
	t_expect_eq "lines of xdpsg-lab --version --json" 1 "$(grep -c . <<<"$out")"
	err=$(cd / && env -i PATH=/usr/bin:/bin \
		setpriv --reuid 65534 --regid 65534 --clear-groups "$bin" list 2>&1 >/dev/null)
	rc=$?
	t_expect_eq "installed xdpsg-lab list as nobody: exit code" 2 "$rc"
	[[ "$err" == "xdpsg-lab: must run as root"* ]] || t_fail "expected the root message, got '$err'"
	[[ "$("$bin" --help)" == "Usage: xdpsg-lab COMMAND"* ]] || t_fail "xdpsg-lab --help: no usage"
}
