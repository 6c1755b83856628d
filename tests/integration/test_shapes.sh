# SPDX-License-Identifier: GPL-2.0
# Traffic shapes, for every xdp-gen mode that takes them: --burst 64
# --burst-gap 1ms reads as bursts of exactly 64 in xdp-sink's per-run pacing
# figure (the most frames sent in any 100 us), and --burst and --poisson runs
# send exactly --count, all received. At a burst every millisecond nothing
# else can fill a 100 us window, so the figure cannot read more; one burst
# inside one window among 50 is enough to read 64.

GEN="$BUILD/xdp-gen"

shapes_body() { # MODE
	local mode=$1 sout gout v
	sout=$(mktemp)
	gout=$(mktemp)
	t_on_cleanup rm -f "$sout" "$gout"
	xsk_sink_bg "$sout"
	local spid=$LAST_PID
	lab_exec gen "$GEN" "$mode" --burst 64 --burst-gap 1ms -n 3200 -j -q "$GEN_IF" >"$gout" 2>&1 ||
		t_fail "--burst run failed: $(cat "$gout")"
	t_expect_eq "burst run sent" 3200 "$(json_get "$gout" summary 'o["tx_packets"]')"
	lab_exec gen "$GEN" "$mode" --poisson -r 20000 -n 4000 -j -q "$GEN_IF" >"$gout" 2>&1 ||
		t_fail "--poisson run failed: $(cat "$gout")"
	t_expect_eq "poisson run sent" 4000 "$(json_get "$gout" summary 'o["tx_packets"]')"
	wait_total "$sout" interval rx_packets 7200 30
	kill -INT "$spid" 2>/dev/null
	wait "$spid"
	t_expect_eq "runs seen" 2 "$(json_get "$sout" summary 'len(o["runs"])')"
	t_expect_eq "burst run received" 3200 "$(json_get "$sout" summary 'o["runs"][0]["received"]')"
	t_expect_eq "burst run lost" 0 "$(json_get "$sout" summary 'o["runs"][0]["lost"]')"
	v=$(json_get "$sout" summary 'o["runs"][0]["burst_100us_max"]')
	t_expect_eq "largest 100 us burst of --burst 64" 64 "$v"
	t_expect_eq "poisson run received" 4000 "$(json_get "$sout" summary 'o["runs"][1]["received"]')"
	t_expect_eq "poisson run lost" 0 "$(json_get "$sout" summary 'o["runs"][1]["lost"]')"
}

test_shapes_burst_and_poisson() {
	lab_setup --no-ipv6
	t_each_mode --needs burst shapes_body
}

# What the shapes need and exclude: one line naming it, exit 2, nothing attached.
test_shapes_bad_input() {
	local args out rc
	lab_setup --no-ipv6
	while IFS='|' read -r args want; do
		rc=0
		# shellcheck disable=SC2086
		out=$(lab_exec gen "$GEN" xsk $args -n 10 "$GEN_IF" 2>&1) || rc=$?
		t_expect_eq "exit code of '$args'" 2 "$rc"
		[[ "$out" == *"$want"* ]] || t_fail "'$args': expected '$want', got: $out"
	done <<-'EOF2'
		--burst-gap 1ms|--burst-gap needs --burst N
		--burst 8|--burst needs --burst-gap TIME or --rate PPS
		--burst 8 --burst-gap 1ms -r 1000|--burst-gap and --rate both set the bursts' pace
		--burst 8 -r 1000 --poisson|--burst and --poisson are two shapes; pick one
		--poisson|--poisson needs --rate PPS
	EOF2
	xdp_detached "$GEN_NS" "$GEN_IF" || t_fail "a refused run left a program on $GEN_IF"
}
