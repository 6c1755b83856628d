# SPDX-License-Identifier: GPL-2.0
# The --json records against docs/schema (docs/json.md): every mode of both
# tools, their version, counter and error records; the error record a failure
# prints under --json; and that a record breaking the schema is caught, by the
# checker and by the check every test runs at cleanup (lib.sh).

SINK="$BUILD/xdp-sink"
GEN="$BUILD/xdp-gen"
CHECK=(/usr/bin/python3 "$ROOT/tests/integration/schemacheck.py")

need_jsonschema() {
	/usr/bin/python3 -c 'import jsonschema' 2>/dev/null ||
		t_skip "python3-jsonschema not installed (make deps)"
}

# The (tool type) pairs in FILEs, one per line.
record_kinds() {
	/usr/bin/python3 -c '
import json, sys
for p in sys.argv[1:]:
    for line in open(p):
        if line.startswith("{"):
            o = json.loads(line)
            print(o.get("tool"), o.get("type"))' "$@" | sort -u
}

# A sink MODE (options before IFNAME in the rest) with traffic from xdp-gen
# kernel; its output in DIR/sink-MODE.json.
run_sink() { # DIR MODE [options] IFNAME
	local dir=$1 mode=$2 out pid
	shift 2
	out=$dir/sink-$mode.json
	lab_bg "$out" sink "$SINK" "$mode" -j -i 100ms -d 60 "$@"
	pid=$LAST_PID
	wait_ready "$out" "$pid" || t_fail "sink $mode did not start: $(cat "$out")"
	lab_exec gen "$GEN" kernel -q -n 200 --dst-mac "$SINK_MAC" "$GEN_IF" >/dev/null ||
		t_fail "xdp-gen kernel failed while sink $mode ran"
	wait_reports "$out" 2 || t_fail "sink $mode reported nothing: $(cat "$out")"
	kill -INT "$pid"
	wait "$pid"
}

# TOOL ARGS... fails under --json: exit 2, its one stderr line unchanged, and
# on stdout one error record with that line as its message. Output in FILE.
expect_error_record() { # FILE TOOL ARGS...
	local file=$1 rc err
	shift
	"$@" >"$file" 2>"$file.err"
	rc=$?
	t_on_cleanup rm -f "$file.err"
	err=$(cat "$file.err")
	t_expect_eq "exit code of $*" 2 "$rc"
	t_expect_eq "stderr lines of $*" 1 "$(grep -c . "$file.err")"
	t_expect_eq "stdout lines of $*" 1 "$(grep -c . "$file")"
	t_expect_eq "record type of $*" error "$(json_get "$file" error 'o["type"]')"
	t_expect_eq "record exit of $*" 2 "$(json_get "$file" error 'o["exit"]')"
	t_expect_eq "record message of $*" "$err" "$(json_get "$file" error 'o["message"]')"
}

