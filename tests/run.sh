#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs every test and ends with "N passed, N failed, N skipped".
#   tests/run.sh [--unit | --integration] [--filter PATTERN[:MODE]] [-j N]
# Unit tests: every $BUILD/tests/test_* binary (and the sanitized build if made),
# then the Python unit tests (tests/py/run.py), as the user nobody when run as root.
# Integration tests: every function test_* in tests/integration/test_*.sh, each
# run as its own bash process under a timeout, in labs it makes and removes.
# A test that runs once per mode (lib.sh's t_each_mode) counts each mode as a
# test of its own, "[integration:TEST:MODE]"; --filter TEST:MODE runs one.
# -j N (or TEST_JOBS=N): N integration tests at a time (default 1); a test
# marked "# serial: WHY" in the comment above it, or every test of a file with
# a "# serial-file: WHY" line, runs alone, after the others; one marked
# "# quiet: WHY" (it measures a rate or a time, which any load beside it moves)
# runs alone after the others in every case (below). A test of such a
# file marked "# parallel: WHY" (the file's reason does not apply) does not. A test
# marked "# long: WHY" (tens of seconds, mostly waiting) starts before the others, so
# that the phase does not end with it running alone. A test marked "# sanitized: WHY"
# (it runs the ASan tools) starts after the others.
# SANITIZE_BUILD=PREFIX (make check): the sanitized build is being made beside the
# tests, at the lowest priority; PREFIX.rc gets its exit status when it ends, PREFIX.log
# its output. The sanitized unit tests then run beside the integration tests, and the
# tests marked "# sanitized:" wait for it. As root with -j N > 1 the serial tests (not
# the quiet ones) then run first, while the build and the sanitized unit tests use the
# CPU time they leave as SCHED_IDLE tasks, which any other task preempts at once
# (SANITIZE_BUILD_PID is the build's); a serial test must not run the ASan tools. Then
# the Python tests start, and the build goes back to its nice 19.
# Each phase (unit, sanitized unit, python, integration in parallel, serial) ends with
# a line "[phase:NAME] Ns, cpu Ns, N tests". TEST_TIMES=FILE: a line
# "NAME WALL-S CPU-S" per integration test is appended to FILE.
set -u

cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
# The Python package (testenv/xdpsg) for every test that imports it.
PYTHONPATH="$ROOT/testenv${PYTHONPATH:+:$PYTHONPATH}"
export ROOT BUILD PYTHONPATH
# The labs the tests make are this run's: another 'testenv.sh teardown --all' leaves them.
XDPSG_LAB_OWNER=$$
export XDPSG_LAB_OWNER

run_unit=1
run_integ=1
filter=""
TEST_TIMEOUT=${TEST_TIMEOUT:-240}
jobs=${TEST_JOBS:-1}
while [ $# -gt 0 ]; do
	case "$1" in
	--unit) run_integ=0 ;;
	--integration) run_unit=0 ;;
	--filter) filter=$2; shift ;;
	-j|--jobs) jobs=$2; shift ;;
	-j[0-9]*) jobs=${1#-j} ;;
	-h|--help) sed -n '4,/^set -u/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	*) echo "run.sh: unknown argument '$1'; see tests/run.sh --help" >&2; exit 2 ;;
	esac
	shift
done

[[ "$jobs" =~ ^[1-9][0-9]?$ ]] || { echo "run.sh: -j takes 1..99, not '$jobs'" >&2; exit 2; }
passed=0 failed=0 skipped=0
failed_names=()
LOGDIR=$(mktemp -d /tmp/xdpsg-tests.XXXXXX)

# The tests start python some thousands of times, and its start is much of
# their CPU time: python3 on PATH may be a pyenv shim (about a second to find
# the interpreter) or a build that starts in twice the time of the system's.
# So python3 is the one testenv.sh runs (XDPSG_PYTHON, else /usr/bin/python3,
# the one a Debian CI has), else the one on PATH, found once; it goes first on
# PATH.
py=${XDPSG_PYTHON:-}
[ -n "$py" ] || [ ! -x /usr/bin/python3 ] || py=/usr/bin/python3
[ -n "$py" ] || py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -x "$py" ] && [ "$(command -v python3)" != "$py" ]; then
	mkdir "$LOGDIR/bin" && ln -s "$py" "$LOGDIR/bin/python3" && PATH="$LOGDIR/bin:$PATH"
