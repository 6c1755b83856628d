#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""RFC 2544 throughput, latency, frame loss rate and back-to-back through a device under test.

Run as 'testenv/testenv.sh rfc2544 --name LAB [OPTIONS]' on a lab made with
'testenv.sh setup --dut forward|bridge|xdp' (or give --dut and the runner makes the lab
and removes it afterwards), or directly on any generator/sink interface pair:

    testenv/rfc2544.py --gen-if IF1 [--gen-ns NS1] --sink-if IF2 [--sink-ns NS2]

xdp-gen sends on the generator interface, xdp-sink xsk (AF_XDP, stamps verified)
receives on the sink interface, and whatever is between them is the device under test.

Books, per trial: the generator's confirmed sends (xdp-gen's summary tx_packets, and its
run id 'run') against the sink's stamped receipts of that run only (the sink's 'runs'
entry with the same 'run'). Frames the DUT makes itself (ARP, ND, MLD) carry no stamp,
or the stamp of no run of ours, so they are neither loss nor gain. A trial in which the
generator fell short of the offered rate is a generator shortfall, never DUT loss: the
throughput search lowers its upper bound to what the generator reached and goes on
below it, and a throughput found at that bound is reported as limited by the generator.
Duplicates and late frames (behind the sink's reorder window: duplicates or late originals)
are never delivered frames, and a trial whose verdict hangs on late frames is 'uncertain',
never a pass: see trial_verdict() and docs/rfc2544.md.

Frame sizes are RFC 2544's: they include the 4-byte FCS. xdp-gen's -s is the frame
without FCS, so 64 is sent as -s 60; both are reported.

Exit codes: 0 done, 1 a run failed (a tool failed, a lab could not be made),
2 bad usage (one line on stderr naming the problem and the fix; no lab is left behind).
"""

import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from fractions import Fraction

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from xdpsg import lab as xl, proc  # noqa: E402 - the package beside this file: labs, tools, /proc readers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROG = "testenv.sh rfc2544"

RFC_SIZES = [64, 128, 256, 512, 1024, 1280, 1518]
SIZE_MIN, SIZE_MAX = 64, 9018
FCS = 4                 # RFC 2544 frame sizes include it; xdp-gen's -s does not
WIRE_OVERHEAD = 20      # preamble + start delimiter (8) and inter-frame gap (12) per frame
TESTS = ("throughput", "latency", "loss", "b2b")
DUT_MODES = ("forward", "bridge", "xdp")
SHORTFALL = 0.995       # confirmed sends below this share of the offered rate: a shortfall
WARMUP_SHARE = 0.1      # the warm-up runs at this share of the trial's rate
WARMUP_MIN_PPS = 1000


class UsageError(Exception):
    pass


RunError = proc.LabError


# --- options -----------------------------------------------------------------

def make_parser():
    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise UsageError(f"{message}; see {PROG} --help")

    p = Parser(
        prog=PROG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="RFC 2544 benchmarks through a device under test: throughput (the highest\n"
        "rate whose loss is at most --loss-ratio, found by a search), latency at that rate, the\n"
        "frame loss rate at 100%, 90%, ... of the maximum rate, and back-to-back bursts. The\n"
        "books of every trial are exact: xdp-gen's confirmed sends against xdp-sink's stamped\n"
        "receipts of that generator run only.",
        epilog="Examples:\n"
        "  testenv/testenv.sh setup --name r1 --dut forward --dut-qdisc tbf:100mbit:16kb:50ms\n"
        "  testenv/testenv.sh rfc2544 --name r1 --sizes 64,1518 --trial 3\n"
        "  testenv/testenv.sh rfc2544 --name r2 --dut bridge --sizes 64 --json   # makes and removes r2\n"
        "  testenv/rfc2544.py --gen-if eth1 --sink-if eth2 --max-rate 1000000\n"
        "Frame sizes include the 4-byte FCS (RFC 2544); xdp-gen sends SIZE-4 bytes (-s).\n"
        "A trial where the generator sent less than 99.5% of the offered rate (or, --gen kernel,\n"
        "failed to transmit frames) is a generator shortfall, not DUT loss.\n"
        "Output: a text table (or JSON lines with --json) and, in --out DIR, rfc2544.json,\n"
        "rfc2544.md and PNG charts. Exit codes: 0 done, 1 failed, 2 bad usage.",
    )
    w = p.add_argument_group("where")
    w.add_argument("--name", metavar="NAME", help="lab name: a lab made with 'testenv.sh setup --dut MODE' "
                   "(or made now if --dut is given)")
    w.add_argument("--dut", metavar="MODE", help="make lab --name with this DUT (forward, bridge or xdp) for the "
                   "run and remove it afterwards (unless --keep)")
    w.add_argument("--dut-qdisc", metavar="SPEC", help="with --dut: the DUT egress qdisc, as testenv.sh setup "
                   "--dut-qdisc (e.g. tbf:100mbit:16kb:50ms)")
    w.add_argument("--keep", action="store_true", help="with --dut: leave the lab in place")
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
                   "line rate of each size)")
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
                   help="JSON lines on stdout: one per trial, one per result, a final summary")
    h.add_argument("--out", metavar="DIR", help="directory for rfc2544.json, .md and PNGs (default: a new "
                   "directory under $TMPDIR)")
    h.add_argument("--no-plot", action="store_true", help="no PNG charts")
    h.add_argument("--testenv", default=os.path.join(HERE, "testenv.sh"), help=argparse.SUPPRESS)
    return p


def long_options():
    """The long options a user may give, without dashes ('testenv.sh --version --json')."""
    return [o[2:] for act in make_parser()._actions if act.help != argparse.SUPPRESS
            for o in act.option_strings if o.startswith("--") and o != "--help"]


def parse_list(text, what, fix):
    try:
        return [int(x) for x in text.split(",") if x.strip() != ""]
    except ValueError:
        raise UsageError(f"bad {what} '{text}': {fix}") from None


def parse_args(argv):
    a = make_parser().parse_args(argv)
    a.sizes = parse_list(a.sizes, "--sizes", "comma-separated frame sizes, e.g. --sizes 64,1518")
    if not a.sizes:
        raise UsageError("--sizes is empty: give frame sizes, e.g. --sizes 64,1518")
    for s in a.sizes:
        if not SIZE_MIN <= s <= SIZE_MAX:
            raise UsageError(f"bad frame size {s} in --sizes: RFC 2544 sizes (with the 4-byte FCS) "
                             f"are {SIZE_MIN} to {SIZE_MAX}, e.g. --sizes 64,1518")
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
    if a.keep and a.dut is None:
        raise UsageError("--keep only applies with --dut (a lab the runner makes)")
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
    return a


# --- small helpers -----------------------------------------------------------

def log(msg):
    print(f"rfc2544: {msg}", file=sys.stderr, flush=True)


def fmt_pps(v):
    return "-" if v is None else f"{v:,.0f}"


def fmt_us(ns):
    return "-" if ns is None else f"{ns / 1000:,.1f}"


def write_atomic(path, data, mode="w"):
    """Write DATA to PATH through a temp file in the same directory and a rename: a reader
    never sees half a file, and an existing symlink at PATH is replaced, never followed."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=d)
    try:
        with os.fdopen(fd, mode) as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def line_rate_pps(mbit, size):
    """Frames/s at line rate: SIZE (with FCS) plus preamble and gap per frame."""
    return mbit * 1e6 / ((size + WIRE_OVERHEAD) * 8)


# --- the two ends ------------------------------------------------------------

class Ends:
    """Where the generator and the sink run: a lab's namespaces (through testenv.sh exec) or
    any interface pair, each optionally in a namespace (ip netns exec)."""

    def __init__(self, a, env):
        self.a = a
        self.env = env
        self.lab = None
        self.tools = []
        self.dut = None
        self.restore = []   # commands to run at the end (settings we changed)
        if a.name:
            self.lab = xl.Lab(a.name, testenv=a.testenv, env=env)

    def attach(self):
        a = self.a
        if self.lab is None:
            self.gen_ns, self.gen_if = a.gen_ns, a.gen_if
            self.sink_ns, self.sink_if = a.sink_ns, a.sink_if
            for ns, ifn in ((self.gen_ns, self.gen_if), (self.sink_ns, self.sink_if)):
                if ns and ns not in proc.run(["ip", "netns", "list"]).stdout.split():
                    raise UsageError(f"no network namespace '{ns}': check 'ip netns list'")
                if self.link(ns, ifn) is None:
                    raise UsageError(f"no interface '{ifn}'" + (f" in namespace {ns}" if ns else "")
                                     + ": check 'ip link'")
            self.where = f"{self.gen_if}{'@' + self.gen_ns if self.gen_ns else ''} -> " \
                         f"{self.sink_if}{'@' + self.sink_ns if self.sink_ns else ''}"
            return
        lab = self.lab
        if a.dut:
            opts = ["--dut", a.dut]
            if a.dut_qdisc:
                opts += ["--dut-qdisc", a.dut_qdisc]
            wire_max = max(a.sizes) - FCS
            if wire_max - 14 > 1500:
                opts += ["--mtu", str(wire_max - 14)]
            try:
                lab.setup(*opts, timeout=90)
            except proc.LabError as e:
                if lab.made:
                    raise
                if e.returncode == 2:
                    raise UsageError(f"lab setup refused: {e.detail}") from None
                raise RunError(f"lab setup failed: {e.detail}") from None
        else:
            r = lab.te("env", "--name", a.name, check=False)
            if r.returncode != 0:
                raise UsageError(f"no lab '{a.name}': make one with testenv/testenv.sh setup --name "
                                 f"{a.name} --dut forward|bridge|xdp (or add --dut MODE here)")
            lab.read_vars()
        v = lab.vars
        if not v.get("DUT_MODE"):
            raise UsageError(f"lab '{a.name}' has no DUT: RFC 2544 measures a device between "
                             f"generator and sink; make a lab with testenv/testenv.sh setup --name "
                             f"NAME --dut forward|bridge|xdp")
        self.dut = {"mode": v["DUT_MODE"], "qdisc": v.get("DUT_QDISC", "none"),
                    "ns": v.get("DUT_NS"), "gen_if": v.get("DUT_GEN_IF"),
                    "sink_if": v.get("DUT_SINK_IF")}
        self.gen_ns, self.gen_if = v["GEN_NS"], v["GEN_IF"]
        self.sink_ns, self.sink_if = v["SINK_NS"], v["SINK_IF"]
        self.where = (f"lab {a.name}: {self.gen_if} -> DUT {self.dut['mode']} "
                      f"(qdisc {self.dut['qdisc']}) -> {self.sink_if}")
        if a.gen == "kernel" and self.dut["mode"] != "xdp":
            # Live frames are redirected into the generator veth; its peer (the DUT's
            # ingress) takes them only with NAPI, which GRO gives a veth without XDP.
            ns, ifn = self.dut["ns"], self.dut["gen_if"]
            k = proc.run(["ip", "netns", "exec", ns, "ethtool", "-k", ifn]).stdout
            if re.search(r"generic-receive-offload: off", k):
                proc.run(["ip", "netns", "exec", ns, "ethtool", "-K", ifn, "gro", "on"], check=True)
                self.restore.append(["ip", "netns", "exec", ns, "ethtool", "-K", ifn, "gro", "off"])
                log(f"--gen kernel: GRO on at the DUT's ingress {ifn} for this run (live frames "
                    "need NAPI there); restored afterwards")

    def link(self, ns, ifn):
        argv = (["ip", "-n", ns] if ns else ["ip"]) + ["-j", "-d", "link", "show", "dev", ifn]
        r = proc.run(argv, timeout=10)
        if r.returncode != 0:
            return None
        try:
            return json.loads(r.stdout)[0]
        except (ValueError, IndexError):
            return None

    def speed_mbit(self):
        argv = (["ip", "netns", "exec", self.gen_ns] if self.gen_ns else []) + \
            ["cat", f"/sys/class/net/{self.gen_if}/speed"]
        r = proc.run(argv, timeout=10)
        try:
            v = int(r.stdout.strip())
        except ValueError:
            return None
        return v if v > 0 else None

    def dut_counters(self):
        """The DUT's own drop counters (lab only): where a loss happened. None elsewhere."""
        if not self.dut:
            return None
        ns = self.dut["ns"]
        c = {}
        r = proc.run(["ip", "-n", ns, "-s", "-j", "link", "show"], timeout=10)
        try:
            for link in json.loads(r.stdout):
                st = link.get("stats64", {})
                if link.get("ifname") == self.dut["gen_if"]:
                    c["ingress_rx_dropped"] = st.get("rx", {}).get("dropped", 0)
                elif link.get("ifname") == self.dut["sink_if"]:
                    c["egress_tx_dropped"] = st.get("tx", {}).get("dropped", 0)
        except (ValueError, TypeError):
            pass
        r = proc.run(["tc", "-n", ns, "-s", "-j", "qdisc", "show", "dev", self.dut["sink_if"]],
                   timeout=10)
        try:
            c["qdisc_drops"] = sum(q.get("drops", 0) for q in json.loads(r.stdout))
        except (ValueError, TypeError):
            pass
        # A full DUT ingress ring shows on the generator's veth (veth_xmit drops there).
        r = proc.run(["ip", "-n", self.gen_ns, "-s", "-j", "link", "show", "dev", self.gen_if],
                   timeout=10)
        try:
            c["ingress_ring_full"] = json.loads(r.stdout)[0]["stats64"]["tx"]["dropped"]
        except (ValueError, TypeError, IndexError, KeyError):
            pass
        return c

    def argv(self, side, argv):
        if self.lab is not None:
            return self.lab.exec_argv(side, argv)
        ns = self.gen_ns if side == "gen" else self.sink_ns
        return (["ip", "netns", "exec", ns] if ns else []) + list(argv)

    def start(self, side, argv, label):
        self.tools = [t for t in self.tools if t.running()]
        t = proc.Tool(self.argv(side, argv), label=label, env=self.env)
        self.tools.append(t)
        return t

    def close(self):
        for t in self.tools:
            if t.running():
                t.stop(signal.SIGTERM, 5)
        for cmd in self.restore:
            proc.run(cmd, timeout=10)
        self.restore = []
        if self.lab is not None and self.lab.made:
            if self.a.keep:
                log(f"lab '{self.a.name}' kept; remove it with: testenv/testenv.sh teardown "
                    f"--name {self.a.name}")
            else:
                self.lab.teardown()


# --- the verdict of one trial -------------------------------------------------

def exact_ratio(r):
    """R as the exact decimal it was written as: --loss-ratio 1e-6 allows 1 frame in 1,000,000,
    where the binary float nearest 1e-6 (a hair below it) would allow none."""
    if isinstance(r, (Fraction, int)):
        return Fraction(r)
    return Fraction(repr(r) if isinstance(r, float) else str(r))


def trial_verdict(sent, books, loss_ratio, count=None, offered=None, refused=0,
                  gen_error=None, sink_dropped=0):
    """The verdict of one trial and the numbers behind it, all exact integers.

    sent: frames the generator confirmed; books: the sink's books of this generator run
    (its 'runs' entry: received, duplicates, late, and the rejected implausible, ts_future,
    ts_stale); loss_ratio: the loss allowed, a share of sent; count or offered: the frames
    the trial asked for (a burst, or rate x trial time); refused: frames the generator
    failed to transmit; gen_error: why xdp-gen failed, if it did; sink_dropped: frames the
    sink itself dropped (its rings were full).

    The sink's 'received' holds every frame of the run in its books: duplicates, and 'late'
    frames, ones behind its reorder window, which may be duplicates or originals that came
    very late (the sink cannot tell). Only the distinct frames it is sure of are delivered:
    received - duplicates - late. What that leaves of sent is 'lost', the most that can have
    been lost. A late frame can stand for a lost one only while there is one: the late frames
    that may be originals are min(late, lost), and 'lost_min' is the loss if they all were.

    verdict, first that applies:
      'shortfall'       the generator did not offer the load (sent short of what was asked,
                        frames refused, or it failed): says nothing of the DUT, not loss;
      'uncertain'       more distinct frames of this run than sent: the books hold frames
                        the generator never sent, so they prove nothing;
      'sink shortfall'  the loss exceeds what is allowed, but the sink's own drops explain
                        all of it: the measuring system's limit;
      'loss'            even if every late frame was an original, more was lost than allowed;
      'uncertain'       late frames may be originals of lost ones: 'uncertain: N late
                        frames', even when the loss is allowed either way. Never a pass: a
                        DUT that drops N frames and resends N others late would pass
                        otherwise, and late frames mean the DUT held or copied frames
                        past the window (or someone else sent frames of this run);
      'pass'            at most the allowed loss, with every late frame (if any) a duplicate.
    """
    received = int(books.get("received") or 0)
    dups = int(books.get("duplicates") or 0)
    late = int(books.get("late") or 0)
    rejected = sum(int(books.get(k) or 0) for k in ("implausible", "ts_future", "ts_stale"))
    delivered = received - dups - late
    lost = sent - delivered
    maybe_original = min(late, max(lost, 0))
    lost_min = lost - maybe_original
    ratio = exact_ratio(loss_ratio)
    allowed = math.floor(ratio * sent)  # lost <= ratio * sent, in integers
    if count is not None:
        short = sent < count
    else:
        # The run's time also holds its start and end, and xdp-gen paces per batch: one
        # batch (64) of slack for short, slow trials.
        short = offered is not None and sent < min(SHORTFALL * offered, offered - 64)
    shortfall = bool(short or refused > 0 or gen_error)
    notes = []
    if late:
        notes.append(f"late frames: {late:,}, behind the sink's reorder window (duplicates or "
                     "late originals) and counted as not delivered"
                     + (f"; up to {maybe_original:,} may be originals of the {lost:,} lost"
                        if maybe_original else "; all duplicates, every frame sent arrived"))
    if rejected:
        notes.append(f"{rejected:,} frames of this run rejected by the sink (implausible "
                     "sequence or send time), counted as not delivered")
    if shortfall:
        verdict, text = "shortfall", "GENERATOR SHORTFALL"
    elif lost < 0:
        verdict, text = "uncertain", f"uncertain: {-lost:,} more frames of this run than sent"
    elif lost_min > allowed:
        if lost <= sink_dropped:
            verdict, text = "sink shortfall", "SINK SHORTFALL"
        else:
            verdict = "loss"
            text = (f"loss {lost_min:,}" + (f" to {lost:,}" if lost != lost_min else "")
                    + f" of {sent:,} (allowed {allowed:,})")
    elif maybe_original:
        verdict, text = "uncertain", f"uncertain: {late:,} late frames"
    else:
        verdict, text = "pass", "pass"
    return {
        "verdict": verdict, "verdict_text": text, "passed": verdict == "pass",
        "shortfall": verdict == "shortfall", "sink_shortfall": verdict == "sink shortfall",
        "sent": sent, "received": received, "duplicates": dups, "late": late,
        "rejected": rejected, "delivered": delivered, "lost": lost, "lost_min": lost_min,
        "allowed_lost": allowed, "notes": notes,
    }


# --- one trial ---------------------------------------------------------------

class Runner:
    def __init__(self, a):
        self.a = a
        build = os.environ.get("BUILD", os.path.join(ROOT, "build"))
        if not os.path.isabs(build):
            build = os.path.join(ROOT, build)
        self.gen_bin = os.path.join(build, "xdp-gen")
        self.sink_bin = os.path.join(build, "xdp-sink")
        for b in (self.gen_bin, self.sink_bin):
            if not os.access(b, os.X_OK):
                raise UsageError(f"{b} is not built: run 'make'")
        if os.geteuid() != 0:
            raise UsageError("must run as root (namespaces, XDP and AF_XDP need it)")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("XDPSG_")}
        self.ends = Ends(a, self.env)
        self.trials = []
        self.per_run_books = None   # the sink reports per-run books ('runs'); None: not known yet
        self.ntrial = 0

    def out(self, text=""):
        if not self.a.json:
            print(text, flush=True)

    def emit(self, obj):
        if self.a.json:
            print(json.dumps(obj), flush=True)

    def start_sink(self):
        bound = int(self.a.trial + self.a.warmup + 120)
        # A ring twice the default absorbs the moments its thread is not scheduled.
        fsize = "2048" if max(self.a.sizes) - FCS <= 1800 else "4096"
        argv = [self.sink_bin, "xsk", "-j", "-i", "0.1s", "-d", f"{bound}s", "--queues", "all",
                "--ring-size", "4096", "--frame-size", fsize, self.ends.sink_if]
        sink = self.ends.start("sink", argv, "xdp-sink")
        if sink.wait_json("ready", timeout=20) is None:
            sink.stop(signal.SIGINT, 5)
            raise RunError("xdp-sink xsk did not start: " + " | ".join(sink.err_lines[-3:]))
        return sink

    def stop_sink(self, sink):
        sink.stop(signal.SIGINT, 10)
        s = sink.summary()
        if s is None:
            raise RunError(f"xdp-sink exited {sink.returncode} without a summary: "
                           + " | ".join(sink.err_lines[-3:]))
        return s

    def drain(self, sink, bound=5.0):
        """Wait until the sink has received nothing for two intervals in a row (what the DUT
        still held, e.g. a qdisc's backlog, has arrived), at most BOUND s."""
        while sink.next_obj() is not None:
            pass  # intervals from before now say nothing about the drain
        end = time.monotonic() + bound
        quiet = 0
        while time.monotonic() < end and sink.running():
            o = sink.next_obj(timeout=0.3)
            if o is None or o.get("type") != "interval":
                continue
            quiet = quiet + 1 if o.get("rx_packets", 0) == 0 else 0
            if quiet >= 2:
                return True
        return False

    def gen_run(self, size, rate=None, duration=None, count=None):
        a = self.a
        argv = [self.gen_bin, a.gen, "-j", "-q", "-s", str(size - FCS)]
        if rate:
            argv += ["-r", str(int(round(rate)))]
        if count:
            argv += ["-n", str(count), "-d", f"{max(10.0, count / 100000.0 + 10):.0f}s"]
        else:
            argv += ["-d", f"{duration}s"]
        argv.append(self.ends.gen_if)
        gen = self.ends.start("gen", argv, "xdp-gen")
        bound = (duration or 0) + (count or 0) / 50000.0 + 30
        if gen.wait(bound) is None:
            gen.stop(signal.SIGINT, 5)
            raise RunError(f"xdp-gen did not end within {bound:.0f} s")
        s = gen.summary()
        if s is None:
            raise RunError(f"xdp-gen exited {gen.returncode} without a summary: "
                           + " | ".join(gen.err_lines[-3:]))
        s["_rc"] = gen.returncode
        s["_err"] = gen.err_lines[-3:]
        return s

    @staticmethod
    def sink_books(ssum, run):
        """(books, how): the sink's books of generator run RUN (received, duplicates, late,
        ...), and whether they are that run's ('run') or the sink's totals ('totals')."""
        runs = ssum.get("runs")
        if isinstance(runs, list):
            e = next((r for r in runs if isinstance(r, dict) and r.get("run") == run), None)
            return (e or {}), "run"
        # Older sinks have no per-run books, only totals: 'stamped' is every stamped frame
        # the sink saw. The runner then gives the trial a sink of its own (see trial()),
        # so the totals are this run's.
        rej = ssum.get("rejected") or {}
        return {"received": ssum.get("stamped", 0), "duplicates": ssum.get("duplicates", 0),
                "late": ssum.get("late", 0), "lost": ssum.get("lost"),
                "reordered": ssum.get("reordered"), "latency_ns": ssum.get("latency_ns"),
                **{k: rej.get(k, 0) for k in ("implausible", "ts_future", "ts_stale")}}, "totals"

    def trial(self, test, size, rate=None, count=None):
        """One trial: a sink, a warm-up run, the measured run, the books. A dict."""
        a = self.a
        sink = self.start_sink()
        warm = None
        try:
            if a.warmup > 0:
                wrate = max(WARMUP_MIN_PPS, (rate or 100000) * WARMUP_SHARE)
                warm = self.gen_run(size, rate=wrate, duration=a.warmup)
                if self.per_run_books is False:
                    # An older sink keeps only totals: the trial gets a fresh sink.
                    self.drain(sink, 2.0)
                    self.stop_sink(sink)
                    sink = self.start_sink()
            c0 = self.ends.dut_counters()
            g = self.gen_run(size, rate=rate, duration=None if count else a.trial, count=count)
            self.drain(sink)
            ssum = self.stop_sink(sink)
            c1 = self.ends.dut_counters()
        finally:
            if sink.running():
                sink.stop(signal.SIGTERM, 5)
        if self.per_run_books is None and warm is not None and not isinstance(ssum.get("runs"), list):
            self.per_run_books = False
            log("this xdp-sink reports no per-run books ('runs'); each trial gets a sink of its "
                "own after the warm-up, and the sink's totals are the books")
            return self.trial(test, size, rate, count)
        self.per_run_books = isinstance(ssum.get("runs"), list)
        dut = {k: v - c0.get(k, 0) for k, v in c1.items()} if c0 and c1 else None
        return self.books(test, size, rate, count, g, ssum, warm, dut)

    def books(self, test, size, rate, count, g, ssum, warm, dut):
        a = self.a
        sent = g.get("tx_packets", 0)
        refused = 0
        if a.gen == "kernel":
            # Live frames: what the device took is 'transmitted'; 'failed' never left.
            refused = g.get("failed", 0) or 0
            sent = g.get("transmitted", sent - refused)
        entry, how = self.sink_books(ssum, g.get("run"))
        dur = g.get("duration_s") or a.trial
        achieved = sent / dur if dur > 0 else 0.0
        offered = rate * a.trial if not count else None
        # The sink's own drops (its rings were full): frames the DUT delivered and the
        # sink failed to take. A loss they explain is the sink's limit, not the DUT's.
        sdrops = {k: v for k, v in (ssum.get("drops") or {}).items() if isinstance(v, int) and v}
        gen_error = None
        if g.get("_rc"):
            gen_error = f"xdp-gen exited {g['_rc']}: " + " | ".join(g.get("_err") or [])
        # --loss-ratio is the throughput test's; frame loss and back-to-back ask for none.
        v = trial_verdict(sent, entry, a.loss_ratio if test == "throughput" else 0,
                          count=count or None, offered=offered, refused=refused,
                          gen_error=gen_error, sink_dropped=sum(sdrops.values()))
        lost = v["lost"]
        ratio = lost / sent if sent else 0.0
        stalls = g.get("stalls") or {}
        notes = []
        if v["shortfall"] and count and sent < count:
            notes.append(f"generator sent {sent:,} of {count:,}")
        elif v["shortfall"] and offered is not None and sent < min(SHORTFALL * offered, offered - 64):
            notes.append(f"generator sent {sent:,} of {offered:,.0f} frames "
                         f"({achieved:,.0f} of {rate:,.0f} pps)")
        if refused:
            notes.append(f"{refused:,} frames the generator failed to transmit")
        if gen_error:
            notes.append(gen_error)
        notes += v["notes"]
        if lost > 0 and sdrops:
            notes.append("the sink dropped %s" % ", ".join(f"{n:,} ({k})" for k, n in sdrops.items()))
            if v["sink_shortfall"]:
                notes.append("the loss is the sink's, not the DUT's")
        if dut and lost > 0:
            notes.append("DUT counters: " + (", ".join(f"{k} {n:,}" for k, n in dut.items() if n)
                                             or "no drop counted"))
        self.ntrial += 1
        t = {
            "type": "trial", "n": self.ntrial, "test": test, "size": size, "wire_size": size - FCS,
            "offered_pps": round(rate) if rate else None, "burst": count,
            "duration_s": round(dur, 4), "run": g.get("run"),
            "warmup_run": warm.get("run") if warm else None,
            "verdict": v["verdict"], "verdict_text": v["verdict_text"],
            "sent": sent, "received": v["received"], "duplicates": v["duplicates"],
            "late": v["late"], "rejected": v["rejected"], "delivered": v["delivered"],
            "lost": lost, "lost_min": v["lost_min"], "allowed_lost": v["allowed_lost"],
            "loss_ratio": ratio, "achieved_pps": round(achieved),
            "delivered_pps": round(v["delivered"] / dur) if dur > 0 else 0,
            "shortfall": v["shortfall"], "sink_shortfall": v["sink_shortfall"],
            "passed": v["passed"], "sink_drops": sdrops, "dut_drops": dut,
            "stalls": {k: stalls.get(k, 0) for k in ("ring_full", "no_free_frame", "kick_busy")},
            "sink_lost": entry.get("lost"), "reordered": entry.get("reordered"),
            "foreign": ssum.get("foreign"),
            "latency_ns": entry.get("latency_ns"), "books": how, "notes": notes,
        }
        self.trials.append(t)
        self.emit(t)
        what = (f"{rate:,.0f} pps" if rate else f"burst {count:,}")
        self.out(f"  trial {self.ntrial:3}: {test:10} {size:5} B  {what:>18}: sent {sent:,}, "
                 f"delivered {v['delivered']:,}, lost {lost:,} -> {v['verdict_text']}"
                 + (f" ({'; '.join(notes)})" if notes else ""))
        return t

    # --- the tests -------------------------------------------------------------

    def max_rate(self, size):
        return self.a.max_rate if self.a.max_rate else line_rate_pps(self.mbit, size)

    def throughput(self, size):
        """The highest rate with loss <= --loss-ratio. A bisection between the highest rate
        that passed (lo) and the lowest that did not (hi), with better probes where the
        trials tell more: after a trial with loss, just below the rate the DUT delivered in
        it; after a pass, just above the rate the DUT delivered in the last trial with loss.
        A generator shortfall lowers hi to what the generator reached, never counts as loss."""
        a = self.a
        top = self.max_rate(size)
        lo, hi = 0.0, top
        best, steps, gen_limit = None, [], None
        last_delivered = None   # what the DUT delivered in the last trial with loss
        hi_sink = False         # the lowest failing rate failed by the sink's drops
        guessed = False         # the last probe was such a guess
        rate = top
        for _ in range(a.max_trials):
            t = self.trial("throughput", size, rate=rate)
            result = t["verdict"]
            steps.append({"rate": round(rate), "result": result, "loss_ratio": t["loss_ratio"],
                          "lost": t["lost"], "late": t["late"],
                          "achieved_pps": t["achieved_pps"], "delivered_pps": t["delivered_pps"]})
            if result == "shortfall":
                # Not the DUT's doing: search below what the generator could do.
                gen_limit = min(gen_limit or math.inf, t["achieved_pps"])
                hi = min(rate, t["achieved_pps"] * 0.99)
            elif result == "pass":
                lo, best = rate, t
            elif result == "sink shortfall":
                # The sink could not take what the DUT delivered: the measuring
                # system's limit, searched below like a loss, reported apart.
                hi, hi_sink = rate, True
                last_delivered = t["delivered_pps"]
            else:
                # Loss, or late frames that may hide loss ('uncertain'): the rate is not
                # proven, so the search goes below it.
                hi, hi_sink = rate, False
                last_delivered = t["delivered_pps"]
            if hi < 1 or (best is not None and hi <= lo * (1 + a.resolution)):
                break
            rate = self.probe(result, lo, hi, best, last_delivered, guessed)
            guessed = rate != (lo + hi) / 2 and result in ("loss", "uncertain", "sink shortfall")
            if best is None and rate < 100:
                break
        if hi_sink:
            limited = "sink"
        elif best is None:
            # Nothing passed: the DUT's doing only if some trial lost frames (or may have);
            # a search of generator shortfalls alone never saw the DUT at its limit.
            limited = ("dut" if any(x["result"] in ("loss", "uncertain") for x in steps)
                       else "generator")
        elif gen_limit is not None and best["offered_pps"] >= gen_limit * 0.99 * (1 - a.resolution):
            limited = "generator"
        elif best["offered_pps"] >= top * (1 - a.resolution):
            limited = "max-rate"
        else:
            limited = "dut"
        tp = best["offered_pps"] if best else 0
        res = {
            "type": "throughput", "size": size, "wire_size": size - FCS,
            "throughput_pps": tp, "throughput_mbps": round(tp * size * 8 / 1e6, 3),
            "line_pct": round(100.0 * tp / line_rate_pps(self.mbit, size), 3),
            "max_rate_pps": round(top), "limited_by": limited,
            "generator_limit_pps": gen_limit, "trials": len(steps), "steps": steps,
            "loss_ratio_allowed": a.loss_ratio,
            "latency_ns": best["latency_ns"] if best else None,
            "latency_run": best["run"] if best else None,
            "sent": best["sent"] if best else None, "received": best["received"] if best else None,
        }
        self.emit(res)
        return res

    def probe(self, result, lo, hi, best, delivered, guessed):
        res = self.a.resolution
        if result == "shortfall" and best is None:
            return hi  # at what the generator reached
        if result in ("loss", "uncertain", "sink shortfall") and not guessed:
            est = delivered * 0.995
            if lo < est < hi * (1 - res / 2):
                return est
        if delivered is not None and lo > 0:
            p = max(delivered * 1.005, lo * (1 + 2 * res))
            if p < (lo + hi) / 2:
                return p
        return (lo + hi) / 2

    def loss_rate(self, size, gen_limit):
        a = self.a
        top = self.max_rate(size)
        rows, clean = [], 0
        for k in range(a.loss_steps, 0, -1):
            pct = 100.0 * k / a.loss_steps
            rate = top * k / a.loss_steps
            row = {"type": "loss", "size": size, "wire_size": size - FCS, "pct": pct,
                   "offered_pps": round(rate)}
            if gen_limit is not None and rate > gen_limit:
                row.update(skipped=True, note=f"above the generator's limit ({gen_limit:,.0f} pps)")
            else:
                t = self.trial("loss", size, rate=rate)
                uncertain = t["verdict"] == "uncertain"
                row.update(skipped=False, sent=t["sent"], received=t["delivered"], late=t["late"],
                           loss_pct=100.0 * t["loss_ratio"],
                           loss_pct_min=100.0 * t["lost_min"] / t["sent"] if t["sent"] else 0.0,
                           verdict=t["verdict"], shortfall=t["shortfall"],
                           sink_shortfall=t["sink_shortfall"],
                           note="; ".join(([t["verdict_text"]] if uncertain else []) + t["notes"]))
                if t["shortfall"]:
                    gen_limit = min(gen_limit or math.inf, t["achieved_pps"])
                    clean = 0
                elif t["passed"]:  # judged at a loss ratio of 0: no loss, and proven
                    clean += 1
                else:
                    clean = 0
            rows.append(row)
            self.emit(row)
            if clean >= 2:  # RFC 2544 26.3: two successive trials without loss end it
                break
        return rows

    def b2b(self, size, tp_pps):
        a = self.a
        good, bad, trials = 0, None, []
        note_stop = ""
        n = a.b2b_start
        rate_seen = []
        while n <= a.b2b_max:
            t = self.trial("b2b", size, count=n)
            trials.append(t)
            if t["duration_s"]:
                rate_seen.append(t["sent"] / t["duration_s"])
            if t["shortfall"] or t["sink_shortfall"]:
                note_stop = "the %s could not keep up at burst %s" % (
                    "generator" if t["shortfall"] else "sink", f"{n:,}")
                break
            if t["passed"]:  # judged at a loss ratio of 0
                good = n
                n *= 2
            else:
                bad = n
                break
        if bad is not None:
            for _ in range(a.b2b_steps):
                if bad - good <= max(1, good // 100):
                    break
                m = (good + bad) // 2
                t = self.trial("b2b", size, count=m)
                trials.append(t)
                if t["shortfall"] or t["sink_shortfall"]:
                    break
                if t["passed"]:
                    good = m
                else:
                    bad = m
        burst_pps = max(rate_seen) if rate_seen else None
        note = note_stop
        if bad is None and not note_stop:
            note = f"no loss up to the longest burst tried ({good:,}): a lower bound"
        for t in trials:
            if t["verdict"] == "uncertain":  # not proven lossless: taken as loss
                note += ("; " if note else "") + f"burst {t['burst']:,} {t['verdict_text']}"
        if burst_pps and tp_pps and burst_pps <= tp_pps * 1.01:
            note += ("; " if note else "") + (f"the generator's burst rate ({burst_pps:,.0f} pps) "
                                              "is not above the DUT's throughput")
        res = {"type": "b2b", "size": size, "wire_size": size - FCS, "longest_burst": good,
               "first_loss_burst": bad, "burst_pps": round(burst_pps) if burst_pps else None,
               "trials": len(trials), "note": note}
        self.emit(res)
        return res

    # --- the whole run -------------------------------------------------------

    def go(self):
        a = self.a
        self.ends.attach()
        if a.line_rate:
            self.mbit, self.mbit_from = a.line_rate, "--line-rate"
        else:
            sp = self.ends.speed_mbit()
            self.mbit, self.mbit_from = (sp, f"{self.ends.gen_if} speed") if sp else (10000, "default")
        link = self.ends.link(self.ends.gen_ns, self.ends.gen_if) or {}
        mtu = link.get("mtu", 1500)
        for s in a.sizes:
            if s - FCS - 14 > mtu:
                raise UsageError(f"frame size {s} needs an MTU of {s - FCS - 14} on {self.ends.gen_if} "
                                 f"(it has {mtu}): drop the size or raise the MTU (testenv.sh setup --mtu)")
        self.t0 = time.time()
        self.out(f"RFC 2544 on {self.ends.where}")
        self.out(f"generator xdp-gen {a.gen}, sink xdp-sink xsk; trial {a.trial:g} s, warm-up "
                 f"{a.warmup:g} s at {100 * WARMUP_SHARE:g}% of the trial rate; loss ratio "
                 f"{a.loss_ratio:g}; line rate {self.mbit:g} Mbit/s ({self.mbit_from})"
                 + (f"; max rate {a.max_rate:,.0f} pps" if a.max_rate else ""))
        self.out("frame sizes are RFC 2544's, with the 4-byte FCS; xdp-gen sends them without (-s SIZE-4)")
        results = {"throughput": [], "loss": [], "b2b": []}
        for size in a.sizes:
            tp = None
            if "throughput" in a.tests:
                tp = self.throughput(size)
                results["throughput"].append(tp)
            if "loss" in a.tests:
                results["loss"].append({"size": size, "rows": self.loss_rate(
                    size, tp["generator_limit_pps"] if tp else None)})
            if "b2b" in a.tests:
                results["b2b"].append(self.b2b(size, tp["throughput_pps"] if tp else None))
        return self.summary(results)

    def summary(self, results):
        a = self.a
        res = {
            "type": "summary", "tool": "rfc2544", "where": self.ends.where,
            "dut": self.ends.dut, "gen": a.gen, "gen_if": self.ends.gen_if, "gen_ns": self.ends.gen_ns,
            "sink_if": self.ends.sink_if, "sink_ns": self.ends.sink_ns,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(self.t0)),
            "kernel": os.uname().release, "host": os.uname().nodename,
            "sizes": a.sizes, "tests": a.tests, "trial_s": a.trial, "warmup_s": a.warmup,
            "warmup": f"a separate generator run of {a.warmup:g} s at {100 * WARMUP_SHARE:g}% of the "
                      "trial rate (its own run id, outside the books) before every trial",
            "loss_ratio": a.loss_ratio, "line_rate_mbps": self.mbit, "line_rate_from": self.mbit_from,
            "max_rate_pps": a.max_rate or None, "books": "per run" if self.per_run_books else "sink totals",
            "trials": len(self.trials), "duration_s": round(time.time() - self.t0, 1),
            **results,
        }
        return res


