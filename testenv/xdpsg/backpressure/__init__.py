# SPDX-License-Identifier: GPL-2.0
"""The backpressure lab: overflow a veth on purpose and account for every packet.

Run as 'testenv/testenv.sh backpressure [OPTIONS]' or 'testenv/backpressure.py
[OPTIONS]'. It makes a lab with 'testenv.sh setup --scenario backpressure' (pfifo
on the generator veth, TSO off, threaded NAPI on the sink veth, no IPv6), starts
xdp-sink with --cost on the sink side, pins the sink veth's NAPI thread to one
CPU, runs xdp-gen, prints one row per interval (offered, accepted, delivered,
drops per layer per second), lets the lab drain, and prints one table of where
the packets went. The books must balance exactly; any rest is 'unexplained'
and fails the run (exit 1). A generator stall (stop_reason "stall") or a tool
that does not stop in time also fails the run, with a message saying so.

The kernel is the source of truth: counters come from the tools' --kernel-stats
JSON and from snapshots with build/tests/kstats-dump taken before the sink
starts and after the lab has drained.

Environment: XDPSG_* variables are passed to xdp-gen only, never to xdp-sink,
except XDPSG_STAMP_KEY, which every tool gets (the generator, the sink and the drop
tracer must check one key; without it they get the lab's). Test hooks such as
XDPSG_TEST_STALL=1 select the test build of xdp-gen (BUILD/test-hooks/xdp-gen), the
only one that reads them. BUILD selects the build directory.

Modules: options (the parser and its checks), books (the arithmetic, no lab),
report (the text), runner (the scenario: lab, tools, samples). Exit codes: 0
balanced, 1 unexplained packets, a stall or a failure, 2 bad usage, 130
interrupted.
"""

from .runner import Backpressure

__all__ = ["Backpressure"]