fi
# Our modules compiled once, beside their sources (__pycache__, which git ignores):
# where PYTHONDONTWRITEBYTECODE is set (a CI may set it) every start compiled them
# again, some 50 ms of a lab command's 100. Python reads a cached file (checked
# against its source) even when it writes none. (PYTHONPYCACHEPREFIX would move the
# standard library's cache too, and cost more than it saves.)
if [ -n "$py" ] && [ -x "$py" ]; then
	"$py" -m compileall -q -j 0 "$ROOT/testenv" "$ROOT/tests" >/dev/null 2>&1 ||
		echo "run.sh: could not compile the Python in testenv and tests (they run, slower)" >&2
fi

# The CPU time (user + system, in clock ticks) of this shell's children that
# have ended, in CPU_TICKS: a test's own (it runs in a child that waits for
# what it starts). Read by the shell itself, a fork would count from zero.
children_cpu() {
	local st
	read -r -a st <"/proc/$BASHPID/stat"
	CPU_TICKS=$((st[15] + st[16]))
}

# phase_end NAME: how long the phase since the last phase_end (or the start)
# took, the CPU time its tests used (the machine's share: with 2 CPUs, a phase
# of N s can use 2N) and how many tests it counted, to see where the time goes.
CLK_TCK=$(getconf CLK_TCK 2>/dev/null) && [ "${CLK_TCK:-0}" -gt 0 ] || CLK_TCK=100
children_cpu
phase_start=$SECONDS phase_count=0 phase_cpu=$CPU_TICKS
# EXTRA_TICKS: CPU time of the phase's tests spent in no child of this shell (their
# Python servers), as integ_report counted it.
EXTRA_TICKS=0
phase_end() {
	local n=$((passed + failed + skipped))
	children_cpu
	echo "[phase:$1] $((SECONDS - phase_start))s," \
		"cpu $(( (CPU_TICKS - phase_cpu + EXTRA_TICKS) / CLK_TCK ))s, $((n - phase_count)) tests"
	phase_start=$SECONDS phase_count=$n phase_cpu=$CPU_TICKS EXTRA_TICKS=0
}

count_lines() { # file prefix
	local line
	while IFS= read -r line; do
		case "$line" in
		\[*\]\ PASS*) passed=$((passed + 1)); echo "$line" ;;
		\[*\]\ SKIP*) skipped=$((skipped + 1)); echo "$line" ;;
		\[*\]\ FAIL*) failed=$((failed + 1)); failed_names+=("${line%% FAIL*}"); echo "$line" ;;
		esac
	done <"$1"
}

# The unit test binaries of DIR that the filter takes, one a line.
unit_bins() { # dir
	local t
	for t in "$1"/test_*; do
		[ -x "$t" ] || continue
		case "$t" in *.o|*.d) continue ;; esac
		[ -n "$filter" ] && [[ "${t##*/}" != *$filter* ]] && continue
		echo "$t"
	done
}

# san_wait: 0 once the sanitized build of SANITIZE_BUILD has ended well (at once
# without one); 1, once said why, if it failed or did not end in TEST_TIMEOUT x 3.
san_wait() {
	local rc i
	[ -n "${SANITIZE_BUILD:-}" ] || return 0
	for ((i = 0; i < TEST_TIMEOUT * 3; i++)); do
		[ -s "$SANITIZE_BUILD.rc" ] && break
		sleep 1
	done
	read -r rc <"$SANITIZE_BUILD.rc" 2>/dev/null || rc=timeout
	[ "$rc" = 0 ] && return 0
	if mkdir "$LOGDIR/san-said" 2>/dev/null; then
		echo "run.sh: the sanitized build failed ($rc); the end of $SANITIZE_BUILD.log:" >&2
		tail -n 5 "$SANITIZE_BUILD.log" >&2 2>/dev/null
	fi
	return 1
}

