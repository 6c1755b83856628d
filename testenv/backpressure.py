#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The backpressure lab: overflow a veth on purpose and account for every packet.

Run as 'testenv/testenv.sh backpressure [OPTIONS]' (or this file directly).
It makes a lab with 'testenv.sh setup --scenario backpressure' (pfifo on the
generator veth, TSO off, threaded NAPI on the sink veth, no IPv6), starts
xdp-sink with --cost on the sink side, pins the sink veth's NAPI thread to one
CPU, runs xdp-gen, prints one row per interval (offered, accepted, delivered,
drops per layer per second), lets the lab drain, and prints one table of where
the packets went. The books must balance exactly; any rest is 'unexplained'
and fails the run (exit 1). A generator stall (stop_reason "stall") or a tool
that does not stop in time also fails the run, with a message saying so.

The kernel is the source of truth: counters come from the tools' --kernel-stats
JSON and from snapshots with build/tests/kstats-dump taken before the sink
starts and after the lab has drained.

Environment: XDPSG_* variables are passed to xdp-gen only, never to xdp-sink.
Test hooks such as XDPSG_TEST_STALL=1 select the test build of xdp-gen
(BUILD/test-hooks/xdp-gen), the only one that reads them. BUILD selects the
build directory.

Exit codes: 0 balanced, 1 unexplained packets, a stall or a failure, 2 bad usage.
"""

import argparse
import json
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from xdpsg import lab as xl, proc, sysstat  # noqa: E402 - the package beside this file: labs, tools, /proc readers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROG = "testenv.sh backpressure"

GEN_DEFAULT_THREADS = {"qdisc": 2, "xsk": 1, "kernel": 1}


class UsageError(Exception):
    pass


# A failed lab command or tool is a failed run, reported the same way.
RunError = proc.LabError


def make_parser():
    ncpu = os.cpu_count() or 1

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise UsageError(f"{message}; see {PROG} --help")

    p = Parser(
        prog=PROG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Make a lab tuned to overflow, run xdp-sink (slow) and xdp-gen in it, "
        "sample every interval and print where every packet went. The books must "
        "balance: any unexplained packet, a generator stall or a tool that does not "
        "stop fails the run (exit 1).",
        epilog="Example: testenv/testenv.sh backpressure --name bp1 --duration 3\n"
        "Books: attempted = accepted + refused (qdisc mode); refused = qdisc drops + veth tx drops;\n"
        "accepted = received by the sink's NAPI + drops after acceptance (veth tx, xdp_xmit errors);\n"
        "received = seen by the sink's XDP program (+ veth rx drops) = delivered + the sink's drops.\n"
        "XDPSG_* environment variables are passed to xdp-gen; test hooks (e.g. XDPSG_TEST_STALL=1)\n"
        "select its test build, BUILD/test-hooks/xdp-gen.",
    )
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
                   help="JSON lines on stdout: one per interval and a final {\"type\":\"result\"}")
    p.add_argument("--keep", action="store_true", help="leave the lab in place afterwards")
    p.add_argument("--testenv", default=os.path.join(HERE, "testenv.sh"), help=argparse.SUPPRESS)
    return p


def long_options():
    """The long options a user may give, without dashes ('testenv.sh --version --json')."""
    return [o[2:] for act in make_parser()._actions if act.help != argparse.SUPPRESS
            for o in act.option_strings if o.startswith("--") and o != "--help"]


def parse_args(argv):
    ncpu = os.cpu_count() or 1
    a = make_parser().parse_args(argv)

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
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,12}", a.name):
        raise UsageError(f"bad --name '{a.name}': at most 13 of [A-Za-z0-9_-]")
    return a


# --- helpers -----------------------------------------------------------------

def log(msg):
    print(f"backpressure: {msg}", file=sys.stderr, flush=True)


def delta(a, b):
    """b - a for every number in nested dicts/lists (same shape); gauges fixed later."""
    if isinstance(b, dict):
        return {k: delta(a.get(k) if isinstance(a, dict) else None, v) for k, v in b.items()}
    if isinstance(b, list):
        a = a if isinstance(a, list) else []
        return [delta(a[i] if i < len(a) else None, v) for i, v in enumerate(b)]
    if isinstance(b, (int, float)) and not isinstance(b, bool):
        return b - (a if isinstance(a, (int, float)) else 0)
    return b


def g(d, *path, default=0):
    for k in path:
        if not isinstance(d, dict) or k not in d or d[k] is None:
            return default
        d = d[k]
    return d


# --- the run -----------------------------------------------------------------

class Runner:
    def __init__(self, a):
        self.a = a
        build = os.environ.get("BUILD", os.path.join(ROOT, "build"))
        if not os.path.isabs(build):
            build = os.path.join(ROOT, build)
        self.gen_bin = os.path.join(build, "xdp-gen")
        # Test hooks (XDPSG_TEST_*) exist only in the test build of xdp-gen.
        if any(k.startswith("XDPSG_TEST_") for k in os.environ):
            self.gen_bin = os.path.join(build, "test-hooks", "xdp-gen")
        self.sink_bin = os.path.join(build, "xdp-sink")
        self.kstats_bin = os.path.join(build, "tests", "kstats-dump")
        for b in (self.gen_bin, self.sink_bin, self.kstats_bin):
            if not os.access(b, os.X_OK):
                raise UsageError(f"{b} is not built: run 'make all' (kstats-dump: 'make unit-tests')")
        if os.geteuid() != 0:
            raise UsageError("must run as root (namespaces, XDP, taskset of kernel threads)")
        self.errors = []
        self.stall = None
        self.rows = []
        self.napi = []
        # Environments: XDPSG_* only for the generator.
        self.env_base = {k: v for k, v in os.environ.items() if not k.startswith("XDPSG_")}
        self.gen_env = [f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("XDPSG_")]
        self.lab = xl.Lab(a.name, testenv=a.testenv, env=self.env_base)

    def out(self, text=""):
        if not self.a.json:
            print(text, flush=True)

    def kstats(self, side):
        lab = self.lab
        ns, ifn = (lab.gen_ns, lab.gen_if) if side == "gen" else (lab.sink_ns, lab.sink_if)
        r = proc.run(["ip", "netns", "exec", ns, self.kstats_bin, ifn], timeout=10, check=True,
                   env=self.env_base)
        for line in r.stdout.splitlines():
            if line.startswith("{"):
                return json.loads(line)["kstats"]
        raise RunError(f"kstats-dump {ifn}: no snapshot in its output")

    def setup(self):
        a = self.a
        qd = f"pfifo:{a.limit}" if a.qdisc == "pfifo" else "none"
        try:
            self.lab.setup("--scenario", "backpressure", "--queues", str(a.queues), "--qdisc", qd)
        except proc.LabError as e:
            if self.lab.made:
                raise  # made, but 'testenv.sh env' failed
            if e.returncode == 2:
                raise UsageError(f"lab setup refused: {e.detail}") from None
            raise RunError(f"lab setup failed: {e.detail}") from None

    def wait_sink_ready(self, sink, bound=15.0):
        end = time.monotonic() + bound
        attached = False
        while time.monotonic() < end:
            if not sink.running():
                raise RunError("xdp-sink exited at start: " + " | ".join(sink.err_lines[-5:]))
            if not attached:
                attached = xl.xdp_attached(self.lab.sink_ns, self.lab.sink_if)
            if attached and sink.obj_of_type("interval"):
                return
            time.sleep(0.05)
        raise RunError(f"xdp-sink not ready within {bound:.0f} s (XDP attached: {attached})")

    def pin_napi(self):
        r = self.lab.te("pin-napi", "--name", self.a.name, "--cpu", str(self.a.napi_cpu), check=False)
        if r.returncode != 0:
            raise RunError("pinning the NAPI thread failed: " + r.stderr.strip().replace("\n", " | "))
        for line in r.stdout.splitlines():
            pid, _, name = line.partition(" ")
            self.napi.append((int(pid), name))

    def gen_argv(self):
        a = self.a
        argv = [self.gen_bin, a.gen, "-j", "--kernel-stats", "-i", f"{a.interval}s", "-d", f"{a.duration}s"]
        if a.gen == "qdisc":
            argv += ["-t", str(a.threads)]
            if a.sndbuf != "default":
                argv += ["--sndbuf", a.sndbuf]
        elif a.gen == "kernel":
            argv += ["-t", str(a.threads)]
        else:
            argv += ["--queues", ",".join(str(i) for i in range(a.threads))]
        if a.rate:
            argv += ["-r", str(a.rate)]
        return argv + [self.lab.gen_if]

    def sink_argv(self):
        a = self.a
        bound = int(a.duration + 120)
        argv = [self.sink_bin, a.sink, "-j", "--kernel-stats", "-i", f"{a.interval}s", "-d", f"{bound}s"]
        if a.cost:
            argv += ["--cost", str(a.cost)]
        if a.sink == "xsk":
            argv += ["--queues", "all"]
        return argv + [self.lab.sink_if]

    # One row per generator interval, with the sink's latest interval.
    def row(self, gi, si):
        d = gi.get("duration_s") or self.a.interval
        ks = gi.get("kernel_stats", {})
        xmit_err = g(ks, "veth", "tx_xdp_xmit_errors")
        r = {
            "t": gi.get("time_s", 0.0),
            "offered": (gi.get("attempted", gi.get("tx_packets", 0))) / d,
            "accepted": gi.get("tx_packets", 0) / d,
            "delivered": (si.get("rx_packets", 0) / si.get("duration_s", 1)) if si else 0.0,
            "qdisc_drops": g(ks, "qdisc", "drops") / d,
            "requeues": g(ks, "qdisc", "requeues") / d,
            "qlen": g(ks, "qdisc", "qlen"),
            # The link and ethtool counters are read a moment apart: never below 0.
            "veth_tx_drops": max(0, g(ks, "link", "tx_dropped") - xmit_err - g(ks, "veth", "rx_xdp_tx_errors")) / d,
            "xdp_xmit_errors": xmit_err / d,
            "sink_drops": (sum(v for v in (si or {}).get("drops", {}).values() if isinstance(v, int))
                           / si.get("duration_s", 1)) if si else 0.0,
            "gen_stalls": sum(g(gi, "stalls", k) for k in ("ring_full", "no_free_frame", "kick_busy")) / d,
        }
        self.rows.append(r)
        if self.a.json:
            print(json.dumps({"type": "interval", **{k: round(v, 3) if isinstance(v, float) else v
                                                    for k, v in r.items()}}), flush=True)
        else:
            if len(self.rows) == 1:
                self.out(f"{'time':>6} {'offered/s':>11} {'accepted/s':>11} {'delivered/s':>11} "
                         f"{'qdisc drop/s':>12} {'requeue/s':>9} {'qlen':>5} {'veth drop/s':>11} "
                         f"{'xmit err/s':>11} {'sink drop/s':>11} {'gen stall/s':>11}")
            self.out(f"{r['t']:6.1f} {r['offered']:11,.0f} {r['accepted']:11,.0f} {r['delivered']:11,.0f} "
                     f"{r['qdisc_drops']:12,.0f} {r['requeues']:9,.0f} {r['qlen']:5} {r['veth_tx_drops']:11,.0f} "
                     f"{r['xdp_xmit_errors']:11,.0f} {r['sink_drops']:11,.0f} {r['gen_stalls']:11,.0f}")

    def wait_drained(self, bound=5.0):
        """The qdisc empty and the sink's ring counter still; bounded."""
        end = time.monotonic() + bound
        last = None
        stable = 0
        while time.monotonic() < end:
            gk = self.kstats("gen")
            sk = self.kstats("sink")
            held = g(gk, "qdisc", "qlen")
            seen = g(sk, "veth", "rx_xdp_packets")
            if held == 0 and seen == last:
                stable += 1
                if stable >= 2:
                    return True
            else:
                stable = 0
            last = seen
            time.sleep(0.2)
        return False

    def go(self):
        a = self.a
        self.setup()
        k0 = {"gen": self.kstats("gen"), "sink": self.kstats("sink")}
        sink = self.lab.start("sink", self.sink_argv(), "xdp-sink")
        self.wait_sink_ready(sink)
        self.pin_napi()
        napi_j0 = {pid: sysstat.task_jiffies(pid) for pid, _ in self.napi}
        cpu0 = sysstat.cpu_times()
        t0 = time.monotonic()
        self.out(f"lab {a.name}: gen {a.gen} x{a.threads} -> {a.qdisc}"
                 f"{':' + str(a.limit) if a.qdisc == 'pfifo' else ''} -> veth ({a.queues} queue(s)) -> "
                 f"sink {a.sink} --cost {a.cost} ns; NAPI "
                 f"{', '.join(f'{n} (pid {p})' for p, n in self.napi)} on CPU {a.napi_cpu}")
        gen = self.lab.start("gen", self.gen_argv(), "xdp-gen", env_prefix=self.gen_env)

        deadline = t0 + a.duration + 20
        last_si = None
        while True:
            o = gen.next_obj(timeout=0.1)
            while (s := sink.next_obj()) is not None:
                if s.get("type") == "interval":
                    last_si = s
            if o is not None and o.get("type") == "interval":
                self.row(o, last_si)
            if o is None and not gen.running() and not gen.pending():
                break
            if time.monotonic() > deadline:
                gen.stop(signal.SIGINT, 3)
                self.errors.append(f"xdp-gen did not stop within {a.duration + 20:.0f} s: stopped it (hang?)")
                break
            if not sink.running():
                self.errors.append("xdp-sink exited during the run: " + " | ".join(sink.err_lines[-3:]))
                gen.stop(signal.SIGINT, 5)
                break
        gen.stop(signal.SIGINT, 5)
        elapsed = time.monotonic() - t0
        cpu1 = sysstat.cpu_times()
        napi_j1 = {pid: sysstat.task_jiffies(pid) for pid, _ in self.napi}
        rc = gen.returncode
        gsum = gen.summary()
        if gsum is None:
            raise RunError(f"xdp-gen exited {rc} without a summary: " + " | ".join(gen.err_lines[-5:]))
        if gsum.get("stop_reason") == "stall":
            msgs = [line for line in gen.err_lines if "stall" in line] or gen.err_lines[-2:]
            self.stall = msgs[-1] if msgs else "stop_reason stall"
        elif rc != 0:
            self.errors.append(f"xdp-gen exited {rc}: " + " | ".join(gen.err_lines[-3:]))

        if not self.wait_drained():
            self.errors.append("the lab did not drain within 5 s (qdisc still holds packets, or the "
                               "sink is still receiving): its TX queue may be stopped for good")
        k1 = {"gen": self.kstats("gen"), "sink": self.kstats("sink")}
        if a.sink == "xsk":
            time.sleep(0.3)  # frames already in the socket's rx ring
        sink.stop(signal.SIGINT, 10)
        if sink.killed:
            self.errors.append("xdp-sink did not stop within 10 s of SIGINT: killed")
        ssum = sink.summary()
        if ssum is None:
            raise RunError(f"xdp-sink exited {sink.returncode} without a summary: "
                           + " | ".join(sink.err_lines[-5:]))

        hz = os.sysconf("SC_CLK_TCK")
        cpu = {"busy_pct": {}, "napi_pct": None, "napi_cpu": a.napi_cpu}
        for c, (b1, t1) in cpu1.items():
            b0, tt0 = cpu0.get(c, (0, 0))
            cpu["busy_pct"][str(c)] = round(100.0 * (b1 - b0) / max(1, t1 - tt0), 1)
        nj = [napi_j1[p] - napi_j0[p] for p, _ in self.napi
              if napi_j0.get(p) is not None and napi_j1.get(p) is not None]
        if nj:
            cpu["napi_pct"] = round(100.0 * sum(nj) / hz / max(elapsed, 1e-3), 1)
        return self.books(gsum, ssum, k0, k1, cpu)

    def books(self, gs, ss, k0, k1, cpu):
        a = self.a
        G = delta(k0["gen"], k1["gen"])
        S = delta(k0["sink"], k1["sink"])
        end_q = k1["gen"]["qdisc"]
        xmit_err = g(G, "veth", "tx_xdp_xmit_errors")
        veth_tx = g(G, "link", "tx_dropped") - xmit_err - g(G, "veth", "rx_xdp_tx_errors")
        ring_in = g(S, "veth", "rx_xdp_packets")
        sink_rx_drops = g(S, "veth", "rx_drops")
        qd = g(G, "qdisc", "drops")

        sent = gs.get("tx_packets", 0)
        attempted = gs.get("attempted", sent)
        refused = gs.get("refused", 0)
        checks = []

        def check(name, lhs_name, lhs, parts):
            rest = lhs - sum(v for _, v in parts)
            checks.append({"check": name, "lhs": [lhs_name, lhs], "rhs": parts, "unexplained": rest})

        if a.gen == "qdisc":
            check("generator", "attempted", attempted, [["accepted", sent], ["refused", refused]])
            check("refused", "refused", refused, [["qdisc drops", qd], ["veth tx drops", veth_tx]])
            after = [["xdp_xmit errors", xmit_err]]
        elif a.gen == "kernel":
            check("generator", "sent", sent, [["transmitted", gs.get("transmitted", 0)],
                                              ["failed", gs.get("failed", 0)]])
            check("failed", "failed", gs.get("failed", 0), [["xdp_xmit errors", xmit_err],
                                                             ["redirect refused", g(gs, "drops", "redirect_refused")]])
            after = [["xdp_xmit errors", xmit_err], ["veth tx drops", veth_tx],
                     ["redirect refused", g(gs, "drops", "redirect_refused")]]
        else:
            after = [["veth tx drops", veth_tx], ["xdp_xmit errors", xmit_err]]
        acc_name = "accepted" if a.gen == "qdisc" else "sent"
        check("transmit", acc_name, sent, [["received by the sink", ring_in]] + after)

        if a.sink == "drop":
            prog = ss.get("rx_packets", 0)
            aborted = g(ss, "drops", "xdp_aborted")
            check("sink ring", "received by the sink", ring_in, [["seen by XDP", prog], ["veth rx drops", sink_rx_drops]])
            delivered = prog - aborted
            sink_drops = [["veth rx drops", sink_rx_drops], ["xdp aborted", aborted]]
        else:
            prog = ss.get("xdp_packets", 0)
            check("sink ring", "received by the sink", ring_in, [["seen by XDP", prog]])
            delivered = ss.get("rx_packets", 0)
            sd = ss.get("drops", {})
            sink_drops = [["no socket", sd.get("no_socket", 0)],
                          ["fill ring empty", sd.get("xsk_fill_ring_empty", 0)],
                          ["rx ring full", sd.get("xsk_rx_ring_full", 0)],
                          ["invalid", sd.get("xsk_rx_invalid", 0)]]
            check("sink socket", "seen by XDP", prog, [["delivered", delivered]] + sink_drops)

        drops_after = [d for d in after if d[1]] + [d for d in sink_drops if d[1]]
        total_after = sum(v for _, v in after) + sum(v for _, v in sink_drops)
        unexplained = sent - delivered - total_after
        sum_abs = sum(abs(c["unexplained"]) for c in checks)
        balanced = unexplained == 0 and sum_abs == 0

        gdur = gs.get("duration_s") or a.duration
        res = {
            "type": "summary", "name": a.name, "gen": a.gen, "sink": a.sink, "qdisc": a.qdisc,
            "limit": a.limit if a.qdisc == "pfifo" else None, "cost_ns": a.cost, "threads": a.threads,
            "rate": a.rate, "sndbuf": a.sndbuf,
            "queues": a.queues, "duration_s": gdur, "stop_reason": gs.get("stop_reason"),
            "attempted": attempted, "accepted": sent, "refused": refused,
            "transmitted": gs.get("transmitted"), "failed": gs.get("failed"),
            "received": ring_in, "delivered": delivered,
            "qdisc_stats": {"kind": end_q.get("kind"), "sent": g(G, "qdisc", "sent_packets"), "drops": qd,
                            "requeues": g(G, "qdisc", "requeues"), "overlimits": g(G, "qdisc", "overlimits"),
                            "backlog_bytes": end_q.get("backlog_bytes", 0), "qlen": end_q.get("qlen", 0)},
            "drops": {"qdisc": qd, "veth_tx": veth_tx, "xdp_xmit": xmit_err, "sink_veth_rx": sink_rx_drops,
                      **({"xdp_aborted": g(ss, "drops", "xdp_aborted")} if a.sink == "drop" else
                         {"xsk_" + n.replace(" ", "_"): v for n, v in sink_drops})},
            "sink_queues": [{"queue": q.get("queue"), "rx_xdp_packets": q.get("rx_xdp_packets", 0),
                             "rx_xdp_drops": q.get("rx_xdp_drops", 0), "rx_xdp_redirect": q.get("rx_xdp_redirect", 0),
                             "rx_drops": q.get("rx_drops", 0)} for q in g(S, "veth", "queues", default=[])],
            "gen_stalls": gs.get("stalls", {}),
            "rates": {"offered_pps": round(attempted / gdur), "accepted_pps": round(sent / gdur),
                      "delivered_pps": round(delivered / gdur),
                      "drops_pps": {"qdisc": round(qd / gdur), "veth_tx": round(veth_tx / gdur),
                                    "xdp_xmit": round(xmit_err / gdur),
                                    "sink": round(sum(v for _, v in sink_drops) / gdur)}},
            "latency_ns": ss.get("latency_ns") if a.sink == "xsk" else None,
            "sink_own_unexplained": ss.get("unexplained"),
            "cpu": cpu, "napi_threads": [n for _, n in self.napi],
            "checks": checks, "unexplained": unexplained if unexplained else sum_abs,
            "balanced": balanced, "stall": self.stall, "errors": self.errors,
        }
        res["ok"] = balanced and not self.stall and not self.errors
        self.table(res, drops_after)
        return res

    def table(self, r, drops_after):
        if self.a.json:
            return
        q = r["qdisc_stats"]
        w = lambda label, v, note="": self.out(f"  {label:<34}{v:>14,}  {note}".rstrip())  # noqa: E731
        self.out()
        self.out(f"where the packets went ({r['gen']} generator, {r['duration_s']:.2f} s; "
                 f"{r['sink']} sink, --cost {r['cost_ns']} ns)")
        self.out("generator")
        if r["gen"] == "qdisc":
            w("attempted", r["attempted"], f"{r['rates']['offered_pps']:,}/s")
            w("accepted", r["accepted"], f"{r['rates']['accepted_pps']:,}/s")
            w("refused (ENOBUFS)", r["refused"])
        elif r["gen"] == "kernel":
            w("sent (live frames redirected)", r["accepted"], f"{r['rates']['offered_pps']:,}/s")
            w("transmitted", r["transmitted"] or 0)
            w("failed", r["failed"] or 0)
        else:
            w("sent (completed by the kernel)", r["accepted"], f"{r['rates']['offered_pps']:,}/s")
        st = r["gen_stalls"]
        if r["gen"] == "xsk" or any(st.values()):
            self.out(f"  stalls: ring_full {st.get('ring_full', 0):,}, no_free_frame "
                     f"{st.get('no_free_frame', 0):,}, kick_busy {st.get('kick_busy', 0):,} (retried, not lost)")
        self.out(f"qdisc {q['kind']} (generator veth)")
        w("sent", q["sent"])
        w("dropped", q["drops"], f"{r['rates']['drops_pps']['qdisc']:,}/s")
        w("requeues", q["requeues"])
        w("overlimits", q["overlimits"])
        w("backlog at the end (packets)", q["qlen"], f"{q['backlog_bytes']} bytes")
        self.out("veth (generator side)")
        w("tx dropped (veth_xmit, ring full)", r["drops"]["veth_tx"], f"{r['rates']['drops_pps']['veth_tx']:,}/s")
        w("xdp_xmit errors (ring full)", r["drops"]["xdp_xmit"], f"{r['rates']['drops_pps']['xdp_xmit']:,}/s")
        self.out("veth (sink side)")
        w("received from the ring (NAPI)", r["received"])
        w("rx drops", r["drops"]["sink_veth_rx"])
        for sq in r["sink_queues"]:
            w(f"queue {sq['queue']}: xdp packets/drops/redirect", sq["rx_xdp_packets"],
              f"{sq['rx_xdp_drops']:,} / {sq['rx_xdp_redirect']:,}")
        self.out(f"sink ({r['sink']})")
        if r["sink"] == "drop":
            w("received (XDP program)", r["delivered"] + r["drops"]["xdp_aborted"])
            w("xdp aborted", r["drops"]["xdp_aborted"])
        else:
            w("delivered to the socket", r["delivered"], f"{r['rates']['delivered_pps']:,}/s")
            for k, v in r["drops"].items():
                if k.startswith("xsk_"):
                    w(k[4:].replace("_", " "), v)
            w("the sink's own unexplained", r["sink_own_unexplained"] or 0)
        self.out("books")
        for c in r["checks"]:
            rhs = " + ".join(f"{n} {v:,}" for n, v in c["rhs"])
            self.out(f"  {c['lhs'][0]} {c['lhs'][1]:,} = {rhs}: "
                     + ("ok" if c["unexplained"] == 0 else f"UNEXPLAINED {c['unexplained']:,}"))
        acc = "accepted" if r["gen"] == "qdisc" else "sent"
        self.out(f"  {acc} {r['accepted']:,} = delivered {r['delivered']:,} + drops "
                 f"{sum(v for _, v in drops_after):,}"
                 + (" (" + ", ".join(f"{n} {v:,}" for n, v in drops_after) + ")" if drops_after else ""))
        self.out(f"  unexplained {r['unexplained']:,}")
        if r["latency_ns"]:
            L = r["latency_ns"]
            us = lambda k: f"{L.get(k, 0) / 1000:,.1f}"  # noqa: E731
            self.out(f"sink latency (us): min {us('min')} p50 {us('p50')} p90 {us('p90')} "
                     f"p99 {us('p99')} p99.9 {us('p999')} max {us('max')}")
        c = r["cpu"]
        self.out("cpu busy: " + ", ".join(f"cpu{k} {v}%" for k, v in c["busy_pct"].items())
                 + (f"; NAPI thread {c['napi_pct']}% (on cpu{c['napi_cpu']})" if c["napi_pct"] is not None else ""))

    def cleanup(self):
        self.lab.stop_tools(signal.SIGTERM, 5)
        if self.lab.made and self.a.keep:
            log(f"lab '{self.a.name}' kept; remove it with: testenv/testenv.sh teardown --name {self.a.name}")
        else:
            self.lab.teardown()


def main(argv):
    if argv == ["--list-options"]:  # for testenv.sh --version --json
        print(json.dumps(long_options(), separators=(",", ":")))
        return 0
    try:
        a = parse_args(argv)
        r = Runner(a)
    except UsageError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    res = None
    rc = 1
    try:
        res = r.go()
        rc = 0 if res["ok"] else 1
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
        r.cleanup()
    if res is not None:
        if a.json:
            print(json.dumps(res), flush=True)
        if res["stall"]:
            log(f"STALL: xdp-gen stopped with stop_reason \"stall\": {res['stall']}")
        for e in res["errors"]:
            log(f"FAILED: {e}")
        if res["unexplained"]:
            log(f"FAILED: the books do not balance: {res['unexplained']:,} packet(s) unexplained")
        if res["ok"]:
            log("books balance: unexplained 0")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
