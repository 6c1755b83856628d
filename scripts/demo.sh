#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: the main job in one command. A fresh lab, xdp-sink drop on the
# sink side, xdp-gen for 5 seconds on the generator side with the fastest mode
# this machine has, both summaries printed, the lab removed.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
TESTENV=testenv/testenv.sh
DURATION=${DEMO_DURATION:-5}

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: must run as root (it creates namespaces and attaches XDP programs)" >&2
	exit 2
fi

LAB="demo$(printf '%04x' $(( $$ % 65536 )))"
QUEUES=$(nproc)
[ "$QUEUES" -gt 2 ] && QUEUES=2
SINK_LOG=$(mktemp)
sink_pid=

cleanup() {
	[ -n "$gen_pid" ] && kill -INT "$gen_pid" 2>/dev/null && wait "$gen_pid" 2>/dev/null
	[ -n "$sink_pid" ] && kill -INT "$sink_pid" 2>/dev/null && wait "$sink_pid" 2>/dev/null
	"$TESTENV" teardown --name "$LAB" >/dev/null 2>&1
	rm -f "$SINK_LOG"
}
# Ctrl-C reaches the generator (our process group) by itself; SIGTERM to this
# script only is passed on. Either way the generator stops first, then the
# sink (in a session of its own, so a Ctrl-C cannot stop it before the
# generator: its program gone, the frames still coming would be counted as
# not queued), both summaries print, and the exit code is 130.
interrupted=
gen_pid=
on_signal() {
	interrupted=1
	[ -n "$gen_pid" ] && kill -INT "$gen_pid" 2>/dev/null
}
trap cleanup EXIT
trap on_signal INT TERM

"$TESTENV" setup --name "$LAB" --queues "$QUEUES" --no-ipv6 || exit 1
[ -z "$interrupted" ] || exit 130
eval "$("$TESTENV" env --name "$LAB")"

# The fastest generator available: in-kernel live frames, else AF_XDP.
if "$BUILD/xdp-gen" kernel --help >/dev/null 2>&1; then
	GEN_ARGS=(kernel --threads "$QUEUES")
else
	GEN_ARGS=(xsk --queues all)
fi

echo "== xdp-sink drop on $SINK_NS/$SINK_IF"
setsid "$TESTENV" exec --name "$LAB" sink -- "$BUILD/xdp-sink" drop -q -v -d 600 "$SINK_IF" \
	>"$SINK_LOG" 2>&1 &
sink_pid=$!
if ! "$TESTENV" ready --name "$LAB" sink; then
	cat "$SINK_LOG"
	exit 1
fi
[ -z "$interrupted" ] || exit 130

echo "== xdp-gen ${GEN_ARGS[0]} on $GEN_NS/$GEN_IF for ${DURATION}s"
"$TESTENV" exec --name "$LAB" gen -- "$BUILD/xdp-gen" "${GEN_ARGS[@]}" -d "$DURATION" "$GEN_IF" &
gen_pid=$!
# A trapped signal ends a wait early: wait again until the generator has ended.
wait "$gen_pid"
rc=$?
while kill -0 "$gen_pid" 2>/dev/null; do
	wait "$gen_pid"
	rc=$?
done
gen_pid=
sleep 0.5 # what is in flight arrives
kill -INT "$sink_pid"
wait "$sink_pid"
sink_pid=
echo "== xdp-sink summary"
cat "$SINK_LOG"
[ -z "$interrupted" ] || exit 130
exit $rc