# sched_tree idle|other PID: PID and every process under it to SCHED_IDLE (any other
# task preempts them at once; what they get is the CPU time nobody else wants), or back
# to SCHED_OTHER. What they start from then on inherits it.
sched_tree() {
	local p
	[ -n "$2" ] || return 0
	for p in $(pgrep -P "$2"); do
		sched_tree "$1" "$p"
	done
	chrt "--$1" -p 0 "$2" >/dev/null 2>&1
	return 0
}

# make check as root with -j N > 1 (above): the serial tests first, beside the build.
serial_first='' py_deferred=''
[ -n "${SANITIZE_BUILD:-}" ] && [ $run_integ -eq 1 ] && [ "$jobs" -gt 1 ] &&
	[ "$(id -u)" -eq 0 ] && command -v chrt >/dev/null && serial_first=1
[ -z "$serial_first" ] || sched_tree idle "${SANITIZE_BUILD_PID:-}"

# unit_exec BINARY LABEL runs it; unit_report BINARY LABEL counts what it wrote.
unit_exec() {
	local log="$LOGDIR/$2-${1##*/}.log"
	timeout -k 5 "$TEST_TIMEOUT" "$1" >"$log.out" 2>"$log.err"
	echo $? >"$log.rc"
}

unit_report() {
	local t=$1 log="$LOGDIR/$2-${1##*/}.log" rc
	read -r rc <"$log.rc" || rc=1
	count_lines "$log.out"
	if [ -s "$log.err" ] && grep -q FAIL "$log.out"; then
		sed 's/^/    /' "$log.err"
	fi
	# A crash or sanitizer report fails the binary even if no test said FAIL.
	if [ "$rc" -ne 0 ] && ! grep -q ' FAIL' "$log.out"; then
		echo "[$2:${t##*/}] FAIL (exit $rc)"
		tail -n 30 "$log.err" | sed 's/^/    /'
		failed=$((failed + 1))
		failed_names+=("[$2:${t##*/}]")
	fi
}

# One integration test function in its own process; integ_report counts what
# it wrote. A test that ran per mode wrote a line per mode to its results
# file: those are counted, and the test itself only when something failed
# outside them (or it timed out).
integ_exec() { # file function
	local f=$1 fn=$2 start cpu rc extra
	[ -d "$LOGDIR" ] || mkdir -p "$LOGDIR" # in case something else cleaned /tmp under a long run
	start=$SECONDS
	children_cpu
	cpu=$CPU_TICKS
	T_RESULTS="$LOGDIR/$fn.modes" T_CPU_EXTRA="$LOGDIR/$fn.cpu" timeout -k 10 "$TEST_TIMEOUT" \
		bash -c '. "$ROOT/tests/integration/lib.sh"; . "$1"; t_run "$2"' \
		_ "$f" "$fn" >"$LOGDIR/$fn.log" 2>&1 </dev/null
	rc=$?
	children_cpu
	# The test's Python server is no child of its shell (a fork of pyserve.py): the test
	# wrote its CPU time, in ticks, to T_CPU_EXTRA.
	extra=0
	[ ! -s "$LOGDIR/$fn.cpu" ] || read -r extra <"$LOGDIR/$fn.cpu"
	[[ "$extra" =~ ^[0-9]+$ ]] || extra=0
	cpu=$(( (CPU_TICKS - cpu + extra) * 10 / CLK_TCK ))
	cpu=$((cpu / 10)).$((cpu % 10))
	echo "$rc $((SECONDS - start)) $cpu $extra" >"$LOGDIR/$fn.rc"
	[ -z "${TEST_TIMES:-}" ] || echo "$fn $((SECONDS - start)) $cpu" >>"$TEST_TIMES"
}