# --- reports -------------------------------------------------------------------

def text_report(r):
    out = []
    tps = r["throughput"]
    if tps:
        out.append("")
        out.append("throughput (loss ratio <= %g) and latency at that rate" % r["loss_ratio"])
        hdr = ["size", "wire", "throughput pps", "Mbit/s", "% line", "limited by", "trials",
               "lat min us", "p50", "p99", "p99.9", "max"]
        rows = []
        for t in tps:
            L = t["latency_ns"] or {}
            rows.append([t["size"], t["wire_size"], fmt_pps(t["throughput_pps"]),
                         f"{t['throughput_mbps']:,.1f}", f"{t['line_pct']:.2f}", t["limited_by"],
                         t["trials"], fmt_us(L.get("min")), fmt_us(L.get("p50")),
                         fmt_us(L.get("p99")), fmt_us(L.get("p999")), fmt_us(L.get("max"))])
        out.append(table(rows, hdr))
        for t in tps:
            out.append("  search %d B: " % t["size"] + " -> ".join(
                "%s %s" % (fmt_pps(s["rate"]), step_text(s)) for s in t["steps"]))
            if t["generator_limit_pps"]:
                out.append("    generator limit seen: %s pps" % fmt_pps(t["generator_limit_pps"]))
    for L in r["loss"]:
        out.append("")
        out.append("frame loss rate, %d B (%% of the maximum rate)" % L["size"])
        rows = []
        for x in L["rows"]:
            if x.get("skipped"):
                rows.append(["%g" % x["pct"], fmt_pps(x["offered_pps"]), "-", "-", "-", x["note"]])
            else:
                rows.append(["%g" % x["pct"], fmt_pps(x["offered_pps"]), f"{x['sent']:,}",
                             f"{x['received']:,}", loss_cell(x), x["note"]])
        out.append(table(rows, ["%", "offered pps", "sent", "received", "loss %", "note"]))
    if r["b2b"]:
        out.append("")
        out.append("back-to-back (bursts at the generator's full speed)")
        rows = [[b["size"], b["wire_size"], f"{b['longest_burst']:,}",
                 "-" if b["first_loss_burst"] is None else f"{b['first_loss_burst']:,}",
                 fmt_pps(b["burst_pps"]), b["trials"], b["note"]] for b in r["b2b"]]
        out.append(table(rows, ["size", "wire", "longest burst, no loss", "first loss at",
                                "burst pps", "trials", "note"]))
    out.append("")
    out.append("%d trials in %.0f s; books: %s" % (r["trials"], r["duration_s"], r["books"]))
    return "\n".join(out)


