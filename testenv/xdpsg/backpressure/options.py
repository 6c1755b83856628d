# SPDX-License-Identifier: GPL-2.0
"""The backpressure scenario's options: the parser and the checks it cannot make alone."""

import argparse
import os
import re

from .. import lab as xl
from ..scenario import UsageError, check_cause_urls, parser

GEN_DEFAULT_THREADS = {"qdisc": 2, "xsk": 1, "kernel": 1}
# --mgmt: the port of the generator host's drop exporter, on its management address.
MGMT_PORT = 9464

DESCRIPTION = (
    "Make a lab tuned to overflow, run xdp-sink (slow) and xdp-gen in it, "
    "sample every interval and print where every packet went. The books must "
    "balance: any unexplained packet, a generator stall or a tool that does not "
    "stop fails the run (exit 1).")

EPILOG = (
    "Example: testenv/testenv.sh backpressure --name bp1 --duration 3\n"
    "Books: attempted = accepted + refused (qdisc mode); refused = qdisc drops + veth tx drops;\n"
    "accepted = received by the sink's NAPI + drops after acceptance (veth tx, xdp_xmit errors);\n"
    "received = seen by the sink's XDP program (+ veth rx drops) = delivered + the sink's drops.\n"
    "XDPSG_* environment variables are passed to xdp-gen; test hooks (e.g. XDPSG_TEST_STALL=1)\n"
    "select its test build, BUILD/test-hooks/xdp-gen. XDPSG_STAMP_KEY goes to every tool (the\n"
    "generator, the sink and the drop tracer check one key; without it, the lab's).")


def make_parser(prog):
    ncpu = os.cpu_count() or 1
    p = parser(prog, DESCRIPTION, EPILOG)
    p.add_argument("--name", default="bp", help="lab name (default bp); made, and removed unless --keep")
    p.add_argument("--duration", type=float, default=5.0, help="generator run time in seconds (default 5)")
    p.add_argument("--interval", type=float, default=1.0, help="sampling interval in seconds (default 1)")
    p.add_argument("--limit", type=int, default=1000, help="pfifo limit in packets (default 1000)")
    p.add_argument("--cost", type=int, default=3000,
                   help="sink busy work per packet in ns (default 3000; 0: a fast sink, no backpressure)")
    p.add_argument("--gen", choices=["qdisc", "xsk", "kernel"], default="qdisc",
                   help="transmit path: qdisc (AF_PACKET), xsk (AF_XDP) or kernel (live frames); default qdisc")
    p.add_argument("--sink", choices=["drop", "xsk"], default="drop",
                   help="sink: drop (XDP_DROP) or xsk (AF_XDP, with latency); default drop")
    p.add_argument("--threads", type=int, default=None,
                   help="generator threads (default 2 for qdisc, 1 for xsk and kernel; xsk: at most --queues)")
    p.add_argument("--sndbuf", default="64M",
                   help="qdisc mode socket send buffer (default 64M: lets the qdisc overflow; "
                   "'default': the system's, the senders block instead)")
    p.add_argument("--rate", type=int, default=0,
                   help="generator packets per second over all threads (default 0: as fast as it can)")
    p.add_argument("--qdisc", choices=["pfifo", "noqueue"], default="pfifo",
                   help="pfifo (default) or noqueue (drops move to the veth) on the generator veth")
    p.add_argument("--queues", type=int, default=1, help="veth queues (default 1)")
    p.add_argument("--napi-cpu", type=int, default=ncpu - 1,
                   help=f"CPU for the sink veth's NAPI thread(s) (default {ncpu - 1}, the last)")
    p.add_argument("--json", action="store_true",
                   help="JSON lines on stdout: one per interval and a final {\"type\":\"summary\"}")
    p.add_argument("--keep", action="store_true", help="leave the lab in place afterwards")
    p.add_argument("--separate-clocks", action="store_true",
                   help="the generator on a clock of its own, as another host's is "
                   "(testenv.sh setup --separate-clocks): the books must balance all the same")
    p.add_argument("--mgmt", action="store_true",
                   help="the generator a host of its own for the drop causes too: the lab gets a "
                   "management network (testenv.sh setup --mgmt), the drop tracer runs in the "
                   "generator's namespace only and exports its counts there (xdp-sink drops --local "
                   "--metrics-listen GEN_MGMT_IP4:%d), and an xsk sink joins them over that network "
                   "(--drop-causes local --drop-causes-from); the books check the join" % MGMT_PORT)
    p.add_argument("--drop-causes-from", metavar="URL", action="append", default=[],
                   help="with --sink xsk: the sink also joins the drops another host's 'xdp-sink drops "
                   "--metrics-listen' exports at URL (http://ADDR:PORT/metrics, reachable from the "
                   "sink's namespace) with its runs, and its own tracer counts its namespace only; "
                   "repeatable")
    p.add_argument("--testenv", default=xl.TESTENV, help=argparse.SUPPRESS)
    return p