integ_report() { # function
	local fn=$1 log="$LOGDIR/$1.log" res="$LOGDIR/$1.modes" secs rc line name extra
	local nmodes=0 mode_failed=0
	read -r rc secs _ extra <"$LOGDIR/$fn.rc" || { rc=1 secs=0; }
	EXTRA_TICKS=$((EXTRA_TICKS + ${extra:-0}))
	if [ -s "$res" ]; then
		while IFS= read -r line; do
			name=${line%%]*}
			name=${name#[}
			nmodes=$((nmodes + 1))
			echo "[integration:${line#[}"
			case "$line" in
			*"] PASS"*) passed=$((passed + 1)) ;;
			*"] SKIP"*) skipped=$((skipped + 1)) ;;
			*)
				failed=$((failed + 1))
				failed_names+=("[integration:$name]")
				mode_failed=1
				tail -n 40 "$LOGDIR/$name.log" | sed 's/^/    /'
				;;
			esac
		done <"$res"
	fi
	case $rc in
	0)
		if [ $nmodes -eq 0 ]; then
			echo "[integration:$fn] PASS (${secs}s)"
			passed=$((passed + 1))
		else
			echo "    $fn: ${secs}s in all"
		fi
		;;
	77)
		echo "[integration:$fn] SKIP ($(tail -n 1 "$log"))"
		skipped=$((skipped + 1))
		;;
	*)
		[ $rc -eq 124 ] && echo "    timed out after ${TEST_TIMEOUT}s" >>"$log"
		if [ $mode_failed -eq 1 ] && [ $rc -ne 124 ]; then
			echo "    $fn: ${secs}s in all"
			return
		fi
		echo "[integration:$fn] FAIL (${secs}s)"
		tail -n 40 "$log" | sed 's/^/    /'
		failed=$((failed + 1))
		failed_names+=("[integration:$fn]")
		;;
	esac
}

# The tests of FILE, one a line: "NAME serial", "NAME sanitized", "NAME long" or "NAME any"
# (see the top). A serial test that runs the ASan tools waits for them in the serial phase.
integ_list() { # file
	awk '/^# serial-file:/ { all = 1 }
		/^# serial:/ { s = 1; next }
		/^# parallel:/ { p = 1; next }
		/^# long:/ { l = 1; next }
		/^# sanitized:/ { z = 1; next }
		/^# quiet:/ { q = 1; next }
		/^test_[a-z0-9_]+\(\)/ {
			n = $0; sub(/\(\).*/, "", n)
			print n, q ? "quiet" : ((all && !p) || s) ? (z ? "serial-sanitized" : "serial") : \
				z ? "sanitized" : l ? "long" : "any"
			s = 0; p = 0; l = 0; z = 0; q = 0
			next
		}
		!/^#/ { s = 0; p = 0; l = 0; z = 0; q = 0 }' "$1"
}

# Up to $jobs tests at a time, each counted (integ_report) as it ends.
declare -A integ_running=()

integ_wait_one() {
	local pid
	wait -n -p pid "${!integ_running[@]}"
	integ_report "${integ_running[$pid]}"
	unset "integ_running[$pid]"
}

