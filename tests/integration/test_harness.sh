# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# What the test library (lib.sh) itself promises the tests that use it.

# lab_bg empties its output file before it returns. A test that starts one tool after
# another into the same file and waits for each one's ready line must never read the
# previous tool's lines: the background shell's own '>' runs only once the child is
# scheduled, and a wait that began first saw the old ready line, then an empty file,
# and failed as "did not start" (test_sink_ops_read_data and
# test_pcap_capture_replaces_only_when_complete, 1 run in about 150).
test_harness_lab_bg_empties_a_reused_file() {
	local out i first
	lab_setup --no-ipv6
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	for i in 1 2 3 4 5; do
		echo '{"type":"ready"}' >"$out"
		lab_bg "$out" sink sleep 30
		# read, a builtin: no fork that would give the child its turn first
		first=
		IFS= read -r first <"$out"
		[ -z "$first" ] || t_fail "run $i: lab_bg returned with a line already in the file: $first"
		kill "$LAST_PID" 2>/dev/null
		wait "$LAST_PID" 2>/dev/null || true
	done
}