def check(a):
    """Judge the values together; fill in the defaults that depend on others."""
    ncpu = os.cpu_count() or 1
    if not 0.2 <= a.duration <= 3600:
        raise UsageError(f"bad --duration {a.duration}: use 0.2 to 3600 seconds")
    if not 0.1 <= a.interval <= 60:
        raise UsageError(f"bad --interval {a.interval}: use 0.1 to 60 seconds")
    if not 1 <= a.limit <= 10000000:
        raise UsageError(f"bad --limit {a.limit}: use 1 to 10000000 packets")
    if not 0 <= a.cost <= 1000000:
        raise UsageError(f"bad --cost {a.cost}: use 0 to 1000000 ns")
    if not 1 <= a.queues <= 256:
        raise UsageError(f"bad --queues {a.queues}: use 1 to 256")
    if not 0 <= a.napi_cpu < ncpu:
        raise UsageError(f"bad --napi-cpu {a.napi_cpu}: use 0 to {ncpu - 1}")
    if a.threads is None:
        a.threads = GEN_DEFAULT_THREADS[a.gen]
    if not 1 <= a.threads <= 64:
        raise UsageError(f"bad --threads {a.threads}: use 1 to 64")
    if a.gen == "kernel" and a.threads > ncpu:
        raise UsageError(f"--threads {a.threads}: kernel mode runs one thread per CPU, at most {ncpu}")
    if a.gen == "kernel" and a.threads > a.queues:
        # veth_xdp_xmit() adds to the peer queue's peer_tq_xdp_xmit{,_err} after
        # dropping the ring's producer lock: two CPUs on one queue lose counts
        # (measured: 13,104 of 22.4M errors in 3 s), and the books cannot balance.
        raise UsageError(f"--threads {a.threads} with --queues {a.queues}: in kernel mode give each thread "
                         f"its own veth queue (--queues {a.threads}); CPUs sharing a queue lose updates of "
                         "its xdp_xmit counters in the kernel, so the books cannot balance")
    if a.gen == "xsk" and a.threads > a.queues:
        raise UsageError(f"--threads {a.threads}: xsk mode runs one thread per queue; add --queues {a.threads}")
    if not 0 <= a.rate <= 100000000:
        raise UsageError(f"bad --rate {a.rate}: use 0 to 100000000 packets/s")
    if a.sndbuf != "default" and not re.fullmatch(r"[0-9]+[KkMmGg]?", a.sndbuf):
        raise UsageError(f"bad --sndbuf '{a.sndbuf}': bytes, e.g. 64M")
    check_cause_urls(a.drop_causes_from)
    if a.drop_causes_from and a.sink != "xsk":
        raise UsageError("--drop-causes-from needs --sink xsk: the AF_XDP sink joins another host's "
                         "drop causes with its runs; the drop sink keeps no runs")
    if a.mgmt and len(a.name) > 12:
        raise UsageError(f"--mgmt with --name '{a.name}': at most 12 characters (the management "
                         "network's bridge is named NAME-mb)")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,12}", a.name):
        raise UsageError(f"bad --name '{a.name}': at most 13 of [A-Za-z0-9_-]")
