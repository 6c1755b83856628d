# SPDX-License-Identifier: GPL-2.0
"""The RFC 2544 runner's options: the parser and the checks it cannot make alone."""

import argparse
import math
import os
import re

from .. import lab as xl
from ..scenario import UsageError, check_cause_urls, parser

RFC_SIZES = [64, 128, 256, 512, 1024, 1280, 1518]
SIZE_MIN, SIZE_MAX = 64, 9018
# The largest frame (without its FCS) a generator mode sends below SIZE_MAX: xdp-gen kernel's
# live frames (xsk sends a larger frame as a chain of UMEM frames). xdp-gen says so too, but only
# once a trial starts it.
GEN_MAX_FRAME = {"kernel": 3408}
TESTS = ("throughput", "latency", "loss", "b2b")
DUT_MODES = ("forward", "bridge", "xdp")


def make_parser(prog):
    p = parser(
        prog,
        "RFC 2544 benchmarks through a device under test: throughput (the highest\n"
        "rate whose loss is at most --loss-ratio, found by a search), latency at that rate, the\n"
        "frame loss rate at 100%, 90%, ... of the maximum rate, and back-to-back bursts. The\n"
        "books of every trial are exact: xdp-gen's confirmed sends against xdp-sink's stamped\n"
        "receipts of that generator run only.",
        "Examples:\n"
        "  testenv/testenv.sh setup --name r1 --dut forward --dut-qdisc tbf:100mbit:16kb:50ms\n"
        "  testenv/testenv.sh rfc2544 --name r1 --sizes 64,1518 --trial 3\n"
        "  testenv/testenv.sh rfc2544 --name r2 --dut bridge --sizes 64 --json   # makes and removes r2\n"
        "  testenv/rfc2544.py --gen-if eth1 --sink-if eth2 --max-rate 1000000\n"
        "Frame sizes include the 4-byte FCS (RFC 2544); xdp-gen sends SIZE-4 bytes (-s).\n"
        "A trial where the generator sent less than 99.5% of the offered rate (or, --gen kernel,\n"
        "failed to transmit frames) is a generator shortfall, not DUT loss.\n"
        "Output: a text table (or JSON lines with --json) and, in --out DIR, rfc2544.json,\n"
        "rfc2544.md and PNG charts. Exit codes: 0 done, 1 failed, 2 bad usage, 130 interrupted.",
    )
    w = p.add_argument_group("where")
    w.add_argument("--name", metavar="NAME", help="lab name: a lab made with 'testenv.sh setup --dut MODE' "
                   "(or made now if --dut is given)")
    w.add_argument("--dut", metavar="MODE", help="make lab --name with this DUT (forward, bridge or xdp) for the "
                   "run and remove it afterwards (unless --keep)")
    w.add_argument("--dut-qdisc", metavar="SPEC", help="with --dut: the DUT egress qdisc, as testenv.sh setup "
                   "--dut-qdisc (e.g. tbf:100mbit:16kb:50ms)")
    w.add_argument("--keep", action="store_true", help="with --dut: leave the lab in place")
    w.add_argument("--separate-clocks", action="store_true",
                   help="with --dut: the generator and the DUT each on a clock of their own, as "
                   "separate hosts are (testenv.sh setup --separate-clocks): the books hold, "
                   "one-way latency is not figured and the report says why")
    w.add_argument("--gen-if", metavar="IF", help="generator interface (without --name)")
    w.add_argument("--gen-ns", metavar="NS", help="its network namespace (default: this one)")
    w.add_argument("--sink-if", metavar="IF", help="sink interface (without --name)")
    w.add_argument("--sink-ns", metavar="NS", help="its network namespace (default: this one)")
    t = p.add_argument_group("what")
    t.add_argument("--sizes", metavar="LIST", default=",".join(map(str, RFC_SIZES)),
                   help="frame sizes with FCS, %d..%d (default %s)" % (SIZE_MIN, SIZE_MAX,
                                                                  ",".join(map(str, RFC_SIZES))))
    t.add_argument("--tests", metavar="LIST", default=",".join(TESTS),
                   help="which of throughput,latency,loss,b2b (default all; latency comes "
                   "from the throughput search)")
    t.add_argument("--trial", metavar="SECONDS", type=float, default=2.0, help="seconds per trial (default 2; RFC 2544 "
                   "asks for 60)")
    t.add_argument("--warmup", metavar="SECONDS", type=float, default=0.5,
                   help="seconds of warm-up before each trial: a separate generator run at 10%% "
                   "of the trial's rate, not in the books (default 0.5; 0: none)")
    t.add_argument("--loss-ratio", metavar="R", type=float, default=0.0,
                   help="highest loss a throughput trial may have, in [0, 1) (default 0)")
    t.add_argument("--max-rate", metavar="PPS", type=float, default=0,
                   help="packets/s to search below and to take percentages of (default: the "
                   "line rate of each size; on veth, 10 Gbit/s, far above any generator: "
                   "the frame loss test then takes what the generator reached, give "
                   "--max-rate to choose)")
    t.add_argument("--line-rate", metavar="MBIT", type=float, default=0,
                   help="line rate in Mbit/s (default: the generator interface's speed, else 10000)")
    t.add_argument("--resolution", metavar="SHARE", type=float, default=0.005,
                   help="stop the search when the pass/fail gap is below this share of the rate "
                   "(default 0.005)")
    t.add_argument("--max-trials", metavar="N", type=int, default=16, help="trials per throughput search (default 16)")
    t.add_argument("--loss-steps", metavar="N", type=int, default=10,
                   help="frame loss rate at 100%%, ..., 100/N%% of the maximum (default 10)")
    t.add_argument("--b2b-start", metavar="FRAMES", type=int, default=1000, help="first burst length (default 1000)")
    t.add_argument("--b2b-max", metavar="FRAMES", type=int, default=1000000, help="longest burst tried (default 1000000)")
    t.add_argument("--b2b-steps", metavar="N", type=int, default=4,
                   help="bisection steps after the first burst with loss (default 4)")
    h = p.add_argument_group("how")
    h.add_argument("--gen", choices=["xsk", "kernel"], default="xsk",
                   help="xdp-gen mode: xsk (AF_XDP, default) or kernel (BPF live frames)")
    h.add_argument("--json", action="store_true",
                   help="JSON lines on stdout: one per trial as it ends (progress), one per result, "
                   "a final summary (the last line)")
    h.add_argument("--out", metavar="DIR", help="directory for rfc2544.json, .md and PNGs (default: a new "
                   "directory under $TMPDIR)")
    h.add_argument("--no-plot", action="store_true", help="no PNG charts")
    h.add_argument("--drop-causes-from", metavar="URL", action="append", default=[],
                   help="also join the drops a DUT host's 'xdp-sink drops --metrics-listen' exports "
                   "at URL (http://ADDR:PORT/metrics) with each trial's losses; the trial sink's own "
                   "tracer then counts its own namespace only (xdp-sink --drop-causes local); "
                   "repeatable")
    h.add_argument("--testenv", default=xl.TESTENV, help=argparse.SUPPRESS)
    return p


