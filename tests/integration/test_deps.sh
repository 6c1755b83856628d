# SPDX-License-Identifier: GPL-2.0
# make deps: quiet when nothing is missing; as non-root it names exactly what
# is missing and fails instead of installing.

test_deps_quiet_when_complete() {
	local out
	out=$("$ROOT/scripts/deps.sh" 2>&1)
	t_expect_eq "deps exit code with everything installed" 0 $?
	t_expect_eq "deps output with everything installed" "" "$out"
}

test_deps_lists_missing_as_non_root() {
	local out rc
	command -v setpriv >/dev/null || t_skip "setpriv not installed"
	out=$(XDPSG_DEPS_EXTRA="xdpsg-no-such-package-1 xdpsg-no-such-package-2" \
		setpriv --reuid 65534 --regid 65534 --clear-groups "$ROOT/scripts/deps.sh" 2>&1)
	rc=$?
	t_expect_eq "deps exit code as non-root with packages missing" 1 "$rc"
	[[ "$out" == *"missing packages: xdpsg-no-such-package-1 xdpsg-no-such-package-2"* ]] ||
		t_fail "expected the exact missing list, got: $out"
	[[ "$out" == *"apt-get install xdpsg-no-such-package-1 xdpsg-no-such-package-2"* ]] ||
		t_fail "expected the install command, got: $out"
}
