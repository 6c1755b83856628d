#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench: the benchmark matrix (the xdpsg.bench package does the work; see
# bench/README.md). This wrapper is the last line of cleanup: whatever happens to the
# runner, every lab it set up (listed in $BENCH_STATE) is torn down on exit.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BENCH_STATE=$(mktemp /tmp/xdpsg-bench-labs.XXXXXX)
export BENCH_STATE
pid=

cleanup() {
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	fi
	while read -r lab; do
		[ -n "$lab" ] && "$root/testenv/testenv.sh" teardown --name "$lab" >/dev/null 2>&1
	done <"$BENCH_STATE"
	rm -f "$BENCH_STATE"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

PYTHONPATH="$root/testenv${PYTHONPATH:+:$PYTHONPATH}" python3 -B -m xdpsg.bench "$@" &
pid=$!
wait "$pid"
rc=$?
pid=
exit $rc