integ_start() { # file function
	while [ ${#integ_running[@]} -ge "$jobs" ]; do
		integ_wait_one
	done
	integ_exec "$1" "$2" &
	integ_running[$!]=$2
}

integ_drain() {
	while [ ${#integ_running[@]} -gt 0 ]; do
		integ_wait_one
	done
}

# py_unit_exec: tests/py/run.py without root, its results in $LOGDIR/python.{out,err,rc}
# for py_unit_report. Run as root, it runs as nobody on a copy of the source tree (a
# clean clone may sit where nobody cannot read it), with a home of its own and no
# capabilities; as anyone else, in place.
py_unit_exec() {
	local tree=$ROOT runas=() home=$LOGDIR/py-home
	mkdir -p "$home"
	if [ "$(id -u)" -eq 0 ]; then
		tree=$LOGDIR/py-tree
		mkdir "$tree"
		tar -C "$ROOT" --exclude=./build --exclude=./.git -cf - . | tar -C "$tree" -xf - &&
			chmod -R a+rX "$tree" && chmod a+x "$LOGDIR" && chown 65534:65534 "$home" ||
			{ echo "cannot copy the tree for the user nobody" >"$LOGDIR/python.err"; echo 99 >"$LOGDIR/python.rc"; return; }
		runas=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all)
	fi
	(cd "$tree" && "${runas[@]}" env HOME="$home" PYTHONPATH="$tree/testenv" \
		"$py" -B tests/py/run.py ${filter:+"${filter%%:*}"} >"$LOGDIR/python.out" 2>"$LOGDIR/python.err")
	echo $? >"$LOGDIR/python.rc"
	[ "$tree" = "$ROOT" ] || rm -rf "$tree"
}

py_unit_report() {
	local rc
	read -r rc <"$LOGDIR/python.rc" || rc=1
	touch "$LOGDIR/python.out"
	count_lines "$LOGDIR/python.out"
	grep -q ' FAIL' "$LOGDIR/python.out" && sed 's/^/    /' "$LOGDIR/python.err"
	# 2: nothing matched the filter (it named C or integration tests)
	if [ $rc -ne 0 ] && ! { [ $rc -eq 2 ] && [ -n "$filter" ]; } && ! grep -q ' FAIL' "$LOGDIR/python.out"; then
		echo "[python] FAIL (exit $rc)"
		tail -n 30 "$LOGDIR/python.err" | sed 's/^/    /'
		failed=$((failed + 1))
		failed_names+=("[python]")
	fi
}

if [ $run_unit -eq 1 ]; then
	if ! ls "$BUILD"/tests/test_* >/dev/null 2>&1; then
		echo "run.sh: no unit test binaries in $BUILD/tests; run 'make unit-tests' first" >&2
		exit 2
	fi
	mapfile -t plain < <(unit_bins "$BUILD/tests")
	san=()
	[ -d "$BUILD/sanitize/tests" ] && mapfile -t san < <(unit_bins "$BUILD/sanitize/tests")
	san_later=
	if [ -n "${SANITIZE_BUILD:-}" ]; then
		# Being built: run beside what follows once made, at the build's priority, and
		# counted at the end (below the integration tests).
		# Two lanes (every other binary each): what is left when the integration tests
		# end runs on both CPUs (san_report raises their priority).
		(renice -n 19 -p "$BASHPID" >/dev/null
			[ -z "$serial_first" ] || sched_tree idle "$BASHPID"
			san_wait && unit_bins "$BUILD/sanitize/tests" >"$LOGDIR/san.list" || exit 1
			for lane in 0 1; do
				(i=0
				while read -r t; do
					[ $((i++ % 2)) -ne $lane ] || unit_exec "$t" sanitize
				done <"$LOGDIR/san.list") &
			done
			wait) &
		san_later=$!
		san=()
	fi
	# A unit test is one process, mostly on one CPU: with -j N > 1 the sanitized
	# binaries run beside the plain ones, one at a time, and are counted after.
	# With -j N > 1 the Python tests (which mostly wait) run beside them too.
	py_pid=
	if [ "$jobs" -gt 1 ] && [ -z "$serial_first" ]; then
		py_unit_exec &
		py_pid=$!
	fi
	san_pid=
	if [ ${#san[@]} -gt 0 ] && [ "$jobs" -gt 1 ]; then
		(for t in "${san[@]}"; do unit_exec "$t" sanitize; done) &
		san_pid=$!
	fi
	# With -j N > 1, two at a time: one at a time, they kept one CPU of two busy for
	# 15 s (test_gen_prog alone is 4-5 s of loading programs). Counted in order.
	if [ "$jobs" -gt 1 ]; then
		export -f unit_exec
		export LOGDIR TEST_TIMEOUT
		printf '%s\n' "${plain[@]}" | xargs -d '\n' -P 2 -n 1 bash -c 'unit_exec "$1" unit' _
	else
		for t in "${plain[@]}"; do
			unit_exec "$t" unit
		done
	fi
	for t in "${plain[@]}"; do
		unit_report "$t" unit
	done
	phase_end unit
	if [ ${#san[@]} -gt 0 ]; then
		[ -z "$san_pid" ] || wait "$san_pid"
		for t in "${san[@]}"; do
			[ -n "$san_pid" ] || unit_exec "$t" sanitize
			unit_report "$t" sanitize
		done
		phase_end "sanitize${san_pid:+, beside unit}"
	fi
	# make check (SANITIZE_BUILD, as root, integration tests next): the Python tests,
	# which mostly wait (gnuplot, timeouts: 15 s, 5 s of CPU), go on beside the
	# integration tests and are counted after them (py_later_report).
	# With serial_first they start once the serial tests have ended (py_deferred).
	py_later='' py_deferred=''
	if [ -n "$serial_first" ]; then
		py_deferred=1
	elif [ -n "$py_pid" ] && [ -n "${SANITIZE_BUILD:-}" ] && [ $run_integ -eq 1 ] &&
		[ "$(id -u)" -eq 0 ]; then
		py_later=$py_pid
	elif [ -n "$py_pid" ]; then
		wait "$py_pid"
	else
		py_unit_exec
	fi
	if [ -z "$py_later" ] && [ -z "$py_deferred" ]; then
		py_unit_report
		phase_end "python$([ "$(id -u)" -eq 0 ] && echo ', as nobody')${py_pid:+, beside unit}"
	fi
fi

# The Python tests that ran beside the integration tests: counted now.
py_later_report() {
	[ -n "${py_later:-}" ] || return 0
	wait "$py_later"
	py_later=
	py_unit_report
	phase_end "python, as nobody, beside integration"
}

# The sanitized unit tests that ran beside the others (SANITIZE_BUILD): counted now.
san_report() { # what they ran beside
	local t rc
	[ -n "${san_later:-}" ] || return 0
	# Nothing runs beside them now: the rest at the normal priority (root may raise it).
	[ -z "$serial_first" ] || sched_tree other "$san_later"
	renice -n 0 -p "$san_later" $(pgrep -P "$san_later") >/dev/null 2>&1
	wait "$san_later"
	rc=$?
	san_later=
	if [ $rc -ne 0 ] || [ ! -f "$LOGDIR/san.list" ] || ! san_wait; then
		echo "[sanitize] FAIL (the sanitized build failed or never ended: $SANITIZE_BUILD.log)"
		failed=$((failed + 1))
		failed_names+=("[sanitize]")
		return
	fi
	while read -r t; do
		unit_report "$t" sanitize
	done <"$LOGDIR/san.list"
	phase_end "sanitize, beside $1"
}

# serial_run WHERE FILE FUNCTION ...: tests that run alone, one after another.
serial_run() {
	local where=$1
	shift
	[ $# -gt 0 ] || return 0
	# After the others, a serial test may run the ASan tools: their build has long
	# ended by then. First (serial_first), it must not.
	[ "$where" = first ] || san_wait || true
	while [ $# -gt 0 ]; do
		integ_exec "$1" "$2"
		integ_report "$2"
		shift 2
	done
	case $where in
	first) phase_end "integration, serial, first, beside the sanitized build" ;;
	*) phase_end "integration, serial" ;;
	esac
}

if [ $run_integ -eq 1 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		for f in tests/integration/test_*.sh; do
			for fn in $(grep -oE '^test_[a-z0-9_]+\(\)' "$f" | tr -d '()'); do
				echo "[integration:$fn] SKIP (needs root)"
				skipped=$((skipped + 1))
			done
		done
	else
		# What the integration tests run: the tools, the test hooks and helpers
		# (all), and the ASan tools the hardening tests use. Up to date, a second.
		if [ "$BUILD" = "$ROOT/build" ] && [ -z "${SANITIZE_BUILD:-}" ] &&
			! { make -C "$ROOT" -s --no-print-directory all &&
				make -C "$ROOT" -s --no-print-directory SANITIZE=1 tools; } >"$LOGDIR/make.log" 2>&1; then
			echo "run.sh: building what the tests run failed ($LOGDIR/make.log):" >&2
			tail -n 5 "$LOGDIR/make.log" >&2
			exit 2
		fi
		fn_filter=${filter%%:*}
		T_MODE_FILTER=
		[[ "$filter" == *:* ]] && T_MODE_FILTER=${filter#*:}
		export T_LOGDIR=$LOGDIR T_MODE_FILTER
		# One schema checker for the run (lib.sh's t_schema_check asks it): its
		# import is most of a check's CPU time. It ends when this shell does.
		if [ -x /usr/bin/python3 ] && mkfifo "$LOGDIR/schema"; then
			/usr/bin/python3 "$ROOT/tests/integration/schemacheck.py" --serve-many \
				"$LOGDIR/schema" >"$LOGDIR/schema.log" 2>&1 </dev/null &
			export T_SCHEMA_SERVER=$LOGDIR/schema T_SCHEMA_SERVER_PID=$!
		fi
		# One Python start for every test's Python server (lib.sh's json_server_start):
		# each is a fork of this one, which has imported what they use. It too ends when
		# this shell does.
		if [ -n "$py" ] && [ -x "$py" ] && mkfifo "$LOGDIR/pyserve"; then
			"$py" -P "$ROOT/tests/integration/pyserve.py" "$LOGDIR/pyserve" \
				>"$LOGDIR/pyserve.log" 2>&1 </dev/null &
			export T_PYSERVE=$LOGDIR/pyserve T_PYSERVE_PID=$!
		fi
		serial=() quiet=() long=() rest=() late=()
		for f in tests/integration/test_*.sh; do
			[ -e "$f" ] || continue
			while read -r fn kind; do
				[ -n "$fn_filter" ] && [[ "$fn" != *$fn_filter* ]] && continue
				if [ "$kind" = serial-sanitized ]; then
					# Under make check a serial test runs before the ASan build is done.
					echo "[integration:$fn] FAIL (marked both '# serial:' and '# sanitized:'; a serial test runs beside the ASan build, not with it)"
					failed=$((failed + 1))
					failed_names+=("[integration:$fn]")
				elif [ "$kind" = serial ] && [ "$jobs" -gt 1 ]; then
					serial+=("$f" "$fn")
				elif [ "$kind" = quiet ] && [ "$jobs" -gt 1 ]; then
					quiet+=("$f" "$fn")
				elif [ "$kind" = long ]; then
					long+=("$f" "$fn")
				elif [ "$kind" = sanitized ]; then
					late+=("$f" "$fn")
				else
					rest+=("$f" "$fn")
				fi
			done < <(integ_list "$f")
		done
		if [ -n "$serial_first" ]; then
			serial_run first "${serial[@]}"
			# The build and the sanitized unit tests back at their nice 19 (the share
			# they had beside the other tests), and the Python tests (mostly waiting)
			# beside the rest.
			sched_tree other "${SANITIZE_BUILD_PID:-}"
			sched_tree other "${san_later:-}"
			if [ -n "$py_deferred" ]; then
				py_unit_exec &
				py_later=$!
			fi
		fi
		for ((i = 0; i < ${#long[@]}; i += 2)); do
			integ_start "${long[i]}" "${long[i + 1]}"
		done
		for ((i = 0; i < ${#rest[@]}; i += 2)); do
			integ_start "${rest[i]}" "${rest[i + 1]}"
		done
		# Those that run the ASan tools: last, when their build (SANITIZE_BUILD) is done.
		[ ${#late[@]} -eq 0 ] || san_wait || true
		for ((i = 0; i < ${#late[@]}; i += 2)); do
			integ_start "${late[i]}" "${late[i + 1]}"
		done
		integ_drain
		phase_end "integration, $jobs at a time"
		py_later_report
		san_report "integration"
		# The quiet ones (and without serial_first the serial ones) on a machine at rest.
		if [ -n "$serial_first" ]; then
			serial_run last "${quiet[@]}"
		else
			serial_run last "${serial[@]}" "${quiet[@]}"
		fi
	fi
fi

py_later_report
san_report "unit"

if [ $failed -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
	echo "logs kept in $LOGDIR"
else
	rm -rf "$LOGDIR"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
