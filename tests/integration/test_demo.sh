# SPDX-License-Identifier: GPL-2.0
# make demo (scripts/demo.sh): the main job in one command, and what a Ctrl-C
# does to it. A Ctrl-C is SIGINT to its whole process group: the generator
# stops first, then the sink, both summaries print, nothing is left (lab,
# tools) and the exit code is 130; the sink never stops before the generator
# (its frames would then be counted as not queued).

# demo_lab_of OUT: the lab the demo made, from its "== xdp-sink drop on NS/IF" line.
demo_lab_of() {
	sed -nE 's|^== xdp-sink drop on (.*)-sink/.*|\1|p' "$1" | head -n 1
}

test_demo_ctrl_c_stops_in_order() {
	local out pid rc lab
	out=$(mktemp)
	t_on_cleanup rm -f "$out"
	# A session of its own: its process group is the terminal's foreground group would be.
	# As from a terminal: SIGINT not ignored (a shell ignores it for what it runs with &).
	BUILD=$BUILD DEMO_DURATION=20 env --default-signal=INT setsid "$ROOT/scripts/demo.sh" \
		>"$out" 2>&1 &
	pid=$!
	T_PIDS+=("$pid")
	t_wait_for "$out" '^== xdp-gen' 30 || t_fail "the demo did not start its generator: $(cat "$out")"
	t_nap 1
	kill -INT -- "-$pid"
	t_wait_gone "$pid" 20 || t_fail "the demo still runs 20 s after Ctrl-C: $(cat "$out")"
	wait "$pid"
	rc=$?
	t_expect_eq "exit code after Ctrl-C" 130 "$rc"
	lab=$(demo_lab_of "$out")
	[ -n "$lab" ] || t_fail "no lab named in: $(cat "$out")"
	t_has "$out" '^xdp-gen kernel .*stopped by SIGINT' ||
		t_has "$out" '^xdp-gen xsk .*stopped by SIGINT' || t_fail "the generator did not stop on SIGINT: $(cat "$out")"
	t_has "$out" '^== xdp-sink summary' || t_fail "no sink summary: $(cat "$out")"
	t_has "$out" '^xdp-sink drop .*stopped by SIGINT' || t_fail "the sink's summary: $(cat "$out")"
	grep -q 'No such process' "$out" && t_fail "a kill missed: $(cat "$out")"
	grep '^RESULT: .* sent' "$out" | grep -q 'failed' &&
		t_fail "the generator's frames failed (the sink stopped first?): $(grep '^RESULT' "$out")"
	! ip netns list | grep -q "^$lab-" || t_fail "the demo left lab $lab"
	! pgrep -f "xdp-(gen|sink) .*$lab-[gs]\$" >/dev/null || t_fail "the demo left tools running"
}