def parse_list(text, what, fix):
    try:
        return [int(x) for x in text.split(",") if x.strip() != ""]
    except ValueError:
        raise UsageError(f"bad {what} '{text}': {fix}") from None


def check(a):
    """Judge the values together; make the lists lists."""
    a.sizes = parse_list(a.sizes, "--sizes", "comma-separated frame sizes, e.g. --sizes 64,1518")
    if not a.sizes:
        raise UsageError("--sizes is empty: give frame sizes, e.g. --sizes 64,1518")
    for s in a.sizes:
        if not SIZE_MIN <= s <= SIZE_MAX:
            raise UsageError(f"bad frame size {s} in --sizes: RFC 2544 sizes (with the 4-byte FCS) "
                             f"are {SIZE_MIN} to {SIZE_MAX}, e.g. --sizes 64,1518")
        # What the generator mode sends (without the FCS), said before a lab is made or a
        # trial runs.
        gen_max = GEN_MAX_FRAME.get(a.gen)
        if gen_max and s - 4 > gen_max:
            raise UsageError(f"frame size {s} in --sizes is more than xdp-gen {a.gen} sends "
                             f"({gen_max} bytes and the FCS, {gen_max + 4}); use --sizes "
                             f"{gen_max + 4} or less, or --gen xsk, which sends up to {SIZE_MAX}")
    a.tests = [x.strip() for x in a.tests.split(",") if x.strip()]
    for x in a.tests:
        if x not in TESTS:
            raise UsageError(f"unknown test '{x}' in --tests: use {','.join(TESTS)}")
    if "latency" in a.tests and "throughput" not in a.tests:
        a.tests.append("throughput")  # latency is measured at the throughput rate
    if not (0 <= a.loss_ratio < 1) or math.isnan(a.loss_ratio):
        raise UsageError(f"bad --loss-ratio {a.loss_ratio}: use a share in [0, 1), e.g. 0 or 0.001")
    if not 0.2 <= a.trial <= 3600:
        raise UsageError(f"bad --trial {a.trial}: use 0.2 to 3600 seconds")
    if not 0 <= a.warmup <= 60:
        raise UsageError(f"bad --warmup {a.warmup}: use 0 to 60 seconds")
    if a.max_rate < 0 or a.max_rate > 1e9:
        raise UsageError(f"bad --max-rate {a.max_rate}: use packets/s up to 1e9 (0: line rate)")
    if a.line_rate < 0 or a.line_rate > 1e7:
        raise UsageError(f"bad --line-rate {a.line_rate}: use Mbit/s up to 1e7 (0: the interface's speed)")
    if not 0.0001 <= a.resolution <= 0.5:
        raise UsageError(f"bad --resolution {a.resolution}: use 0.0001 to 0.5")
    if not 1 <= a.max_trials <= 100:
        raise UsageError(f"bad --max-trials {a.max_trials}: use 1 to 100")
    if not 1 <= a.loss_steps <= 100:
        raise UsageError(f"bad --loss-steps {a.loss_steps}: use 1 to 100")
    if not 1 <= a.b2b_start <= a.b2b_max <= 100000000:
        raise UsageError("bad --b2b-start/--b2b-max: use 1 <= start <= max <= 100000000")
    if not 0 <= a.b2b_steps <= 20:
        raise UsageError(f"bad --b2b-steps {a.b2b_steps}: use 0 to 20")
    if a.dut is not None and a.dut not in DUT_MODES:
        raise UsageError(f"unknown --dut mode '{a.dut}': use --dut forward, --dut bridge or --dut xdp")
    if a.dut_qdisc and a.dut is None:
        raise UsageError("--dut-qdisc needs --dut MODE (the runner makes the lab then)")
    if a.separate_clocks and a.dut is None:
        raise UsageError("--separate-clocks needs --dut MODE (the runner makes the lab then; a "
                         "lab of your own takes it from 'testenv.sh setup --separate-clocks')")
    if a.keep and a.dut is None:
        raise UsageError("--keep only applies with --dut (a lab the runner makes)")
    check_cause_urls(a.drop_causes_from)
    if a.name is not None:
        if a.gen_if or a.sink_if or a.gen_ns or a.sink_ns:
            raise UsageError("give either --name (a lab) or --gen-if/--sink-if (any pair), not both")
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,11}", a.name):
            raise UsageError(f"bad --name '{a.name}': a lab with a DUT has a name of at most 12 of "
                             "[A-Za-z0-9_-]")
    else:
        if a.dut is not None:
            raise UsageError("--dut makes a lab: add --name NAME")
        if not a.gen_if or not a.sink_if:
            raise UsageError("say where to measure: --name LAB (a lab made with testenv.sh setup "
                             "--dut MODE), or --gen-if IF and --sink-if IF")
    if a.out and os.path.exists(a.out) and not os.path.isdir(a.out):
        raise UsageError(f"--out {a.out} exists and is not a directory: name a directory")
