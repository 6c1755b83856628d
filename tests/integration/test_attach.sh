# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Taking an interface over: --force on an interface whose XDP program another
# process holds through a BPF link (which netlink cannot replace).

SINK="$BUILD/xdp-sink"

# A second sink with --force takes the interface from a running one: the first
# one's BPF link is detached (its pid named), the second counts the traffic,
# and when both are gone nothing is left attached. The first one never ends
# with a clean result: it stops at its next tick, saying from when its
# program was gone (stop_reason "program detached", detached_s, exit 1).
test_attach_force_takes_link_over() {
	local a b pa msg
	lab_setup --no-ipv6
	a=$(mktemp)
	b=$(mktemp)
	t_on_cleanup rm -f "$a" "$b"
	lab_bg "$a" sink "$SINK" drop -j -d 120 "$SINK_IF"
	pa=$LAST_PID
	t_wait_for "$a" '"type":"ready"' 20 || t_fail "first sink did not start: $(cat "$a")"
	msg=$(lab_exec sink "$SINK" drop -d 1 "$SINK_IF" 2>&1)
	t_expect_eq "exit code without --force" 2 $?
	[[ "$msg" == *"--force"* ]] || t_fail "busy message without --force: $msg"
	lab_bg "$b" sink "$SINK" drop -j --force -n 1001 -d 60 "$SINK_IF"
	local pb=$LAST_PID
	t_wait_for "$b" '"type":"ready"' 20 || t_fail "--force did not take over: $(cat "$b")"
	grep -q 'took .* over (--force).*BPF link of pid [0-9]' "$b" ||
		t_fail "--force did not say whose link it took: $(cat "$b")"
	lab_exec gen "$BUILD/tests/pktsend" -q -n 1001 --dst-mac "$SINK_MAC" "$GEN_IF" ||
		t_fail "pktsend failed"
	wait "$pb"
	t_expect_eq "exit code of the sink that took over" 0 $?
	t_expect_eq "the second sink counted the traffic" 1001 "$(json_get "$b" summary 'o["rx_packets"]')"
	check_verdicts_balance "$b"
	wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "a program is left after the second sink"
	t_wait_gone "$pa" 5 || t_fail "the sink whose link was taken still runs: $(cat "$a")"
	wait "$pa"
	t_expect_eq "exit code of the sink whose link was taken" 1 $?
	t_expect_eq "its stop reason" "program detached" "$(json_get "$a" summary 'o["stop_reason"]')"
	t_expect_eq "it says from when" True \
		"$(json_get "$a" summary 'o["detached_s"] is not None and 0 < o["detached_s"] < 120')"
	grep -q 'its XDP program was detached from .* s into the run' "$a" ||
		t_fail "no line says the program was detached: $(cat "$a")"
	t_expect_eq "the first sink saw none of it" 0 "$(json_get "$a" summary 'o["rx_packets"]')"
	wait_xdp "$SINK_NS" "$SINK_IF" none || t_fail "a program is left after both sinks"
}
