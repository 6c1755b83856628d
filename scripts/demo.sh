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
	[ -n "$sink_pid" ] && kill -INT "$sink_pid" 2>/dev/null && wait "$sink_pid" 2>/dev/null
	"$TESTENV" teardown --name "$LAB" >/dev/null 2>&1
	rm -f "$SINK_LOG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$TESTENV" setup --name "$LAB" --queues "$QUEUES" --no-ipv6 || exit 1
eval "$("$TESTENV" env --name "$LAB")"

# The fastest generator available: in-kernel live frames, else AF_XDP.
if "$BUILD/xdp-gen" kernel --help >/dev/null 2>&1; then
	GEN_ARGS=(kernel --threads "$QUEUES")
else
	GEN_ARGS=(xsk --queues all)
fi

echo "== xdp-sink drop on $SINK_NS/$SINK_IF"
"$TESTENV" exec --name "$LAB" sink -- "$BUILD/xdp-sink" drop -q -v -d 600 "$SINK_IF" \
	>"$SINK_LOG" 2>&1 &
sink_pid=$!
for _ in $(seq 100); do
	[[ "$(ip -n "$SINK_NS" -d link show dev "$SINK_IF")" == *prog/xdp* ]] && break
	sleep 0.1
done

echo "== xdp-gen ${GEN_ARGS[0]} on $GEN_NS/$GEN_IF for ${DURATION}s"
"$TESTENV" exec --name "$LAB" gen -- "$BUILD/xdp-gen" "${GEN_ARGS[@]}" -d "$DURATION" "$GEN_IF"
rc=$?
sleep 0.5
kill -INT "$sink_pid"
wait "$sink_pid"
sink_pid=
echo "== xdp-sink summary"
cat "$SINK_LOG"
exit $rc
