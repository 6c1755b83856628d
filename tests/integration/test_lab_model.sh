# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# 'make install' installs a working xdpsg-lab. The lab as a Python model
# (testenv/xdpsg: topology.py, labnet.py, labstate.py, labcli.py) is unit-tested
# without a lab in tests/py/test_xdpsg_topology.py, which tests/run.sh runs in its
# unit phase without root.

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