def step_text(s):
    """A search step's result; a loss in frames, which no rounding hides."""
    if s["result"] == "loss":
        return "loss %s (%.3g%%)" % (f"{s['lost']:,}", 100 * s["loss_ratio"])
    if s["result"] == "uncertain":
        return "uncertain (%s late)" % f"{s['late']:,}"
    return s["result"]


def loss_cell(x):
    """A loss-rate row's loss %: a range when late frames leave it open; never 0.0000 for a loss."""
    if x["shortfall"]:
        return "shortfall"

    def pct(v):
        return "<0.0001" if 0 < v < 0.0001 else "%.4f" % v
    if x.get("verdict") == "uncertain" and x.get("loss_pct_min", x["loss_pct"]) != x["loss_pct"]:
        return "%s-%s" % (pct(x["loss_pct_min"]), pct(x["loss_pct"]))
    return pct(x["loss_pct"])


def table(rows, header):
    rows = [[str(c) for c in x] for x in rows]
    w = [max([len(header[i])] + [len(x[i]) for x in rows]) for i in range(len(header))]
    lines = ["  ".join(h.ljust(w[i]) for i, h in enumerate(header)).rstrip(),
             "  ".join("-" * w[i] for i in range(len(header)))]
    lines += ["  ".join(c.ljust(w[i]) for i, c in enumerate(x)).rstrip() for x in rows]
    return "\n".join(lines)