test_schema_every_mode_and_record() {
	local dir mode f kinds want
	need_jsonschema
	lab_setup --no-ipv6
	dir=$(mktemp -d)
	t_on_cleanup rm -rf "$dir"

	# Every sink mode that takes an interface, with traffic; redirect
	# through a pair whose far end runs a sink (NAPI, so frames arrive).
	ip -n "$SINK_NS" link add "${LAB_NAME}r0" type veth peer name "${LAB_NAME}r1" ||
		t_fail "cannot add the redirect pair"
	ip -n "$SINK_NS" link set "${LAB_NAME}r0" up
	ip -n "$SINK_NS" link set "${LAB_NAME}r1" up
	lab_bg "$dir/far.json" sink "$SINK" drop -j -d 60 "${LAB_NAME}r1"
	wait_ready "$dir/far.json" "$LAST_PID" || t_fail "far sink: $(cat "$dir/far.json")"
	for mode in $(t_modes xdp-sink); do
		case $mode in
		redirect) run_sink "$dir" "$mode" --to "${LAB_NAME}r0" "$SINK_IF" ;;
		drops) ;;
		*) run_sink "$dir" "$mode" "$SINK_IF" ;;
		esac
	done
	# The tracer takes no interface; the lab's sink namespace is as good as any.
	if mode_has drops duration xdp-sink; then
		lab_exec sink "$SINK" drops -j -i 100ms -d 0.5 >"$dir/sink-drops.json" ||
			t_fail "xdp-sink drops failed: $(cat "$dir/sink-drops.json")"
	fi

	# Every generator mode into a checking sink (runs, latency in its summary).
	lab_bg "$dir/sink-xsk-gen.json" sink "$SINK" xsk -j -d 60 "$SINK_IF"
	wait_ready "$dir/sink-xsk-gen.json" "$LAST_PID" || t_fail "xsk sink did not start"
	for mode in $(t_modes xdp-gen); do
		lab_exec gen "$GEN" "$mode" -j -i 100ms -n 300 --rate 3000 --dst-mac "$SINK_MAC" \
			"$GEN_IF" >"$dir/gen-$mode.json" ||
			t_fail "xdp-gen $mode failed: $(cat "$dir/gen-$mode.json")"
	done
	wait_total "$dir/sink-xsk-gen.json" interval rx_packets 1 || t_fail "xsk sink saw nothing"
	kill -INT "$LAST_PID"
	wait "$LAST_PID"

	for f in xdp-sink xdp-gen; do
		"$BUILD/$f" --version --json >"$dir/$f-version.json" || t_fail "$f --version --json"
		"$BUILD/$f" --counters >"$dir/$f-counters.json" || t_fail "$f --counters"
		expect_error_record "$dir/$f-noif.json" lab_exec sink "$BUILD/$f" xsk -j nosuch0
		expect_error_record "$dir/$f-option.json" "$BUILD/$f" xsk --bogus -qj lo
		expect_error_record "$dir/$f-missing.json" "$BUILD/$f" xsk --json
	done

	"${CHECK[@]}" "$dir"/*.json || t_fail "records above do not validate against docs/schema"
	kinds=$(record_kinds "$dir"/*.json)
	for want in "xdp-sink ready" "xdp-sink interval" "xdp-sink summary" "xdp-sink error" \
		"xdp-sink version" "xdp-sink counter" "xdp-gen interval" "xdp-gen summary" \
		"xdp-gen error" "xdp-gen version" "xdp-gen counter"; do
		grep -qx "$want" <<<"$kinds" || t_fail "no $want record among: $kinds"
	done
	# Without --json a failure prints its line and nothing on stdout.
	t_expect_eq "stdout of a failure without --json" "" "$("$SINK" xsk nosuch0 2>/dev/null)"
}

# A record that breaks the schema: DIR/ok.json holds real records; each
# doctored copy must be refused, naming the broken key. EDIT is run on each
# record as o; the copy is DIR/bad-N.json, N counting the triples from 1.
# One python makes every copy and one checker reads them all (each a python
# start, the checker's with jsonschema's import: most of these tests' CPU):
# the checker checks each file on its own and names it at the start of each
# line it prints, so a file's lines are what a run on it alone would print,
# and it refuses a file exactly when it prints a line about it.
expect_refused() { # DIR WHAT PATTERN EDIT [WHAT PATTERN EDIT]...
	local dir=$1 out n i what pat lines edits=() args
	shift
	args=("$@")
	for ((i = 2; i < $#; i += 3)); do
		edits+=("${args[i]}")
	done
	n=$(/usr/bin/python3 -c '
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
for n, edit in enumerate(sys.argv[3:], 1):
    print(n)
    with open("%s/bad-%d.json" % (sys.argv[2], n), "w") as f:
        for o in json.loads(json.dumps(recs)):
            exec(edit)
            f.write(json.dumps(o, separators=(",", ":")) + "\n")
print(0)' "$dir/ok.json" "$dir" "${edits[@]}" | tail -n 1)
	[ "$n" = 0 ] || t_fail "cannot doctor the records (${args[${n:-1} * 3 - 3]})"
	out=$("${CHECK[@]}" "$dir"/bad-[0-9]*.json)
	for ((i = 1; i <= ${#edits[@]}; i++)); do
		what=${args[i * 3 - 3]} pat=${args[i * 3 - 2]}
		lines=$(grep -F "$dir/bad-$i.json:" <<<"$out")
		[ -n "$lines" ] || t_fail "$what: the checker accepted it"
		[[ "$lines" == *$pat* ]] || t_fail "$what: expected a complaint about '$pat', got: $lines"
	done
	rm -f "$dir"/bad-[0-9]*.json
}

test_schema_violation_is_caught() {
	local dir out pid
	need_jsonschema
	lab_setup --no-ipv6
	dir=$(mktemp -d)
	t_on_cleanup rm -rf "$dir"
	lab_bg "$dir/run.json" sink "$SINK" drop -j -i 100ms -d 60 "$SINK_IF"
	pid=$LAST_PID
	wait_ready "$dir/run.json" "$pid" || t_fail "sink did not start: $(cat "$dir/run.json")"
	wait_reports "$dir/run.json" 1 || t_fail "no interval report"
	kill -INT "$pid"
	wait "$pid"
	"$GEN" xsk -j nosuch0 >>"$dir/run.json" 2>/dev/null
	grep '^{' "$dir/run.json" >"$dir/ok.json"
	"${CHECK[@]}" "$dir/ok.json" || t_fail "the real records do not validate"

	expect_refused "$dir" "no schema version" "'schema' is a required property" 'o.pop("schema")' \
		"another major version" "schema" 'o["schema"] = 2' \
		"a counter as text" "rx_packets" \
		'o.get("type") in ("interval", "summary") and o.update(rx_packets="12")' \
		"a negative counter" "rx_packets" \
		'o.get("type") in ("interval", "summary") and o.update(rx_packets=-1)' \
		"a summary without stop_reason" "stop_reason" \
		'o.get("type") == "summary" and o.pop("stop_reason")' \
		"an error without message" "message" \
		'o.get("type") == "error" and o.pop("message")' \
		"an unknown record type" "type" 'o["type"] = "intervall"' \
		"a record of the wrong tool's mode" "mode" \
		'o.get("tool") == "xdp-sink" and o.update(mode="kernel")'
	# Keys the schema does not know are allowed (docs/json.md). The same python makes
	# the record for the cleanup check below, refused as the first one above was.
	/usr/bin/python3 -c '
import json, sys
with open(sys.argv[2], "w") as added, open(sys.argv[3], "w") as bad:
    for line in open(sys.argv[1]):
        o = json.loads(line); o["new_key"] = {"x": 1}; print(json.dumps(o), file=added)
        o = json.loads(line); o.pop("schema"); print(json.dumps(o), file=bad)' \
		"$dir/ok.json" "$dir/added.json" "$dir/bad.json" || t_fail "cannot doctor the records"
	out=$("${CHECK[@]}" "$dir/added.json") || t_fail "an added key was refused: $out"

	# The check every test runs at cleanup fails a test on such a record.
	t_schema_note "$dir/bad.json"
	# In this shell: the check runs only in the process that began the list.
	t_schema_check 2>"$dir/check.err" && t_fail "the cleanup check passed a bad record"
	out=$(cat "$dir/check.err")
	[[ "$out" == *"do not validate"* ]] || t_fail "cleanup check said: $out"
	# So does a record read only through py_call (the tests' own python readers) or a
	# stream read through t_json_tee (a tool's --version --json, --counters).
	t_schema_begin
	py_call get "$dir/bad.json" summary 'o["type"]' >/dev/null
	t_schema_check 2>"$dir/check.err" && t_fail "the cleanup check passed a bad record read by py_call"
	t_schema_begin
	t_json_tee <"$dir/bad.json" >/dev/null
	t_schema_check 2>"$dir/check.err" && t_fail "the cleanup check passed a bad record read by t_json_tee"
	t_schema_begin
	return 0
}

# The lab's scenarios: their records carry schema and tool, validate against
# docs/schema/rfc2544.json and backpressure.json, a failure under --json ends
# stdout with an error record, and doctored records are refused. A short
# backpressure run gives real interval and summary records; test_rfc2544.sh's
# runs have theirs validated by the check at cleanup.
test_schema_scenarios() {
	local dir name kinds want
	need_jsonschema
	# The test's python for json_get (lab_setup starts it in the others): no lab here.
	json_server_start
	dir=$(mktemp -d)
	t_on_cleanup rm -rf "$dir"
	expect_error_record "$dir/rfc-option.json" "$TESTENV" rfc2544 --json --bogus
	expect_error_record "$dir/rfc-before.json" "$TESTENV" rfc2544 --sizes x --json
	expect_error_record "$dir/bp-check.json" "$TESTENV" backpressure --json --gen frob
	name=$(printf 's%x%03x' $(($$ % 4096)) $((RANDOM % 4096)))
	T_LABS+=("$name")
	# Intervals of half the run: at --interval 1 the one tick fell at the 1 s stop, and a
	# loaded machine stopped first (no interval record, 1 of about 40 clean runs).
	"$TESTENV" backpressure --name "$name" --duration 1 --interval 0.5 --cost 0 --threads 1 \
		--rate 100000 --sndbuf default --json >"$dir/bp-run.json" 2>"$dir/bp-run.err" ||
		t_fail "backpressure run failed: $(tail -n 3 "$dir/bp-run.err")"

	"${CHECK[@]}" "$dir"/*.json || t_fail "scenario records above do not validate"
	kinds=$(record_kinds "$dir"/*.json)
	for want in "rfc2544 error" "backpressure error" "backpressure interval" \
		"backpressure summary"; do
		grep -qx "$want" <<<"$kinds" || t_fail "no $want record among: $kinds"
	done
	t_expect_eq "schema of every record" 1 \
		"$(/usr/bin/python3 -c 'import json, sys
print(*sorted({json.loads(l).get("schema") for p in sys.argv[1:] for l in open(p)}))' \
			"$dir"/*.json)"

	cat "$dir"/*.json >"$dir/ok.json"
	expect_refused "$dir" "a scenario record without schema" "'schema' is a required property" \
		'o.pop("schema")' \
		"a summary without delivered" "delivered" \
		'o.get("type") == "summary" and o.pop("delivered")' \
		"an interval rate as text" "offered" \
		'o.get("type") == "interval" and o.update(offered="1")' \
		"an error with exit 3" "exit" \
		'o.get("type") == "error" and o.update(exit=3)' \
		"an unknown scenario record type" "type" \
		'o.get("tool") == "rfc2544" and o.update(type="trail")'
}
