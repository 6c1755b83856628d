# SPDX-License-Identifier: GPL-2.0
"""The RFC 2544 runner on the skeleton: where, the tests per size, the summary, the files."""

import json
import os
import tempfile
import time

from ..scenario import Scenario, UsageError, build_path, require_built, require_root, tool_env, \
    write_atomic, SCHEMA
from . import latency, options, plots, report
from .ends import Ends
from .search import Search
from .trials import WARMUP_SHARE, Trials
from .verdict import FCS


class Rfc2544(Scenario):
    prog = "testenv.sh rfc2544"
    tool = "rfc2544"

    def __init__(self):
        self.ends = None

    def parser(self):
        return options.make_parser(self.prog)

    def check(self, a):
        options.check(a)
        self.gen_bin = build_path("xdp-gen")
        self.sink_bin = build_path("xdp-sink")
        require_built((self.gen_bin, self.sink_bin))
        require_root("namespaces, XDP and AF_XDP need it")

    def run(self, a):
        self.ends = Ends(a, tool_env(), self.log)
        self.ends.attach()
        self.line_rate(a)
        self.check_mtu(a)
        self.trials = Trials(a, self.ends, self.gen_bin, self.sink_bin, self)
        search = Search(a, self.mbit, self.trials.trial, self.emit)
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
                tp = search.throughput(size)
                if "latency" in a.tests and tp["throughput_pps"]:
                    self.latency(tp, size)
                results["throughput"].append(tp)
            if "loss" in a.tests:
                results["loss"].append({"size": size, "rows": search.loss_rate(
                    size, tp["generator_limit_pps"] if tp else None,
                    tp.get("dut_limit_pps") if tp else None)})
            if "b2b" in a.tests:
                results["b2b"].append(search.b2b(size, tp["throughput_pps"] if tp else None))
        return self.summary(a, results)

    def latency(self, tp, size):
        """The latency at the throughput rate from trials of its own (the sink at its lowest
        floor), and the instrument's floor beside it."""
        lat = latency.measure(self.trials, size, tp["throughput_pps"])
        tp["latency"] = lat
        tp["search_latency_ns"] = tp["latency_ns"]
        tp["latency_ns"] = lat["dut"]["latency_ns"]
        tp["latency_run"] = lat["dut"]["run"]
        tp["floor_latency_ns"] = lat["floor"]["latency_ns"] if lat["floor"] else None
        self.emit({"type": "latency", "size": size, "latency_ns": tp["latency_ns"],
                   "floor_latency_ns": tp["floor_latency_ns"], **lat})

    def line_rate(self, a):
        if a.line_rate:
            self.mbit, self.mbit_from = a.line_rate, "--line-rate"
        else:
            sp = self.ends.speed_mbit()
            self.mbit, self.mbit_from = (sp, f"{self.ends.gen_if} speed") if sp else (10000, "default")

    def check_mtu(self, a):
        link = self.ends.link(self.ends.gen_ns, self.ends.gen_if) or {}
        mtu = link.get("mtu", 1500)
        for s in a.sizes:
            if s - FCS - 14 > mtu:
                raise UsageError(f"frame size {s} needs an MTU of {s - FCS - 14} on {self.ends.gen_if} "
                                 f"(it has {mtu}): drop the size or raise the MTU (testenv.sh setup --mtu)")

    def summary(self, a, results):
        return {
            "type": "summary", "schema": SCHEMA, "tool": "rfc2544", "where": self.ends.where,
            "dut": self.ends.dut, "gen": a.gen, "gen_if": self.ends.gen_if, "gen_ns": self.ends.gen_ns,
            "sink_if": self.ends.sink_if, "sink_ns": self.ends.sink_ns,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(self.t0)),
            "kernel": os.uname().release, "host": os.uname().nodename,
            "sizes": a.sizes, "tests": a.tests, "trial_s": a.trial, "warmup_s": a.warmup,
            "warmup": f"a separate generator run of {a.warmup:g} s at {100 * WARMUP_SHARE:g}% of the "
                      "trial rate (its own run id, outside the books) before every trial",
            "loss_ratio": a.loss_ratio, "line_rate_mbps": self.mbit, "line_rate_from": self.mbit_from,
            "max_rate_pps": a.max_rate or None,
            "books": "per run" if self.trials.per_run_books else "sink totals",
            "trials": len(self.trials.trials), "duration_s": round(time.time() - self.t0, 1),
            **results,
        }

    def cleanup(self):
        if self.ends is not None:
            self.ends.close()

    def report(self, a, res):
        outdir = self.write_outputs(a, res)
        if a.json:
            self.emit(res)
        else:
            print(report.text_report(res), flush=True)
            print("written: " + ", ".join(res["files"]), flush=True)
        self.log(f"results in {outdir}")
        return 0

    def write_outputs(self, a, r):
        outdir = a.out or tempfile.mkdtemp(prefix="xdpsg-rfc2544-")
        os.makedirs(outdir, exist_ok=True)
        pngs = [] if a.no_plot else plots.plots(r, outdir, self.log)
        r["files"] = [os.path.join(outdir, n) for n in ("rfc2544.json", "rfc2544.md")] + pngs
        write_atomic(os.path.join(outdir, "rfc2544.json"), json.dumps(r, indent=1) + "\n")
        write_atomic(os.path.join(outdir, "rfc2544.md"), report.md_report(r, pngs))
        return outdir