def md_table(rows, header):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c).replace("|", "/") for c in x) + " |" for x in rows]
    return "\n".join(out)


def md_report(r, pngs):
    lines = ["# RFC 2544: %s" % r["where"], "",
             "%s, %s, kernel %s. Generator `xdp-gen %s`, sink `xdp-sink xsk`; trial %g s; warm-up: %s; "
             "loss ratio %g; line rate %g Mbit/s (%s). Frame sizes include the 4-byte FCS; "
             "the wire size is what xdp-gen sends (`-s`). Books: %s, %d trials in %.0f s."
             % (r["date"], r["host"], r["kernel"], r["gen"], r["trial_s"], r["warmup"],
                r["loss_ratio"], r["line_rate_mbps"], r["line_rate_from"], r["books"],
                r["trials"], r["duration_s"]), ""]
    if r["throughput"]:
        lines += ["## Throughput and latency", ""]
        lines.append(md_table([[t["size"], t["wire_size"], fmt_pps(t["throughput_pps"]),
                                "%.1f" % t["throughput_mbps"], "%.2f" % t["line_pct"], t["limited_by"],
                                t["trials"]] + [fmt_us((t["latency_ns"] or {}).get(k))
                                                for k in ("min", "p50", "p99", "p999", "max")]
                               for t in r["throughput"]],
                              ["size", "wire", "throughput pps", "Mbit/s", "% line", "limited by",
                               "trials", "min us", "p50 us", "p99 us", "p99.9 us", "max us"]))
        lines.append("")
        for t in r["throughput"]:
            lines.append("- search, %d B: %s" % (t["size"], " → ".join(
                "%s %s" % (fmt_pps(s["rate"]), step_text(s)) for s in t["steps"])))
        lines.append("")
    for L in r["loss"]:
        lines += ["## Frame loss rate, %d B" % L["size"], ""]
        lines.append(md_table([["%g" % x["pct"], fmt_pps(x["offered_pps"])] +
                               (["-", "-", "-", x["note"]] if x.get("skipped") else
                                [x["sent"], x["received"], loss_cell(x), x["note"]])
                               for x in L["rows"]],
                              ["% of max", "offered pps", "sent", "received", "loss %", "note"]))
        lines.append("")
    if r["b2b"]:
        lines += ["## Back-to-back", ""]
        lines.append(md_table([[b["size"], b["wire_size"], b["longest_burst"],
                                b["first_loss_burst"] or "-", fmt_pps(b["burst_pps"]), b["trials"],
                                b["note"]] for b in r["b2b"]],
                              ["size", "wire", "longest burst without loss", "first loss at",
                               "burst pps", "trials", "note"]))
        lines.append("")
    for p in pngs:
        lines += ["![%s](%s)" % (os.path.basename(p), os.path.basename(p)), ""]
    return "\n".join(lines)


GP_HEAD = '''set terminal pngcairo size 900,520 font "DejaVu Sans,10"
set output "%s"
set termoption noenhanced
set datafile missing "-"
set grid
'''


def plots(r, outdir):
    """PNG charts by gnuplot, as bench/plot draws them; each written to a temp name and renamed."""
    if not shutil.which("gnuplot"):
        log("gnuplot not installed: no PNG charts (apt-get install gnuplot-nox)")
        return []
    tmp = tempfile.mkdtemp(prefix="xdpsg-rfc2544-plot-")
    jobs = []
    title = r["where"].replace('"', "'")
    tps = [t for t in r["throughput"]]
    if tps:
        d = os.path.join(tmp, "tp.dat")
        with open(d, "w") as f:
            for t in tps:
                f.write('"%d B" %.4f\n' % (t["size"], t["throughput_pps"] / 1e6))
        gp = ('set style data histogram\nset style fill solid 0.8 border -1\nset boxwidth 0.8\n'
              'set yrange [0:*]\nset ylabel "Mpps"\nunset key\n'
              'set title "RFC 2544 throughput (loss ratio <= %g)\\n%s"\n'
              "plot '%s' using 2:xtic(1)\n" % (r["loss_ratio"], title, d))
        jobs.append(("rfc2544-throughput.png", gp))
        lat = [t for t in tps if t["latency_ns"]]
        if lat:
            d = os.path.join(tmp, "lat.dat")
            keys = [("min", "min"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99"),
                    ("p999", "p99.9"), ("max", "max")]
            with open(d, "w") as f:
                for i, (k, lab) in enumerate(keys):
                    f.write('%d "%s" %s\n' % (i, lab, " ".join(
                        "%.3f" % (t["latency_ns"][k] / 1e3) if t["latency_ns"].get(k) else "-"
                        for t in lat)))
            gp = ('set logscale y\nset key outside right\nset ylabel "send to receive (us, log)"\n'
                  'set xlabel "percentile"\nset title "latency at the throughput rate\\n%s"\n' % title)
            gp += "plot " + ", ".join("'%s' using 1:%d:xtic(2) with linespoints lw 2 title '%d B'"
                                      % (d, 3 + i, t["size"]) for i, t in enumerate(lat)) + "\n"
            jobs.append(("rfc2544-latency.png", gp))
    loss = [L for L in r["loss"] if any(not x.get("skipped") for x in L["rows"])]
    if loss:
        d = os.path.join(tmp, "loss.dat")
        with open(d, "w") as f:
            for i, L in enumerate(loss):
                if i:
                    f.write("\n\n")
                for x in L["rows"]:
                    if not x.get("skipped") and not x["shortfall"]:
                        f.write("%g %.4f\n" % (x["pct"], x["loss_pct"]))
        gp = ('set key outside right\nset xlabel "offered load (%% of the maximum rate)"\n'
              'set ylabel "frame loss (%%)"\nset yrange [0:*]\n'
              'set title "RFC 2544 frame loss rate\\n%s"\n' % title)
        gp += "plot " + ", ".join("'%s' index %d using 1:2 with linespoints lw 2 title '%d B'"
                                  % (d, i, L["size"]) for i, L in enumerate(loss)) + "\n"
        jobs.append(("rfc2544-loss.png", gp))
    made = []
    for name, gp in jobs:
        final = os.path.join(outdir, name)
        fd, tmpf = tempfile.mkstemp(prefix="." + name + ".", dir=outdir)
        os.close(fd)
        p = subprocess.run(["gnuplot"], input=GP_HEAD % tmpf + gp, capture_output=True, text=True)
        if p.returncode != 0:
            os.unlink(tmpf)
            log(f"gnuplot failed for {name}: {p.stderr.strip()[:200]}")
            continue
        os.chmod(tmpf, 0o644)
        os.replace(tmpf, final)
        made.append(final)
    shutil.rmtree(tmp, ignore_errors=True)
    return made


def write_outputs(r, a):
    outdir = a.out or tempfile.mkdtemp(prefix="xdpsg-rfc2544-")
    os.makedirs(outdir, exist_ok=True)
    pngs = [] if a.no_plot else plots(r, outdir)
    r["files"] = [os.path.join(outdir, n) for n in ("rfc2544.json", "rfc2544.md")] + pngs
    write_atomic(os.path.join(outdir, "rfc2544.json"), json.dumps(r, indent=1) + "\n")
    write_atomic(os.path.join(outdir, "rfc2544.md"), md_report(r, pngs))
    return outdir


def main(argv):
    if argv == ["--list-options"]:  # for testenv.sh --version --json
        print(json.dumps(long_options(), separators=(",", ":")))
        return 0
    try:
        a = parse_args(argv)
        if a.out and os.path.exists(a.out) and not os.path.isdir(a.out):
            raise UsageError(f"--out {a.out} exists and is not a directory: name a directory")
        r = Runner(a)
    except UsageError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    res, rc = None, 1
    try:
        res = r.go()
        rc = 0
    except UsageError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        rc = 2
    except RunError as e:
        log(f"FAILED: {e}")
        rc = 1
    except KeyboardInterrupt:
        log("interrupted; cleaning up")
        rc = 130
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        r.ends.close()
    if res is not None:
        outdir = write_outputs(res, a)
        if a.json:
            print(json.dumps(res), flush=True)
        else:
            print(text_report(res), flush=True)
            print("written: " + ", ".join(res["files"]), flush=True)
        log(f"results in {outdir}")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
